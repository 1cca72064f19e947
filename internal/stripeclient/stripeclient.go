// Package stripeclient builds the one stripe-go client setup that both
// Stripe integrations use (cards in payment, subscriptions in
// niche/stripebilling): one backend for every API family, pointed at a
// base URL when given (stripe-mock, the fake in internal/stripefake).
package stripeclient

import (
	"net/http"
	"strings"

	"github.com/stripe/stripe-go/v85"
)

// Options configure New. The zero value is stripe-go's defaults.
type Options struct {
	// HTTPClient makes the calls (stripe-go's default when nil).
	HTTPClient *http.Client
	// URL replaces https://api.stripe.com (a trailing slash is dropped).
	URL string
	// MaxNetworkRetries is stripe-go's retry count (its default when nil).
	MaxNetworkRetries *int64
	// Logger receives stripe-go's logs: a stripe.LeveledLoggerInterface or
	// stripe.ContextLeveledLoggerInterface, as stripe-go takes (its default
	// when nil).
	Logger any
	// DisableTelemetry stops the request-telemetry headers.
	DisableTelemetry bool
}

// New returns a client for secretKey.
func New(secretKey string, o Options) *stripe.Client {
	cfg := &stripe.BackendConfig{HTTPClient: o.HTTPClient, MaxNetworkRetries: o.MaxNetworkRetries, LeveledLogger: o.Logger}
	if o.DisableTelemetry {
		cfg.EnableTelemetry = stripe.Bool(false)
	}
	if o.URL != "" {
		cfg.URL = stripe.String(strings.TrimRight(o.URL, "/"))
	}
	b := stripe.GetBackendWithConfig(stripe.APIBackend, cfg)
	return stripe.NewClient(secretKey, stripe.WithBackends(&stripe.Backends{API: b, Connect: b, Uploads: b, MeterEvents: b}))
}
