package payment

import (
	"context"
	"errors"
)

// The one sale. Every transport (the HTTP gate, MCP tools, A2A messages)
// reads what the payer sent into a Purchase, calls Cashier.Sell, and renders
// the Outcome it gets back: the sequence (customer, quote, credential,
// begin, replay or pending, run, settle or void, receipt) and the mapping of
// every refusal to an outcome are written here once.

// Purchase is one paid call as a transport read it.
type Purchase struct {
	// Offer is what the call sells, at its list price (a quote named by
	// Resource.QuoteID or by the credential prices it).
	Offer Offer
	// Resource is the request being paid for; challenges and credentials
	// are bound to it.
	Resource Resource
	// Credential is the payment the payer presented, nil for none.
	Credential *Credential
	// CredentialErr is set when the transport found a credential it could
	// not read (malformed): the sale is refused with CredentialProblem.
	CredentialErr error
	// CustomerKey, IdempotencyKey and RequestHash are BeginOptions'.
	CustomerKey    string
	IdempotencyKey string
	RequestHash    string
	// Started, when set, is called once the order is open and before the
	// work runs (a transport that streams sends the order id and token
	// then).
	Started func(ch *Charge)
	// Work does the paid work with the Call in its context (CallFrom) and
	// the offer's WorkTimeout. An error fails the order: nothing is
	// charged.
	Work func(ctx context.Context) (Response, error)
}

// OutcomeKind says how a sale ended.
type OutcomeKind int

// The ways a sale ends. Each has one HTTP-equivalent status
// (Outcome.Status) that transports render in their own forms.
const (
	// OutcomeChallenged: no credential, or a credential refused in a way the
	// payer can answer by paying: Challenge holds a fresh challenge for
	// the request, Problem (when set) says why the credential was
	// refused. Status 402.
	OutcomeChallenged OutcomeKind = iota + 1
	// OutcomeRefused: the sale cannot go on, and paying again would not help:
	// a malformed credential (400, Problem and a fresh Challenge set), an
	// invalid customer key (401), an idempotency conflict (409), a
	// request in flight (409, RetryAfter), payments unavailable (503,
	// RetryAfter). Nothing was charged.
	OutcomeRefused
	// OutcomeDelivered: the work succeeded and the payment settled: Response,
	// Completion (receipt, settlement) and Order are set. Status 200 or
	// the response's.
	OutcomeDelivered
	// OutcomeReplayed: the purchase was answered from its completed order (the
	// credential's, or the Idempotency-Key's): Response is the stored
	// one, Order as stored, Token a fresh token. Nothing was charged.
	OutcomeReplayed
	// OutcomePending: the settlement outcome is not known (now, or still, for
	// a re-sent credential): the order is settling, its answer kept; the
	// payer must not pay again. Status 202, RetryAfter.
	OutcomePending
	// OutcomeDeferred: the processor could not be asked to settle; the payment is
	// held and the answer kept until it settles. Status 503, RetryAfter.
	OutcomeDeferred
	// OutcomeWorkFailed: the paid work failed (WorkErr): the order failed, the
	// payment was released and nothing was charged. The transport renders
	// the failure its work produced.
	OutcomeWorkFailed
	// OutcomeFailed: an internal error (storage, a processor bug). Status 500.
	// Nothing was delivered; an order, when one was opened, says what
	// became of the payment.
	OutcomeFailed
)

// Outcome is how a sale ended, for the transport to render.
type Outcome struct {
	Kind OutcomeKind
	// Status is the HTTP-equivalent status of the outcome.
	Status int
	// Detail is a sentence for the payer.
	Detail string
	// RetryAfter, when positive, is how many seconds the payer should
	// wait before trying again.
	RetryAfter int
	// Problem is the payment problem of a refused credential (OutcomeChallenged,
	// Refused with status 400 or 403), also of a refused settlement.
	Problem *Problem
	// Challenge is a fresh challenge for this request (Challenged; also
	// Refused with a Problem, for transports that can only answer with a
	// challenge). It does not carry Problem: each transport renders the
	// two together in its own form.
	Challenge *Challenge
	// Order and Token are the order the sale opened or answered from and
	// its order token (shown once), when there is one.
	Order *Order
	Token string
	// Response is what was delivered (Delivered) or stored (Replayed).
	Response *Response
	// Completion is the settlement and receipt of a Delivered sale.
	Completion *Completion
	// WorkErr is the work's error (WorkFailed), Err the cause of Failed.
	WorkErr error
	Err     error
}

// Sell makes one sale: it checks the customer key, prices the offer
// (quotes), answers a missing or refused credential with a fresh
// challenge, verifies and reserves the credential with its order (Begin),
// answers a purchase already made from its order, runs the work, and
// settles on success or voids on failure (Charge.Run). It never panics on
// a payer's input; a panic of Work fails the order and goes on.
func (c *Cashier) Sell(ctx context.Context, p *Purchase) *Outcome {
	if p.CustomerKey != "" {
		if _, err := c.Customer(ctx, p.CustomerKey); err != nil {
			return c.refusal(ctx, p.Offer, p.Resource, err)
		}
	}
	if p.CredentialErr != nil {
		c.report(PaymentEvent{Outcome: "rejected", OfferID: p.Offer.ID})
		return c.refusal(ctx, p.Offer, p.Resource, CredentialProblem(p.CredentialErr))
	}
	if p.Credential == nil {
		c.report(PaymentEvent{Outcome: "challenged", OfferID: p.Offer.ID})
		return c.Challenged(ctx, p.Offer, p.Resource, nil)
	}
	// Begin prices the offer itself (after answering a purchase already
	// made, whose quote is used).
	ch, err := c.Begin(ctx, p.Offer, p.Resource, p.Credential, &BeginOptions{
		CustomerKey: p.CustomerKey, IdempotencyKey: p.IdempotencyKey, RequestHash: p.RequestHash})
	if err != nil {
		return c.refusal(ctx, p.Offer, p.Resource, err)
	}
	ord := ch.Order()
	out := &Outcome{Order: &ord, Token: ch.OrderToken()}
	if stored, ok := ch.Replay(); ok {
		out.Kind, out.Status = OutcomeReplayed, stored.Status
		out.Response = &Response{Status: stored.Status, ContentType: stored.ContentType, Body: stored.Body}
		return out
	}
	if ch.Pending() {
		return pending(out)
	}
	if p.Started != nil {
		p.Started(ch)
	}
	comp, err := ch.Run(ctx, p.Work)
	if comp != nil {
		out.Order = &comp.Order
	}
	var pr *Problem
	switch {
	case err == nil:
		out.Kind, out.Status, out.Completion = OutcomeDelivered, comp.Response.Status, comp
		out.Response = &comp.Response
		return out
	case errors.Is(err, ErrWorkFailed):
		out.Kind, out.WorkErr = OutcomeWorkFailed, err
		var wf *workFailed
		if errors.As(err, &wf) {
			out.WorkErr = wf.err
		}
		return out
	case errors.Is(err, ErrSettlementDeferred):
		out.Kind, out.Status, out.Detail, out.RetryAfter = OutcomeDeferred, 503, SettlementDeferredDetail, retryAfter
		return out
	case errors.Is(err, ErrSettlementPending):
		return pending(out)
	case errors.Is(err, ErrSettlementFailed):
		// A fresh challenge for this very request: its resource, body
		// digest and quote (released by the failure), so that it can be
		// paid on a POST or quoted route.
		pr = &Problem{Status: 402, Type: "verification-failed", Reason: "settlement_failed"}
		var sp *Problem
		if errors.As(err, &sp) {
			*pr = *sp
			pr.Status = 402
		}
		pr.Detail = "Settlement failed: " + problemDetail(err)
		o := c.Challenged(ctx, ch.Call().Offer, ch.Resource(), pr)
		o.Order, o.Token = out.Order, out.Token
		return o
	}
	c.log.ErrorContext(ctx, "payment: completing a paid call", "order", ord.ID, "err", err)
	out.Kind, out.Status, out.Detail, out.Err = OutcomeFailed, 500, "Internal Server Error", err
	return out
}

// retryAfter is the Retry-After, in seconds, of pending and unavailable
// answers.
const retryAfter = 5

// SettlementPendingDetail tells a payer whose order is settling what to do.
const SettlementPendingDetail = "Payment settlement is pending. Do not pay again: poll the order with its token until it is completed, then read its result."

// SettlementDeferredDetail tells a payer whose settlement is deferred
// (ErrSettlementDeferred) what to do.
const SettlementDeferredDetail = "The payment service is temporarily unavailable. Your payment is held, not charged yet, and your answer is kept: retry with the same payment credential after Retry-After (or poll the order with its token). Do not pay again."

// UnavailableDetail is the detail of a payment step that failed because
// the processor cannot take payments now (ErrProcessorUnavailable): the
// payment was not used. It names no address and no internal error.
func UnavailableDetail(err error) string {
	if errors.Is(err, ErrNetworkUnsupported) {
		return "Payments are temporarily unavailable: the payment facilitator does not accept payments on this network now. Nothing was charged; retry later."
	}
	return "Payment verification is temporarily unavailable; the payment was not used"
}

// PaymentInFlightDetail is the 409 detail for a retry of a payment whose
// first request is still being processed.
const PaymentInFlightDetail = "A request with this payment is still being processed; retry with the same payment shortly"

func pending(out *Outcome) *Outcome {
	out.Kind, out.Status, out.Detail, out.RetryAfter = OutcomePending, 202, SettlementPendingDetail, retryAfter
	return out
}

// Challenged is the outcome that asks for payment: a fresh challenge for
// offer at res, priced by res's quote (a quote that cannot be used is
// reported, and the challenge is then at the offer's own price); problem,
// when set, says why the previous payment was refused.
func (c *Cashier) Challenged(ctx context.Context, offer Offer, res Resource, problem *Problem) *Outcome {
	priced, err := c.PriceOffer(ctx, offer, res.QuoteID)
	var qp *Problem
	if err != nil && errors.As(err, &qp) && isQuoteProblem(qp) {
		res.QuoteID, priced, problem = "", offer, qp
	} else if err != nil {
		return c.refusal(ctx, offer, Resource{}, err)
	}
	ch, err := c.p.Challenge(ctx, priced, res)
	switch {
	case errors.Is(err, ErrProcessorUnavailable):
		return unavailable(c, ctx, err)
	case err != nil || ch == nil:
		c.log.ErrorContext(ctx, "payment: challenge", "offer", offer.ID, "err", err)
		return &Outcome{Kind: OutcomeFailed, Status: 500, Detail: "Internal Server Error", Err: err}
	}
	detail := "Payment required"
	if problem != nil {
		detail = problem.Detail
	}
	return &Outcome{Kind: OutcomeChallenged, Status: 402, Detail: detail, Problem: problem, Challenge: ch}
}

func unavailable(c *Cashier, ctx context.Context, err error) *Outcome {
	c.log.WarnContext(ctx, "payment: processor unavailable", "err", err)
	return &Outcome{Kind: OutcomeRefused, Status: 503, Detail: UnavailableDetail(err), RetryAfter: retryAfter, Err: err}
}

// refusal maps every way a payment step can refuse a sale to its outcome:
// the one place where refusals become statuses.
func (c *Cashier) refusal(ctx context.Context, offer Offer, res Resource, err error) *Outcome {
	var p *Problem
	switch {
	case errors.As(err, &p) && (p.Status == 402 || p.Status == 0):
		if isQuoteProblem(p) {
			res.QuoteID = ""
		}
		return c.Challenged(ctx, offer, res, p)
	case errors.As(err, &p):
		o := &Outcome{Kind: OutcomeRefused, Status: p.Status, Detail: p.Detail, Problem: p}
		if p.Detail == "" {
			o.Detail = p.Reason
		}
		if ch := c.Challenged(ctx, offer, res, p); ch.Kind == OutcomeChallenged {
			o.Challenge = ch.Challenge
		}
		return o
	case errors.Is(err, ErrInvalidCustomerKey):
		return &Outcome{Kind: OutcomeRefused, Status: 401, Detail: "A valid X-Agentic-Customer-Key is required"}
	case errors.Is(err, ErrIdempotencyConflict):
		return &Outcome{Kind: OutcomeRefused, Status: 409, Detail: "Idempotency-Key was already used for a different request"}
	case errors.Is(err, ErrIdempotencyInFlight):
		return &Outcome{Kind: OutcomeRefused, Status: 409, Detail: "A request with this Idempotency-Key is still being processed", RetryAfter: 1}
	case errors.Is(err, ErrPaymentInFlight):
		return &Outcome{Kind: OutcomeRefused, Status: 409, Detail: PaymentInFlightDetail, RetryAfter: 1}
	case errors.Is(err, ErrProcessorUnavailable):
		return unavailable(c, ctx, err)
	}
	c.log.ErrorContext(ctx, "payment: refusing a sale", "offer", offer.ID, "err", err)
	return &Outcome{Kind: OutcomeFailed, Status: 500, Detail: "Internal Server Error", Err: err}
}

func isQuoteProblem(p *Problem) bool {
	return p.Reason == ReasonQuoteMismatch || p.Reason == ReasonQuoteUsed || p.Reason == ReasonQuoteUnknown || p.Reason == ReasonQuoteExpired
}
