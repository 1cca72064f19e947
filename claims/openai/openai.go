package openai

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/assaykit/assay/claims"
)

// Defaults.
const (
	DefaultBaseURL         = "https://api.openai.com/v1"
	DefaultModel           = "gpt-5-mini"
	DefaultReasoningEffort = "low"
	DefaultAttemptTimeout  = 100 * time.Second
	DefaultMaxRetries      = 1
	DefaultRetryWaitMin    = 500 * time.Millisecond
	DefaultRetryWaitMax    = 8 * time.Second
	DefaultMaxRetryAfter   = 20 * time.Second
	DefaultMinAttemptTime  = 5 * time.Second
	DefaultMaxResponseSize = 16 << 20
)

// ProviderName is the provider's Name and provenance provider value.
const ProviderName = "openai"

// SourceName is the ProviderSource.provider value of its sources.
const SourceName = "openai_web_search"

// UserLocation is the approximate location sent with the web_search tool.
// Empty fields are omitted; without a UserLocation the tool receives
// {"type":"approximate"} alone, which keeps the API from assuming the United
// States.
type UserLocation struct {
	Country  string // ISO 3166-1 alpha-2, e.g. "DE"
	Region   string // free text, e.g. "Bavaria"
	City     string // free text, e.g. "Munich"
	Timezone string // IANA name, e.g. "Europe/Berlin"
}

// Options configures a Provider. The zero value (or nil) means defaults.
type Options struct {
	// APIKey is the OpenAI API key. Without one the provider is built but
	// every Search fails with claims.ProviderNotConfigured.
	APIKey string
	// BaseURL is the API root (default DefaultBaseURL); requests go to
	// BaseURL + "/responses".
	BaseURL string
	// Organization and Project are sent as OpenAI-Organization and
	// OpenAI-Project headers when set.
	Organization, Project string
	// Model is the reasoning model (default DefaultModel).
	Model string
	// ReasoningEffort is reasoning.effort: none, minimal, low (default),
	// medium, high, xhigh or max.
	ReasoningEffort string
	// OmitReasoning leaves the reasoning object out of the request, for
	// models that do not accept it.
	OmitReasoning bool
	// SendBlockedDomains sends the request's blocked domains as the tool's
	// filters.blocked_domains. Off by default: the field is not part of the
	// typed API and is known to leak; the claims engine enforces blocked
	// domains locally in any case.
	SendBlockedDomains bool
	// UserLocation is sent as the tool's user_location (see UserLocation).
	UserLocation *UserLocation
	// HTTPClient sends the requests (default: a client over a clone of
	// http.DefaultTransport). Its Timeout is replaced by AttemptTimeout in
	// a copy; the client itself is not modified.
	HTTPClient *http.Client
	// Logger receives debug records of each attempt (x-request-id,
	// processing time, rate-limit headers) and retry decisions; nil
	// discards.
	Logger *slog.Logger
	// Now is the clock stated to the model when a query has no Now, and
	// used for HTTP-date Retry-After values (default time.Now).
	Now func() time.Time
	// Timeout is the overall deadline applied when the caller's context
	// has none (default claims.DefaultTimeout).
	Timeout time.Duration
	// AttemptTimeout bounds one HTTP attempt, body included (default
	// DefaultAttemptTimeout).
	AttemptTimeout time.Duration
	// MaxRetries is how many times a transient failure (connection error,
	// 5xx, 408, 429 rate_limit_exceeded) is retried: default 1
	// (DefaultMaxRetries, as the reference notes advise: retry at most once,
	// and only if enough time remains), negative for none.
	// insufficient_quota is never retried.
	MaxRetries int
	// RetryWaitMin and RetryWaitMax bound the exponential backoff
	// (RetryWaitMin·2^n, capped, minus up to 25 % jitter); defaults 0.5 s
	// and 8 s.
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxRetryAfter is the longest Retry-After the provider waits for
	// (default 20 s); a longer one ends the call with
	// claims.ProviderRateLimited carrying the server's RetryAfter.
	MaxRetryAfter time.Duration
	// MinAttemptTime is the time that must remain before the context
	// deadline after a backoff wait for a retry to be worth making
	// (default 5 s).
	MinAttemptTime time.Duration
	// MaxResponseBytes caps the response body read (default 16 MiB).
	MaxResponseBytes int64
}

// Provider is a claims.SearchProvider backed by the OpenAI Responses API
// with the web_search tool. It is safe for concurrent use.
type Provider struct {
	opts     Options
	endpoint string
	client   *http.Client // per-attempt timeout applied
	log      *slog.Logger
	schema   *schemaNode
}

var _ claims.SearchProvider = (*Provider)(nil)

// New returns a provider. It fails only on invalid options (a malformed
// BaseURL or an unknown reasoning effort); a missing API key is reported
// by Search, so that a service can start and answer "not configured".
func New(opts *Options) (*Provider, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.APIKey = strings.TrimSpace(o.APIKey)
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: invalid base URL %q", o.BaseURL)
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.ReasoningEffort == "" {
		o.ReasoningEffort = DefaultReasoningEffort
	}
	switch o.ReasoningEffort {
	case "none", "minimal", "low", "medium", "high", "xhigh", "max":
	default:
		return nil, fmt.Errorf("openai: unknown reasoning effort %q", o.ReasoningEffort)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = claims.DefaultTimeout
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.RetryWaitMin <= 0 {
		o.RetryWaitMin = DefaultRetryWaitMin
	}
	if o.RetryWaitMax <= 0 {
		o.RetryWaitMax = DefaultRetryWaitMax
	}
	if o.RetryWaitMax < o.RetryWaitMin {
		o.RetryWaitMax = o.RetryWaitMin
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.MinAttemptTime <= 0 {
		o.MinAttemptTime = DefaultMinAttemptTime
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseSize
	}
	var hc http.Client
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	} else {
		hc.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	hc.Timeout = o.AttemptTimeout
	schema, err := answerSchema()
	if err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Provider{
		opts:     o,
		endpoint: strings.TrimSuffix(o.BaseURL, "/") + "/responses",
		client:   &hc,
		log:      log,
		schema:   schema,
	}, nil
}

// Name returns "openai".
func (p *Provider) Name() string { return ProviderName }

// Configured reports whether an API key was given.
func (p *Provider) Configured() bool { return p.opts.APIKey != "" }

// Model returns the configured model.
func (p *Provider) Model() string { return p.opts.Model }

// Capabilities reports the web_search tool's own filtering: allowed domains
// up to MaxAllowedDomains, blocked domains only with SendBlockedDomains.
func (p *Provider) Capabilities() claims.ProviderCapabilities {
	return claims.ProviderCapabilities{
		DomainFilter:        true,
		MaxDomains:          MaxAllowedDomains,
		BlockedDomainFilter: p.opts.SendBlockedDomains,
		SourceName:          SourceName,
	}
}

// Search makes one Responses API call for q. Failures are
// *claims.ProviderError values whose Err is an *APIError (HTTP errors), a
// *ResponseError (status failed or incomplete), an *OutputError (unusable
// output) or a transport error. For in-band failures (the body was a
// Responses API object) the partial response is returned with the error,
// so that the caller can still account the usage it cost.
func (p *Provider) Search(ctx context.Context, q *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	if !p.Configured() {
		return nil, providerErr(claims.ProviderNotConfigured, 0, errors.New("openai: no API key"))
	}
	if q == nil || strings.TrimSpace(q.Claim) == "" {
		return nil, providerErr(claims.ProviderFailed, 0, errors.New("openai: empty query"))
	}
	now := q.Now
	if now.IsZero() {
		now = p.opts.Now()
	}
	body, limits, err := p.buildRequest(q, now)
	if err != nil {
		return nil, providerErr(claims.ProviderFailed, 0, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.opts.Timeout)
		defer cancel()
	}
	resp, err := p.post(ctx, body)
	if err != nil {
		return nil, err
	}
	pr, err := p.parseResponse(resp, p.schema)
	if pr != nil && err == nil {
		pr.Analysis.Limitations = append(pr.Analysis.Limitations, limits...)
	}
	return pr, err
}

// call holds the retry state of one Search.
type call struct {
	p        *Provider
	attempts int
	wait     time.Duration
}

// post sends the request with retries and returns a 2xx body, or a
// classified error.
func (p *Provider) post(ctx context.Context, body []byte) ([]byte, error) {
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, body)
	if err != nil {
		return nil, providerErr(claims.ProviderFailed, 0, fmt.Errorf("openai: %w", err))
	}
	req.Header.Set("Authorization", "Bearer "+p.opts.APIKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.opts.Organization != "" {
		req.Header.Set("OpenAI-Organization", p.opts.Organization)
	}
	if p.opts.Project != "" {
		req.Header.Set("OpenAI-Project", p.opts.Project)
	}

	c := &call{p: p}
	rc := &retryablehttp.Client{
		HTTPClient:   p.client,
		Logger:       nil, // the hooks below log through slog
		RetryMax:     p.opts.MaxRetries,
		RetryWaitMin: p.opts.RetryWaitMin,
		RetryWaitMax: p.opts.RetryWaitMax,
		CheckRetry:   c.checkRetry,
		Backoff: func(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
			return c.wait
		},
		ErrorHandler:    retryablehttp.PassthroughErrorHandler,
		ResponseLogHook: func(_ retryablehttp.Logger, r *http.Response) { p.logAttempt(ctx, r) },
	}
	resp, err := rc.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, p.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, p.opts.MaxResponseBytes+1))
	if err != nil {
		return nil, p.transportError(ctx, err)
	}
	if int64(len(data)) > p.opts.MaxResponseBytes {
		return nil, badOutput("", "response body exceeds %d bytes", p.opts.MaxResponseBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		apiErr := parseAPIError(resp.StatusCode, resp.Header, data)
		if apiErr.quota() {
			p.log.ErrorContext(ctx, "openai: insufficient quota: claim verification is unavailable until billing is fixed",
				"request_id", apiErr.RequestID, "message", apiErr.Message)
		}
		ra, _ := retryAfter(resp.Header, p.opts.Now())
		return nil, classifyAPIError(apiErr, ra)
	}
	return data, nil
}

// transportError classifies a failure that produced no usable response.
func (p *Provider) transportError(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return providerErr(claims.ProviderTimeout, 0, fmt.Errorf("openai: deadline exceeded: %w", err))
	case ctx.Err() != nil:
		return providerErr(claims.ProviderFailed, 0, fmt.Errorf("openai: %w", ctx.Err()))
	case isTimeout(err):
		return providerErr(claims.ProviderTimeout, 0, fmt.Errorf("openai: attempt timed out: %w", err))
	}
	return providerErr(claims.ProviderFailed, 0, fmt.Errorf("openai: %w", err))
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// checkRetry is the retry policy. It retries connection errors, 408, 429
// rate limits and 5xx (not 501) while retries remain and the context
// deadline leaves MinAttemptTime after the wait; never insufficient_quota,
// never when the server says x-should-retry: false, never a Retry-After
// longer than MaxRetryAfter.
func (c *call) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	c.attempts++
	if ctx.Err() != nil || c.attempts > c.p.opts.MaxRetries {
		return false, nil
	}
	var wait time.Duration
	switch {
	case err != nil:
		if !retryableTransport(err) {
			return false, nil
		}
		wait = c.backoff()
	case resp.Header.Get("x-should-retry") == "false":
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests:
		if peekAPIError(resp).quota() {
			return false, nil // billing: retrying cannot help
		}
		ra, ok := retryAfter(resp.Header, c.p.opts.Now())
		switch {
		case !ok:
			wait = c.backoff()
		case ra > c.p.opts.MaxRetryAfter:
			c.p.log.DebugContext(ctx, "openai: not retrying: Retry-After too long", "retry_after", ra)
			return false, nil
		default:
			wait = ra + time.Duration(rand.Int64N(int64(ra/10)+int64(50*time.Millisecond)))
		}
	case resp.StatusCode == http.StatusRequestTimeout,
		resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented:
		wait = c.backoff()
		if ra, ok := retryAfter(resp.Header, c.p.opts.Now()); ok && ra > wait && ra <= c.p.opts.MaxRetryAfter {
			wait = ra
		}
	default:
		return false, nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait+c.p.opts.MinAttemptTime {
		c.p.log.DebugContext(ctx, "openai: not retrying: too little time before the deadline", "wait", wait, "remaining", time.Until(dl))
		return false, nil
	}
	c.wait = wait
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	c.p.log.DebugContext(ctx, "openai: retrying", "attempt", c.attempts, "status", status, "error", err, "wait", wait)
	return true, nil
}

// backoff is RetryWaitMin·2^(n-1), capped at RetryWaitMax, minus up to 25 %
// jitter.
func (c *call) backoff() time.Duration {
	d := c.p.opts.RetryWaitMin << (c.attempts - 1)
	if d <= 0 || d > c.p.opts.RetryWaitMax {
		d = c.p.opts.RetryWaitMax
	}
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

// retryableTransport reports whether a transport error is worth retrying.
func retryableTransport(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) && strings.Contains(ue.Error(), "unsupported protocol scheme") {
		return false
	}
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	return !errors.As(err, &cv) && !errors.As(err, &ua) && !errors.As(err, &hn)
}

// peekAPIError reads the error body of resp without consuming it for
// later readers.
func peekAPIError(resp *http.Response) *APIError {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	return parseAPIError(resp.StatusCode, resp.Header, b)
}

// retryAfter reads retry-after-ms, then Retry-After (seconds or HTTP date),
// then the x-ratelimit-reset-* durations.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second)), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	var best time.Duration
	for _, name := range []string{"x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"} {
		if d, err := time.ParseDuration(h.Get(name)); err == nil && d > best {
			best = d
		}
	}
	return best, best > 0
}

// logAttempt logs the identifying and rate-limit headers of one attempt.
func (p *Provider) logAttempt(ctx context.Context, r *http.Response) {
	if r == nil || !p.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	h := r.Header
	p.log.DebugContext(ctx, "openai: response",
		"status", r.StatusCode,
		"request_id", h.Get("x-request-id"),
		"processing_ms", h.Get("openai-processing-ms"),
		"remaining_requests", h.Get("x-ratelimit-remaining-requests"),
		"remaining_tokens", h.Get("x-ratelimit-remaining-tokens"),
		"reset_requests", h.Get("x-ratelimit-reset-requests"),
		"reset_tokens", h.Get("x-ratelimit-reset-tokens"),
	)
}
