package payment_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
)

// testGate is a minimal paid endpoint over a Processor (a copy of the one
// in payment/paying's tests, for the live npm clients): challenge, read,
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
