package httpgate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
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
