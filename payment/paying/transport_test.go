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
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
)

// The offer the test server sells and its MPP secret.
var (
	testSecret = []byte("0123456789abcdef0123456789abcdef")
	testOffer  = payment.Offer{ID: "claims.verify.research", Description: "One research-tier claim verification",
		AmountMicroUSD: 250000, CardMicroUSD: 500000, MimeType: "application/json", WorkTimeout: 120 * time.Second}
)

// newSeller starts a dev seller of testOffer.
func newSeller(t *testing.T, g *paymenttest.Seller) *httptest.Server {
	t.Helper()
	g.Offer = testOffer
	return paymenttest.NewSeller(t, g, testSecret)
}

func TestTransportPaysEndToEnd(t *testing.T) {
	tests := []struct {
		name      string
		gate      *paymenttest.Seller
		opts      *paying.TransportOptions
		protocol  string
		version   int
		settled   bool
		receipted bool
	}{
		{"x402 v2 preferred", &paymenttest.Seller{}, nil, "x402", 2, true, false},
		{"x402 v1 fallback", &paymenttest.Seller{V1Only: true, NoMPP: true}, nil, "x402", 1, true, false},
		{"MPP evm when preferred", &paymenttest.Seller{}, &paying.TransportOptions{PreferMPP: true}, "mpp", 0, false, true},
		{"MPP evm when nothing else", &paymenttest.Seller{V1Only: true}, &paying.TransportOptions{PreferMPP: true}, "mpp", 0, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newSeller(t, tc.gate)
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
			if got := tc.gate.Bodies(); len(got) != 2 || got[0] != got[1] {
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
	srv := newSeller(t, &paymenttest.Seller{})
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
	srv := newSeller(t, &paymenttest.Seller{Refuse: true})
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
