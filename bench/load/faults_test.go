package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymenttest"
)

// The judge and the proxy of the faults scenario must be able to fail:
// these tests feed them what they look for.

func mustAddr(t *testing.T, s string) evm.Address {
	t.Helper()
	a, err := evm.ParseAddress(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// invariants returns the invariants of vs, in order.
func invariants(vs []violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Invariant)
	}
	return out
}

func TestJudgeOrders(t *testing.T) {
	chain, err := paymenttest.NewChain(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := chain.Network()
	payee := mustAddr(t, paymenttest.DevPayee)
	other := mustAddr(t, "0x1111111111111111111111111111111111111111")
	payerA := mustAddr(t, "0x2222222222222222222222222222222222222222")
	payerB := mustAddr(t, "0x3333333333333333333333333333333333333333")
	auth := func(from, to evm.Address, nonce byte) evm.TransferAuthorization {
		return evm.TransferAuthorization{From: from, To: to, Value: big.NewInt(10_000), ValidAfter: big.NewInt(0),
			ValidBefore: big.NewInt(1 << 40), Nonce: [32]byte{nonce}}
	}
	aA, aB, aWrong := auth(payerA, payee, 1), auth(payerB, payee, 2), auth(payerB, other, 3)
	txs := map[string]*paymenttest.ChainTx{
		"0xa":      {Hash: "0xa", Authorization: aA, Block: 2, Success: true},
		"0xb":      {Hash: "0xb", Authorization: aB, Block: 3, Success: true},
		"0xwrong":  {Hash: "0xwrong", Authorization: aWrong, Block: 4, Success: true},
		"0xfailed": {Hash: "0xfailed", Authorization: aB, Block: 5, Success: false, Reason: paymenttest.ReasonInsufficientFunds},
	}
	view := func(transfers ...string) chainView {
		v := chainView{Tx: func(h string) *paymenttest.ChainTx { return txs[h] }, Network: n, Payee: payee}
		for _, h := range transfers {
			v.Transfers = append(v.Transfers, *txs[h])
		}
		return v
	}
	order := func(id, status string, a evm.TransferAuthorization, ref string) orderRow {
		return orderRow{ID: id, Status: status, ReservationKey: a.ReservationKey(n), Payer: a.From.Hex(), SettlementRef: ref, Amount: 10_000}
	}
	for _, tc := range []struct {
		name    string
		orders  []orderRow
		chain   chainView
		closed  bool
		excused func(orderRow) bool
		want    []string
	}{
		{"a completed order settled by its own transfer", []orderRow{order("o1", "completed", aA, "0xa")}, view("0xa"), true, nil, nil},
		{"two completed orders for one credential",
			[]orderRow{order("o1", "completed", aA, "0xa"), order("o2", "completed", aA, "0xa")}, view("0xa"), false, nil,
			[]string{invTwice, invTwice}},
		{"completed but unsettled", []orderRow{order("o1", "completed", aA, "")}, view(), false, nil, []string{invUnpaid}},
		{"completed by a transfer to another payee", []orderRow{order("o1", "completed", aWrong, "0xwrong")}, view("0xwrong"), false, nil,
			[]string{invUnpaid}},
		{"completed by a failed transaction", []orderRow{order("o1", "completed", aB, "0xfailed")}, view(), false, nil, []string{invUnpaid}},
		{"completed by another payer's transfer", []orderRow{order("o1", "completed", aA, "0xb")}, view("0xb"), false, nil, []string{invTwice}},
		{"open once closed", []orderRow{order("o1", "settling", aA, "")}, view(), true, nil, []string{invOpen}},
		{"open before closed", []orderRow{order("o1", "settling", aA, "")}, view(), false, nil, nil},
		{"open but excused (left processing by a SIGKILL)", []orderRow{order("o1", "processing", aA, "")}, view(), true,
			func(o orderRow) bool { return o.ID == "o1" }, nil},
		{"paid on the chain without a completed order", []orderRow{order("o1", "failed", aA, "")}, view("0xa"), true, nil, []string{invRecover}},
		{"two transfers of one payer", []orderRow{order("o1", "completed", aB, "0xb")}, view("0xb", "0xwrong"), false, nil, []string{invTwice}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := invariants(judgeOrders(tc.orders, tc.chain, tc.closed, tc.excused))
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("violations %q, want %q: %v", got, tc.want, judgeOrders(tc.orders, tc.chain, tc.closed, tc.excused))
			}
		})
	}
}

func TestJudgeAnswer(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	delivered := hdr(httpgate.HeaderOrderID, "ord_1", httpgate.HeaderReceiptID, "rcp_1")
	replayed := hdr(httpgate.HeaderOrderID, "ord_1", httpgate.HeaderReceiptID, "rcp_1", httpgate.HeaderReplay, "true")
	refusal := []byte(`{"type":"https://example/problems/verification-failed","error":"insufficient_funds","detail":"refused"}`)
	for _, tc := range []struct {
		name string
		a    answer
		f    answerFacts
		want []string
	}{
		{"paid delivery", answer{status: 200, header: delivered, body: []byte(`{}`)}, answerFacts{PaidAfter: true}, nil},
		{"delivery without payment", answer{status: 200, header: delivered, body: []byte(`{}`)}, answerFacts{}, []string{invUnpaid}},
		{"second fresh delivery of a payment", answer{status: 200, header: delivered}, answerFacts{PaidBefore: true, PaidAfter: true}, []string{invTwice}},
		{"replay to a settled payer", answer{status: 200, header: replayed}, answerFacts{PaidBefore: true, PaidAfter: true}, nil},
		{"402 with its reason", answer{status: 402, header: hdr(), body: refusal}, answerFacts{}, nil},
		{"402 without a reason", answer{status: 402, header: hdr(), body: []byte(`{"detail":"no"}`)}, answerFacts{}, []string{invReason}},
		{"402 to a settled payer", answer{status: 402, header: hdr(), body: refusal}, answerFacts{PaidBefore: true, PaidAfter: true}, []string{invRecover}},
		{"402 to a copy sent at once", answer{status: 402, header: hdr(), body: refusal}, answerFacts{Concurrent: true}, []string{invConcurrent, invConcurrent}},
		{"503 with Retry-After", answer{status: 503, header: hdr("Retry-After", "5"), body: []byte(`{"detail":"busy"}`)}, answerFacts{}, nil},
		{"503 without Retry-After", answer{status: 503, header: hdr(), body: []byte(`{"detail":"busy"}`)}, answerFacts{}, []string{invReason}},
		{"the facilitator's address in a body", answer{status: 503, header: hdr("Retry-After", "5"), body: []byte(`{"detail":"Post http://127.0.0.1:4444/settle: refused"}`)},
			answerFacts{Secrets: []string{"127.0.0.1:4444"}}, []string{invReason}},
		{"202 without a token", answer{status: 202, header: hdr(httpgate.HeaderOrderID, "ord_1"), body: []byte(`{}`)}, answerFacts{}, []string{invReason}},
		{"409 without Retry-After", answer{status: 409, header: hdr(), body: []byte(`{"detail":"in flight"}`)}, answerFacts{}, []string{invReason}},
		{"500", answer{status: 500, header: hdr(), body: []byte(`{"detail":"boom"}`)}, answerFacts{}, []string{inv5xx}},
		{"no answer", answer{err: errors.New("connection reset")}, answerFacts{PaidBefore: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := invariants(judgeAnswer(tc.a, tc.f))
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("violations %q, want %q: %v", got, tc.want, judgeAnswer(tc.a, tc.f))
			}
		})
	}
}

// frontEnv is the proxy in front of a fake facilitator (no chain).
func frontEnv(t *testing.T) (*paymenttest.Facilitator, *front) {
	t.Helper()
	fac := paymenttest.NewFacilitator(t)
	f, err := startFront(fac.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.close)
	return fac, f
}

// facilitatorBody is a /verify or /settle body naming one authorization.
func facilitatorBody(from, nonce string) []byte {
	b, _ := json.Marshal(map[string]any{"x402Version": 2,
		"paymentPayload":      map[string]any{"payload": map[string]any{"authorization": map[string]any{"from": from, "nonce": nonce}}},
		"paymentRequirements": map[string]any{"network": "eip155:8453", "asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}})
	return b
}

func post(ctx context.Context, hc *http.Client, url string, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

func TestFrontForwards(t *testing.T) {
	fac, f := frontEnv(t)
	hc := &http.Client{Timeout: 30 * time.Second}
	res, b, err := post(context.Background(), hc, f.URL()+"/verify", facilitatorBody("0xAbC", "0x01"))
	if err != nil || res.StatusCode != 200 || !bytes.Contains(b, []byte(`"isValid":true`)) {
		t.Fatalf("verify through the proxy: %v %v %s", err, res, b)
	}
	res, b, err = post(context.Background(), hc, f.URL()+"/settle", facilitatorBody("0xAbC", "0x01"))
	if err != nil || res.StatusCode != 200 || !bytes.Contains(b, []byte(`"success":true`)) {
		t.Fatalf("settle through the proxy: %v %v %s", err, res, b)
	}
	if f.callsOf("/verify", "0xabc/0x01") != 1 || f.callsOf("/settle", "0xabc/0x01") != 1 || len(fac.Calls("")) != 2 {
		t.Fatalf("calls: proxy %d/%d, facilitator %d", f.callsOf("/verify", "0xabc/0x01"), f.callsOf("/settle", "0xabc/0x01"), len(fac.Calls("")))
	}
	fac.SetFault("/settle", paymenttest.Fault{Kind: paymenttest.FaultStatus, Status: 500})
	if res, _, err := post(context.Background(), hc, f.URL()+"/settle", facilitatorBody("0xAbC", "0x02")); err != nil || res.StatusCode != 500 {
		t.Fatalf("a 500 is forwarded as it is: %v %v", err, res)
	}
}

func TestFrontResets(t *testing.T) {
	fac, f := frontEnv(t)
	// The fake settles and resets the connection: the proxy resets the
	// client's too, instead of answering 502.
	fac.SetFault("/settle", paymenttest.Fault{Kind: paymenttest.FaultReset})
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, _, err := post(context.Background(), hc, f.URL()+"/settle", facilitatorBody("0xabc", "0x03"))
	if err == nil {
		t.Fatalf("a reset reached the client as %d", res.StatusCode)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("want a reset, got %v", err)
	}
}

func TestFrontOutage(t *testing.T) {
	_, f := frontEnv(t)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if err := f.setOutage(true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := post(context.Background(), hc, f.URL()+"/verify", facilitatorBody("0xabc", "0x04")); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("during the outage: %v, want connection refused", err)
	}
	if err := f.heal(); err != nil {
		t.Fatal(err)
	}
	if res, _, err := post(context.Background(), hc, f.URL()+"/verify", facilitatorBody("0xabc", "0x04")); err != nil || res.StatusCode != 200 {
		t.Fatalf("after healing: %v %v", err, res)
	}
}

func TestFrontOutageAfterVerify(t *testing.T) {
	_, f := frontEnv(t)
	// Keep-alives on, as the server's client has them: the /verify
	// answers must not leave a connection the /settle could use.
	hc := &http.Client{Timeout: 30 * time.Second}
	f.outageAfterVerify(3, time.Hour)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for k := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, b, err := post(context.Background(), hc, f.URL()+"/verify", facilitatorBody("0xabc", "0x0"+string(rune('5'+k))))
			switch {
			case err != nil:
				errs[k] = err
			case res.StatusCode != 200 || !bytes.Contains(b, []byte(`"isValid":true`)):
				errs[k] = errors.New(res.Status + " " + string(b))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("the held /verify calls: %v", err)
	}
	if _, _, err := post(context.Background(), hc, f.URL()+"/settle", facilitatorBody("0xabc", "0x05")); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("/settle after the burst's /verify answers: %v, want connection refused", err)
	}
	if err := f.heal(); err != nil {
		t.Fatal(err)
	}
	if res, _, err := post(context.Background(), hc, f.URL()+"/settle", facilitatorBody("0xabc", "0x05")); err != nil || res.StatusCode != 200 {
		t.Fatalf("after healing: %v %v", err, res)
	}
}

func TestFrontVerifyDelay(t *testing.T) {
	fac, f := frontEnv(t)
	f.setVerifyDelay(time.Hour)
	hc := &http.Client{Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, _, err := post(ctx, hc, f.URL()+"/verify", facilitatorBody("0xabc", "0x09")); err == nil {
		t.Fatal("a delayed /verify was answered at once")
	}
	if n := len(fac.Calls("/verify")); n != 0 {
		t.Fatalf("the delayed /verify reached the facilitator %d times", n)
	}
	// The proxy learns that its caller gave up when the connection closes.
	for deadline := time.Now().Add(10 * time.Second); f.abandonedOf("/verify", "0xabc/0x09") == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned /verify was not counted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// /settle is not delayed.
	if res, _, err := post(context.Background(), hc, f.URL()+"/settle", facilitatorBody("0xabc", "0x09")); err != nil || res.StatusCode != 200 {
		t.Fatalf("settle during a verify delay: %v %v", err, res)
	}
	f.setVerifyDelay(0)
	if res, _, err := post(context.Background(), hc, f.URL()+"/verify", facilitatorBody("0xabc", "0x0a")); err != nil || res.StatusCode != 200 {
		t.Fatalf("verify without delay: %v %v", err, res)
	}
}
