package httpgate

import (
	"net/http"

	"github.com/assaykit/assay/payment"
)

// Paywall turns a handler into a paid one. Gate is the real
// implementation; Free serves without charging.
type Paywall interface {
	Gate(offer payment.Offer, next http.Handler) http.Handler
}

// Prechecker is implemented by paid handlers whose request must be
// validated (and whose resource must exist) before any payment is asked
// for, so that a 422 or 404 is never charged.
type Prechecker interface {
	// Precheck validates r. When the request is acceptable it returns the
	// request to continue with (for example carrying the decoded body in
	// its context) and true. Otherwise it has written the error response
	// and returns false.
	Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool)
}

// Streamer is implemented by paid handlers that must write as they go
// (for example server-sent events) and accept that their output reaches
// the payer before settlement. Their response is not buffered: order id
// and token are sent before the handler runs, the receipt id and the
// settlement header follow as HTTP trailers, and if settlement then fails
// the content has already been delivered (the order is failed all the
// same). Only opt out of buffering where that is acceptable.
type Streamer interface {
	StreamsPaidResponse() bool
}

// precheck runs next's Precheck when next is a Prechecker: the request to
// go on with, whether a Precheck ran, and whether to go on (false: the
// Precheck has answered).
func precheck(w http.ResponseWriter, r *http.Request, next http.Handler) (*http.Request, bool, bool) {
	pc, ok := next.(Prechecker)
	if !ok {
		return r, false, true
	}
	r, proceed := pc.Precheck(w, r)
	return r, true, proceed
}

// Free is a Paywall that charges nothing: it runs the handler's Precheck
// and then the handler, with a Call whose Protocol is "free". For tests and
// for hosts that bill by other means.
type Free struct{}

// Gate implements Paywall.
func (Free) Gate(offer payment.Offer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, _, proceed := precheck(w, r, next)
		if !proceed {
			return
		}
		next.ServeHTTP(w, r.WithContext(payment.WithCall(r.Context(), &payment.Call{Payer: "free", Protocol: payment.ProtocolFree, Offer: offer})))
	})
}
