package protocols_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"
	x402seller "github.com/assaykit/assay/payment/x402/seller"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/stripecard"
	"github.com/assaykit/assay/payment/x402"
)

var (
	testNow    = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	testSecret = []byte("0123456789abcdef0123456789abcdef")
	testOffer  = payment.Offer{ID: "claims.verify.research", Description: "One research-tier claim verification",
		AmountMicroUSD: 250000, CardMicroUSD: 500000, MimeType: "application/json", WorkTimeout: 120 * time.Second, Product: "research"}
	testRes = payment.Resource{URL: "https://api.example.com/v1/claims/verify/research", Method: "POST",
		BodyDigest: "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"}
)

type fixedClock struct{ t time.Time }

func (c *fixedClock) now() time.Time { return c.t }

type fixture struct {
	p      *protocols.Processor
	clock  *fixedClock
	fac    *paymenttest.Facilitator
	stripe *paymenttest.Stripe
	wallet *evm.KeySigner
}

type fixtureOpts struct {
	production bool
	noStripe   bool
	noMPP      bool
	fopts      *x402.FacilitatorOptions
	edit       func(*protocols.Options)
}

func newFixture(t *testing.T, fo fixtureOpts) *fixture {
	t.Helper()
	f := &fixture{clock: &fixedClock{testNow}, wallet: paymenttest.DevWallet()}
	opts := &protocols.Options{
		PayTo: paymenttest.DevPayee, Dev: !fo.production, MPPSecret: testSecret, Realm: "api.example.com",
		Now: f.clock.now, Random: mrand.NewChaCha8([32]byte{'a', 's', 's', 'a', 'y'}), // reproducible challenges
	}
	if fo.noMPP {
		opts.MPPSecret = nil
	}
	if fo.production {
		f.fac = paymenttest.NewFacilitator(t)
		o := &x402.FacilitatorOptions{URL: f.fac.URL, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond}
		if fo.fopts != nil {
			o = fo.fopts
			o.URL = f.fac.URL
		}
		fac, err := x402.NewFacilitator(o)
		if err != nil {
			t.Fatal(err)
		}
		opts.Facilitator = fac
	}
	if !fo.noStripe {
		f.stripe = paymenttest.NewStripe(t)
		sc, err := stripecard.New(&stripecard.Options{SecretKey: "sk_test_123", ProfileID: "profile_test_1", BackendURL: f.stripe.URL})
		if err != nil {
			t.Fatal(err)
		}
		opts.Stripe = sc
	}
	if fo.edit != nil {
		fo.edit(opts)
	}
	p, err := protocols.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.p = p
	return f
}

func (f *fixture) challenge(t *testing.T) *payment.Challenge {
	t.Helper()
	ch, err := f.p.Challenge(context.Background(), testOffer, testRes)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func (f *fixture) verify(t *testing.T, h http.Header) (*payment.Authorization, error) {
	t.Helper()
	c, err := httpgate.ReadCredential(h)
	if err != nil {
		return nil, err
	}
	if c == nil {
		t.Fatal("no credential read")
	}
	return f.p.Verify(context.Background(), testOffer, testRes, c)
}

func hdr(name, value string) http.Header {
	h := http.Header{}
	h.Set(name, value)
	return h
}

func TestNewProcessorValidates(t *testing.T) {
	tests := []struct {
		name string
		opts *protocols.Options
	}{
		{"nil", nil},
		{"no payee", &protocols.Options{Dev: true}},
		{"zero payee", &protocols.Options{Dev: true, PayTo: "0x0000000000000000000000000000000000000000"}},
		{"bad network", &protocols.Options{Dev: true, PayTo: paymenttest.DevPayee, Network: "eip155:1"}},
		{"no facilitator in production", &protocols.Options{PayTo: paymenttest.DevPayee}},
		{"short secret", &protocols.Options{Dev: true, PayTo: paymenttest.DevPayee, MPPSecret: []byte("short"), Realm: "r"}},
		{"secret without realm", &protocols.Options{Dev: true, PayTo: paymenttest.DevPayee, MPPSecret: testSecret}},
	}
	for _, tc := range tests {
		if _, err := protocols.New(tc.opts); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// The 402 body's detail names, in one sentence, exactly the protocols the
// offer accepts, and its links member carries ProcessorOptions.Links; the
// body stays a problem and an x402 v1 document (and keeps the links when
// it reports a failed payment).
func TestChallengeSaysHowToPay(t *testing.T) {
	links := map[string]string{"discovery": "https://api.example.com/.well-known/x402",
		"client": "https://github.com/assaykit/assay/tree/main/examples/client"}
	for _, tc := range []struct {
		name   string
		fo     fixtureOpts
		detail string
	}{
		{"x402 only", fixtureOpts{noMPP: true, noStripe: true},
			"Payment required: 0.25 USDC on eip155:8453, paid with x402 v2 (PAYMENT-REQUIRED header) or v1 (accepts below); pay one and repeat the request."},
		{"x402 and MPP evm", fixtureOpts{noStripe: true},
			"Payment required: 0.25 USDC on eip155:8453, paid with x402 v2 (PAYMENT-REQUIRED header) or v1 (accepts below) or MPP (WWW-Authenticate: Payment, method evm); pay one and repeat the request."},
		{"x402, MPP evm and cards", fixtureOpts{},
			"Payment required: 0.25 USDC on eip155:8453, paid with x402 v2 (PAYMENT-REQUIRED header) or v1 (accepts below) or MPP (WWW-Authenticate: Payment, method evm, or stripe for a USD 0.50 card payment); pay one and repeat the request."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fo.edit = func(o *protocols.Options) { o.Links = links }
			f := newFixture(t, tc.fo)
			ch := f.challenge(t)
			var body struct {
				Type        string            `json:"type"`
				Detail      string            `json:"detail"`
				Links       map[string]string `json:"links"`
				X402Version int               `json:"x402Version"`
				Accepts     []any             `json:"accepts"`
			}
			if err := json.Unmarshal(ch.Body, &body); err != nil {
				t.Fatal(err)
			}
			if body.Detail != tc.detail {
				t.Errorf("detail:\n got %s\nwant %s", body.Detail, tc.detail)
			}
			if diff := cmp.Diff(links, body.Links); diff != "" || body.X402Version != 1 || len(body.Accepts) != 1 ||
				body.Type != payment.ProblemTypeBase+"payment-required" {
				t.Errorf("body %s (links -want +got):\n%s", ch.Body, diff)
			}
			failed := ch.WithProblem(&payment.Problem{Type: "verification-failed", Status: 402, Detail: "bad signature"})
			if !strings.Contains(string(failed.Body), `"links":{"client":`) {
				t.Errorf("a failed payment's body lost the links: %s", failed.Body)
			}
		})
	}
	// Without links, no member.
	if ch := newFixture(t, fixtureOpts{}).challenge(t); strings.Contains(string(ch.Body), `"links"`) {
		t.Errorf("links member without ProcessorOptions.Links: %s", ch.Body)
	}
}

// The 402 answer carries the v2 header, a body that is both a problem and
// an x402 v1 document, the MPP challenges and no-store.
func TestChallengeShape(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	if got := httpgate.ChallengeHeader(ch).Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q", got)
	}
	pr := paymenttest.PaymentRequired(t, ch)
	wantPR := `{"x402Version":2,"error":"PAYMENT-SIGNATURE header is required","resource":{"url":"https://api.example.com/v1/claims/verify/research","description":"One research-tier claim verification","mimeType":"application/json"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"250000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":210,"extra":{"name":"USD Coin","version":"2"}}],"extensions":{"payment-identifier":{"info":{"required":false},"schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"required":{"type":"boolean"},"id":{"type":"string","minLength":16,"maxLength":128,"pattern":"^[a-zA-Z0-9_-]+$"}},"required":["required"]}}}}`
	if diff := jsonDiff(t, wantPR, string(ch.PaymentRequired)); diff != "" {
		t.Errorf("PaymentRequired (-want +got):\n%s", diff)
	}
	if pr.Resource == nil || pr.Accepts[0].Amount != "250000" {
		t.Errorf("decoded header: %+v", pr)
	}
	wantBody := `{"type":"https://paymentauth.org/problems/payment-required","title":"Payment Required","status":402,"detail":"Payment required: 0.25 USDC on eip155:8453, paid with x402 v2 (PAYMENT-REQUIRED header) or v1 (accepts below) or MPP (WWW-Authenticate: Payment, method evm, or stripe for a USD 0.50 card payment); pay one and repeat the request.","x402Version":1,"error":"X-PAYMENT header is required","accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"250000","resource":"https://api.example.com/v1/claims/verify/research","description":"One research-tier claim verification","mimeType":"application/json","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":210,"asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","extra":{"name":"USD Coin","version":"2"}}]}`
	if diff := jsonDiff(t, wantBody, string(ch.Body)); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	cs := paymenttest.MPPChallenges(t, ch)
	if len(cs) != 2 || cs[0].Method != "evm" || cs[1].Method != "stripe" {
		t.Fatalf("MPP challenges: %+v", cs)
	}
	evmCh := cs[0]
	wantEVM := mpp.Challenge{ID: evmCh.ID, Realm: "api.example.com", Method: "evm", Intent: "charge",
		Request: "eyJhbW91bnQiOiIyNTAwMDAiLCJjdXJyZW5jeSI6IjB4ODMzNTg5ZkNENmVEYjZFMDhmNGM3QzMyRDRmNzFiNTRiZEEwMjkxMyIsIm1ldGhvZERldGFpbHMiOnsiY2hhaW5JZCI6ODQ1MywiY3JlZGVudGlhbFR5cGVzIjpbImF1dGhvcml6YXRpb24iXSwiZGVjaW1hbHMiOjZ9LCJyZWNpcGllbnQiOiIweDIwOTY5M0JjNmFmYzBDNTMyOGJBMzZGYUYwM0M1MTRFRjMxMjI4N0MifQ",
		Expires: "2026-11-22T09:08:00Z", Digest: testRes.BodyDigest, Opaque: evmCh.Opaque, Description: testOffer.Description}
	if diff := cmp.Diff(wantEVM, evmCh); diff != "" {
		t.Errorf("evm challenge (-want +got):\n%s", diff)
	}
	// opaque carries a per-challenge random nonce (two challenges of the
	// same route at the same instant still have different ids) and the
	// resource the challenge is for (bound by the id's HMAC).
	var op map[string]string
	if b, err := base64.RawURLEncoding.DecodeString(evmCh.Opaque); err != nil || json.Unmarshal(b, &op) != nil || len(op["n"]) != 22 ||
		op["resource"] != testRes.URL || len(op) != 2 {
		t.Errorf("opaque = %q (%v)", evmCh.Opaque, op)
	}
	again, err := f.p.Challenge(context.Background(), testOffer, testRes)
	if err != nil {
		t.Fatal(err)
	}
	if other := paymenttest.MPPChallenge(t, again, "evm"); other.ID == evmCh.ID || other.Opaque == evmCh.Opaque {
		t.Errorf("two challenges at one instant share id %s", evmCh.ID)
	}
	var sreq map[string]any
	if err := cs[1].MPPRequest(&sreq); err != nil {
		t.Fatal(err)
	}
	wantStripe := map[string]any{"amount": "50", "currency": "usd", "methodDetails": map[string]any{"networkId": "profile_test_1", "paymentMethodTypes": []any{"card"}}}
	if diff := cmp.Diff(wantStripe, sreq); diff != "" {
		t.Errorf("stripe request (-want +got):\n%s", diff)
	}
	for _, v := range httpgate.ChallengeHeader(ch).Values("WWW-Authenticate") {
		if len(v) > 8<<10 {
			t.Errorf("challenge longer than 8 KB")
		}
	}
}

func TestChallengeVariants(t *testing.T) {
	t.Run("quote id goes to opaque", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{})
		res := testRes
		res.QuoteID = "quo_0123456789abcdef0123456789abcdef"
		ch, err := f.p.Challenge(context.Background(), testOffer, res)
		if err != nil {
			t.Fatal(err)
		}
		c := paymenttest.MPPChallenge(t, ch, "evm")
		b, _ := base64.RawURLEncoding.DecodeString(c.Opaque)
		var op map[string]string
		if err := json.Unmarshal(b, &op); err != nil || op["quoteId"] != "quo_0123456789abcdef0123456789abcdef" || len(op["n"]) != 22 ||
			op["resource"] != testRes.URL || len(op) != 3 {
			t.Errorf("opaque = %s", b)
		}
	})
	t.Run("no card price, no stripe", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{})
		o := testOffer
		o.CardMicroUSD = 0
		ch, err := f.p.Challenge(context.Background(), o, testRes)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(paymenttest.MPPChallenges(t, ch)); n != 1 {
			t.Errorf("%d MPP challenges", n)
		}
	})
	t.Run("stripe not configured", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{noStripe: true})
		if cs := paymenttest.MPPChallenges(t, f.challenge(t)); len(cs) != 1 || cs[0].Method != "evm" {
			t.Errorf("challenges %+v", cs)
		}
	})
	t.Run("no MPP secret, x402 only", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{noMPP: true})
		if v := httpgate.ChallengeHeader(f.challenge(t)).Values("WWW-Authenticate"); len(v) != 0 {
			t.Errorf("WWW-Authenticate %v", v)
		}
	})
	t.Run("card price rounds up to cents, at least 50", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{})
		for micro, want := range map[int64]string{10000: "50", 500000: "50", 1234567: "124", 750000: "75"} {
			o := testOffer
			o.CardMicroUSD = micro
			ch, _ := f.p.Challenge(context.Background(), o, testRes)
			var r struct{ Amount string }
			_ = paymenttest.MPPChallenge(t, ch, "stripe").MPPRequest(&r)
			if r.Amount != want {
				t.Errorf("card %d µUSD: %s cents, want %s", micro, r.Amount, want)
			}
		}
	})
	t.Run("extensions hook adds bazaar", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{edit: func(o *protocols.Options) {
			o.Extensions = func(payment.Offer, payment.Resource) map[string]json.RawMessage {
				return map[string]json.RawMessage{"bazaar": json.RawMessage(`{"info":{"input":{"type":"http","method":"POST"}}}`), "broken": json.RawMessage(`{`)}
			}
		}})
		pr := paymenttest.PaymentRequired(t, f.challenge(t))
		if _, ok := pr.Extensions["bazaar"]; !ok {
			t.Error("bazaar missing")
		}
		if _, ok := pr.Extensions["broken"]; ok {
			t.Error("invalid extension JSON was published")
		}
	})
	t.Run("bad offers", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{})
		if _, err := f.p.Challenge(context.Background(), payment.Offer{ID: "x"}, testRes); !errors.Is(err, protocols.ErrInvalidOffer) {
			t.Errorf("no price: %v", err)
		}
		if _, err := f.p.Challenge(context.Background(), testOffer, payment.Resource{}); !errors.Is(err, protocols.ErrInvalidOffer) {
			t.Errorf("no URL: %v", err)
		}
	})
}

func TestVerifyHonest(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	payer := strings.ToLower(paymenttest.DevAddress)
	ignore := cmpopts.IgnoreFields(payment.Authorization{}, "ReservationKey", "ExtraReservationKeys", "State")
	tests := []struct {
		name   string
		header http.Header
		want   payment.Authorization
	}{
		{"x402 v2", hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)),
			payment.Authorization{Protocol: "x402", Method: "exact", Payer: payer, AmountMicroUSD: 250000, Network: "eip155:8453",
				ValidUntil: testNow.Add(210 * time.Second), Dev: true}},
		{"x402 v2 with payment id", hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow, paymenttest.WithPaymentID("pay_0123456789abcdef"))),
			payment.Authorization{Protocol: "x402", Method: "exact", Payer: payer, AmountMicroUSD: 250000, Network: "eip155:8453",
				ValidUntil: testNow.Add(210 * time.Second), PaymentID: "pay_0123456789abcdef", Dev: true}},
		// accepted echoed as an equal object in other bytes (its keys
		// re-ordered: encoded from a map) is the same requirements.
		{"x402 v2 with accepted re-encoded", hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow, paymenttest.WithAccepted(func(map[string]any) {}))),
			payment.Authorization{Protocol: "x402", Method: "exact", Payer: payer, AmountMicroUSD: 250000, Network: "eip155:8453",
				ValidUntil: testNow.Add(210 * time.Second), Dev: true}},
		{"x402 v1", hdr("X-Payment", paymenttest.X402V1(t, f.wallet, ch, testNow)),
			payment.Authorization{Protocol: "x402", Method: "exact", Payer: payer, AmountMicroUSD: 250000, Network: "eip155:8453",
				ValidUntil: testNow.Add(210 * time.Second), Dev: true}},
		{"mpp evm (Authorization)", hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow)),
			payment.Authorization{Protocol: "mpp", Method: "evm", Payer: payer, AmountMicroUSD: 250000, Network: "eip155:8453",
				ValidUntil: time.Date(2026, 11, 22, 9, 8, 0, 0, time.UTC), Dev: true}},
		{"mpp evm (Payment-Authorization)", hdr("Payment-Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow)),
			payment.Authorization{Protocol: "mpp", Method: "evm", Payer: payer, AmountMicroUSD: 250000, Network: "eip155:8453",
				ValidUntil: time.Date(2026, 11, 22, 9, 8, 0, 0, time.UTC), Dev: true}},
	}
	for _, tc := range tests {
		a, err := f.verify(t, tc.header)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, *a, ignore); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		prefix := "eip3009:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:" + payer + ":0x"
		if !strings.HasPrefix(a.ReservationKey, prefix) || len(a.ReservationKey) != len(prefix)+64 {
			t.Errorf("%s: reservation key %q", tc.name, a.ReservationKey)
		}
		var wantExtra []string
		if a.Protocol == "mpp" {
			wantExtra = []string{"mpp:" + paymenttest.MPPChallenge(t, ch, "evm").ID}
		}
		if diff := cmp.Diff(wantExtra, a.ExtraReservationKeys); diff != "" {
			t.Errorf("%s: extra reservation keys (-want +got):\n%s", tc.name, diff)
		}
	}
}

// The same credential yields the same reservation key (the ledger refuses
// the second use); distinct payments yield distinct keys.
func TestReservationKeys(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	key := func(h http.Header) string {
		a, err := f.verify(t, h)
		if err != nil {
			t.Fatal(err)
		}
		return a.ReservationKey
	}
	v2 := hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow))
	if k1, k2 := key(v2), key(v2); k1 != k2 {
		t.Error("x402: one payload, two keys")
	}
	if key(v2) == key(hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow))) {
		t.Error("x402: two payloads (two nonces), one key")
	}
	m1 := hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow))
	// A second, independently signed credential for the same challenge is
	// another authorization (another key) but a reuse of the challenge:
	// both reserve the challenge id too.
	m2 := hdr("Authorization", paymenttest.MPPEVM(t, paymenttest.NewWallet(t), ch, testNow))
	extra := func(h http.Header) []string {
		a, err := f.verify(t, h)
		if err != nil {
			t.Fatal(err)
		}
		return a.ExtraReservationKeys
	}
	chKey := []string{"mpp:" + paymenttest.MPPChallenge(t, ch, "evm").ID}
	if k1, k2 := key(m1), key(m2); k1 == k2 || !cmp.Equal(extra(m1), chKey) || !cmp.Equal(extra(m2), chKey) {
		t.Errorf("mpp: keys %q and %q, extra %q and %q", k1, k2, extra(m1), extra(m2))
	}
	// A fresh challenge (other expiry) has another id, so another key.
	f.clock.t = testNow.Add(time.Second)
	if key(hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, f.challenge(t), testNow))) == key(m1) {
		t.Error("mpp: two challenges, one key")
	}
}

type wantProblem struct {
	status int
	typ    string
	reason string
}

func checkProblem(t *testing.T, name string, err error, want wantProblem) {
	t.Helper()
	var p *payment.Problem
	if !errors.As(err, &p) {
		t.Errorf("%s: err = %v, want *Problem %+v", name, err, want)
		return
	}
	if p.Status != want.status || p.Type != want.typ || p.Reason != want.reason {
		t.Errorf("%s: got {%d %s %s} (%s), want %+v", name, p.Status, p.Type, p.Reason, p.Detail, want)
	}
	if p.Detail == "" {
		t.Errorf("%s: empty detail", name)
	}
}

func TestVerifyProblemsX402(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	w := f.wallet
	other := paymenttest.NewWallet(t)
	sepoliaUSDC := evm.BaseSepolia().USDC.String()
	v2 := func(opts ...paymenttest.Option) http.Header {
		return hdr("Payment-Signature", paymenttest.X402V2(t, w, ch, testNow, opts...))
	}
	v1 := func(opts ...paymenttest.Option) http.Header {
		return hdr("X-Payment", paymenttest.X402V1(t, w, ch, testNow, opts...))
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	bad := wantProblem{400, "malformed-credential", "invalid_payload"}
	sig := wantProblem{402, "verification-failed", "invalid_exact_evm_payload_signature"}
	tests := []struct {
		name   string
		header http.Header
		want   wantProblem
	}{
		{"v2 forged signature", v2(paymenttest.WithSignedBy(other)), sig},
		{"v2 tampered signature", v2(paymenttest.WithTamperedSignature()), sig},
		{"v2 high s", v2(paymenttest.WithHighS()), sig},
		{"v2 wrong payee", v2(paymenttest.WithPayTo(other.Address().String())), wantProblem{402, "verification-failed", "invalid_exact_evm_payload_recipient_mismatch"}},
		{"v2 amount too low", v2(paymenttest.WithAmount("249999")), wantProblem{402, "payment-insufficient", "invalid_exact_evm_payload_authorization_value_mismatch"}},
		{"v2 amount too high", v2(paymenttest.WithAmount("250001")), wantProblem{402, "verification-failed", "invalid_exact_evm_payload_authorization_value_mismatch"}},
		{"v2 wrong network", v2(paymenttest.WithNetwork("eip155:84532")), wantProblem{402, "verification-failed", "invalid_network"}},
		{"v2 unknown network", v2(paymenttest.WithNetwork("eip155:1")), wantProblem{402, "verification-failed", "invalid_network"}},
		{"v2 wrong asset", v2(paymenttest.WithAsset(sepoliaUSDC)), wantProblem{402, "verification-failed", "invalid_payment_requirements"}},
		{"v2 expired", v2(paymenttest.WithValidity(0, testNow.Unix()+5)), wantProblem{402, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before"}},
		{"v2 valid for less than the work and settlement", v2(paymenttest.WithValidity(0, testNow.Unix()+179)), wantProblem{402, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before"}},
		{"v1 valid for less than the work and settlement", v1(paymenttest.WithValidity(testNow.Unix()-600, testNow.Unix()+60)), wantProblem{402, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before"}},
		{"v2 long expired", v2(paymenttest.WithValidity(0, testNow.Unix()-3600)), wantProblem{402, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before"}},
		{"v2 not yet valid", v2(paymenttest.WithValidity(testNow.Unix()+60, testNow.Unix()+600)), wantProblem{402, "verification-failed", "invalid_exact_evm_payload_authorization_valid_after"}},
		{"v2 authorization.to edited after signing", v2(paymenttest.WithPayload(func(m map[string]any) {
			m["payload"].(map[string]any)["authorization"].(map[string]any)["to"] = other.Address().String()
		})), wantProblem{402, "verification-failed", "invalid_exact_evm_payload_recipient_mismatch"}},
		{"v2 validBefore edited after signing", v2(paymenttest.WithPayload(func(m map[string]any) {
			m["payload"].(map[string]any)["authorization"].(map[string]any)["validBefore"] = "1900000000"
		})), sig},
		{"v2 from edited after signing", v2(paymenttest.WithPayload(func(m map[string]any) {
			m["payload"].(map[string]any)["authorization"].(map[string]any)["from"] = other.Address().String()
		})), sig},
		{"v2 tampered maxTimeoutSeconds", v2(paymenttest.WithAccepted(func(m map[string]any) { m["maxTimeoutSeconds"] = 99999 })), wantProblem{402, "verification-failed", "invalid_payment_requirements"}},
		{"v2 tampered extra", v2(paymenttest.WithAccepted(func(m map[string]any) { m["extra"] = map[string]any{"name": "USDC", "version": "2"} })), wantProblem{402, "verification-failed", "invalid_payment_requirements"}},
		{"v2 extra field in accepted", v2(paymenttest.WithAccepted(func(m map[string]any) { m["upto"] = "1" })), wantProblem{402, "verification-failed", "invalid_payment_requirements"}},
		{"v2 other scheme", v2(paymenttest.WithAccepted(func(m map[string]any) { m["scheme"] = "upto" })), wantProblem{402, "method-unsupported", "unsupported_scheme"}},
		{"v2 other resource", v2(paymenttest.WithResourceURL("https://api.example.com/v1/claims/verify/quick")), wantProblem{402, "verification-failed", "invalid_payment_requirements"}},
		{"v2 version 1 in PAYMENT-SIGNATURE", v2(paymenttest.WithVersion(1)), wantProblem{400, "malformed-credential", "invalid_x402_version"}},
		{"v2 version 3", v2(paymenttest.WithVersion(3)), wantProblem{400, "malformed-credential", "invalid_x402_version"}},
		{"v2 without accepted", v2(paymenttest.WithPayload(func(m map[string]any) { delete(m, "accepted") })), bad},
		{"v2 payload not an object", v2(paymenttest.WithPayload(func(m map[string]any) { m["payload"] = "x" })), bad},
		{"v2 bad nonce", v2(paymenttest.WithPayload(func(m map[string]any) {
			m["payload"].(map[string]any)["authorization"].(map[string]any)["nonce"] = "0x1234"
		})), bad},
		{"v2 value not a number", v2(paymenttest.WithPayload(func(m map[string]any) {
			m["payload"].(map[string]any)["authorization"].(map[string]any)["value"] = 250000
		})), bad},
		{"v2 short signature", v2(paymenttest.WithPayload(func(m map[string]any) { m["payload"].(map[string]any)["signature"] = "0x1234" })), bad},
		{"v2 bad payment id", v2(paymenttest.WithPaymentID("short")), bad},
		{"v2 malformed base64", hdr("Payment-Signature", "%%%not base64%%%"), bad},
		{"v2 malformed JSON", hdr("Payment-Signature", b64(`{"x402Version":2,`)), bad},
		{"v2 JSON array", hdr("Payment-Signature", b64(`[1,2]`)), bad},
		{"v2 JSON then garbage", hdr("Payment-Signature", b64(`{"x402Version":2} x`)), bad},
		{"v2 empty", hdr("Payment-Signature", " "), bad},
		{"v1 forged signature", v1(paymenttest.WithSignedBy(other)), sig},
		{"v1 high s", v1(paymenttest.WithHighS()), sig},
		{"v1 wrong payee", v1(paymenttest.WithPayTo(other.Address().String())), wantProblem{402, "verification-failed", "invalid_exact_evm_payload_recipient_mismatch"}},
		{"v1 amount too low", v1(paymenttest.WithAmount("20000")), wantProblem{402, "payment-insufficient", "invalid_exact_evm_payload_authorization_value_mismatch"}},
		{"v1 wrong network", v1(paymenttest.WithNetwork("base-sepolia")), wantProblem{402, "verification-failed", "invalid_network"}},
		{"v1 wrong asset (other domain)", v1(paymenttest.WithAsset(sepoliaUSDC)), sig},
		{"v1 expired", v1(paymenttest.WithValidity(0, testNow.Unix()-1)), wantProblem{402, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before"}},
		{"v1 scheme", v1(paymenttest.WithPayload(func(m map[string]any) { m["scheme"] = "upto" })), wantProblem{402, "method-unsupported", "unsupported_scheme"}},
		{"v1 version 2 in X-PAYMENT", v1(paymenttest.WithVersion(2)), wantProblem{400, "malformed-credential", "invalid_x402_version"}},
		{"v1 malformed base64", hdr("X-Payment", "eyJ4NDAy!!"), bad},
		{"v1 malformed JSON", hdr("X-Payment", b64(`{"x402Version":1,"payload":{"signature":}`)), bad},
	}
	for _, tc := range tests {
		_, err := f.verify(t, tc.header)
		checkProblem(t, tc.name, err, tc.want)
	}
}

func TestVerifyProblemsMPP(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	w := f.wallet
	other := paymenttest.NewWallet(t)
	evmHeader := func(opts ...paymenttest.Option) http.Header {
		return hdr("Authorization", paymenttest.MPPEVM(t, w, ch, testNow, opts...))
	}
	editCh := func(e func(*mpp.Challenge)) http.Header { return evmHeader(paymenttest.WithChallenge(e)) }
	invalid := wantProblem{402, "invalid-challenge", "invalid_challenge"}
	mismatch := wantProblem{402, "invalid-challenge", "challenge_mismatch"}
	malformed := wantProblem{402, "malformed-credential", "invalid_payload"}
	sig := wantProblem{402, "verification-failed", "invalid_exact_evm_payload_signature"}
	// A challenge bound with this server's secret but for other terms
	// passes the binding and must fail the pinning.
	rebind := func(e func(*mpp.Challenge)) func(*mpp.Challenge) {
		return func(c *mpp.Challenge) {
			e(c)
			c.ID = paymenttest.BindMPP(testSecret, *c)
		}
	}
	otherReq := paymenttest.MPPChallenge(t, mustChallenge(t, f.p, payment.Offer{ID: "q", AmountMicroUSD: 20000, WorkTimeout: 120 * time.Second}, testRes), "evm").Request
	tests := []struct {
		name   string
		header http.Header
		want   wantProblem
	}{
		{"forged signature", evmHeader(paymenttest.WithSignedBy(other)), sig},
		{"tampered signature", evmHeader(paymenttest.WithTamperedSignature()), sig},
		{"high s", evmHeader(paymenttest.WithHighS()), sig},
		{"wrong payee", evmHeader(paymenttest.WithPayTo(other.Address().String())), wantProblem{402, "verification-failed", "invalid_exact_evm_payload_recipient_mismatch"}},
		{"amount too low", evmHeader(paymenttest.WithAmount("1")), wantProblem{402, "payment-insufficient", "invalid_exact_evm_payload_authorization_value_mismatch"}},
		{"wrong network domain", evmHeader(paymenttest.WithNetwork("eip155:84532")), sig},
		{"wrong asset domain", evmHeader(paymenttest.WithAsset(evm.BaseSepolia().USDC.String())), sig},
		{"random nonce", evmHeader(paymenttest.WithNonce([32]byte{1, 2, 3})), wantProblem{402, "verification-failed", "invalid_nonce"}},
		{"validBefore too short for the work", evmHeader(paymenttest.WithValidity(0, testNow.Unix()+60)), wantProblem{402, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before"}},
		{"source is someone else", evmHeader(paymenttest.WithSource("did:pkh:eip155:8453:" + other.Address().String())), wantProblem{402, "verification-failed", "source_mismatch"}},
		{"tampered id", editCh(func(c *mpp.Challenge) { c.ID = "B_kDcju3JlvonpwzHjrEDOH3BVIsoGaGRcQvav1AzzY" }), invalid},
		{"tampered realm", editCh(func(c *mpp.Challenge) { c.Realm = "evil.example" }), invalid},
		{"tampered request", editCh(func(c *mpp.Challenge) { c.Request = otherReq }), invalid},
		{"tampered expires", editCh(func(c *mpp.Challenge) { c.Expires = "2030-01-01T00:00:00Z" }), invalid},
		{"tampered digest", editCh(func(c *mpp.Challenge) { c.Digest = "" }), invalid},
		{"added opaque", editCh(func(c *mpp.Challenge) { c.Opaque = "eyJxdW90ZUlkIjoieCJ9" }), invalid},
		{"rebound realm", editCh(rebind(func(c *mpp.Challenge) { c.Realm = "other.example" })), mismatch},
		{"rebound cheaper request", editCh(rebind(func(c *mpp.Challenge) { c.Request = otherReq })), mismatch},
		{"rebound other body", editCh(rebind(func(c *mpp.Challenge) { c.Digest = "sha-256=:AAAA:" })), mismatch},
		{"rebound other quote", editCh(rebind(func(c *mpp.Challenge) { c.Opaque = "eyJxdW90ZUlkIjoieCJ9" })), mismatch},
		{"rebound header", editCh(rebind(func(c *mpp.Challenge) { c.Header = "X-Pay" })), mismatch},
		{"rebound no expires", editCh(rebind(func(c *mpp.Challenge) { c.Expires = "" })), invalid},
		{"other method", editCh(func(c *mpp.Challenge) { c.Method = "tempo" }), wantProblem{400, "method-unsupported", "unsupported_scheme"}},
		{"other intent", editCh(func(c *mpp.Challenge) { c.Intent = "session" }), wantProblem{400, "method-unsupported", "unsupported_scheme"}},
		{"permit2 credential", evmHeader(paymenttest.WithPayload(func(m map[string]any) { m["type"] = "permit2" })), wantProblem{400, "method-unsupported", "unsupported_scheme"}},
		{"payload missing signature", evmHeader(paymenttest.WithPayload(func(m map[string]any) { delete(m, "signature") })), malformed},
		{"payload bad value", evmHeader(paymenttest.WithPayload(func(m map[string]any) { m["value"] = "-5" })), malformed},
		{"malformed base64url", hdr("Authorization", "Payment !!!notbase64!!!"), malformed},
		{"malformed JSON", hdr("Authorization", "Payment "+base64.RawURLEncoding.EncodeToString([]byte(`{"challenge":`))), malformed},
		{"JSON without payload", hdr("Authorization", "Payment "+base64.RawURLEncoding.EncodeToString([]byte(`{"challenge":{}}`))), malformed},
		{"empty credential", hdr("Authorization", "Payment"), malformed},
		{"malformed Payment-Authorization", hdr("Payment-Authorization", "Payment eyJjaGFsbGVuZ2UiOnt9LCJwYXlsb2FkIjpb"), malformed},
		{"Payment-Authorization not base64url", hdr("Payment-Authorization", "Payment ***"), malformed},
	}
	for _, tc := range tests {
		_, err := f.verify(t, tc.header)
		checkProblem(t, tc.name, err, tc.want)
	}

	// Expired challenge: the same credential, later.
	good := evmHeader()
	f.clock.t = testNow.Add(8*time.Minute + time.Second)
	_, err := f.verify(t, good)
	checkProblem(t, "expired challenge", err, wantProblem{402, "payment-expired", "challenge_expired"})
	// Presented after the TTL but before expires: too late to cover the work.
	f.clock.t = testNow.Add(5*time.Minute + 2*time.Second)
	_, err = f.verify(t, good)
	checkProblem(t, "presented after TTL", err, wantProblem{402, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before"})
	f.clock.t = testNow

	// Another server's secret.
	g := newFixture(t, fixtureOpts{edit: func(o *protocols.Options) { o.MPPSecret = []byte(strings.Repeat("x", 32)) }})
	_, err = g.verify(t, good)
	checkProblem(t, "other server's challenge", err, invalid)
	// After rotation the previous secret still verifies.
	r := newFixture(t, fixtureOpts{edit: func(o *protocols.Options) {
		o.MPPSecret = []byte(strings.Repeat("n", 32))
		o.MPPPreviousSecrets = [][]byte{testSecret}
	}})
	if _, err := r.verify(t, good); err != nil {
		t.Errorf("rotated secret: %v", err)
	}
	// A route with another body digest.
	res := testRes
	res.BodyDigest = "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:"
	c, _ := httpgate.ReadCredential(good)
	_, err = f.p.Verify(context.Background(), testOffer, res, c)
	checkProblem(t, "credential for another body", err, mismatch)
	// MPP disabled.
	x := newFixture(t, fixtureOpts{noMPP: true})
	_, err = x.verify(t, good)
	checkProblem(t, "mpp disabled", err, wantProblem{400, "method-unsupported", "unsupported_scheme"})
}

func mustChallenge(t *testing.T, p *protocols.Processor, o payment.Offer, r payment.Resource) *payment.Challenge {
	t.Helper()
	ch, err := p.Challenge(context.Background(), o, r)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestReadCredential(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	v2 := paymenttest.X402V2(t, f.wallet, ch, testNow)
	mpp := paymenttest.MPPEVM(t, f.wallet, ch, testNow)
	several := wantProblem{400, "malformed-credential", "invalid_payload"}
	tests := []struct {
		name  string
		h     http.Header
		proto string
		want  *wantProblem
	}{
		{"none", http.Header{"Authorization": {"Bearer abc"}}, "", nil},
		{"x402 v2", hdr("Payment-Signature", v2), "x402", nil},
		{"mpp", hdr("Authorization", mpp), "mpp", nil},
		{"two x402", http.Header{"Payment-Signature": {v2, v2}}, "", &several},
		{"x402 and mpp", http.Header{"Payment-Signature": {v2}, "Authorization": {mpp}}, "", &several},
		{"mpp in both headers", http.Header{"Payment-Authorization": {mpp}, "Authorization": {mpp}}, "", &several},
		{"two mpp in one header", http.Header{"Authorization": {mpp + ", " + mpp}}, "", &several},
		{"v1 and v2", http.Header{"Payment-Signature": {v2}, "X-Payment": {v2}}, "", &several},
		{"malformed and valid", http.Header{"Payment-Signature": {"!!"}, "Authorization": {mpp}}, "", &several},
	}
	for _, tc := range tests {
		c, err := httpgate.ReadCredential(tc.h)
		if tc.want != nil {
			checkProblem(t, tc.name, err, *tc.want)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if (c == nil) != (tc.proto == "") || (c != nil && c.Protocol != tc.proto) {
			t.Errorf("%s: credential %+v", tc.name, c)
		}
	}
}

func TestCredentialFromX402(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	raw, _ := base64.StdEncoding.DecodeString(paymenttest.X402V2(t, f.wallet, ch, testNow))
	c, err := x402seller.CredentialFromX402(raw)
	if err != nil {
		t.Fatal(err)
	}
	if c.Header != "" || c.Version != 2 || c.Method != "exact" {
		t.Errorf("credential %+v", c)
	}
	if _, err := f.p.Verify(context.Background(), testOffer, testRes, c); err != nil {
		t.Errorf("verify: %v", err)
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{`, `{"x402Version":2}{}`} {
		_, err := x402seller.CredentialFromX402(json.RawMessage(bad))
		checkProblem(t, "CredentialFromX402 "+bad, err, wantProblem{400, "malformed-credential", "invalid_payload"})
	}
}

func TestWithProblem(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	p := &payment.Problem{Status: 402, Type: "verification-failed", Reason: "invalid_exact_evm_payload_signature", Detail: "bad signature"}
	out := ch.WithProblem(p)
	var body map[string]any
	if err := json.Unmarshal(out.Body, &body); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"type": "https://paymentauth.org/problems/verification-failed", "title": "Verification Failed",
		"status": 402.0, "detail": "bad signature", "reason": "invalid_exact_evm_payload_signature", "error": "invalid_exact_evm_payload_signature", "x402Version": 1.0} {
		if body[k] != want {
			t.Errorf("body[%s] = %v, want %v", k, body[k], want)
		}
	}
	if _, ok := body["accepts"]; !ok {
		t.Error("accepts dropped")
	}
	pr := paymenttest.PaymentRequired(t, out)
	if pr.Error != "invalid_exact_evm_payload_signature" || len(pr.Accepts) != 1 {
		t.Errorf("PAYMENT-REQUIRED %+v", pr)
	}
	if httpgate.ChallengeHeader(ch).Get("Payment-Required") == httpgate.ChallengeHeader(out).Get("Payment-Required") {
		t.Error("original challenge modified or header not updated")
	}
	if len(httpgate.ChallengeHeader(out).Values("WWW-Authenticate")) != 2 {
		t.Error("MPP challenges dropped")
	}
}

func jsonDiff(t *testing.T, want, got string) string {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want: %v", err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got: %v: %s", err, got)
	}
	return cmp.Diff(w, g)
}

func TestBaseSepolia(t *testing.T) {
	f := newFixture(t, fixtureOpts{noStripe: true, edit: func(o *protocols.Options) { o.Network = "base-sepolia" }})
	ch := f.challenge(t)
	pr := paymenttest.PaymentRequired(t, ch)
	req := pr.Accepts[0]
	if req.Network != "eip155:84532" || req.Asset != "0x036CbD53842c5426634e7929541eC2318f3dCF7e" || req.Extra["name"] != "USDC" || req.Extra["version"] != "2" {
		t.Errorf("requirements %+v", req)
	}
	var v1 x402.PaymentRequiredV1
	_ = json.Unmarshal(ch.Body, &v1)
	if v1.Accepts[0].Network != "base-sepolia" {
		t.Errorf("v1 network %s", v1.Accepts[0].Network)
	}
	for name, h := range map[string]http.Header{
		"v2":  hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)),
		"v1":  hdr("X-Payment", paymenttest.X402V1(t, f.wallet, ch, testNow)),
		"mpp": hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow)),
	} {
		a, err := f.verify(t, h)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if a.Network != "eip155:84532" || !strings.HasPrefix(a.ReservationKey, "eip3009:84532:"+strings.ToLower(evm.BaseSepolia().USDC.String())+":") {
			t.Errorf("%s: %+v", name, a)
		}
	}
	// A mainnet-domain signature does not verify on Sepolia.
	_, err := f.verify(t, hdr("X-Payment", paymenttest.X402V1(t, f.wallet, ch, testNow, paymenttest.WithNetwork("base"), paymenttest.WithPayload(func(m map[string]any) { m["network"] = "base-sepolia" }))))
	checkProblem(t, "mainnet domain on sepolia", err, wantProblem{402, "verification-failed", "invalid_exact_evm_payload_signature"})
}

func TestDevModeIsAnnounced(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	if _, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true, Logger: log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), "NOTHING IS SETTLED ON-CHAIN") {
		t.Errorf("log: %q", buf.String())
	}
	buf.Reset()
	fac, _ := x402.NewFacilitator(&x402.FacilitatorOptions{URL: "http://127.0.0.1:1"})
	if _, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Facilitator: fac, Logger: log}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "DEV MODE") {
		t.Errorf("production logged dev mode: %q", buf.String())
	}
}

// x402 payments must stay valid for the route's work and settlement (not
// just the facilitator's 6 seconds), and maxTimeoutSeconds announces that
// plus the presentation allowance, so an honest client signing at the
// challenge passes.
func TestX402ValidityCoversWorkAndSettlement(t *testing.T) {
	f := newFixture(t, fixtureOpts{noStripe: true})
	ch := f.challenge(t)
	pr := paymenttest.PaymentRequired(t, ch)
	if got, want := pr.Accepts[0].MaxTimeoutSeconds, int64(120+60+30); got != want {
		t.Fatalf("maxTimeoutSeconds = %d, want work 120 + settlement 60 + presentation 30 = %d", got, want)
	}
	for _, tc := range []struct {
		before int64 // validBefore - now, seconds
		ok     bool
	}{{7, false}, {179, false}, {180, true}, {210, true}} {
		for _, h := range []http.Header{
			hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow, paymenttest.WithValidity(0, testNow.Unix()+tc.before))),
			hdr("X-Payment", paymenttest.X402V1(t, f.wallet, ch, testNow, paymenttest.WithValidity(0, testNow.Unix()+tc.before))),
		} {
			_, err := f.verify(t, h)
			if tc.ok && err != nil {
				t.Errorf("valid for %d s: %v", tc.before, err)
			}
			if !tc.ok {
				checkProblem(t, fmt.Sprintf("valid for %d s", tc.before), err, wantProblem{402, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before"})
			}
		}
	}
	// An honest client that presents its payment 25 s after signing passes;
	// after 31 s it no longer covers the work and settlement.
	h := hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow))
	f.clock.t = testNow.Add(25 * time.Second)
	if _, err := f.verify(t, h); err != nil {
		t.Errorf("presented 25 s after signing: %v", err)
	}
	f.clock.t = testNow.Add(31 * time.Second)
	_, err := f.verify(t, h)
	checkProblem(t, "presented 31 s after signing", err, wantProblem{402, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before"})
	var p *payment.Problem
	if errors.As(err, &p) && !strings.Contains(p.Detail, "the work and the settlement") {
		t.Errorf("detail does not say why: %q", p.Detail)
	}
	// The allowance is configurable.
	g := newFixture(t, fixtureOpts{noStripe: true, edit: func(o *protocols.Options) { o.PresentationTime = 2 * time.Minute }})
	if got := paymenttest.PaymentRequired(t, g.challenge(t)).Accepts[0].MaxTimeoutSeconds; got != 300 {
		t.Errorf("maxTimeoutSeconds with a 2-minute allowance = %d, want 300", got)
	}
}
