package openai

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/analysis"
	"github.com/assaykit/assay/claims/internal/sdkcall"
)

// Defaults.
const (
	DefaultBaseURL         = "https://api.openai.com/v1"
	DefaultModel           = "gpt-5-mini"
	DefaultReasoningEffort = "low"
	DefaultAttemptTimeout  = sdkcall.DefaultAttemptTimeout // 100 s
	DefaultMaxRetries      = sdkcall.DefaultMaxRetries     // 1
	DefaultMaxRetryAfter   = sdkcall.DefaultMaxRetryAfter  // 20 s
	DefaultMinAttemptTime  = sdkcall.DefaultMinAttemptTime // 5 s
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
// Nothing is read from the environment (the SDK's OPENAI_* variables are
// not consulted).
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
	// http.DefaultTransport). Its Timeout is cleared in a copy, since the
	// answer streams (AttemptTimeout bounds each attempt instead); the
	// client itself is not modified.
	HTTPClient *http.Client
	// Logger receives debug records of each attempt (x-request-id,
	// processing time, rate-limit headers) and retry decisions; nil
	// discards.
	Logger *slog.Logger
	// Now is the clock stated to the model when a query has no Now
	// (default time.Now).
	Now func() time.Time
	// Timeout is the overall deadline applied when the caller's context
	// has none (default claims.DefaultTimeout).
	Timeout time.Duration
	// AttemptTimeout bounds one attempt, streamed answer included (default
	// DefaultAttemptTimeout). An attempt that times out is not retried.
	AttemptTimeout time.Duration
	// MaxRetries is how many times the SDK retries a transient failure
	// (connection error, 408, 409, 429 rate limit, 5xx): default 1
	// (DefaultMaxRetries, as the reference notes advise: retry at most once,
	// and only if enough time remains), negative for none.
	// insufficient_quota is never retried.
	MaxRetries int
	// MaxRetryAfter is the longest Retry-After the provider waits for
	// (default 20 s); a longer one ends the call with
	// claims.ProviderRateLimited carrying the server's RetryAfter.
	MaxRetryAfter time.Duration
	// MinAttemptTime is the time that must remain before the context
	// deadline after a retry's wait for the retry to be worth making
	// (default 5 s).
	MinAttemptTime time.Duration
}

// Provider is a claims.SearchProvider backed by the OpenAI Responses API
// with the web_search tool, through the official SDK. It is safe for
// concurrent use.
type Provider struct {
	opts      Options          // the provider's own options (the shared ones are in set)
	set       sdkcall.Settings // resolved
	endpoint  string
	responses responses.ResponseService
	log       *slog.Logger
	validator *analysis.Validator
	retry     *sdkcall.Policy // the SDK retries' veto
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
	set, err := sdkcall.Settings{APIKey: o.APIKey, BaseURL: o.BaseURL, Model: o.Model, HTTPClient: o.HTTPClient, Logger: o.Logger,
		Now: o.Now, Timeout: o.Timeout, AttemptTimeout: o.AttemptTimeout, MaxRetries: o.MaxRetries, MaxRetryAfter: o.MaxRetryAfter,
		MinAttemptTime: o.MinAttemptTime}.Resolve(ProviderName, DefaultBaseURL, DefaultModel)
	if err != nil {
		return nil, err
	}
	if o.ReasoningEffort == "" {
		o.ReasoningEffort = DefaultReasoningEffort
	}
	switch o.ReasoningEffort {
	case "none", "minimal", "low", "medium", "high", "xhigh", "max":
	default:
		return nil, fmt.Errorf("openai: unknown reasoning effort %q", o.ReasoningEffort)
	}
	v, err := analysis.NewValidator()
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	p := &Provider{
		opts:      o,
		set:       set,
		endpoint:  set.RootURL() + "responses",
		log:       set.Logger,
		validator: v,
	}
	// The veto refuses insufficient_quota; MaxRetryAfter goes to the SDK
	// as its retry delay cap (option.WithMaxRetryDelay below).
	p.retry = set.Policy(ProviderName)
	p.retry.ResetHeaders, p.retry.LogAttempt = resetHeaders, p.logAttempt
	p.retry.NoRetry = func(status int, h http.Header, body []byte) (string, bool) {
		return "insufficient_quota", status == http.StatusTooManyRequests && parseAPIError(status, h, body).quota()
	}
	reqOpts := []option.RequestOption{
		option.WithBaseURL(set.RootURL()),
		option.WithAPIKey(set.APIKey),
		option.WithHTTPClient(set.HTTPClient),
		option.WithMaxRetries(set.MaxRetries),
		option.WithMaxRetryDelay(set.MaxRetryAfter),
		option.WithRequestTimeout(set.AttemptTimeout),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			return p.retry.Middleware(r, next)
		}),
	}
	if o.Organization != "" {
		reqOpts = append(reqOpts, option.WithOrganization(o.Organization))
	}
	if o.Project != "" {
		reqOpts = append(reqOpts, option.WithProject(o.Project))
	}
	// The service alone, not openai.NewClient: the client reads OPENAI_*
	// environment variables, which an embedded provider must not.
	p.responses = responses.NewResponseService(reqOpts...)
	return p, nil
}

// Name returns "openai".
func (p *Provider) Name() string { return ProviderName }

// Configured reports whether an API key was given.
func (p *Provider) Configured() bool { return p.set.APIKey != "" }

// Model returns the configured model.
func (p *Provider) Model() string { return p.set.Model }

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

// Search makes one streamed Responses API call for q. Failures are
// *claims.ProviderError values whose Err is an *APIError (HTTP errors), a
// *ResponseError (status failed or incomplete), an *OutputError (unusable
// output) or a transport error. For in-band failures (the stream ended in
// a Responses API object) the partial response is returned with the
// error, so that the caller can still account the usage it cost.
func (p *Provider) Search(ctx context.Context, q *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	now, err := p.set.Start(ProviderName, q)
	if err != nil {
		return nil, err
	}
	params, limits, err := p.buildRequest(q, now)
	if err != nil {
		return nil, providerErr(claims.ProviderFailed, 0, err)
	}
	ctx, cancel := p.set.Bound(ctx)
	defer cancel()
	final, err := p.stream(ctx, q, params)
	if err != nil {
		return nil, err
	}
	pr, err := p.parseResponse(final)
	if pr != nil && err == nil {
		pr.Analysis.Limitations = append(pr.Analysis.Limitations, limits...)
	}
	return pr, err
}

// stream runs the streamed call and returns the final Response object (of
// the response.completed, response.incomplete or response.failed event).
// Each web_search_call item is reported through q.ReportSearchCall as soon
// as its response.output_item.done event arrives, so that the engine can
// start capturing its sources before the answer is written.
func (p *Provider) stream(ctx context.Context, q *claims.ProviderQuery, params responses.ResponseNewParams) (*responses.Response, error) {
	var last *http.Response
	s := p.responses.NewStreaming(ctx, params, option.WithResponseInto(&last))
	defer s.Close()
	var final *responses.Response
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "response.output_item.done":
			if ev.Item.Type == "web_search_call" {
				p.log.DebugContext(ctx, "openai: web search call done", "id", ev.Item.ID, "status", ev.Item.Status)
				q.ReportSearchCall(searchCall(ev.Item.AsWebSearchCall()))
			}
		case "response.completed", "response.incomplete", "response.failed":
			r := ev.Response
			final = &r
		case "error":
			return nil, providerErr(claims.ProviderFailed, 0, &ResponseError{Status: "error", Code: ev.Code, Message: analysis.StripCites(ev.Message)})
		}
	}
	if err := s.Err(); err != nil {
		return nil, p.classify(ctx, err, last)
	}
	if final == nil {
		return nil, badOutput("", "the stream ended without a final response")
	}
	return final, nil
}

// classify turns an SDK error into a *claims.ProviderError; last is the
// HTTP answer of the last attempt, if any.
func (p *Provider) classify(ctx context.Context, err error, last *http.Response) error {
	if apiErr := httpError(err, last); apiErr != nil {
		if apiErr.quota() {
			p.log.ErrorContext(ctx, "openai: insufficient quota: claim verification is unavailable until billing is fixed",
				"request_id", apiErr.RequestID, "message", apiErr.Message)
		}
		var ra time.Duration
		if last != nil {
			ra, _ = sdkcall.RetryAfter(last.Header, p.set.Now(), resetHeaders...)
		}
		return classifyAPIError(apiErr, ra)
	}
	return sdkcall.Failure(ctx, ProviderName, err, func(reason string) error { return badOutput("", "%s", reason) })
}

// resetHeaders are the rate-limit reset durations read when an answer has
// no Retry-After.
var resetHeaders = []string{"x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"}

// logAttempt logs the identifying and rate-limit headers of one attempt.
func (p *Provider) logAttempt(ctx context.Context, r *http.Response) {
	if !p.log.Enabled(ctx, slog.LevelDebug) {
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
