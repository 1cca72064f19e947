package paymenttest

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/x402"
)

// Seller is a minimal paid endpoint over a dev-mode Processor, for
// buyer-side tests (the paying Transport, the official npm clients):
// challenge, read the credential, verify, serve, settle. It has no ledger:
// a payment is refused when its reservation key was seen before. (The
// real seller is httpgate.Gate.)
type Seller struct {
	// Offer is what each request costs; the zero Offer means a research
	// verification at USD 0.25 (card 0.50).
	Offer payment.Offer
	// V1Only strips the x402 v2 header (a v1-only server); the query
	// parameter v1only does so for one request.
	V1Only bool
	// NoMPP strips the MPP challenges.
	NoMPP bool
	// Refuse refuses every verified payment (as if already used).
	Refuse bool

	p      payment.Processor
	mu     sync.Mutex
	bodies []string
	used   map[string]bool
}

// NewSeller starts s on a loopback server (closed with the test) with a
// dev processor using the MPP secret.
func NewSeller(t testing.TB, s *Seller, mppSecret []byte) *httptest.Server {
	t.Helper()
	p, err := protocols.New(&protocols.Options{PayTo: DevPayee, Dev: true, MPPSecret: mppSecret, Realm: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	s.p = p
	if s.Offer.ID == "" {
		s.Offer = payment.Offer{ID: "claims.verify.research", Description: "One research-tier claim verification",
			AmountMicroUSD: 250000, CardMicroUSD: 500000, MimeType: "application/json", WorkTimeout: 120 * time.Second, Product: "research"}
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// Bodies returns the request bodies received, in order.
func (g *Seller) Bodies() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.bodies)
}

// ServeHTTP challenges, reads, verifies, serves ("paid:" and the body)
// and settles.
func (g *Seller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.bodies = append(g.bodies, string(body))
	g.mu.Unlock()
	res := payment.Resource{URL: "http://" + r.Host + r.URL.Path, Method: r.Method, BodyDigest: mpp.BodyDigest(body)}
	challenge := func(p *payment.Problem) {
		ch, err := g.p.Challenge(r.Context(), g.Offer, res)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		if p != nil {
			ch = ch.WithProblem(p)
		}
		for k, v := range httpgate.ChallengeHeader(ch) {
			w.Header()[k] = v
		}
		if g.V1Only || r.URL.Query().Has("v1only") {
			w.Header().Del(x402.HeaderPaymentRequired)
		}
		if g.NoMPP {
			w.Header().Del("WWW-Authenticate")
		}
		status := 402
		if p != nil {
			status = p.Status
		}
		w.WriteHeader(status)
		_, _ = w.Write(ch.Body)
	}
	c, err := httpgate.ReadCredential(r.Header)
	var prob *payment.Problem
	if errors.As(err, &prob) {
		challenge(prob)
		return
	}
	if c == nil {
		challenge(nil)
		return
	}
	a, err := g.p.Verify(r.Context(), g.Offer, res, c)
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
	if reused || g.Refuse {
		challenge(&payment.Problem{Status: 402, Type: "invalid-challenge", Reason: "payment_reused", Detail: "used"})
		return
	}
	s, err := g.p.Settle(r.Context(), a)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range httpgate.SettlementHeader(s) {
		w.Header()[k] = v
	}
	w.Header().Set("X-Agentic-Order-Id", "ord_0123456789abcdef0123456789abcdef")
	w.Header().Set("X-Agentic-Order-Token", "ort_token")
	w.Header().Set("X-Agentic-Receipt-Id", "rcpt_0123456789abcdef0123456789abcdef")
	w.Header().Set("Cache-Control", "private")
	_, _ = io.WriteString(w, "paid:"+string(body))
}
