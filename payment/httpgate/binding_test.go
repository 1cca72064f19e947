package httpgate_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paymenttest"
)

// A payment is bound to the route it was made for where the protocol
// allows it. Two routes at the same price (niche A's and niche B's
// pay-per-call):
//
//   - MPP: the challenge names its resource inside the HMAC-bound fields,
//     and the evm signature covers the challenge id: a credential for A is
//     refused at B, also with its opaque edited or re-bound.
//   - x402 v2: the payload's resource must be B's: a payload for A, or
//     with its resource removed or edited, is refused at B.
//   - x402 v1: payloads carry no resource (a limit of the protocol,
//     documented in the package and the README): a fresh v1 payment for
//     A is accepted at B — once.
//
// A payment already used at A is refused at B in every protocol
// (payment_already_used), and PAYMENT-REQUIRED's error says why each time.
func TestGateBindsPaymentsToTheirRoute(t *testing.T) {
	const a, b = "/v1/niches/niche_a/pay-per-call", "/v1/niches/niche_b/pay-per-call"
	e := newRealEnv(t, realOpts{})
	refused := func(what string, r result, reason string) {
		t.Helper()
		if r.status != 402 || !strings.Contains(decodedPaymentRequired(t, r.header), `"error":"`+reason+`"`) {
			t.Errorf("%s: %d %s (PAYMENT-REQUIRED %s), want 402 %s", what, r.status, r.body, decodedPaymentRequired(t, r.header), reason)
		}
	}
	fresh := func() map[string]map[string]string { return e.credentials(e.challenge("GET", a, "", nil)) }

	// Unused credentials for A, presented at B.
	c := fresh()
	refused("MPP for A at B", e.do("GET", b, "", c["mpp evm"]), "challenge_mismatch")
	refused("x402 v2 for A at B", e.do("GET", b, "", c["x402 v2"]), "invalid_payment_requirements")
	if r := e.do("GET", b, "", c["x402 v1"]); r.status != 200 {
		t.Errorf("x402 v1 for A at B (no resource in v1 payloads): %d %s", r.status, r.body)
	}
	refused("x402 v1 for A, used at B, then at A", e.do("GET", a, "", c["x402 v1"]), payment.ReasonPaymentUsed)
	// The others still pay A, where they were made for.
	for _, kind := range []string{"mpp evm", "x402 v2"} {
		if r := e.do("GET", a, "", c[kind]); r.status != 200 {
			t.Errorf("%s at A: %d %s", kind, r.status, r.body)
		}
	}

	// Credentials used at A, presented at B.
	c = fresh()
	for _, kind := range []string{"mpp evm", "x402 v2", "x402 v1"} {
		if r := e.do("GET", a, "", c[kind]); r.status != 200 {
			t.Fatalf("%s at A: %d %s", kind, r.status, r.body)
		}
		refused(kind+" used at A, at B", e.do("GET", b, "", c[kind]), payment.ReasonPaymentUsed)
	}

	// x402 v2 payloads for A whose resource was removed or edited.
	ch := e.challenge("GET", a, "", nil)
	now := e.clock.now()
	noResource := paymenttest.X402V2(t, e.wallet, ch, now, paymenttest.WithPayload(func(m map[string]any) { delete(m, "resource") }))
	refused("x402 v2 without resource at A", e.do("GET", a, "", map[string]string{"Payment-Signature": noResource}), "invalid_payment_requirements")
	edited := paymenttest.X402V2(t, e.wallet, ch, now, paymenttest.WithResourceURL(publicBase+"/v1/niches/niche_c/pay-per-call"))
	refused("x402 v2 with another resource at A", e.do("GET", a, "", map[string]string{"Payment-Signature": edited}), "invalid_payment_requirements")
	desc := paymenttest.X402V2(t, e.wallet, ch, now, paymenttest.WithPayload(func(m map[string]any) {
		m["resource"].(map[string]any)["description"] = "something else"
	}))
	refused("x402 v2 with an edited description at A", e.do("GET", a, "", map[string]string{"Payment-Signature": desc}), "invalid_payment_requirements")

	// MPP credentials for A whose challenge was edited to name B: the
	// binding breaks; re-bound with the secret, the signed nonce does.
	toB := func(c *mpp.Challenge) {
		raw, _ := base64.RawURLEncoding.DecodeString(c.Opaque)
		var o map[string]string
		_ = json.Unmarshal(raw, &o)
		o["resource"] = publicBase + b
		nb, _ := json.Marshal(o)
		c.Opaque = base64.RawURLEncoding.EncodeToString(nb)
	}
	editedMPP := paymenttest.MPPEVM(t, e.wallet, ch, now, paymenttest.WithChallenge(toB))
	refused("MPP with its opaque edited to B, at B", e.do("GET", b, "", map[string]string{"Authorization": editedMPP}), "invalid_challenge")
	rebound := paymenttest.MPPEVM(t, e.wallet, ch, now, paymenttest.WithChallenge(func(c *mpp.Challenge) {
		toB(c)
		c.ID = paymenttest.BindMPP(testSecret, *c)
	}))
	refused("MPP re-bound to B, at B", e.do("GET", b, "", map[string]string{"Authorization": rebound}), "invalid_nonce")

	if n := e.h.delivered.Load(); n != 0 {
		t.Errorf("the claim handler ran %d times", n)
	}
}
