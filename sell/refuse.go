package sell

import (
	"errors"
	"time"

	"github.com/assaykit/assay/internal/httpjson"
)

// Refusal is how an error of the application is answered, the same on
// every transport: its HTTP-equivalent status, its JSON body, and what
// HTTP adds in headers.
type Refusal struct {
	Status int
	// Body is the JSON body ({"detail": …} unless the interface document
	// says otherwise).
	Body any
	// RetryAfter, when positive, is the wait in seconds (Retry-After).
	RetryAfter int
	// Authenticate is the WWW-Authenticate challenge, "" for none.
	Authenticate string
	// NoStore says the answer must not be cached.
	NoStore bool
}

// nicheRealm is the Bearer challenge of the niche subscription.
const nicheRealm = `Bearer realm="niche-discovery"`

// NicheQuotaBody is the 429 body of a search past its quota: when it
// resets, as Retry-After says too.
type NicheQuotaBody struct {
	Detail   string    `json:"detail"`
	Limit    int       `json:"limit"`
	ResetsAt time.Time `json:"resetsAt"`
}

// Refuse returns the refusal of one of the application's own errors; ok
// is false for any other error (the transport's generic mapping applies).
func Refuse(err error) (r Refusal, ok bool) {
	var (
		locked *LockedError
		search *SearchSubscriptionError
		quota  *QuotaError
		nd     *NotDeliveredError
	)
	switch {
	case errors.As(err, &locked):
		return Refusal{Status: 401, Body: locked.Locked, Authenticate: nicheRealm}, true
	case errors.As(err, &search):
		return Refusal{Status: 401, Body: httpjson.DetailBody{Detail: search.Detail}, Authenticate: nicheRealm, NoStore: true}, true
	case errors.As(err, &quota):
		return Refusal{Status: 429, Body: NicheQuotaBody{Detail: quota.Detail, Limit: quota.Limit, ResetsAt: quota.ResetAt},
			RetryAfter: quota.RetryAfter, NoStore: true}, true
	case errors.Is(err, ErrSubscriptionInactive):
		return Refusal{Status: 401, Body: httpjson.DetailBody{Detail: "The subscription token is not active"}, Authenticate: nicheRealm}, true
	case errors.Is(err, ErrSubscriptionUnavailable):
		return Refusal{Status: 503, Body: httpjson.DetailBody{Detail: "The subscription service is unavailable"}}, true
	case errors.As(err, &nd):
		return Refusal{Status: 409, Body: httpjson.DetailBody{Detail: "The order is " + nd.Status + "; its result is available once it is completed"},
			RetryAfter: nd.RetryAfter, NoStore: true}, true
	}
	return Refusal{}, false
}
