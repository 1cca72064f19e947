package protocols_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
	x402seller "github.com/assaykit/assay/payment/x402/seller"
)

func newClient(t *testing.T, url string, edit func(*x402.FacilitatorOptions)) *x402.Facilitator {
	t.Helper()
	o := &x402.FacilitatorOptions{URL: url, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond}
	if edit != nil {
		edit(o)
	}
	c, err := x402.NewFacilitator(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	samplePayload = json.RawMessage(`{"x402Version":2,"payload":{"authorization":{"from":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"}}}`)
	sampleReq     = json.RawMessage(`{"scheme":"exact","network":"eip155:8453"}`)
)

func TestFacilitatorClient(t *testing.T) {
	ctx := context.Background()
	t.Run("verify sends the documented body and per-path auth", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		var paths []string
		c := newClient(t, fake.URL+"/", func(o *x402.FacilitatorOptions) {
			o.Headers = func(_ context.Context, method, path string) (http.Header, error) {
				paths = append(paths, method+" "+path)
				return http.Header{"Authorization": {"Bearer jwt-for-" + path}}, nil
			}
		})
		vr, err := c.Verify(ctx, 2, samplePayload, sampleReq)
		if err != nil || !vr.IsValid || vr.Payer != "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" {
			t.Fatalf("verify = %+v, %v", vr, err)
		}
		call := fake.Calls("/verify")[0]
		if diff := jsonDiff(t, `{"x402Version":2,"paymentPayload":`+string(samplePayload)+`,"paymentRequirements":`+string(sampleReq)+`}`, string(call.Body)); diff != "" {
			t.Error(diff)
		}
		if call.Header.Get("Authorization") != "Bearer jwt-for-/verify" || call.Header.Get("Content-Type") != "application/json" {
			t.Errorf("headers %v", call.Header)
		}
		if _, err := c.Supported(ctx); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"POST /verify", "GET /supported"}, paths); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("verify isValid false", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		fake.Script("/verify", paymenttest.Reply{Body: paymenttest.Recorded("verify_insufficient_funds")})
		vr, err := newClient(t, fake.URL, nil).Verify(ctx, 2, samplePayload, sampleReq)
		if err != nil || vr.IsValid || vr.InvalidReason != "insufficient_funds" {
			t.Fatalf("verify = %+v, %v", vr, err)
		}
	})
	t.Run("verify 5xx then success is retried", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		fake.Script("/verify", paymenttest.Reply{Status: 500, Body: `oops`}, paymenttest.Reply{Status: 502, Body: `bad gateway`})
		vr, err := newClient(t, fake.URL, nil).Verify(ctx, 2, samplePayload, sampleReq)
		if err != nil || !vr.IsValid {
			t.Fatalf("verify = %+v, %v", vr, err)
		}
		if n := len(fake.Calls("/verify")); n != 3 {
			t.Errorf("%d calls, want 3", n)
		}
	})
	t.Run("verify 5xx forever is an error", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		for range 5 {
			fake.Script("/verify", paymenttest.Reply{Status: 503, Body: `down`})
		}
		_, err := newClient(t, fake.URL, func(o *x402.FacilitatorOptions) { o.RetryMax = 2 }).Verify(ctx, 2, samplePayload, sampleReq)
		if !errors.Is(err, x402.ErrFacilitator) {
			t.Fatalf("err = %v", err)
		}
		if n := len(fake.Calls("/verify")); n != 3 {
			t.Errorf("%d calls, want 3", n)
		}
	})
	t.Run("settle success", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		sr, err := newClient(t, fake.URL, nil).Settle(ctx, 2, samplePayload, sampleReq)
		if err != nil || !sr.Success || !strings.HasPrefix(sr.Transaction, "0x") || sr.Network != "eip155:8453" {
			t.Fatalf("settle = %+v, %v", sr, err)
		}
	})
	t.Run("settle success false", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		fake.Script("/settle", paymenttest.Reply{Body: paymenttest.Recorded("settle_failure")})
		sr, err := newClient(t, fake.URL, nil).Settle(ctx, 2, samplePayload, sampleReq)
		if err != nil || sr.Success || sr.ErrorReason != "insufficient_funds" {
			t.Fatalf("settle = %+v, %v", sr, err)
		}
	})
	t.Run("settle success false with HTTP 400", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		fake.Script("/settle", paymenttest.Reply{Status: 400, Body: paymenttest.Recorded("settle_failure")})
		sr, err := newClient(t, fake.URL, nil).Settle(ctx, 2, samplePayload, sampleReq)
		if err != nil || sr.Success {
			t.Fatalf("settle = %+v, %v", sr, err)
		}
	})
	t.Run("a settled nonce is refused, in either version", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		c := newClient(t, fake.URL, nil)
		auth := `"payload":{"authorization":{"from":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","nonce":"0x11"}}`
		v2 := json.RawMessage(`{"x402Version":2,` + auth + `}`)
		v1 := json.RawMessage(`{"x402Version":1,"network":"base",` + auth + `}`)
		req2 := json.RawMessage(`{"scheme":"exact","network":"eip155:8453","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}`)
		req1 := json.RawMessage(`{"scheme":"exact","network":"base","asset":"0x833589FCD6EDB6E08F4C7C32D4F71B54BDA02913"}`)
		if sr, err := c.Settle(ctx, 2, v2, req2); err != nil || !sr.Success {
			t.Fatalf("first settle = %+v, %v", sr, err)
		}
		for _, tc := range []struct {
			version int
			pl, req json.RawMessage
			wantNet string
		}{{2, v2, req2, "eip155:8453"}, {1, v1, req1, "base"}} {
			sr, err := c.Settle(ctx, tc.version, tc.pl, tc.req)
			if err != nil || sr.Success || sr.ErrorReason != paymenttest.ReasonNonceUsed || sr.Transaction != "" || sr.Network != tc.wantNet {
				t.Errorf("v%d settle again = %+v, %v", tc.version, sr, err)
			}
			vr, err := c.Verify(ctx, tc.version, tc.pl, tc.req)
			if err != nil || vr.IsValid || vr.InvalidReason != paymenttest.ReasonNonceUsed {
				t.Errorf("v%d verify after settlement = %+v, %v", tc.version, vr, err)
			}
		}
		// Another nonce of the same payer is still fine.
		other := json.RawMessage(strings.Replace(string(v2), `"0x11"`, `"0x22"`, 1))
		if sr, err := c.Settle(ctx, 2, other, req2); err != nil || !sr.Success {
			t.Errorf("other nonce = %+v, %v", sr, err)
		}
	})
	pendingCases := []struct {
		name    string
		replies []paymenttest.Reply
		tx      bool
		calls   int
	}{
		{"settlement_pending", []paymenttest.Reply{{Body: paymenttest.Recorded("settle_pending")}}, true, 1},
		{"5xx is unknown, not retried", []paymenttest.Reply{{Status: 500, Body: `boom`}}, false, 1},
		{"timeout", []paymenttest.Reply{{Delay: 2 * time.Second, Body: paymenttest.Recorded("settle_success")}}, false, 1},
		{"200 with garbage", []paymenttest.Reply{{Body: `<html>`}}, false, 1},
		{"success without transaction", []paymenttest.Reply{{Body: `{"success":true,"transaction":"","network":"eip155:8453"}`}}, false, 1},
	}
	for _, tc := range pendingCases {
		t.Run("settle "+tc.name, func(t *testing.T) {
			fake := paymenttest.NewFacilitator(t)
			fake.Script("/settle", tc.replies...)
			_, err := newClient(t, fake.URL, func(o *x402.FacilitatorOptions) { o.SettleTimeout = 150 * time.Millisecond }).Settle(ctx, 2, samplePayload, sampleReq)
			if !errors.Is(err, payment.ErrSettlementPending) {
				t.Fatalf("err = %v, want ErrSettlementPending", err)
			}
			var pe *x402.PendingError
			if !errors.As(err, &pe) || (pe.Transaction != "") != tc.tx {
				t.Errorf("pending error %+v", pe)
			}
			if n := len(fake.Calls("/settle")); n != tc.calls {
				t.Errorf("%d calls, want %d", n, tc.calls)
			}
		})
	}
	t.Run("settle 429 then success is retried", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		fake.Script("/settle", paymenttest.Reply{Status: 429, Body: `slow down`})
		sr, err := newClient(t, fake.URL, nil).Settle(ctx, 2, samplePayload, sampleReq)
		if err != nil || !sr.Success || len(fake.Calls("/settle")) != 2 {
			t.Fatalf("settle = %+v, %v, %d calls", sr, err, len(fake.Calls("/settle")))
		}
	})
	t.Run("settle 401 is a failure, not pending", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		fake.Script("/settle", paymenttest.Reply{Status: 401, Body: `{"error":"unauthorized"}`})
		_, err := newClient(t, fake.URL, nil).Settle(ctx, 2, samplePayload, sampleReq)
		if !errors.Is(err, x402.ErrFacilitator) || errors.Is(err, payment.ErrSettlementPending) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("unreachable facilitator: settle not pending", func(t *testing.T) {
		// Port 1 of loopback: nothing listens there, and unlike the port
		// of a closed test server, no parallel test can be given it (it
		// is below the ephemeral range), so the connection is refused.
		url := "http://127.0.0.1:1"
		_, err := newClient(t, url, func(o *x402.FacilitatorOptions) { o.RetryMax = 1 }).Settle(ctx, 2, samplePayload, sampleReq)
		if !errors.Is(err, x402.ErrFacilitator) || errors.Is(err, payment.ErrSettlementPending) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("supported", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		s, err := newClient(t, fake.URL, nil).Supported(ctx)
		if err != nil || !s.Supports(2, "exact", "eip155:8453") || !s.Supports(1, "exact", "base") || s.Supports(2, "exact", "eip155:1") {
			t.Fatalf("supported = %+v, %v", s, err)
		}
	})
	t.Run("auth header failure", func(t *testing.T) {
		fake := paymenttest.NewFacilitator(t)
		_, err := newClient(t, fake.URL, func(o *x402.FacilitatorOptions) {
			o.Headers = func(context.Context, string, string) (http.Header, error) { return nil, errors.New("no key") }
		}).Verify(ctx, 2, samplePayload, sampleReq)
		if err == nil || len(fake.Calls("")) != 0 {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("bad URLs", func(t *testing.T) {
		for _, u := range []string{"", "ftp://x", "not a url", "http://"} {
			if _, err := x402.NewFacilitator(&x402.FacilitatorOptions{URL: u}); err == nil {
				t.Errorf("%q accepted", u)
			}
		}
	})
}

// Production mode: verification consults the facilitator, settlement goes
// through it, and its verdicts become problems or pending errors.
func TestProductionSettlement(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fixtureOpts{production: true})
	ch := f.challenge(t)

	a, err := f.verify(t, hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)))
	if err != nil {
		t.Fatal(err)
	}
	// The facilitator is asked only once the payment is reserved (Hold).
	if a.Dev || len(f.fac.Calls("/verify")) != 0 {
		t.Fatalf("dev=%v, verify calls before the hold %d", a.Dev, len(f.fac.Calls("/verify")))
	}
	if err := f.p.Hold(ctx, a); err != nil || len(f.fac.Calls("/verify")) != 1 {
		t.Fatalf("hold: %v, verify calls %d", err, len(f.fac.Calls("/verify")))
	}
	s, err := f.p.Settle(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	var sr x402.SettleResponse
	if err := x402.DecodeHeader(httpgate.SettlementHeader(s).Get("Payment-Response"), &sr); err != nil {
		t.Fatal(err)
	}
	if !sr.Success || sr.Transaction != s.Reference || strings.HasPrefix(s.Reference, "0xdev") || s.Dev || sr.Network != "eip155:8453" {
		t.Errorf("settlement %+v / %+v", s, sr)
	}
	// The settle request carries the payload as received and our requirements.
	var body struct {
		X402Version         int
		PaymentPayload      json.RawMessage
		PaymentRequirements x402.PaymentRequirements
	}
	_ = json.Unmarshal(f.fac.Calls("/settle")[0].Body, &body)
	if body.X402Version != 2 || body.PaymentRequirements.Amount != "250000" || body.PaymentRequirements.MaxTimeoutSeconds != 210 {
		t.Errorf("settle body %+v", body)
	}

	// v1 answers in kind.
	a1, err := f.verify(t, hdr("X-Payment", paymenttest.X402V1(t, f.wallet, ch, testNow)))
	if err != nil {
		t.Fatal(err)
	}
	s1, err := f.p.Settle(ctx, a1)
	if err != nil {
		t.Fatal(err)
	}
	if err := x402.DecodeHeader(httpgate.SettlementHeader(s1).Get("X-Payment-Response"), &sr); err != nil || sr.Network != "base" || httpgate.SettlementHeader(s1).Get("Payment-Response") != "" {
		t.Errorf("v1 settlement %v %+v %v", httpgate.SettlementHeader(s1), sr, err)
	}

	// verifyHeld verifies a credential and places its hold, which asks
	// the facilitator.
	verifyHeld := func(h http.Header) error {
		a, err := f.verify(t, h)
		if err != nil {
			return err
		}
		return f.p.Hold(ctx, a)
	}
	// Facilitator says insufficient funds at verify.
	f.fac.Script("/verify", paymenttest.Reply{Body: paymenttest.Recorded("verify_insufficient_funds")})
	err = verifyHeld(hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)))
	checkProblem(t, "insufficient funds", err, wantProblem{402, "verification-failed", "insufficient_funds"})

	// Settlement refused.
	f.fac.Script("/settle", paymenttest.Reply{Body: paymenttest.Recorded("settle_failure")})
	a, _ = f.verify(t, hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)))
	_, err = f.p.Settle(ctx, a)
	checkProblem(t, "settle refused", err, wantProblem{402, "verification-failed", "insufficient_funds"})

	// Pending.
	f.fac.Script("/settle", paymenttest.Reply{Body: paymenttest.Recorded("settle_pending")})
	_, err = f.p.Settle(ctx, a)
	if !errors.Is(err, payment.ErrSettlementPending) {
		t.Errorf("pending: %v", err)
	}

	// A facilitator that is down at verification is an error, not a problem.
	for range 5 {
		f.fac.Script("/verify", paymenttest.Reply{Status: 503})
	}
	err = verifyHeld(hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)))
	var p *payment.Problem
	if !errors.Is(err, x402.ErrFacilitator) || errors.As(err, &p) {
		t.Errorf("facilitator down: %v", err)
	}

	// MPP evm settles through the facilitator with an x402 payload built
	// from the EIP-3009 authorization.
	n := len(f.fac.Calls("/settle"))
	am, err := f.verify(t, hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow)))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := f.p.Settle(ctx, am)
	if err != nil {
		t.Fatal(err)
	}
	r, err := mpp.DecodeReceipt(httpgate.SettlementHeader(sm).Get("Payment-Receipt"))
	if err != nil || r.Status != "success" || r.Method != "evm" || r.Reference != sm.Reference || r.ChainID != 8453 ||
		r.ChallengeID != paymenttest.MPPChallenge(t, ch, "evm").ID || r.Timestamp != "2026-11-22T09:00:00Z" {
		t.Errorf("receipt %+v %v", r, err)
	}
	calls := f.fac.Calls("/settle")
	if len(calls) != n+1 {
		t.Fatalf("settle calls %d", len(calls))
	}
	var mb struct {
		X402Version    int
		PaymentPayload struct {
			X402Version int
			Accepted    x402.PaymentRequirements
			Payload     x402.ExactEVMPayload
		}
	}
	_ = json.Unmarshal(calls[n].Body, &mb)
	wantNonce := mpp.Nonce(paymenttest.MPPChallenge(t, ch, "evm").ID, "api.example.com")
	if mb.X402Version != 2 || mb.PaymentPayload.Accepted.PayTo != paymenttest.DevPayee || mb.PaymentPayload.Payload.Authorization.Nonce != wantNonce ||
		!strings.EqualFold(mb.PaymentPayload.Payload.Authorization.From, paymenttest.DevAddress) {
		t.Errorf("mpp settle body %s", calls[n].Body)
	}
	if err := f.p.Void(ctx, am); err != nil {
		t.Errorf("void evm: %v", err)
	}
}

func TestDevSettlement(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fixtureOpts{})
	ch := f.challenge(t)
	a, err := f.verify(t, hdr("Payment-Signature", paymenttest.X402V2(t, f.wallet, ch, testNow)))
	if err != nil {
		t.Fatal(err)
	}
	s1, err := f.p.Settle(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := f.p.Settle(ctx, a)
	if !s1.Dev || !strings.HasPrefix(s1.Reference, x402seller.DevReferencePrefix) || len(s1.Reference) != 66 || s1.Reference != s2.Reference {
		t.Errorf("dev settlement %+v (again %s)", s1, s2.Reference)
	}
	raw, _ := base64.StdEncoding.DecodeString(httpgate.SettlementHeader(s1).Get("Payment-Response"))
	var sr map[string]any
	_ = json.Unmarshal(raw, &sr)
	if sr["success"] != true || sr["transaction"] != s1.Reference || sr["payer"] != strings.ToLower(paymenttest.DevAddress) {
		t.Errorf("PAYMENT-RESPONSE %s", raw)
	}
	if string(s1.Meta) != string(raw) {
		t.Errorf("Meta %s differs from the header %s", s1.Meta, raw)
	}
	am, _ := f.verify(t, hdr("Authorization", paymenttest.MPPEVM(t, f.wallet, ch, testNow)))
	sm, err := f.p.Settle(ctx, am)
	if err != nil || !sm.Dev || !strings.HasPrefix(sm.Reference, "0xdev") {
		t.Fatalf("mpp dev settlement %+v %v", sm, err)
	}
	if _, err := f.p.Settle(ctx, &payment.Authorization{Protocol: "x402"}); err == nil {
		t.Error("foreign authorization settled")
	}
}

func TestStaticHeaders(t *testing.T) {
	h, err := x402.ParseHeaderLine("Authorization: Bearer k: v")
	if err != nil || h.Get("Authorization") != "Bearer k: v" {
		t.Fatalf("%v %v", h, err)
	}
	for _, bad := range []string{"", "NoColon", ": v", "A B: v", "A: ", "A: v\r\nX: y"} {
		if _, err := x402.ParseHeaderLine(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	fake := paymenttest.NewFacilitator(t)
	c := newClient(t, fake.URL, func(o *x402.FacilitatorOptions) { o.Headers = x402.StaticHeaders(h) })
	if _, err := c.Supported(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := fake.Calls("/supported")[0].Header.Get("Authorization"); got != "Bearer k: v" {
		t.Errorf("Authorization %q", got)
	}
}
