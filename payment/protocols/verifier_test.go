package protocols_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/protocols"
	"github.com/assaykit/assay/payment/x402"
)

// x402Parts decodes a PAYMENT-SIGNATURE / X-PAYMENT header value into the
// payload JSON a Verifier receives.
func x402Parts(t *testing.T, header string) json.RawMessage {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLocalVerifier(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fixtureOpts{noStripe: true})
	ch := f.challenge(t)
	pr := paymenttest.PaymentRequired(t, ch)
	req2, _ := pr.Accepts[0].Raw()
	var v1doc x402.PaymentRequiredV1
	if err := json.Unmarshal(ch.Body, &v1doc); err != nil {
		t.Fatal(err)
	}
	req1, _ := json.Marshal(v1doc.Accepts[0])
	other := paymenttest.NewWallet(t)
	lv := &x402.LocalVerifier{Now: func() time.Time { return testNow }}
	v2 := func(opts ...paymenttest.Option) json.RawMessage {
		return x402Parts(t, paymenttest.X402V2(t, f.wallet, ch, testNow, opts...))
	}
	tests := []struct {
		name    string
		version int
		payload json.RawMessage
		req     json.RawMessage
		reason  string // "" = valid
	}{
		{"v2 honest", 2, v2(), req2, ""},
		{"v1 honest", 1, x402Parts(t, paymenttest.X402V1(t, f.wallet, ch, testNow)), req1, ""},
		{"forged", 2, v2(paymenttest.WithSignedBy(other)), req2, "invalid_exact_evm_payload_signature"},
		{"high s", 2, v2(paymenttest.WithHighS()), req2, "invalid_exact_evm_payload_signature"},
		{"wrong payee", 2, v2(paymenttest.WithPayTo(other.Address().String())), req2, "invalid_exact_evm_payload_recipient_mismatch"},
		{"wrong amount", 2, v2(paymenttest.WithAmount("1")), req2, "invalid_exact_evm_payload_authorization_value_mismatch"},
		{"expired", 2, v2(paymenttest.WithValidity(0, testNow.Unix()+5)), req2, "invalid_exact_evm_payload_authorization_valid_before"},
		{"not yet valid", 2, v2(paymenttest.WithValidity(testNow.Unix()+60, testNow.Unix()+600)), req2, "invalid_exact_evm_payload_authorization_valid_after"},
		{"version mismatch", 1, v2(), req2, "invalid_x402_version"},
		{"unknown network", 2, v2(), json.RawMessage(`{"scheme":"exact","network":"eip155:1","amount":"250000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"` + paymenttest.DevPayee + `"}`), "invalid_network"},
		{"not USDC", 2, v2(), json.RawMessage(`{"scheme":"exact","network":"eip155:8453","amount":"250000","asset":"` + other.Address().String() + `","payTo":"` + paymenttest.DevPayee + `"}`), "invalid_payment_requirements"},
		{"other scheme", 2, v2(), json.RawMessage(`{"scheme":"upto","network":"eip155:8453","amount":"250000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"` + paymenttest.DevPayee + `"}`), "unsupported_scheme"},
		{"garbage", 2, json.RawMessage(`[1]`), req2, "invalid_payload"},
	}
	for _, tc := range tests {
		vr, err := lv.Verify(ctx, tc.version, tc.payload, tc.req)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.reason == "" {
			if !vr.IsValid || vr.Payer != paymenttest.DevAddress {
				t.Errorf("%s: %+v", tc.name, vr)
			}
			continue
		}
		if vr.IsValid || vr.InvalidReason != tc.reason || vr.InvalidMessage == "" {
			t.Errorf("%s: %+v, want reason %s", tc.name, vr, tc.reason)
		}
	}
}

// recordingVerifier answers with a fixed verdict and counts its calls.
type recordingVerifier struct {
	mu     sync.Mutex
	calls  int
	answer x402.VerifyResponse
}

func (r *recordingVerifier) Verify(context.Context, int, json.RawMessage, json.RawMessage) (*x402.VerifyResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	a := r.answer
	return &a, nil
}

type recordingSettler struct {
	mu    sync.Mutex
	calls int
}

func (r *recordingSettler) Settle(_ context.Context, _ int, payload, _ json.RawMessage) (*x402.SettleResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	return &x402.SettleResponse{Success: true, Transaction: "0x" + "ab" + "00000000000000000000000000000000000000000000000000000000000000", Network: "eip155:8453"}, nil
}

// The processor takes its Verifier and Settler from the options: a host
// can verify with the facilitator only, locally only, or with anything
// else that speaks the /verify and /settle shapes.
func TestProcessorPluggableVerifierAndSettler(t *testing.T) {
	ctx := context.Background()
	t.Run("local only: no facilitator call at verification", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{production: true, noStripe: true, edit: func(o *protocols.Options) {
			o.Verifier = &x402.LocalVerifier{Now: func() time.Time { return testNow }}
		}})
		ch := f.challenge(t)
		a, err := f.verify(t, hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(f.fac.Calls("/verify")); n != 0 {
			t.Errorf("%d /verify calls with a local verifier", n)
		}
		_, err = f.verify(t, hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow, paymenttest.WithSignedBy(paymenttest.NewWallet(t)))))
		checkProblem(t, "forged, local", err, wantProblem{402, "verification-failed", "invalid_exact_evm_payload_signature"})
		if _, err := f.p.Settle(ctx, a); err != nil || len(f.fac.Calls("/settle")) != 1 {
			t.Errorf("settlement through the facilitator: %v, %d calls", err, len(f.fac.Calls("/settle")))
		}
	})
	t.Run("default: local first, then the facilitator once reserved", func(t *testing.T) {
		f := newFixture(t, fixtureOpts{production: true, noStripe: true})
		ch := f.challenge(t)
		_, err := f.verify(t, hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow, paymenttest.WithSignedBy(paymenttest.NewWallet(t)))))
		checkProblem(t, "forged", err, wantProblem{402, "verification-failed", "invalid_exact_evm_payload_signature"})
		if n := len(f.fac.Calls("/verify")); n != 0 {
			t.Errorf("a forged signature cost %d facilitator calls", n)
		}
		a, err := f.verify(t, hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)))
		if err != nil || len(f.fac.Calls("/verify")) != 0 {
			t.Fatalf("honest payment: %v, %d /verify calls before the reservation", err, len(f.fac.Calls("/verify")))
		}
		if err := f.p.Hold(ctx, a); err != nil || len(f.fac.Calls("/verify")) != 1 {
			t.Errorf("hold: %v, %d /verify calls", err, len(f.fac.Calls("/verify")))
		}
	})
	t.Run("custom verifier and settler, no facilitator", func(t *testing.T) {
		rv := &recordingVerifier{answer: x402.VerifyResponse{IsValid: false, InvalidReason: "insufficient_funds", Payer: paymenttest.DevAddress}}
		rs := &recordingSettler{}
		f := newFixture(t, fixtureOpts{noStripe: true, edit: func(o *protocols.Options) {
			o.Dev, o.Verifier, o.Settler = false, rv, rs
		}})
		ch := f.challenge(t)
		for _, h := range []string{paymenttest.X402V2(t, f.wallet, ch, testNow)} {
			_, err := f.verify(t, hdr("Payment-Signature", h))
			checkProblem(t, "refused by the verifier", err, wantProblem{402, "verification-failed", "insufficient_funds"})
		}
		_, err := f.verify(t, hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow)))
		checkProblem(t, "mpp refused by the verifier", err, wantProblem{402, "verification-failed", "insufficient_funds"})
		if rv.calls != 2 {
			t.Errorf("verifier called %d times, want 2 (x402 and MPP evm)", rv.calls)
		}
		// A verifier that names another payer is not believed.
		rv.answer = x402.VerifyResponse{IsValid: true, Payer: paymenttest.DevPayee}
		_, err = f.verify(t, hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)))
		checkProblem(t, "other payer", err, wantProblem{402, "verification-failed", "invalid_exact_evm_payload_signature"})
		rv.answer = x402.VerifyResponse{IsValid: true}
		a, err := f.verify(t, hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)))
		if err != nil {
			t.Fatal(err)
		}
		if s, err := f.p.Settle(ctx, a); err != nil || s.Dev || rs.calls != 1 {
			t.Errorf("settle: %+v %v, settler calls %d", s, err, rs.calls)
		}
	})
	t.Run("production needs a settler", func(t *testing.T) {
		if _, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Verifier: &x402.LocalVerifier{}}); err == nil {
			t.Error("accepted a production processor that cannot settle")
		}
	})
}

func TestVerifyAll(t *testing.T) {
	ctx := context.Background()
	yes := &recordingVerifier{answer: x402.VerifyResponse{IsValid: true, Payer: "0xA"}}
	no := &recordingVerifier{answer: x402.VerifyResponse{InvalidReason: "insufficient_funds"}}
	after := &recordingVerifier{answer: x402.VerifyResponse{IsValid: true}}
	vr, err := x402.VerifyAll(yes, no, after).Verify(ctx, 2, nil, nil)
	if err != nil || vr.IsValid || vr.InvalidReason != "insufficient_funds" || after.calls != 0 {
		t.Errorf("refusal: %+v %v, later verifier called %d times", vr, err, after.calls)
	}
	vr, err = x402.VerifyAll(yes, after).Verify(ctx, 2, nil, nil)
	if err != nil || !vr.IsValid || vr.Payer != "0xA" {
		t.Errorf("acceptance: %+v %v", vr, err)
	}
	if vr, err := x402.VerifyAll().Verify(ctx, 2, nil, nil); err == nil {
		t.Errorf("an empty chain answered %+v", vr)
	}
}
