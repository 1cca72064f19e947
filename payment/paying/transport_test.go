package paying_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
)

// The offer the test server sells and its MPP secret.
var (
	testSecret = []byte("0123456789abcdef0123456789abcdef")
	testOffer  = payment.Offer{ID: "claims.verify.research", Description: "One research-tier claim verification",
		AmountMicroUSD: 250000, CardMicroUSD: 500000, MimeType: "application/json", WorkTimeout: 120 * time.Second}
)

// testGate is a minimal paid endpoint over a Processor: challenge, read,
// verify, serve, settle. (The real gate, with the ledger, lives elsewhere.)
type testGate struct {
	p      payment.Processor
	offer  payment.Offer
	v1Only bool // strip the v2 header (a v1-only server)
	noMPP  bool
	refuse bool // refuse every verified payment (as if already used)

	mu     sync.Mutex
	bodies []string
	used   map[string]bool
}

func (g *testGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.bodies = append(g.bodies, string(body))
	g.mu.Unlock()
	res := payment.Resource{URL: "http://" + r.Host + r.URL.Path, Method: r.Method, BodyDigest: mpp.BodyDigest(body)}
	challenge := func(p *payment.Problem) {
		ch, err := g.p.Challenge(r.Context(), g.offer, res)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		if p != nil {
			ch = ch.WithProblem(p)
		}
		for k, v := range ch.Header {
			w.Header()[k] = v
		}
		if g.v1Only || r.URL.Query().Has("v1only") {
			w.Header().Del(x402.HeaderPaymentRequired)
		}
		if g.noMPP {
			w.Header().Del("WWW-Authenticate")
		}
		status := 402
		if p != nil {
			status = p.Status
		}
		w.WriteHeader(status)
		_, _ = w.Write(ch.Body)
	}
	c, err := g.p.ReadCredential(r.Header)
	var prob *payment.Problem
	if errors.As(err, &prob) {
		challenge(prob)
		return
	}
	if c == nil {
		challenge(nil)
		return
	}
	a, err := g.p.Verify(r.Context(), g.offer, res, c)
	if errors.As(err, &prob) {
		challenge(prob)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	g.mu.Lock()
	reused := g.used[a.ReservationKey]
	if g.used == nil {
		g.used = map[string]bool{}
	}
	g.used[a.ReservationKey] = true
	g.mu.Unlock()
	if reused || g.refuse {
		challenge(&payment.Problem{Status: 402, Type: "invalid-challenge", Reason: "payment_reused", Detail: "used"})
		return
	}
	s, err := g.p.Settle(r.Context(), a)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range s.Header {
		w.Header()[k] = v
	}
	w.Header().Set("X-Agentic-Order-Id", "ord_0123456789abcdef0123456789abcdef")
	w.Header().Set("X-Agentic-Order-Token", "ort_token")
	w.Header().Set("X-Agentic-Receipt-Id", "rcpt_0123456789abcdef0123456789abcdef")
	w.Header().Set("Cache-Control", "private")
	_, _ = io.WriteString(w, "paid:"+string(body))
}

func newGateServer(t *testing.T, g *testGate) *httptest.Server {
	t.Helper()
	p, err := payment.NewProcessor(&payment.ProcessorOptions{PayTo: paymenttest.DevPayee, Dev: true, MPPSecret: testSecret, Realm: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	g.p = p
	if g.offer.ID == "" {
		g.offer = testOffer
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return srv
}

func TestTransportPaysEndToEnd(t *testing.T) {
	tests := []struct {
		name      string
		gate      *testGate
		opts      *paying.TransportOptions
		protocol  string
		version   int
		settled   bool
		receipted bool
	}{
		{"x402 v2 preferred", &testGate{}, nil, "x402", 2, true, false},
		{"x402 v1 fallback", &testGate{v1Only: true, noMPP: true}, nil, "x402", 1, true, false},
		{"MPP evm when preferred", &testGate{}, &paying.TransportOptions{PreferMPP: true}, "mpp", 0, false, true},
		{"MPP evm when nothing else", &testGate{v1Only: true}, &paying.TransportOptions{PreferMPP: true}, "mpp", 0, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newGateServer(t, tc.gate)
			tr := paying.NewTransport(paymenttest.DevWallet(), nil, tc.opts)
			client := &http.Client{Transport: tr}
			// A body that is not replayable by itself (no GetBody).
			req, _ := http.NewRequest("POST", srv.URL+"/v1/claims/verify/research", io.NopCloser(strings.NewReader(`{"claim":"the sky is blue"}`)))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != `paid:{"claim":"the sky is blue"}` {
				t.Fatalf("status %d body %s", resp.StatusCode, b)
			}
			if got := tc.gate.bodies; len(got) != 2 || got[0] != got[1] {
				t.Errorf("bodies seen by the server: %q", got)
			}
			info, ok := paying.ResponseInfo(resp)
			if !ok {
				t.Fatal("no payment info")
			}
			if info.Protocol != tc.protocol || info.Version != tc.version || info.AmountMicroUSD != 250000 || info.Network != "eip155:8453" ||
				info.OrderID == "" || info.OrderToken != "ort_token" || info.ReceiptID == "" {
				t.Errorf("info %+v", info)
			}
			if (info.Settlement != nil) != tc.settled || (info.Receipt != nil) != tc.receipted {
				t.Errorf("settlement %+v receipt %+v", info.Settlement, info.Receipt)
			}
			if info.Settlement != nil && (!info.Settlement.Success || !strings.HasPrefix(info.Settlement.Transaction, "0xdev")) {
				t.Errorf("settlement %+v", info.Settlement)
			}
			if tr.Spent() != 250000 {
				t.Errorf("spent %d", tr.Spent())
			}
		})
	}
}

func TestTransportBudgets(t *testing.T) {
	srv := newGateServer(t, &testGate{})
	get := func(tr *paying.Transport) *http.Response {
		t.Helper()
		resp, err := (&http.Client{Transport: tr}).Post(srv.URL+"/x", "application/json", bytes.NewReader([]byte(`{}`)))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	// Per-call cap below the price: the 402 comes back, nothing signed.
	tr := paying.NewTransport(paymenttest.DevWallet(), nil, &paying.TransportOptions{MaxPerCallMicroUSD: 249999})
	if resp := get(tr); resp.StatusCode != 402 || tr.Spent() != 0 {
		t.Errorf("per-call cap: %d, spent %d", resp.StatusCode, tr.Spent())
	}
	if _, ok := paying.ResponseInfo(get(tr)); ok {
		t.Error("unpaid response has payment info")
	}
	// Total budget: two calls fit, the third does not.
	tr = paying.NewTransport(paymenttest.DevWallet(), nil, &paying.TransportOptions{BudgetMicroUSD: 600000})
	for i, want := range []int{200, 200, 402} {
		if resp := get(tr); resp.StatusCode != want {
			t.Errorf("call %d: %d, want %d", i, resp.StatusCode, want)
		}
	}
	if tr.Spent() != 500000 {
		t.Errorf("spent %d", tr.Spent())
	}
	// Concurrent calls never exceed the budget.
	tr = paying.NewTransport(paymenttest.DevWallet(), nil, &paying.TransportOptions{BudgetMicroUSD: 750000})
	var wg sync.WaitGroup
	var mu sync.Mutex
	paid := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if get(tr).StatusCode == 200 {
				mu.Lock()
				paid++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if paid != 3 || tr.Spent() != 750000 {
		t.Errorf("concurrent: %d paid, spent %d", paid, tr.Spent())
	}
}

func TestTransportPassesThrough(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/free":
			io.WriteString(w, "free")
		case "/weird402":
			w.WriteHeader(402)
			io.WriteString(w, "pay me somehow")
		case "/foreign":
			// USDC on an unknown chain and a non-USDC asset: refused.
			w.Header().Set("Payment-Required", "eyJ4NDAyVmVyc2lvbiI6MiwiYWNjZXB0cyI6W3sic2NoZW1lIjoiZXhhY3QiLCJuZXR3b3JrIjoiZWlwMTU1OjEiLCJhbW91bnQiOiIxIiwiYXNzZXQiOiIweEEwYjg2OTkxYzYyMThiMzZjMWQxOUQ0YTJlOUViMGNFMzYwNmVCNDgiLCJwYXlUbyI6IjB4MjA5NjkzQmM2YWZjMEM1MzI4YkEzNkZhRjAzQzUxNEVGMzEyMjg3QyIsIm1heFRpbWVvdXRTZWNvbmRzIjo2MCwiZXh0cmEiOnsibmFtZSI6IlVTRCBDb2luIiwidmVyc2lvbiI6IjIifX1dfQ==")
			w.WriteHeader(402)
		}
	}))
	defer srv.Close()
	tr := paying.NewTransport(paymenttest.DevWallet(), nil, nil)
	c := &http.Client{Transport: tr}
	for path, want := range map[string]int{"/free": 200, "/weird402": 402, "/foreign": 402} {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
		if path == "/weird402" && string(b) != "pay me somehow" {
			t.Errorf("402 body lost: %q", b)
		}
	}
	if tr.Spent() != 0 {
		t.Errorf("spent %d", tr.Spent())
	}
	// Bodies too large to replay are refused before sending.
	tr = paying.NewTransport(paymenttest.DevWallet(), nil, &paying.TransportOptions{MaxBodyBytes: 4})
	req, _ := http.NewRequestWithContext(context.Background(), "POST", srv.URL+"/free", io.NopCloser(strings.NewReader("12345")))
	if _, err := tr.RoundTrip(req); !errors.Is(err, paying.ErrBodyTooLarge) {
		t.Errorf("large body: %v", err)
	}
}

// A payment refused by the server is not retried again: the client sees
// the server's fresh 402 after exactly two round trips.
func TestTransportDoesNotLoop(t *testing.T) {
	srv := newGateServer(t, &testGate{refuse: true})
	var calls int
	counting := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		return http.DefaultTransport.RoundTrip(r)
	})
	for _, prefer := range []bool{false, true} {
		calls = 0
		tr := paying.NewTransport(paymenttest.DevWallet(), counting, &paying.TransportOptions{PreferMPP: prefer})
		resp, err := (&http.Client{Transport: tr}).Post(srv.URL+"/a", "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if calls != 2 || resp.StatusCode != 402 || resp.Header.Get("Payment-Required") == "" {
			t.Errorf("prefer MPP %v: %d round trips, status %d", prefer, calls, resp.StatusCode)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
