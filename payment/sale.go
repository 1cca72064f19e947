package payment

import (
	"context"
	"errors"
)

// CredentialProblem is the refusal of a credential that could not be
// read, the same on every transport: the processor's own Problem when it
// returned one, else 400 malformed-credential (a credential the processor
// cannot read is the payer's mistake: 400, never 500).
func CredentialProblem(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	return &Problem{Status: 400, Type: "malformed-credential", Reason: "invalid_payload", Detail: "Malformed payment credential: " + err.Error()}
}

// ErrWorkFailed is matched (errors.Is) by the error Charge.Run returns
// when the paid work failed: the order failed, the payment was released
// and nothing was settled.
var ErrWorkFailed = errors.New("payment: paid work failed")

type workFailed struct{ err error }

func (e *workFailed) Error() string   { return "payment: paid work failed: " + e.err.Error() }
func (e *workFailed) Unwrap() []error { return []error{ErrWorkFailed, e.err} }

// Run is the second half of the one sale every transport makes (the HTTP
// Gate, MCP tools and A2A messages): Begin verified and reserved the
// payment and opened the order; Run does the paid work and then settles or
// voids. work runs with the Call in its context (CallFrom) and the offer's
// WorkTimeout. When work returns an error, the order fails with the
// error's text as its reason (the payment is released, never settled) and
// Run returns an error matching ErrWorkFailed and work's error. When work
// panics, the order fails and the panic goes on. Otherwise the response is
// completed as Complete does: settled, stored, receipted; its errors are
// Complete's (ErrSettlementPending, ErrSettlementFailed, storage).
//
// ctx is the call's context (not the work's): settlement and failure use
// it, so that a work timeout never prevents settling delivered work.
func (ch *Charge) Run(ctx context.Context, work func(ctx context.Context) (Response, error)) (*Completion, error) {
	wctx := WithCall(ctx, ch.Call())
	if wt := ch.Call().Offer.WorkTimeout; wt > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(wctx, wt)
		defer cancel()
	}
	resp, err := ch.work(ctx, wctx, work)
	if err != nil {
		_ = ch.Fail(ctx, err.Error())
		return nil, &workFailed{err: err}
	}
	return ch.Complete(ctx, resp)
}

// work calls work, failing the order on a panic before re-raising it.
func (ch *Charge) work(ctx, wctx context.Context, work func(ctx context.Context) (Response, error)) (Response, error) {
	defer func() {
		if p := recover(); p != nil {
			_ = ch.Fail(ctx, "handler panicked")
			panic(p)
		}
	}()
	return work(wctx)
}
