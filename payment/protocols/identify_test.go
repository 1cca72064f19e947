package protocols_test

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"strings"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymentmem"
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

// A sale recovers a signature once: Verify relies on the identity the
// Cashier proved (Credential.Identity), and on no other. An identity that
// does not match the credential's authorization, or a forged signature
// whatever identity it carries, is verified in full and refused.
func TestVerifyReliesOnlyOnAMatchingIdentity(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch, err := f.p.Challenge(t.Context(), testOffer, testRes)
	if err != nil {
		t.Fatal(err)
	}
	other := paymenttest.NewWallet(t)
	for _, kind := range []string{"x402 v2", "mpp evm"} {
		cred := func(opts ...paymenttest.Option) *payment.Credential {
			h := hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow, opts...))
			if kind == "mpp evm" {
				h = hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow, opts...))
			}
			c, err := httpgate.ReadCredential(h)
			if err != nil || c == nil {
				t.Fatalf("%s: read: %v", kind, err)
			}
			return c
		}
		good := cred()
		id, err := f.p.IdentifyPayment(good)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		good.Identity = id
		if a, err := f.p.Verify(t.Context(), testOffer, testRes, good); err != nil || a.Payer != id.Payer {
			t.Errorf("%s: verified with its identity: %+v, %v", kind, a, err)
		}
		// The forged credential's signature is another wallet's; an
		// identity proved for another payment is not relied on.
		forged := cred(paymenttest.WithSignedBy(other))
		forged.Identity = &payment.PaymentIdentity{Payer: id.Payer, ReservationKey: id.ReservationKey + "0"}
		if a, err := f.p.Verify(t.Context(), testOffer, testRes, forged); err == nil {
			t.Errorf("%s: a forged signature with another payment's identity was verified: %+v", kind, a)
		}
		// Through the Cashier, an identity the caller set (here one that
		// claims the dev wallet's payer and key) is dropped.
		keys, err := payment.NewKeyring(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
		if err != nil {
			t.Fatal(err)
		}
		cashier, err := payment.NewCashier(f.p, paymentmem.New(f.clock.now), &payment.CashierOptions{Keys: keys, Now: f.clock.now})
		if err != nil {
			t.Fatal(err)
		}
		forged = cred(paymenttest.WithSignedBy(other))
		forged.Identity = &payment.PaymentIdentity{Payer: id.Payer, ReservationKey: id.ReservationKey}
		out := cashier.Sell(t.Context(), &payment.Purchase{Offer: testOffer, Resource: testRes, Credential: forged,
			Work: func(ctx context.Context) (payment.Response, error) {
				t.Errorf("%s: the work ran for a forged payment", kind)
				return payment.Response{Status: 200}, nil
			}})
		if out.Kind != payment.OutcomeRefused && out.Kind != payment.OutcomeChallenged {
			t.Errorf("%s: a forged payment through the Cashier: %v %d %s", kind, out.Kind, out.Status, out.Detail)
		}
	}
}

// A credential is decoded once per sale (payment.Credential.Decoded), and
// that decoding is used only for the very Raw it was made from: a
// decoding moved to another credential, or a Raw replaced after it was
// decoded, is decoded again.
func TestDecodedOnlyForItsRaw(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch, err := f.p.Challenge(t.Context(), testOffer, testRes)
	if err != nil {
		t.Fatal(err)
	}
	cred := func() *payment.Credential {
		c, err := httpgate.ReadCredential(hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)))
		if err != nil || c == nil {
			t.Fatalf("read: %v", err)
		}
		return c
	}
	keyOf := func(c *payment.Credential) string {
		t.Helper()
		id, err := f.p.IdentifyPayment(c)
		if err != nil {
			t.Fatal(err)
		}
		return id.ReservationKey
	}
	a, b := cred(), cred()
	keyA, keyB := keyOf(a), keyOf(undecodedCopy(t, b))
	if keyA == keyB {
		t.Fatal("two payments with one reservation key")
	}
	if a.Decoded == nil {
		t.Fatal("IdentifyPayment kept no decoding for the rest of the sale")
	}
	b.Decoded = a.Decoded
	if got := keyOf(b); got != keyB {
		t.Errorf("another credential's decoding was used: key %s, want %s", got, keyB)
	}
	a.Raw = b.Raw
	auth, err := f.p.Verify(t.Context(), testOffer, testRes, a)
	if err != nil {
		t.Fatal(err)
	}
	if auth.ReservationKey != keyB {
		t.Errorf("Verify used the decoding of the replaced Raw: key %s, want %s", auth.ReservationKey, keyB)
	}
}

// undecodedCopy is a copy of c with its own Raw and no decoding.
func undecodedCopy(t *testing.T, c *payment.Credential) *payment.Credential {
	t.Helper()
	cp := *c
	cp.Raw = append([]byte(nil), c.Raw...)
	cp.Decoded = nil
	return &cp
}
