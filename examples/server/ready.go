package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/protocols"
)

// Readiness (GET /readyz). Every check is cheap: nothing here calls a paid
// API, and the one network probe (the facilitator) is cached.
//
//   - store: the database answers a ping.
//   - claims: a search provider is configured, and it is not failing on its
//     credentials: a provider is failing while its last providerFailLimit
//     calls all failed with an authentication or quota error
//     (claims.ProviderNotConfigured, claims.ProviderQuotaExhausted), the
//     latest less than providerFailWindow ago; the server is not ready when
//     the first provider (which answers every tier) or every provider is
//     failing. The window lets traffic probe again after a fix (a topped-up
//     quota) without a restart.
//   - payments: in dev mode, ready. In production: a non-zero payee; a
//     facilitator that answered GET /supported, listing exact payments on
//     the configured network (x402 v2 or v1) (protocols.Processor.Ready:
//     cached 30 s, failures 5 s, each probe bounded by 2 s; paid routes
//     answer 503 too while it lacks the network); a receipt signing key
//     that signs and verifies.
//   - niche: the catalogue can be read.
const (
	providerFailLimit  = 3
	providerFailWindow = 5 * time.Minute
)

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
func paymentsReady(dev bool, proc *protocols.Processor, keys *payment.Keyring) func(context.Context) error {
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
		return proc.Ready(ctx)
	}
}

// providerHealth remembers whether one provider's recent calls all failed
// on credentials or quota. Each provider is wrapped in a trackedProvider
// that records its own outcomes, so that with several providers a failing
// one is seen even when the engine answers from the others (a provider
// that fails while another answers is only a limitation of the result).
type providerHealth struct {
	name string
	now  func() time.Time

	mu      sync.Mutex
	failing int       // consecutive authentication/quota failures
	last    time.Time // of the latest one
	lastErr error
}

func newProviderHealth(name string) *providerHealth {
	return &providerHealth{name: name, now: time.Now}
}

// record notes the outcome of one provider call: an answer clears the
// failures, an authentication or quota failure counts, anything else
// (rate limits, timeouts, bad output) neither counts nor clears.
func (h *providerHealth) record(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var pe *claims.ProviderError
	switch {
	case err == nil:
		h.failing, h.lastErr = 0, nil
	case errors.As(err, &pe) && (pe.Kind == claims.ProviderNotConfigured || pe.Kind == claims.ProviderQuotaExhausted):
		h.failing++
		h.last, h.lastErr = h.now(), err
	}
}

// ready reports the provider's recent failures.
func (h *providerHealth) ready() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failing >= providerFailLimit && h.now().Sub(h.last) < providerFailWindow {
		return fmt.Errorf("%s: the last %d provider calls failed on credentials or quota: %v", h.name, h.failing, h.lastErr)
	}
	return nil
}

// trackedProvider is a search provider whose outcomes go to its health.
type trackedProvider struct {
	claims.SearchProvider
	health *providerHealth
}

// Search calls the provider and records the outcome.
func (t trackedProvider) Search(ctx context.Context, q *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	resp, err := t.SearchProvider.Search(ctx, q)
	t.health.record(err)
	return resp, err
}

// providersReady is the claims readiness of several providers: not ready
// when the first one (which answers every tier) or every one is failing
// on credentials or quota; the error names each failing provider.
func providersReady(hs []*providerHealth) error {
	var errs []error
	for _, h := range hs {
		if err := h.ready(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(hs) == 0 || len(errs) == 0 || (hs[0].ready() == nil && len(errs) < len(hs)) {
		return nil
	}
	return errors.Join(errs...)
}
