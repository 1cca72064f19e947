package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/x402"
)

// Readiness (GET /readyz). Every check is cheap: nothing here calls a paid
// API, and the one network probe (the facilitator) is cached.
//
//   - store: the database answers a ping.
//   - claims: a search provider is configured, and it is not failing on its
//     credentials: not ready while the last providerFailLimit provider
//     calls all failed with an authentication or quota error
//     (claims.ProviderNotConfigured, claims.ProviderQuotaExhausted), the
//     latest less than providerFailWindow ago. The window lets traffic
//     probe again after a fix (a topped-up quota) without a restart.
//   - payments: in dev mode, ready. In production: a non-zero payee; a
//     facilitator that answered GET /supported, listing exact payments on
//     the configured network (x402 v2 or v1), within facilitatorOKFor
//     (failures are cached facilitatorFailFor; one probe at a time, bounded
//     by facilitatorProbeTimeout); a receipt signing key that signs and
//     verifies.
//   - niche: the catalogue can be read.
const (
	providerFailLimit       = 3
	providerFailWindow      = 5 * time.Minute
	facilitatorOKFor        = 30 * time.Second
	facilitatorFailFor      = 5 * time.Second
	facilitatorProbeTimeout = 2 * time.Second
)

// facilitatorProbe caches whether the facilitator answered /supported.
type facilitatorProbe struct {
	fac     *x402.Facilitator
	network evm.Network
	now     func() time.Time

	mu  sync.Mutex // held during a probe: one probe at a time
	at  time.Time  // when the last probe finished (zero: never)
	err error      // its outcome
}

// newFacilitatorProbe builds a probe with its own facilitator client (same
// URL and credentials as the payment one) that gives up quickly.
func newFacilitatorProbe(url string, headers func(context.Context, string, string) (http.Header, error), network evm.Network, log *slog.Logger) (*facilitatorProbe, error) {
	fac, err := x402.NewFacilitator(&x402.FacilitatorOptions{
		URL: url, Headers: headers, Logger: log,
		Timeout: facilitatorProbeTimeout, RetryMax: 1,
		RetryWaitMin: 50 * time.Millisecond, RetryWaitMax: 200 * time.Millisecond,
	})
	if err != nil {
		return nil, err
	}
	return &facilitatorProbe{fac: fac, network: network, now: time.Now}, nil
}

// check returns the cached outcome while it is fresh, else probes.
func (p *facilitatorProbe) check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() {
		fresh := facilitatorOKFor
		if p.err != nil {
			fresh = facilitatorFailFor
		}
		if p.now().Sub(p.at) < fresh {
			return p.err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, facilitatorProbeTimeout)
	defer cancel()
	sr, err := p.fac.Supported(ctx)
	switch {
	case err != nil:
		err = fmt.Errorf("facilitator did not answer /supported: %w", err)
	case !sr.Supports(2, "exact", p.network.CAIP2) && !sr.Supports(1, "exact", p.network.V1Name):
		err = fmt.Errorf("facilitator does not list exact payments on %s", p.network.CAIP2)
	}
	p.at, p.err = p.now(), err
	return err
}

// receiptKeyCheck signs and verifies a probe message with the current
// receipt key.
func receiptKeyCheck(keys *payment.Keyring) error {
	if keys == nil {
		return errors.New("no receipt signing key")
	}
	msg := []byte("assay readiness probe")
	kid, sig := keys.Sign(msg)
	pub, ok := keys.PublicKey(kid)
	if !ok || !ed25519.Verify(pub, msg, sig) {
		return errors.New("the receipt signing key does not verify")
	}
	return nil
}

// paymentsReady is the "payments" readiness check.
func paymentsReady(dev bool, proc *payment.Protocols, probe *facilitatorProbe, keys *payment.Keyring) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := receiptKeyCheck(keys); err != nil {
			return err
		}
		if dev {
			return nil
		}
		if proc.PayTo().IsZero() {
			return errors.New("no payee address")
		}
		if probe == nil {
			return errors.New("no facilitator")
		}
		return probe.check(ctx)
	}
}

// providerHealth is a claims.Observer that passes every event on and
// remembers whether the provider's recent calls all failed on credentials
// or quota.
type providerHealth struct {
	next claims.Observer
	now  func() time.Time

	mu      sync.Mutex
	failing int       // consecutive authentication/quota failures
	last    time.Time // of the latest one
	lastErr error
}

func newProviderHealth(next claims.Observer) *providerHealth {
	return &providerHealth{next: next, now: time.Now}
}

func (h *providerHealth) Verified(tier string, r *claims.Result) {
	if !r.Provenance.CacheHit {
		h.mu.Lock()
		h.failing, h.lastErr = 0, nil
		h.mu.Unlock()
	}
	h.next.Verified(tier, r)
}

func (h *providerHealth) ProviderUsed(u claims.ProviderUsage) { h.next.ProviderUsed(u) }

func (h *providerHealth) Failed(tier string, err error) {
	var pe *claims.ProviderError
	if errors.As(err, &pe) && (pe.Kind == claims.ProviderNotConfigured || pe.Kind == claims.ProviderQuotaExhausted) {
		h.mu.Lock()
		h.failing++
		h.last, h.lastErr = h.now(), err
		h.mu.Unlock()
	}
	h.next.Failed(tier, err)
}

// ready reports the provider's recent failures.
func (h *providerHealth) ready() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failing >= providerFailLimit && h.now().Sub(h.last) < providerFailWindow {
		return fmt.Errorf("the last %d provider calls failed on credentials or quota: %v", h.failing, h.lastErr)
	}
	return nil
}
