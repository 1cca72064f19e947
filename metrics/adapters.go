package metrics

import (
	"errors"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/snapshot"
)

// ClaimsObserver returns a claims.Observer that counts verifications by
// tier and status, provider usage, and provider failures by kind, labelled
// with provider (the engine's provider name, e.g. "corpus", "openai").
func (m *Metrics) ClaimsObserver(provider string) claims.Observer {
	return claimsObserver{m: m, provider: provider}
}

type claimsObserver struct {
	m        *Metrics
	provider string
}

func (o claimsObserver) Verified(tier string, r *claims.Result) {
	status := string(r.Status)
	if r.Provenance.CacheHit {
		status += "_cached"
	}
	o.m.Verification(tier, status)
}

func (o claimsObserver) ProviderUsed(u claims.ProviderUsage) {
	p := u.Provider
	if p == "" {
		p = o.provider
	}
	o.m.ProviderUsage(p, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.SearchCalls)
}

func (o claimsObserver) Failed(tier string, err error) {
	var pe *claims.ProviderError
	if !errors.As(err, &pe) {
		o.m.Verification(tier, "error")
		return
	}
	kinds := map[claims.ProviderErrorKind]string{
		claims.ProviderRateLimited: "rate_limited", claims.ProviderQuotaExhausted: "quota_exhausted",
		claims.ProviderTimeout: "timeout", claims.ProviderBadOutput: "bad_output",
		claims.ProviderNotConfigured: "not_configured",
	}
	kind, ok := kinds[pe.Kind]
	if !ok {
		kind = "failed"
	}
	o.m.ProviderError(o.provider, kind)
	o.m.Verification(tier, "provider_error")
}

// SnapshotCaptured counts a stored capture by status; its signature fits
// snapshot.Options.OnCapture.
func (m *Metrics) SnapshotCaptured(s *snapshot.Snapshot) { m.Snapshot(string(s.Status)) }

// PaymentEvent counts a payment outcome; its signature fits
// payment.CashierOptions.OnEvent.
func (m *Metrics) PaymentEvent(e payment.PaymentEvent) {
	m.Payment(e.Protocol, e.Outcome, e.AmountMicroUSD)
}

// OrderTransition counts an order status change; its signature fits
// payment.CashierOptions.OnTransition.
func (m *Metrics) OrderTransition(t payment.OrderTransition) {
	m.Transition(string(t.From), string(t.To))
}
