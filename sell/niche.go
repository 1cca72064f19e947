package sell

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
)

// Niche sells the niche catalogue, whatever the transport: previews for
// everyone (with the ways to unlock the full evaluation), full evaluations
// for subscribers and for the holders of an unlock token bought per call,
// full-text searches within a daily quota, and the paid search.
//
// Choices where the interface document says "not shown":
//
//   - Anonymous searches (and list filters, which are searches) match
//     what previews show; subscribers' match the full text. Anonymous
//     callers get FreeSearchesPerDay per UTC day (default 3; 0: none;
//     UnlimitedSearches: no quota), counted per caller address
//     pseudonymised with an HMAC (Caller.Address), subscribers are
//     unlimited unless SubscriberSearchesPerDay is set. Only searches
//     that find something count: one that finds nothing (or fails) gives
//     its use back; a query without any letter or digit is not counted.
//   - An unlock token (x-niche-paid-call) is bound to one evaluation and
//     to the order that bought it; it unlocks only once that order
//     completed (settled). A malformed, forged, expired or foreign token
//     is ignored (treated as absent).
type Niche struct {
	engine   *niche.Engine
	subs     niche.Subscribers
	unlock   *niche.UnlockSigner
	ledger   payment.Ledger
	log      *slog.Logger
	quotaKey []byte
	// free is the resolved free quota: a limit, 0 or UnlimitedSearches.
	free, subQuota   int
	prefix, checkout string
	trusted          []netip.Prefix
	evalOffer        payment.Offer
	searchOffer      payment.Offer
	evalPrice        string
	searchPrice      string
}

// Search quotas (NicheOptions.FreeSearchesPerDay).
const (
	// DefaultFreeSearchesPerDay is the free quota when
	// NicheOptions.FreeSearchesPerDay is nil.
	DefaultFreeSearchesPerDay = 3
	// UnlimitedSearches turns a quota off.
	UnlimitedSearches = -1
)

// NicheOptions configure NewNiche. Nil means defaults.
type NicheOptions struct {
	// Subscribers checks subscriber tokens; nil means no subscriber
	// access.
	Subscribers niche.Subscribers
	// Unlock signs and verifies unlock tokens; nil means pay-per-call
	// answers carry no token and unlock tokens are ignored.
	Unlock *niche.UnlockSigner
	// Ledger is where an unlock token's order is looked up (nil: no
	// check, for hosts that sell without orders).
	Ledger payment.Ledger
	// FreeSearchesPerDay is the anonymous quota per caller and UTC day.
	// Nil means DefaultFreeSearchesPerDay; a pointer to 0 means no free
	// search; a pointer to UnlimitedSearches means no quota.
	FreeSearchesPerDay *int
	// SubscriberSearchesPerDay is the subscriber quota; 0 or negative
	// means unlimited.
	SubscriberSearchesPerDay int
	// QuotaKey pseudonymises caller addresses (HMAC). Nil means a random
	// per-process key (quotas are then not shared between instances).
	QuotaKey []byte
	// TrustedProxies are the peers whose forwarded client addresses are
	// believed (ClientAddress). Empty means the peer is the caller.
	TrustedProxies []netip.Prefix
	// Prefix is the HTTP service prefix the unlock blocks' paths carry
	// ("" for the canonical paths).
	Prefix string
	// CheckoutPath is the subscription checkout unlock blocks name; ""
	// names none.
	CheckoutPath string
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
}

// NewNiche returns the niche catalogue sold from cat.
func NewNiche(engine *niche.Engine, cat *Catalogue, o *NicheOptions) (*Niche, error) {
	if o == nil {
		o = &NicheOptions{}
	}
	n := &Niche{engine: engine, subs: o.Subscribers, unlock: o.Unlock, ledger: o.Ledger, log: o.Logger, quotaKey: o.QuotaKey,
		free: DefaultFreeSearchesPerDay, subQuota: o.SubscriberSearchesPerDay, prefix: o.Prefix, checkout: o.CheckoutPath, trusted: o.TrustedProxies,
		evalOffer: cat.Offer(OfferNicheEvaluation), searchOffer: cat.Offer(OfferNicheSearch)}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	if o.FreeSearchesPerDay != nil {
		n.free = *o.FreeSearchesPerDay
	}
	if n.free < 0 && n.free != UnlimitedSearches {
		return nil, fmt.Errorf("sell: FreeSearchesPerDay must be 0 or more, or UnlimitedSearches (-1)")
	}
	if n.subQuota <= 0 {
		n.subQuota = UnlimitedSearches
	}
	if len(n.quotaKey) == 0 {
		n.quotaKey = make([]byte, 32)
		if _, err := rand.Read(n.quotaKey); err != nil {
			return nil, fmt.Errorf("sell: quota key: %w", err)
		}
	}
	n.evalPrice = payment.MicroUSD(n.evalOffer.AmountMicroUSD).String()
	n.searchPrice = payment.MicroUSD(n.searchOffer.AmountMicroUSD).String()
	return n, nil
}

// Engine returns the catalogue engine.
func (n *Niche) Engine() *niche.Engine { return n.engine }

// EvaluationOffer and SearchOffer are the catalogue's niche offers.
func (n *Niche) EvaluationOffer() payment.Offer { return n.evalOffer }

// SearchOffer is the offer of the paid search.
func (n *Niche) SearchOffer() payment.Offer { return n.searchOffer }

// Prefix is the HTTP service prefix of the paths the answers carry.
func (n *Niche) Prefix() string { return n.prefix }

// Caller is who asks: what the transport read of the caller's identity.
type Caller struct {
	// SubscriberToken is the bearer token presented ("" for none).
	SubscriberToken string
	// UnlockToken is an unlock token presented ("" for none).
	UnlockToken string
	// Session is the secret of a signed-in browser session ("" for
	// none): it is granted what its subscriber token is granted, when
	// the Subscribers know sessions (niche.SessionSubscribers). A
	// SubscriberToken, when both are given, wins.
	Session string
	// Address identifies an anonymous caller for the free quota (the
	// client address as the transport trusts it); it is pseudonymised
	// before it is stored.
	Address string
}

// The refusals of the niche catalogue. Transports render them with
// Refusal.
var (
	// ErrSubscriptionInactive: the subscriber token presented is not
	// active (401 with a Bearer challenge).
	ErrSubscriptionInactive = errors.New("sell: the subscription token is not active")
	// ErrSubscriptionUnavailable: the subscription service could not
	// answer (503).
	ErrSubscriptionUnavailable = errors.New("sell: the subscription service is unavailable")
)

// LockedError is a full read without a subscription or unlock token: how
// to get either (401 with the unlock block).
type LockedError struct{ Locked NicheLocked }

func (e *LockedError) Error() string { return "sell: " + e.Locked.Detail }

// SearchSubscriptionError is a search when the free quota is 0 (401).
type SearchSubscriptionError struct{ Detail string }

func (e *SearchSubscriptionError) Error() string { return "sell: " + e.Detail }

// QuotaError is a search past its daily quota (429 with Retry-After).
type QuotaError struct {
	Detail  string
	Limit   int
	ResetAt time.Time
	// RetryAfter is the wait in whole seconds (at least 1).
	RetryAfter int
}

func (e *QuotaError) Error() string { return "sell: " + e.Detail }

// Is makes errors.Is(err, niche.ErrQuotaExceeded) true.
func (e *QuotaError) Is(t error) bool { return t == niche.ErrQuotaExceeded }

// NotDeliveredError is a read of a paid result whose order has not
// completed (409; RetryAfter while it may still complete).
type NotDeliveredError struct {
	Status     string
	RetryAfter int
}

func (e *NotDeliveredError) Error() string {
	return "sell: the order is " + e.Status + "; its result is available once it is completed"
}

// Unlock is the unlock block of an evaluation: how to buy it, and the
// subscription checkout.
func (n *Niche) Unlock(id string) *niche.Unlock {
	u := &niche.Unlock{
		PayPerCall: niche.UnlockPayPerCall{Method: "GET", Path: n.prefix + "/v1/niches/" + url.PathEscape(id) + "/pay-per-call",
			AmountMicroUSD: n.evalOffer.AmountMicroUSD, PriceUSD: n.evalPrice,
			Asset: "USDC", Network: "eip155:8453", Protocols: []string{"x402", "mpp"}},
	}
	if n.checkout != "" {
		u.Subscription = &niche.UnlockSubscription{CheckoutMethod: "POST", CheckoutPath: n.checkout,
			Header: "Authorization: Bearer <subscriber token>"}
	}
	return u
}

func (n *Niche) withUnlock(ps []niche.Preview) []niche.Preview {
	for i := range ps {
		ps[i].Unlock = n.Unlock(ps[i].ID)
	}
	return ps
}

// subscriber returns the caller's subscriber: nil without a token,
// ErrSubscriptionInactive or ErrSubscriptionUnavailable.
func (n *Niche) subscriber(ctx context.Context, c Caller) (*niche.Subscriber, error) {
	if c.SubscriberToken == "" && c.Session == "" {
		return nil, nil
	}
	if n.subs == nil {
		return nil, ErrSubscriptionInactive
	}
	var sub *niche.Subscriber
	var err error
	if c.SubscriberToken != "" {
		sub, err = n.subs.Active(ctx, c.SubscriberToken)
	} else if ss, ok := n.subs.(niche.SessionSubscribers); ok {
		sub, err = ss.ActiveSession(ctx, c.Session)
	} else {
		return nil, ErrSubscriptionInactive
	}
	switch {
	case errors.Is(err, niche.ErrNotSubscribed):
		return nil, ErrSubscriptionInactive
	case err != nil:
		n.log.WarnContext(ctx, "niche: subscriber check failed", "err", err)
		return nil, ErrSubscriptionUnavailable
	}
	return sub, nil
}

// callerKey pseudonymises a caller address for the quota table.
func (n *Niche) callerKey(addr string) string {
	m := hmac.New(sha256.New, n.quotaKey)
	m.Write([]byte("niche-search-ip\x00" + addr))
	return "ip:" + hex.EncodeToString(m.Sum(nil)[:16])
}

// takeQuota counts one full-text search against the caller's daily quota
// (nil: not counted).
func (n *Niche) takeQuota(ctx context.Context, query string, c Caller, sub *niche.Subscriber) (*niche.QuotaStatus, error) {
	if niche.ParseQuery(query).Empty() {
		return nil, nil // matches nothing: not counted
	}
	caller, limit := n.callerKey(c.Address), n.free
	if sub != nil {
		caller, limit = "sub:"+sub.ID, n.subQuota
	}
	switch limit {
	case UnlimitedSearches:
		return nil, nil
	case 0:
		return nil, &SearchSubscriptionError{Detail: fmt.Sprintf(
			"Searching requires a subscription (Authorization: Bearer <token>); or use %s/v1/search/pay-per-call", n.prefix)}
	}
	st, err := n.engine.TakeQuota(ctx, caller, limit)
	var qe *niche.QuotaError
	if errors.As(err, &qe) {
		wait := max(int(math.Ceil(time.Until(qe.ResetAt).Seconds())), 1)
		resets := fmt.Sprintf("The quota resets at %s (in %d s); searches that find nothing are not counted.",
			qe.ResetAt.UTC().Format(time.RFC3339), wait)
		detail := fmt.Sprintf("Free search limit reached: %d searches per UTC day. %s Subscribe, or use %s/v1/search/pay-per-call, for more.", qe.Limit, resets, n.prefix)
		if sub != nil {
			detail = fmt.Sprintf("Search limit reached: %d searches per UTC day. %s", qe.Limit, resets)
		}
		return nil, &QuotaError{Detail: detail, Limit: qe.Limit, ResetAt: qe.ResetAt.UTC(), RetryAfter: wait}
	}
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// settleQuota gives back a counted search (nil: none) that found nothing,
// and returns the status to show.
func (n *Niche) settleQuota(ctx context.Context, quota *niche.QuotaStatus, found bool) *niche.QuotaStatus {
	if quota == nil || found {
		return quota
	}
	st, err := n.engine.ReturnQuota(ctx, *quota)
	if err != nil {
		n.log.WarnContext(ctx, "niche: giving back a search quota failed", "err", err)
		return quota
	}
	return &st
}

// List lists published evaluations as previews. A text filter is a
// search: it counts against the caller's quota and matches the full text
// for subscribers only.
func (n *Niche) List(ctx context.Context, q niche.ListOptions, c Caller) (*NicheListResponse, error) {
	var sub *niche.Subscriber
	var quota *niche.QuotaStatus
	scope := ""
	if !niche.ParseQuery(q.Query).Empty() {
		var err error
		if sub, err = n.subscriber(ctx, c); err != nil {
			return nil, err
		}
		if quota, err = n.takeQuota(ctx, q.Query, c, sub); err != nil {
			return nil, err
		}
		scope = "preview"
		if sub != nil {
			scope = "full"
		}
	}
	o := q
	o.Full = sub != nil
	res, err := n.engine.List(ctx, o)
	if err != nil {
		n.settleQuota(ctx, quota, false)
		return nil, err
	}
	quota = n.settleQuota(ctx, quota, len(res.Previews) > 0)
	return &NicheListResponse{
		Niches: n.withUnlock(res.Previews), Count: len(res.Previews), Query: q.Query, Category: q.Category,
		Sort: q.Sort, Limit: q.Limit, Access: "preview", QueryScope: scope, Quota: quota, SearchPath: n.prefix + "/v1/search",
	}, nil
}

// Preview returns the free preview of a published evaluation.
func (n *Niche) Preview(ctx context.Context, id string) (*NichePreviewResponse, error) {
	p, err := n.engine.Preview(ctx, id)
	if err != nil {
		return nil, err
	}
	p.Unlock = n.Unlock(p.ID)
	return &NichePreviewResponse{Preview: *p, Access: "preview"}, nil
}

// Search searches the catalogue for c: previews matched on what previews
// show within the free quota, or full evaluations for a subscriber.
func (n *Niche) Search(ctx context.Context, q niche.SearchOptions, c Caller) (*NicheSearchResponse, error) {
	sub, err := n.subscriber(ctx, c)
	if err != nil {
		return nil, err
	}
	quota, err := n.takeQuota(ctx, q.Query, c, sub)
	if err != nil {
		return nil, err
	}
	access := "preview"
	if sub != nil {
		access = "full"
	}
	return n.search(ctx, q, sub != nil, quota, access)
}

// CheckPaidSearch is the check of a paid search before any charge: an
// empty catalogue is niche.ErrEmptyCatalogue.
func (n *Niche) CheckPaidSearch(ctx context.Context) error {
	has, err := n.engine.HasPublished(ctx)
	if err != nil {
		return err
	}
	if !has {
		return niche.ErrEmptyCatalogue
	}
	return nil
}

// PaidSearch is the work of a paid search (the payment in ctx): full
// evaluations matched on the full text, without quota.
func (n *Niche) PaidSearch(ctx context.Context, q niche.SearchOptions) (*NicheSearchResponse, error) {
	if call, ok := payment.CallFrom(ctx); ok {
		call.SetResult("niche_search", "")
	}
	return n.search(ctx, q, true, nil, "pay_per_call")
}

func (n *Niche) search(ctx context.Context, q niche.SearchOptions, full bool, quota *niche.QuotaStatus, access string) (*NicheSearchResponse, error) {
	o := q
	o.Full = full
	res, err := n.engine.Search(ctx, o)
	if err != nil {
		n.settleQuota(ctx, quota, false)
		return nil, err
	}
	quota = n.settleQuota(ctx, quota, len(res.Previews)+len(res.Evaluations) > 0)
	out := &NicheSearchResponse{
		Query: q.Query, NormalizedQuery: res.Query.Phrase(), Category: q.Category, Sort: q.Sort, Limit: q.Limit,
		Access: access, RankingMethod: niche.RelevanceVersion + ", then " + q.Sort + ", then id",
		Truncated: res.Truncated, Quota: quota,
	}
	if full {
		out.Niches, out.Count = res.Evaluations, len(res.Evaluations)
	} else {
		out.Niches, out.Count = n.withUnlock(res.Previews), len(res.Previews)
		out.PayPerCall = &NicheSearchOffer{Method: "GET", Path: n.prefix + "/v1/search/pay-per-call",
			AmountMicroUSD: n.searchOffer.AmountMicroUSD, PriceUSD: n.searchPrice}
	}
	return out, nil
}

// NicheGrant is how a caller may read a full evaluation.
type NicheGrant struct {
	// Kind is "subscription" or "pay_per_call".
	Kind string
	// OrderID is the order that bought the unlock token, when it names
	// one.
	OrderID string
}

// Full returns a published evaluation to a subscriber or to the holder
// of an unlock token for it whose order completed; otherwise a
// *LockedError (how to unlock it), ErrSubscriptionUnavailable or a
// *NotDeliveredError.
func (n *Niche) Full(ctx context.Context, id string, c Caller) (*niche.Evaluation, NicheGrant, error) {
	ev, err := n.engine.Published(ctx, id)
	if err != nil {
		return nil, NicheGrant{}, err
	}
	sub, subErr := n.subscriber(ctx, c)
	switch {
	case errors.Is(subErr, ErrSubscriptionUnavailable):
		return nil, NicheGrant{}, subErr
	case sub != nil:
		return ev, NicheGrant{Kind: "subscription"}, nil
	}
	if c.UnlockToken != "" && n.unlock != nil {
		if claims, err := n.unlock.Parse(c.UnlockToken, id); err == nil {
			g := NicheGrant{Kind: "pay_per_call"}
			if ids.Valid(ids.Order, claims.OrderRef) {
				g.OrderID = claims.OrderRef
				if err := Delivered(ctx, n.ledger, g.OrderID); err != nil {
					return nil, NicheGrant{}, err
				}
			}
			return ev, g, nil
		}
	}
	detail := "A subscription (Authorization: Bearer <token>) or a pay-per-call unlock token (x-niche-paid-call) is required to read the full evaluation"
	if subErr != nil {
		detail = "The subscription token is not active; subscribe again or buy this evaluation per call"
	}
	return nil, NicheGrant{}, &LockedError{Locked: NicheLocked{Detail: detail, Unlock: n.Unlock(id)}}
}

// Buy is the work of a pay-per-call evaluation (the payment in ctx): the
// full evaluation and an unlock token for it, bound to the order.
func (n *Niche) Buy(ctx context.Context, id string) (*NicheEvaluationResponse, error) {
	ev, err := n.engine.Published(ctx, id)
	if err != nil {
		return nil, err
	}
	access := NicheAccess{Kind: "pay_per_call"}
	orderRef := ""
	if call, ok := payment.CallFrom(ctx); ok {
		call.SetResult("niche", id)
		access.OrderID, access.Payer = call.OrderID, call.Payer
		orderRef = call.OrderID
	}
	if n.unlock != nil {
		tok, exp, err := n.unlock.Issue(id, orderRef)
		if err != nil {
			// An order id outside the token alphabet: sign without it.
			tok, exp, err = n.unlock.Issue(id, "")
		}
		if err != nil {
			return nil, err
		}
		access.UnlockToken, access.UnlockExpiresAt = tok, &exp
	}
	return &NicheEvaluationResponse{Evaluation: ev, Access: access}, nil
}

// Delivered checks the one rule of every read of a paid result: only the
// result of an order that delivered it for good is delivered (completed,
// or voided: delivered without charge). It returns nil for such an order
// (or without a ledger), a *NotDeliveredError otherwise, or
// payment.ErrOrderNotFound.
func Delivered(ctx context.Context, l payment.Ledger, orderID string) error {
	if l == nil {
		return nil
	}
	o, err := l.Order(ctx, orderID)
	if err != nil {
		return err
	}
	return DeliveredOrder(o)
}

// DeliveredOrder is Delivered for an order already read.
func DeliveredOrder(o *payment.Order) error {
	if o.Status.Delivered() {
		return nil
	}
	e := &NotDeliveredError{Status: string(o.Status)}
	if o.Status == payment.OrderSettling || o.Status == payment.OrderProcessing {
		e.RetryAfter = 5
	}
	return e
}

// ClientAddress returns the caller's address for the free quota: the
// peer, or — when the peer is a trusted proxy — the right-most forwarded
// address (X-Forwarded-For, in the order the values arrived) that is not
// a trusted proxy itself.
func (n *Niche) ClientAddress(peer string, forwarded []string) string {
	if host, _, err := net.SplitHostPort(peer); err == nil {
		peer = host
	}
	addr, err := netip.ParseAddr(peer)
	if err != nil {
		return peer
	}
	addr = addr.Unmap()
	if !n.trustedAddr(addr) {
		return addr.String()
	}
	var all []string
	for _, h := range forwarded {
		for _, p := range strings.Split(h, ",") {
			all = append(all, strings.TrimSpace(p))
		}
	}
	for i := len(all) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(all[i])
		if err != nil {
			break // garbage: stop believing the chain
		}
		a = a.Unmap()
		if !n.trustedAddr(a) {
			return a.String()
		}
		addr = a
	}
	return addr.String()
}

func (n *Niche) trustedAddr(a netip.Addr) bool {
	for _, p := range n.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
