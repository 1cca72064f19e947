// Package sdkcall holds what the providers built on the official,
// Stainless-generated SDKs (openai-go, anthropic-sdk-go) share about a call:
// the options both take and their defaults (Settings, so that each default
// is stated once; each provider's exported Options and Default* constants
// map onto it), the checks before a Search (Start), the retry veto
// middleware, Retry-After parsing, the Search deadline carried to that
// middleware (Bound), and the classification of failures that are not
// error answers (Failure). Both SDKs retry on status alone, ignore the
// caller's deadline and honour x-should-retry: false on a response, which
// is how the veto works.
package sdkcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
)

// Policy vetoes the SDK's retries where its status-only policy is wrong.
type Policy struct {
	// Name prefixes the log messages ("openai", "anthropic").
	Name string
	// Log receives a debug record per decision (never nil).
	Log *slog.Logger
	// Now is the clock Retry-After dates are read against.
	Now func() time.Time
	// NoRetry reports whether an error answer (its status, headers and
	// the first 64 KiB of its body) must never be retried, and why
	// (billing and quota failures).
	NoRetry func(status int, h http.Header, body []byte) (reason string, veto bool)
	// MaxRetryAfter vetoes a retry whose Retry-After is longer (0: no
	// cap).
	MaxRetryAfter time.Duration
	// MinAttemptTime is the time that must remain before the Search
	// deadline after the wait for a retry to be made.
	MinAttemptTime time.Duration
	// ResetHeaders are duration headers read when there is no
	// Retry-After (OpenAI's x-ratelimit-reset-*).
	ResetHeaders []string
	// LogAttempt, when set, logs the headers of every answer.
	LogAttempt func(ctx context.Context, r *http.Response)
}

// deadlineKey carries the deadline of the whole Search to the middleware,
// whose request context has the attempt's earlier one.
type deadlineKey struct{}

// WithDeadline returns ctx carrying the Search deadline for Middleware.
func WithDeadline(ctx context.Context, dl time.Time) context.Context {
	return context.WithValue(ctx, deadlineKey{}, dl)
}

// Middleware is the SDK middleware (pass it through the SDK's
// option.WithMiddleware: both SDKs' MiddlewareNext have this underlying
// type). It logs every attempt and sets x-should-retry: false on an error
// answer it vetoes.
func (p *Policy) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	if resp == nil {
		return resp, err
	}
	ctx := req.Context()
	if p.LogAttempt != nil {
		p.LogAttempt(ctx, resp)
	}
	if resp.StatusCode < 400 || resp.Header.Get("x-should-retry") == "false" {
		return resp, err
	}
	n, _ := strconv.Atoi(req.Header.Get("X-Stainless-Retry-Count"))
	wait, hasRA := RetryAfter(resp.Header, p.Now(), p.ResetHeaders...)
	if !hasRA {
		wait = time.Duration(0.5 * float64(time.Second) * math.Pow(2, float64(n)))
	}
	veto, vetoed := "", false
	if p.NoRetry != nil {
		veto, vetoed = p.NoRetry(resp.StatusCode, resp.Header, Peek(resp))
	}
	switch {
	case vetoed:
	case hasRA && p.MaxRetryAfter > 0 && wait > p.MaxRetryAfter:
		veto, vetoed = "Retry-After too long", true
	default:
		if dl, ok := ctx.Value(deadlineKey{}).(time.Time); ok && !dl.IsZero() && time.Until(dl) < wait+p.MinAttemptTime {
			veto, vetoed = "too little time before the deadline", true
		}
	}
	if vetoed {
		p.Log.DebugContext(ctx, p.Name+": not retrying: "+veto, "status", resp.StatusCode)
		resp.Header.Set("x-should-retry", "false")
	} else {
		p.Log.DebugContext(ctx, p.Name+": retrying if the SDK's policy allows", "status", resp.StatusCode, "wait", wait)
	}
	return resp, err
}

// Peek reads up to 64 KiB of resp's body without consuming it for later
// readers.
func Peek(resp *http.Response) []byte {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	return b
}

// RetryAfter reads retry-after-ms, then Retry-After (seconds or HTTP
// date), then the largest of the reset duration headers.
func RetryAfter(h http.Header, now time.Time, resetHeaders ...string) (time.Duration, bool) {
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
	for _, name := range resetHeaders {
		if d, err := time.ParseDuration(h.Get(name)); err == nil && d > best {
			best = d
		}
	}
	return best, best > 0
}

// IsTimeout reports whether err is a network timeout.
func IsTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// IsDecodeError reports whether err is a JSON decoding failure (of a
// stream event).
func IsDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

// Failure classifies an SDK failure that is not an error answer of the
// API: the Search deadline passed (claims.ProviderTimeout, wrapping the
// context's error too), the context was cancelled, an attempt timed out
// (claims.ProviderTimeout), the stream was not valid JSON events (through
// badOutput, which builds the provider's unusable-output error from the
// reason), or another transport error (claims.ProviderFailed). name
// prefixes the errors.
func Failure(ctx context.Context, name string, err error, badOutput func(reason string) error) error {
	kind, werr := claims.ProviderFailed, fmt.Errorf("%s: %w", name, err)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		kind, werr = claims.ProviderTimeout, fmt.Errorf("%s: deadline exceeded: %w", name, errors.Join(err, ctx.Err()))
	case ctx.Err() != nil:
		werr = fmt.Errorf("%s: %w", name, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded) || IsTimeout(err):
		kind, werr = claims.ProviderTimeout, fmt.Errorf("%s: attempt timed out: %w", name, err)
	case IsDecodeError(err):
		return badOutput(fmt.Sprintf("response stream is not valid JSON events: %v", err))
	}
	return &claims.ProviderError{Kind: kind, Err: werr}
}
