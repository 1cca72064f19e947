package sdkcall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
)

// The defaults both providers share; each provider's exported Default*
// constants name these.
const (
	DefaultAttemptTimeout = 100 * time.Second
	DefaultMaxRetries     = 1
	DefaultMaxRetryAfter  = 20 * time.Second
	DefaultMinAttemptTime = 5 * time.Second
)

// Settings are the options every SDK provider takes, as its Options
// field of the same name documents them. Resolve applies the defaults;
// what only one provider has (reasoning effort, organization, domains
// sent) stays in that provider.
type Settings struct {
	APIKey         string
	BaseURL        string
	Model          string
	HTTPClient     *http.Client
	Logger         *slog.Logger
	Now            func() time.Time
	Timeout        time.Duration
	AttemptTimeout time.Duration
	MaxRetries     int
	MaxRetryAfter  time.Duration
	MinAttemptTime time.Duration
}

// Resolve returns s with the defaults applied: the API key trimmed, the
// provider's base URL and model when empty, time.Now, claims.DefaultTimeout
// and the Default* constants for unset durations, MaxRetries 0 as
// DefaultMaxRetries and a negative one as none, a discarding logger, and an
// HTTP client that is a copy of the caller's (or one over a clone of
// http.DefaultTransport) with its Timeout cleared, since the answer streams
// and AttemptTimeout bounds each attempt instead. It fails only on a
// malformed base URL; name prefixes that error.
func (s Settings) Resolve(name, baseURL, model string) (Settings, error) {
	s.APIKey = strings.TrimSpace(s.APIKey)
	if s.BaseURL == "" {
		s.BaseURL = baseURL
	}
	u, err := url.Parse(s.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Settings{}, fmt.Errorf("%s: invalid base URL %q", name, s.BaseURL)
	}
	if s.Model == "" {
		s.Model = model
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Timeout <= 0 {
		s.Timeout = claims.DefaultTimeout
	}
	if s.AttemptTimeout <= 0 {
		s.AttemptTimeout = DefaultAttemptTimeout
	}
	switch {
	case s.MaxRetries == 0:
		s.MaxRetries = DefaultMaxRetries
	case s.MaxRetries < 0:
		s.MaxRetries = 0
	}
	if s.MaxRetryAfter <= 0 {
		s.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if s.MinAttemptTime <= 0 {
		s.MinAttemptTime = DefaultMinAttemptTime
	}
	var hc http.Client
	if s.HTTPClient != nil {
		hc = *s.HTTPClient
	} else {
		hc.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	hc.Timeout = 0
	s.HTTPClient = &hc
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// RootURL is the resolved BaseURL with exactly one trailing slash, as the
// SDKs join paths to it.
func (s *Settings) RootURL() string { return strings.TrimSuffix(s.BaseURL, "/") + "/" }

// Bound returns ctx with Timeout applied when it has no deadline, carrying
// that deadline for Middleware (WithDeadline). The caller must call cancel.
func (s *Settings) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	cancel := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
	}
	dl, _ := ctx.Deadline()
	return WithDeadline(ctx, dl), cancel
}

// Policy returns the retry veto for these settings: name, the logger, the
// clock and MinAttemptTime; the caller adds the provider's own rules.
func (s *Settings) Policy(name string) *Policy {
	return &Policy{Name: name, Log: s.Logger, Now: s.Now, MinAttemptTime: s.MinAttemptTime}
}

// Start checks a query before any request: without an API key it fails
// with claims.ProviderNotConfigured, with no claim with
// claims.ProviderFailed; otherwise it returns the clock stated to the model
// (q.Now, or Now when that is zero). name prefixes the errors.
func (s *Settings) Start(name string, q *claims.ProviderQuery) (time.Time, error) {
	if s.APIKey == "" {
		return time.Time{}, &claims.ProviderError{Kind: claims.ProviderNotConfigured, Err: errors.New(name + ": no API key")}
	}
	if q == nil || strings.TrimSpace(q.Claim) == "" {
		return time.Time{}, &claims.ProviderError{Kind: claims.ProviderFailed, Err: errors.New(name + ": empty query")}
	}
	if q.Now.IsZero() {
		return s.Now(), nil
	}
	return q.Now, nil
}
