package protocols_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/protocols"
)

func TestIdentifyPayment(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	res := testRes
	res.QuoteID = "quo_0123456789abcdef0123456789abcdef"
	ch, err := f.p.Challenge(t.Context(), testOffer, res)
	if err != nil {
		t.Fatal(err)
	}
	read := func(h http.Header) *payment.Credential {
		c, err := httpgate.ReadCredential(h)
		if err != nil || c == nil {
			t.Fatalf("read: %v", err)
		}
		return c
	}
	payer := strings.ToLower(paymenttest.DevAddress)
	// Expired payments are identified all the same (no clock is read).
	expired := paymenttest.WithValidity(0, testNow.Unix()-3600)
	for _, tc := range []struct {
		name  string
		h     http.Header
		payer string
		quote string
	}{
		{"x402 v2", hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow, expired, paymenttest.WithPaymentID(res.QuoteID))), payer, res.QuoteID},
		{"x402 v1", hdr("X-Payment", paymenttest.X402V1(t, f.wallet, ch, testNow, expired)), payer, ""},
		{"mpp evm", hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow)), payer, res.QuoteID},
		{"mpp stripe", hdr("Authorization", paymenttest.MPPStripe(t, ch, "spt_test_id")), "stripe:spt_", res.QuoteID},
	} {
		c := read(tc.h)
		id, err := f.p.IdentifyPayment(c)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !strings.HasPrefix(id.Payer, tc.payer) || id.QuoteID != tc.quote || f.p.NamedQuote(c) != tc.quote {
			t.Errorf("%s: %+v (named quote %q)", tc.name, id, f.p.NamedQuote(c))
		}
		// The key is the one Verify reserves (checked on a fresh, valid
		// credential of the same kind for the EIP-3009 ones).
		if tc.name == "mpp evm" || tc.name == "mpp stripe" {
			a, err := f.p.Verify(t.Context(), testOffer, res, c)
			if err != nil || a.ReservationKey != id.ReservationKey || a.Payer != id.Payer {
				t.Errorf("%s: verify %+v %v, identity %+v", tc.name, a, err, id)
			}
		}
	}
	other := paymenttest.NewWallet(t)
	g := newFixture(t, fixtureOpts{edit: func(o *protocols.Options) { o.MPPSecret = []byte(strings.Repeat("z", 32)) }})
	for _, tc := range []struct {
		name string
		p    *protocols.Processor
		h    http.Header
	}{
		{"forged x402", f.p, hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow, paymenttest.WithSignedBy(other)))},
		{"forged mpp", f.p, hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow, paymenttest.WithSignedBy(other)))},
		{"mpp nonce not bound", f.p, hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow, paymenttest.WithNonce([32]byte{1})))},
		{"challenge of another server", g.p, hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow))},
	} {
		if id, err := tc.p.IdentifyPayment(read(tc.h)); err == nil {
			t.Errorf("%s: identified as %+v", tc.name, id)
		}
	}
}
