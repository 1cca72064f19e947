package protocols_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/protocols"
	"github.com/assaykit/assay/payment/stripecard"
)

// hold verifies a credential and places its hold, as the Cashier does
// once the payment is reserved.
func (f *fixture) hold(t *testing.T, h http.Header) (*payment.Authorization, error) {
	t.Helper()
	a, err := f.verify(t, h)
	if err != nil {
		return nil, err
	}
	if err := f.p.Hold(context.Background(), a); err != nil {
		return nil, err
	}
	return a, nil
}

func TestStripeAuthoriseCaptureVoid(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	sc := paymenttest.MPPChallenge(t, ch, "stripe")

	a, err := f.verify(t, hdr("Authorization", paymenttest.MPPStripe(t, ch, "spt_test_ok")))
	if err != nil {
		t.Fatal(err)
	}
	if a.Protocol != payment.ProtocolMPPStripe || a.Method != "stripe" || a.AmountMicroUSD != 500000 || a.ReservationKey != "mpp:"+sc.ID ||
		!strings.HasPrefix(a.Payer, "stripe:spt_") || a.Dev {
		t.Errorf("authorization %+v", a)
	}
	// Verify checks the credential only: the card is authorised by Hold,
	// once the payment is reserved.
	if n := len(f.stripe.Requests()); n != 0 {
		t.Fatalf("Verify called Stripe %d times", n)
	}
	if err := f.p.Hold(ctx, a); err != nil {
		t.Fatal(err)
	}
	reqs := f.stripe.Requests()
	create := reqs[len(reqs)-1]
	want := map[string]string{"amount": "50", "currency": "usd", "confirm": "true", "capture_method": "manual",
		"automatic_payment_methods[enabled]": "true", "automatic_payment_methods[allow_redirects]": "never",
		"shared_payment_granted_token": "spt_test_ok", "metadata[challenge_id]": sc.ID, "metadata[offer]": testOffer.ID}
	for k, v := range want {
		if create.Form[k] != v {
			t.Errorf("form[%s] = %q, want %q", k, create.Form[k], v)
		}
	}
	if create.IdempotencyKey != "mpp_"+sc.ID+"_spt_test_ok" || create.StripeVersion != "2026-07-29.preview" {
		t.Errorf("idempotency key %q, version %q", create.IdempotencyKey, create.StripeVersion)
	}
	intents := f.stripe.Intents()
	if len(intents) != 1 || intents[0].Status != "requires_capture" {
		t.Fatalf("intents %+v", intents)
	}
	// The same credential again (a retry while the hold stands) reuses the
	// same intent, still capturable.
	if _, err := f.hold(t, hdr("Authorization", paymenttest.MPPStripe(t, ch, "spt_test_ok"))); err != nil || len(f.stripe.Intents()) != 1 {
		t.Errorf("retry: %v, %d intents", err, len(f.stripe.Intents()))
	}
	s, err := f.p.Settle(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	r, err := mpp.DecodeReceipt(httpgate.SettlementHeader(s).Get("Payment-Receipt"))
	if err != nil || r.Method != "stripe" || r.Reference != intents[0].ID || r.Status != "success" || r.ChallengeID != sc.ID {
		t.Errorf("receipt %+v %v", r, err)
	}
	if in, _ := f.stripe.Intent(intents[0].ID); in.Status != "succeeded" {
		t.Errorf("after settle: %s", in.Status)
	}

	// Void cancels an authorisation: a failed call is never charged.
	f.clock.t = testNow.Add(1e9)
	ch2 := f.challenge(t)
	other := hdr("Authorization", paymenttest.MPPStripe(t, ch2, "spt_test_other"))
	a2, err := f.hold(t, other)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.p.Void(ctx, a2); err != nil {
		t.Fatal(err)
	}
	for _, in := range f.stripe.Intents() {
		if in.Token == "spt_test_other" && in.Status != "canceled" {
			t.Errorf("voided intent is %s", in.Status)
		}
	}
	// The same credential after its hold was released: Stripe replays the
	// creation (as requires_capture), but the intent is cancelled, so the
	// credential is refused before any work — never "authorised" to fail
	// at capture.
	n := len(f.stripe.Intents())
	_, err = f.hold(t, other)
	checkProblem(t, "credential whose hold was cancelled", err, wantProblem{402, "invalid-challenge", "card_canceled"})
	if len(f.stripe.Intents()) != n {
		t.Error("a new intent was created for a spent credential")
	}
	// An intent captured at once is refunded on void, and then refused too.
	captured := hdr("Authorization", paymenttest.MPPStripe(t, ch2, paymenttest.SPTCaptured))
	a3, err := f.hold(t, captured)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.p.Void(ctx, a3); err != nil {
		t.Fatal(err)
	}
	for _, in := range f.stripe.Intents() {
		if in.Token == paymenttest.SPTCaptured && !in.Refunded {
			t.Error("captured intent not refunded")
		}
	}
	_, err = f.hold(t, captured)
	checkProblem(t, "credential whose payment was refunded", err, wantProblem{402, "invalid-challenge", "card_refunded"})

	// Settle without a hold (a caller that skipped Hold) authorises and
	// captures in one go.
	a4, err := f.verify(t, hdr("Authorization", paymenttest.MPPStripe(t, ch2, "spt_test_direct")))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := f.p.Settle(ctx, a4); err != nil || !strings.HasPrefix(s.Reference, "pi_") {
		t.Fatalf("settle without hold: %+v %v", s, err)
	}
	// Voiding a payment that was never held calls nobody.
	a5, _ := f.verify(t, hdr("Authorization", paymenttest.MPPStripe(t, ch2, "spt_test_never")))
	before := len(f.stripe.Requests())
	if err := f.p.Void(ctx, a5); err != nil || len(f.stripe.Requests()) != before {
		t.Errorf("void without hold: %v, %d requests", err, len(f.stripe.Requests())-before)
	}
}

func TestStripeProblems(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	tests := []struct {
		name string
		h    http.Header
		want wantProblem
	}{
		{"declined", hdr("Authorization", paymenttest.MPPStripe(t, ch, paymenttest.SPTDeclined)), wantProblem{402, "verification-failed", "card_card_declined"}},
		{"requires action", hdr("Authorization", paymenttest.MPPStripe(t, ch, paymenttest.SPTRequiresAction)), wantProblem{402, "verification-failed", "card_requires_action"}},
		{"unknown token", hdr("Authorization", paymenttest.MPPStripe(t, ch, paymenttest.SPTInvalid)), wantProblem{402, "verification-failed", "invalid_payment_token"}},
		{"no spt", hdr("Authorization", paymenttest.MPPStripe(t, ch, "")), wantProblem{402, "malformed-credential", "invalid_payload"}},
		{"tampered amount", hdr("Authorization", paymenttest.MPPStripe(t, ch, "spt_x", paymenttest.WithChallenge(func(c *mpp.Challenge) {
			c.Request = "eyJhbW91bnQiOiIxIn0"
		}))), wantProblem{402, "invalid-challenge", "invalid_challenge"}},
	}
	for _, tc := range tests {
		_, err := f.hold(t, tc.h)
		checkProblem(t, tc.name, err, tc.want)
	}
	for _, in := range f.stripe.Intents() {
		if in.Token == paymenttest.SPTRequiresAction && in.Status != "canceled" {
			t.Errorf("unusable intent left %s", in.Status)
		}
	}
	// No card price: a stripe credential is refused as unsupported.
	o := testOffer
	o.CardMicroUSD = 0
	c, _ := httpgate.ReadCredential(hdr("Authorization", paymenttest.MPPStripe(t, ch, "spt_ok")))
	_, err := f.p.Verify(context.Background(), o, testRes, c)
	checkProblem(t, "no card price", err, wantProblem{400, "method-unsupported", "unsupported_scheme"})
}

func TestStripeTokenParamAndVersion(t *testing.T) {
	fake := paymenttest.NewStripe(t)
	fake.TokenParam = "payment_method_data[shared_payment_granted_token]"
	sc, err := stripecard.New(&stripecard.Options{SecretKey: "sk_test_1", ProfileID: "profile_1", BackendURL: fake.URL,
		TokenParam: "payment_method_data[shared_payment_granted_token]", StripeVersion: "-"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOpts{edit: func(o *protocols.Options) { o.Stripe = sc }})
	ch := f.challenge(t)
	if _, err := f.hold(t, hdr("Authorization", paymenttest.MPPStripe(t, ch, "spt_test_ok"))); err != nil {
		t.Fatal(err)
	}
	r := fake.Requests()[0]
	if r.Form["payment_method_data[shared_payment_granted_token]"] != "spt_test_ok" || r.StripeVersion == "2026-07-29.preview" || r.StripeVersion == "" {
		t.Errorf("request %+v", r)
	}
	for _, o := range []*stripecard.Options{nil, {SecretKey: "sk_test_1"}, {ProfileID: "p"}} {
		if _, err := stripecard.New(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// A card payment whose capture outcome was not recorded is captured again
// from its order's record, by any process: the capture is idempotent.
func TestStripeSettlementResolvedFromTheRecord(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fixtureOpts{production: true})
	ch := f.challenge(t)
	a, err := f.hold(t, hdr("Authorization", paymenttest.MPPStripe(t, ch, "spt_test_resolve")))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := f.p.Record(a)
	if err != nil {
		t.Fatal(err)
	}
	o := &payment.Order{Protocol: a.Protocol, Method: a.Method, ReservationKey: a.ReservationKey, PaymentRecord: rec}
	s, err := f.p.CheckSettlement(ctx, o)
	if err != nil || !strings.HasPrefix(s.Reference, "pi_") || httpgate.SettlementHeader(s).Get(mpp.HeaderPaymentReceipt) == "" {
		t.Fatalf("resolved card settlement: %+v %v", s, err)
	}
	again, err := f.p.CheckSettlement(ctx, o)
	if err != nil || again.Reference != s.Reference {
		t.Fatalf("second attempt: %+v %v", again, err)
	}
	captures := 0
	for _, r := range f.stripe.Requests() {
		if strings.HasSuffix(r.Path, "/capture") {
			captures++
		}
	}
	if in, ok := f.stripe.Intent(s.Reference); captures == 0 || !ok || in.Status != "succeeded" {
		t.Fatalf("the card was not captured: %d captures, intent %+v", captures, in)
	}
}
