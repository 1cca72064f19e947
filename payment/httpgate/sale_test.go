package httpgate_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
)

// TestChargeRun drives the one sale's run step: the work sees the call
// and a deadline; a failing work voids and reports ErrWorkFailed with the
// work's error; a panicking work voids and panics on; a succeeding work
// settles.
func TestChargeRun(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	ctx := context.Background()
	res := payment.Resource{URL: "mcp://api.example.test/verify_claim_quick"}
	begin := func(nonce string) *payment.Charge {
		t.Helper()
		cred, err := gatetest.ParseCredential(gatetest.Credential("0xA", nonce))
		if err != nil {
			t.Fatal(err)
		}
		ch, err := e.cashier.Begin(ctx, quickOffer, res, cred, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}

	down := errors.New("provider down")
	_, err := begin("r1").Run(ctx, func(context.Context) (payment.Response, error) { return payment.Response{}, down })
	if !errors.Is(err, payment.ErrWorkFailed) || !errors.Is(err, down) {
		t.Fatalf("failed work: %v", err)
	}
	if e.proc.Voided("0xa", "r1") != 1 || e.proc.Settled("0xa", "r1") != 0 {
		t.Fatal("failed work settled or did not void")
	}

	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not go on")
			}
		}()
		_, _ = begin("r2").Run(ctx, func(context.Context) (payment.Response, error) { panic("boom") })
	}()
	if e.proc.Voided("0xa", "r2") != 1 || e.proc.Settled("0xa", "r2") != 0 {
		t.Fatal("panicking work settled or did not void")
	}

	ch := begin("r3")
	comp, err := ch.Run(ctx, func(wctx context.Context) (payment.Response, error) {
		call, ok := payment.CallFrom(wctx)
		if !ok || call.OrderID != ch.Order().ID {
			t.Errorf("work's call = %+v, %v", call, ok)
		}
		if _, ok := wctx.Deadline(); !ok && quickOffer.WorkTimeout > 0 {
			t.Error("work has no deadline")
		}
		return payment.Response{Body: []byte(`{}`)}, nil
	})
	if err != nil || comp.Order.Status != payment.OrderCompleted || e.proc.Settled("0xa", "r3") != 1 {
		t.Fatalf("completed work: %+v, %v", comp, err)
	}
}

// TestSellWaiver: an answer whose work asks for a waiver under the offer's
// Waiver is delivered without charge: voided order and receipt (amount 0,
// "voided": true), the payment voided, never settled; the same credential
// (with its Idempotency-Key) again replays it; beyond the payer's daily bound, or without a waiver,
// or for another reason, the answer is charged.
func TestSellWaiver(t *testing.T) {
	var mu sync.Mutex
	events := map[string]int{}
	e := newEnv(t, nil, nil, func(o *httpgate.Options) {
		o.OnEvent = func(ev payment.PaymentEvent) {
			mu.Lock()
			defer mu.Unlock()
			events[ev.Outcome]++
		}
	})
	ctx := context.Background()
	offer := quickOffer
	offer.Waiver = &payment.Waiver{Reason: "insufficient_evidence", PerPayerPerDay: 2}
	res := payment.Resource{URL: "mcp://api.example.test/verify_claim_quick"}
	sell := func(o payment.Offer, payer, nonce, waive string) *payment.Outcome {
		t.Helper()
		cred, err := gatetest.ParseCredential(gatetest.Credential(payer, nonce))
		if err != nil {
			t.Fatal(err)
		}
		return e.cashier.Sell(ctx, &payment.Purchase{Offer: o, Resource: res, Credential: cred, RequestHash: "h-" + nonce, IdempotencyKey: "k-" + nonce,
			Work: func(wctx context.Context) (payment.Response, error) {
				call, _ := payment.CallFrom(wctx)
				call.SetResult("verification", "cv_"+nonce)
				if waive != "" {
					call.Waive(waive)
				}
				return payment.Response{Body: []byte(`{"status":"insufficient_evidence"}`)}, nil
			}})
	}
	out := sell(offer, "0xA", "w1", "insufficient_evidence")
	if out.Kind != payment.OutcomeDelivered || !out.Completion.Voided || out.Completion.Settlement != nil ||
		out.Completion.Order.Status != payment.OrderVoided {
		t.Fatalf("waived sale: %+v", out)
	}
	if e.proc.Settled("0xa", "w1") != 0 || e.proc.Voided("0xa", "w1") != 1 {
		t.Fatalf("waived payment: settled %d, voided %d", e.proc.Settled("0xa", "w1"), e.proc.Voided("0xa", "w1"))
	}
	r, err := payment.VerifyReceipt(out.Completion.ReceiptJSON, e.cashier.Keys())
	if err != nil || !r.Voided || r.AmountMicroUSD != 0 || r.SettlementReference != "" || r.ResultID != "cv_w1" {
		t.Fatalf("voided receipt %+v: %v", r, err)
	}
	stored, err := e.cashier.Ledger().Order(ctx, out.Order.ID)
	if err != nil || stored.Status != payment.OrderVoided {
		t.Fatalf("stored order %+v, %v", stored, err)
	}
	if d := r.MatchesOrder(stored); d != nil {
		t.Errorf("the voided receipt disagrees with its order: %v", d)
	}
	if again := sell(offer, "0xA", "w1", "insufficient_evidence"); again.Kind != payment.OutcomeReplayed || again.Order.ID != out.Order.ID {
		t.Fatalf("the same credential again: %+v", again)
	}
	// Charged: no waiver on the offer, another reason, the bound reached.
	for _, c := range []struct {
		name, nonce, waive string
		offer              payment.Offer
	}{
		{"no waiver", "c1", "insufficient_evidence", quickOffer},
		{"another reason", "c2", "ambiguous", offer},
		{"second of the day: free", "c3", "insufficient_evidence", offer},
		{"third of the day: charged", "c4", "insufficient_evidence", offer},
	} {
		out := sell(c.offer, "0xA", c.nonce, c.waive)
		wantFree := c.nonce == "c3"
		if out.Kind != payment.OutcomeDelivered || out.Completion.Voided != wantFree || (e.proc.Settled("0xa", c.nonce) == 1) == wantFree {
			t.Errorf("%s: kind %v, voided %v, settled %d", c.name, out.Kind, out.Completion.Voided, e.proc.Settled("0xa", c.nonce))
		}
	}
	// The metrics hear of every free verdict and of the one beyond the
	// bound; a free verdict is never counted as settled.
	mu.Lock()
	defer mu.Unlock()
	if events["waived"] != 2 || events["waiver_exhausted"] != 1 || events["settled"] != 3 {
		t.Errorf("events %v: want 2 waived, 1 waiver_exhausted, 3 settled", events)
	}
}
