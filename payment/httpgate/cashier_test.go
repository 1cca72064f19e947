package httpgate_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
)

// TestCashierWithoutHTTP uses the Cashier the way the MCP and A2A
// transports do: credential from the message, Begin, work, Complete or
// Fail.
func TestCashierWithoutHTTP(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	ctx := context.Background()
	c := e.cashier
	res := payment.Resource{URL: "mcp://api.example.test/verify_claim_quick"}
	if _, err := c.Begin(ctx, quickOffer, res, nil, nil); !isProblem(err, 402) {
		t.Fatalf("no credential: %v", err)
	}
	cred, err := gatetest.ParseCredential(gatetest.Credential("0xA", "m1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Begin(ctx, quickOffer, res, cred, &payment.BeginOptions{CustomerKey: "ask_bad"}); !errors.Is(err, payment.ErrInvalidCustomerKey) {
		t.Fatalf("bad customer key: %v", err)
	}
	ch, err := c.Begin(ctx, quickOffer, res, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Begin(ctx, quickOffer, res, cred, nil); !isProblem(err, 402) {
		t.Fatalf("concurrent second use: %v", err)
	}
	call := ch.Call()
	if call.OrderID != ch.Order().ID || call.Payer != "0xa" || call.OrderTokenHash != hashHex(ch.OrderToken()) {
		t.Fatalf("call = %+v", call)
	}
	// The work fails: void, release, retry.
	if err := ch.Fail(ctx, "provider down"); err != nil {
		t.Fatal(err)
	}
	if err := ch.Fail(ctx, "again"); err == nil {
		t.Fatal("a charge failed twice")
	}
	if e.proc.Voided("0xa", "m1") != 1 || e.proc.Settled("0xa", "m1") != 0 {
		t.Fatal("failure settled or did not void")
	}
	ch, err = c.Begin(ctx, quickOffer, res, cred, nil)
	if err != nil {
		t.Fatalf("retry after failure: %v", err)
	}
	ch.Call().SetResult("verification", "cv_1")
	body := []byte(`{"verificationId":"cv_1"}`)
	comp, err := ch.Complete(ctx, payment.Response{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	if comp.Order.Status != payment.OrderCompleted || comp.Receipt.ResultSHA256 != hex.EncodeToString(sum[:]) ||
		comp.Settlement == nil || comp.Settlement.Meta == nil || e.proc.Settled("0xa", "m1") != 1 {
		t.Fatalf("completion = %+v", comp)
	}
	if _, err := payment.VerifyReceipt(comp.ReceiptJSON, c.Keys().JWKS()); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Complete(ctx, payment.Response{Body: body}); err == nil {
		t.Fatal("a charge completed twice")
	}
}

func isProblem(err error, status int) bool {
	var p *payment.Problem
	return errors.As(err, &p) && p.Status == status
}
