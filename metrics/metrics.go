// Package metrics exposes assay's operational metrics in the Prometheus
// format with the standard client library. Domain packages never import
// Prometheus: the host wires a *Metrics into the server's observers and the
// engines' event hooks, and mounts Handler at /metrics.
//
// Metric names (all prefixed assay_):
//
//	http_requests_total{route,method,status}        counter
//	http_request_duration_seconds{route,method}     histogram
//	verifications_total{tier,status}                counter
//	provider_tokens_total{provider,kind}            counter (kind: input, cached_input, output)
//	provider_errors_total{provider,kind}            counter
//	provider_search_calls_total{provider}           counter
//	snapshots_total{status}                         counter
//	payments_total{protocol,outcome}                counter
//	payment_amount_microusd_total{protocol}         counter (settled, at once or resolved)
//	payment_order_transitions_total{from,to}        counter
//	payment_resolutions_total{outcome}              counter
//
// Payment labels are those of payment.PaymentEvent, as the cashier and the
// 402 gate emit them. protocol: x402 (v1 and v2 together: the event does
// not carry the x402 version), mpp, mpp-stripe (orders charged to a card;
// a refused card credential counts under mpp, since the credential's
// protocol is mpp until an order exists), none (no readable credential).
// outcome: challenged (no credential: 402), rejected (invalid or
// unreadable credential), replayed (a payment already used), idempotent (a
// retry answered from a completed order, not charged again), settled,
// pending (settlement outcome unknown; reconciled later),
// settlement_failed, deferred (the processor could not be asked to settle;
// resolved later), voided (the paid work failed, nothing charged), waived
// (a free verdict under "no verdict, no charge": delivered, payment
// voided), waiver_exhausted (a free verdict asked for beyond the payer's
// daily bound: charged instead), error (processor or store failure). The resolution of settlements whose
// outcome was unknown counts in payment_resolutions_total instead, by
// outcome: settled (resolved_settled), failed (resolved_failed: known
// never to settle, released), unknown (resolve_unknown: tried again
// later).
//
// Order transitions (payment.OrderTransition) count by from and to:
// new, processing, settling, completed, failed.
//
// Label values come from fixed sets (route ids, tier names, statuses), never
// from request data, so cardinality stays bounded: an unknown path is
// counted under route "unmatched".
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds assay's collectors.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	duration        *prometheus.HistogramVec
	verifications   *prometheus.CounterVec
	providerTokens  *prometheus.CounterVec
	providerErrors  *prometheus.CounterVec
	providerSearch  *prometheus.CounterVec
	snapshots       *prometheus.CounterVec
	payments        *prometheus.CounterVec
	paymentsSettled *prometheus.CounterVec
	transitions     *prometheus.CounterVec
	resolutions     *prometheus.CounterVec
}

// Options configure New. A nil *Options means defaults.
type Options struct {
	// NoRuntime leaves out the Go runtime and process collectors (tests).
	NoRuntime bool
}

// New creates the collectors in a fresh registry.
func New(opts *Options) *Metrics {
	reg := prometheus.NewRegistry()
	if opts == nil || !opts.NoRuntime {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &Metrics{reg: reg}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "assay_http_requests_total", Help: "HTTP requests by route, method and status.",
	}, []string{"route", "method", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "assay_http_request_duration_seconds", Help: "HTTP request latency by route and method.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{"route", "method"})
	m.verifications = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "assay_verifications_total", Help: "Finished claim verifications by tier and status.",
	}, []string{"tier", "status"})
	m.providerTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "assay_provider_tokens_total", Help: "Search-provider tokens by provider and kind.",
	}, []string{"provider", "kind"})
	m.providerErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "assay_provider_errors_total", Help: "Search-provider failures by provider and kind.",
	}, []string{"provider", "kind"})
	m.providerSearch = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "assay_provider_search_calls_total", Help: "Search-provider tool calls by provider.",
	}, []string{"provider"})
	m.snapshots = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "assay_snapshots_total", Help: "URL captures by outcome.",
	}, []string{"status"})
	m.payments = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "assay_payments_total", Help: "Paid-call outcomes by protocol.",
	}, []string{"protocol", "outcome"})
	m.paymentsSettled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "assay_payment_amount_microusd_total", Help: "Settled amounts in micro-USD by protocol.",
	}, []string{"protocol"})
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "assay_payment_order_transitions_total", Help: "Order status changes by from and to.",
	}, []string{"from", "to"})
	m.resolutions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "assay_payment_resolutions_total", Help: "Attempts to resolve settlements whose outcome was unknown, by outcome.",
	}, []string{"outcome"})
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.verifications, m.providerTokens,
		m.providerErrors, m.providerSearch, m.snapshots, m.payments, m.paymentsSettled, m.transitions, m.resolutions} {
		f(c)
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry returns the registry, for hosts that add their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveRequest records one finished HTTP request. Its signature matches
// server.Config.Observers.
func (m *Metrics) ObserveRequest(r *http.Request, routeID string, status int, d time.Duration) {
	if routeID == "" {
		routeID = "unmatched"
	}
	method := r.Method
	switch method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
	default:
		method = "other"
	}
	m.requests.WithLabelValues(routeID, method, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(routeID, method).Observe(d.Seconds())
}

// Verification records a finished verification.
func (m *Metrics) Verification(tier, status string) {
	m.verifications.WithLabelValues(tier, status).Inc()
}

// ProviderUsage records the tokens and search calls of one provider call.
func (m *Metrics) ProviderUsage(provider string, input, cachedInput, output, searchCalls int) {
	m.providerTokens.WithLabelValues(provider, "input").Add(float64(input))
	m.providerTokens.WithLabelValues(provider, "cached_input").Add(float64(cachedInput))
	m.providerTokens.WithLabelValues(provider, "output").Add(float64(output))
	m.providerSearch.WithLabelValues(provider).Add(float64(searchCalls))
}

// ProviderError records a failed provider call of the given kind
// (rate_limited, quota_exhausted, timeout, bad_output, not_configured, failed).
func (m *Metrics) ProviderError(provider, kind string) {
	m.providerErrors.WithLabelValues(provider, kind).Inc()
}

// Snapshot records one capture outcome (captured, failed, blocked, too_large, unsupported).
func (m *Metrics) Snapshot(status string) {
	m.snapshots.WithLabelValues(status).Inc()
}

// Payment records a paid-call outcome: protocol is x402, mpp, mpp-stripe
// or "" (counted as none); outcome is one of challenged, rejected,
// replayed, idempotent, settled, pending, settlement_failed, voided, error
// (see the package documentation).
func (m *Metrics) Payment(protocol, outcome string, settledMicroUSD int64) {
	if protocol == "" {
		protocol = "none"
	}
	switch outcome {
	case "resolved_settled":
		m.resolutions.WithLabelValues("settled").Inc()
	case "resolved_failed":
		m.resolutions.WithLabelValues("failed").Inc()
	case "resolve_unknown":
		m.resolutions.WithLabelValues("unknown").Inc()
	default:
		m.payments.WithLabelValues(protocol, outcome).Inc()
	}
	if (outcome == "settled" || outcome == "resolved_settled") && settledMicroUSD > 0 {
		m.paymentsSettled.WithLabelValues(protocol).Add(float64(settledMicroUSD))
	}
}

// Transition counts one order status change (from "" is "new").
func (m *Metrics) Transition(from, to string) {
	if from == "" {
		from = "new"
	}
	m.transitions.WithLabelValues(from, to).Inc()
}
