package server

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
)

// recordingPaywall imitates the payment gate for route tests: Precheck
// first (a refused request is never charged), then a "charge", then the
// handler with a Call carrying a fresh order whose token it hands out in
// X-Agentic-Order-Token. The payer is X-Test-Payer, else payer, else 0xabc.
type recordingPaywall struct {
	mu      sync.Mutex
	charged int
	calls   []*payment.Call
	payer   string
}

func (p *recordingPaywall) Gate(offer payment.Offer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pc, ok := next.(httpgate.Prechecker); ok {
			var proceed bool
			if r, proceed = pc.Precheck(w, r); !proceed {
				return
			}
		}
		token := ids.Token(ids.OrderToken)
		payer := p.payer
		if v := r.Header.Get("X-Test-Payer"); v != "" {
			payer = v
		}
		if payer == "" {
			payer = "0xabc"
		}
		call := &payment.Call{Payer: payer, Protocol: payment.ProtocolX402, OrderID: ids.New(ids.Order),
			OrderTokenHash: ids.Hash(token), Offer: offer}
		p.mu.Lock()
		p.charged++
		p.calls = append(p.calls, call)
		p.mu.Unlock()
		w.Header().Set("X-Agentic-Order-Token", token)
		next.ServeHTTP(w, r.WithContext(payment.WithCall(r.Context(), call)))
	})
}

// last returns the most recent call.
func (p *recordingPaywall) last() *payment.Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[len(p.calls)-1]
}

// charges lists the offers charged, as "offer-id=amount".
func (p *recordingPaywall) charges() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []string{}
	for _, c := range p.calls {
		out = append(out, c.Offer.ID+"="+strconv.FormatInt(c.Offer.AmountMicroUSD, 10))
	}
	return out
}
