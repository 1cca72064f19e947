package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/analysis"
	"github.com/assaykit/assay/claims/internal/sdkcall"
)

// Defaults.
const (
	DefaultBaseURL        = "https://api.anthropic.com"
	DefaultModel          = string(sdk.ModelClaudeSonnet5_5)
	DefaultAttemptTimeout = sdkcall.DefaultAttemptTimeout // 100 s
	DefaultMaxRetries     = sdkcall.DefaultMaxRetries     // 1
	DefaultMaxRetryAfter  = sdkcall.DefaultMaxRetryAfter  // 20 s
	DefaultMinAttemptTime = sdkcall.DefaultMinAttemptTime // 5 s
)

// ProviderName is the provider's Name and provenance provider value.
const ProviderName = "anthropic"

// SourceName is the ProviderSource.provider value of its sources.
const SourceName = "anthropic_web_search"

// MaxAllowedDomains is the longest allowed-domain list sent to the tool;
// a longer one is trimmed (with a limitation) and enforced locally.
const MaxAllowedDomains = 100

// UserLocation is the approximate location sent with the web search tool.
// Empty fields are omitted.
type UserLocation struct {
	Country  string // ISO 3166-1 alpha-2, e.g. "DE"
	Region   string // free text, e.g. "Bavaria"
	City     string // free text, e.g. "Munich"
	Timezone string // IANA name, e.g. "Europe/Berlin"
}

// Options configures a Provider. The zero value (or nil) means defaults.
// Nothing is read from the environment (the SDK's ANTHROPIC_* variables
// and profiles are not consulted).
type Options struct {
	// APIKey is the Anthropic API key. Without one the provider is built
	// but every Search fails with claims.ProviderNotConfigured.
	APIKey string
	// BaseURL is the API root (default DefaultBaseURL); requests go to
	// BaseURL + "/v1/messages".
	BaseURL string
	// Model is the model (default DefaultModel).
	Model string
	// UserLocation is sent as the tool's user_location.
	UserLocation *UserLocation
	// HTTPClient sends the requests (default: a client over a clone of
	// http.DefaultTransport). Its Timeout is cleared in a copy, since the
	// answer streams (AttemptTimeout bounds each attempt instead).
	HTTPClient *http.Client
	// Logger receives debug records of each attempt and retry decision;
	// nil discards.
	Logger *slog.Logger
	// Now is the clock stated to the model when a query has no Now
	// (default time.Now).
	Now func() time.Time
	// Timeout is the overall deadline applied when the caller's context
	// has none (default claims.DefaultTimeout).
	Timeout time.Duration
	// AttemptTimeout bounds one attempt, streamed answer included (default
	// DefaultAttemptTimeout).
	AttemptTimeout time.Duration
	// MaxRetries is how many times the SDK retries a transient failure
	// (connection error, attempt timeout, 408, 409, 429 rate limit, 5xx,
	// 529 overloaded): default 1, negative for none. Spend-limit and
	// billing failures are never retried.
	MaxRetries int
	// MaxRetryAfter is the longest Retry-After the provider waits for
	// (default 20 s); a longer one ends the call with
	// claims.ProviderRateLimited carrying the server's RetryAfter.
	MaxRetryAfter time.Duration
	// MinAttemptTime is the time that must remain before the deadline
	// after a retry's wait for the retry to be made (default 5 s).
	MinAttemptTime time.Duration
}

// Provider is a claims.SearchProvider backed by the Anthropic Messages API
// with the server-side web search tool, through the official SDK. It is
// safe for concurrent use.
type Provider struct {
	opts      Options          // the provider's own options (the shared ones are in set)
	set       sdkcall.Settings // resolved
	messages  sdk.MessageService
	log       *slog.Logger
	validator *analysis.Validator
	retry     *sdkcall.Policy // the SDK retries' veto
}

var _ claims.SearchProvider = (*Provider)(nil)

// New returns a provider. It fails only on invalid options (a malformed
// BaseURL); a missing API key is reported by Search.
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
	v, err := analysis.NewValidator()
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	p := &Provider{opts: o, set: set, log: set.Logger, validator: v}
	// The veto refuses billing and spend-limit failures and a Retry-After
	// longer than MaxRetryAfter.
	p.retry = set.Policy(ProviderName)
	p.retry.MaxRetryAfter, p.retry.LogAttempt = set.MaxRetryAfter, p.logAttempt
	p.retry.NoRetry = func(status int, h http.Header, body []byte) (string, bool) {
		return "billing or spend limit", parseAPIError(status, h, body).quota()
	}
	client := sdk.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(set.RootURL()),
		option.WithAPIKey(set.APIKey),
		option.WithHTTPClient(set.HTTPClient),
		option.WithMaxRetries(set.MaxRetries),
		option.WithRequestTimeout(set.AttemptTimeout),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			return p.retry.Middleware(r, next)
		}),
	)
	p.messages = client.Messages
	return p, nil
}

// Name returns "anthropic".
func (p *Provider) Name() string { return ProviderName }

// Configured reports whether an API key was given.
func (p *Provider) Configured() bool { return p.set.APIKey != "" }

// Model returns the configured model.
func (p *Provider) Model() string { return p.set.Model }

// Capabilities reports the web search tool's own filtering: allowed
// domains (up to MaxAllowedDomains) or blocked domains, which the API
// accepts one at a time (see the package documentation).
func (p *Provider) Capabilities() claims.ProviderCapabilities {
	return claims.ProviderCapabilities{
		DomainFilter:        true,
		MaxDomains:          MaxAllowedDomains,
		BlockedDomainFilter: true,
		SourceName:          SourceName,
	}
}

// Search makes one streamed Messages API call for q. Failures are
// *claims.ProviderError values whose Err is an *APIError (HTTP errors and
// error events), a *ResponseError (the answer stopped short: max_tokens,
// refusal, pause_turn), an *OutputError (unusable output) or a transport
// error. With a *ResponseError or *OutputError the partial response is
// returned too, for accounting.
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
	queries := map[string][]string{}
	msg, err := p.stream(ctx, q, params, queries)
	if err != nil {
		return nil, err
	}
	// A paused turn (pause_turn: the server paused a long-running turn of
	// server tools) is sent back as-is to let the model continue it.
	msgs := []*sdk.Message{msg}
	for msg.StopReason == sdk.StopReasonPauseTurn && len(msgs) <= MaxContinuations {
		p.log.DebugContext(ctx, "anthropic: continuing a paused turn", "message", msg.ID)
		params.Messages = append(params.Messages, msg.ToParam())
		next, err := p.stream(ctx, q, params, queries)
		if err != nil {
			// What the paused part cost is still accounted.
			pr, _ := p.parseMessage(merge(msgs))
			return pr, err
		}
		msgs = append(msgs, next)
		msg = next
	}
	pr, err := p.parseMessage(merge(msgs))
	if pr != nil && err == nil {
		pr.Analysis.Limitations = append(pr.Analysis.Limitations, limits...)
	}
	return pr, err
}

// MaxContinuations is how many times a paused turn is continued; a turn
// still paused after that fails as stopped short (pause_turn).
const MaxContinuations = 2

// turn is one assistant turn, possibly made of several messages (a paused
// turn and its continuations).
type turn struct {
	msg *sdk.Message    // the first message, with every message's content and the usage summed
	raw json.RawMessage // the message object, or an array of them when continued
}

// merge joins the messages of a continued turn: the content in order, the
// last stop reason, the usage summed (each request is billed), the first
// message's id.
func merge(msgs []*sdk.Message) turn {
	if len(msgs) == 1 {
		return turn{msg: msgs[0], raw: json.RawMessage(msgs[0].RawJSON())}
	}
	m := *msgs[0]
	m.Content = nil
	m.Usage = sdk.Usage{}
	raws := make([]json.RawMessage, 0, len(msgs))
	for _, x := range msgs {
		m.Content = append(m.Content, x.Content...)
		m.StopReason = x.StopReason
		m.Usage.InputTokens += x.Usage.InputTokens
		m.Usage.OutputTokens += x.Usage.OutputTokens
		m.Usage.CacheReadInputTokens += x.Usage.CacheReadInputTokens
		m.Usage.CacheCreationInputTokens += x.Usage.CacheCreationInputTokens
		m.Usage.ServerToolUse.WebSearchRequests += x.Usage.ServerToolUse.WebSearchRequests
		raws = append(raws, json.RawMessage(x.RawJSON()))
	}
	raw, _ := json.Marshal(raws) // raw messages: cannot fail
	return turn{msg: &m, raw: raw}
}

// stream runs the streamed call, accumulating the message with the SDK's
// accumulator. Each finished web_search_tool_result block is reported
// through q.ReportSearchCall at once; queries collects the search queries
// of server_tool_use blocks across the messages of a turn.
func (p *Provider) stream(ctx context.Context, q *claims.ProviderQuery, params sdk.MessageNewParams, queries map[string][]string) (*sdk.Message, error) {
	var last *http.Response
	s := p.messages.NewStreaming(ctx, params, option.WithResponseInto(&last))
	defer s.Close()
	var msg sdk.Message
	started, stopped := false, false
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, badOutput("", "stream: %v", err)
		}
		switch ev.Type {
		case "message_start":
			started = true
		case "message_stop":
			stopped = true
		case "content_block_stop":
			if int(ev.Index) >= len(msg.Content) {
				continue
			}
			b := msg.Content[ev.Index]
			switch b.Type {
			case "server_tool_use":
				queries[b.ID] = toolQueries(b)
			case "web_search_tool_result":
				call, _ := searchCall(b, queries)
				p.log.DebugContext(ctx, "anthropic: web search done", "id", call.ID, "sources", len(call.Sources))
				q.ReportSearchCall(call)
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, p.classify(ctx, err, last)
	}
	if !started || !stopped {
		return nil, badOutput(msg.ID, "the stream ended before message_stop")
	}
	return &msg, nil
}

// classify turns an SDK or stream error into a *claims.ProviderError;
// last is the HTTP answer of the last attempt, if any.
func (p *Provider) classify(ctx context.Context, err error, last *http.Response) error {
	if apiErr := httpError(err, last); apiErr != nil {
		if apiErr.quota() {
			p.log.ErrorContext(ctx, "anthropic: billing or spend limit: claim verification is unavailable until it is fixed",
				"request_id", apiErr.RequestID, "message", apiErr.Message)
		}
		var ra time.Duration
		if last != nil && apiErr.StatusCode != 0 {
			ra, _ = sdkcall.RetryAfter(last.Header, p.set.Now())
		}
		return classifyAPIError(apiErr, ra)
	}
	return sdkcall.Failure(ctx, ProviderName, err, func(reason string) error { return badOutput("", "%s", reason) })
}

// logAttempt logs the identifying and rate-limit headers of one attempt.
func (p *Provider) logAttempt(ctx context.Context, r *http.Response) {
	if !p.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	h := r.Header
	p.log.DebugContext(ctx, "anthropic: response",
		"status", r.StatusCode,
		"request_id", h.Get("request-id"),
		"requests_remaining", h.Get("anthropic-ratelimit-requests-remaining"),
		"input_tokens_remaining", h.Get("anthropic-ratelimit-input-tokens-remaining"),
		"output_tokens_remaining", h.Get("anthropic-ratelimit-output-tokens-remaining"),
	)
}
