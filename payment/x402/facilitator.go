package x402

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/hashicorp/go-retryablehttp"
)

// FacilitatorOptions configures a Facilitator. Nil means defaults, but URL
// is required.
type FacilitatorOptions struct {
	// URL is the facilitator base URL; /verify, /settle and /supported are
	// appended.
	URL string
	// Headers returns extra request headers for a path ("/verify",
	// "/settle", "/supported"), called once per call: the place for
	// per-request credentials such as a Coinbase CDP JWT in
	// Authorization. Nil sends none.
	Headers func(ctx context.Context, method, path string) (http.Header, error)
	// HTTPClient supplies the transport (tests, proxies); its Timeout is
	// replaced. Nil uses a pooled client.
	HTTPClient *http.Client
	// Timeout bounds one attempt of /verify and /supported (default 10 s).
	Timeout time.Duration
	// SettleTimeout bounds /settle (default 60 s: settlement waits for the
	// transaction receipt). When it passes the outcome is unknown and
	// Settle returns ErrSettlementPending.
	SettleTimeout time.Duration
	// RetryMax is the number of retries of /verify and /supported on
	// connection errors, 429 and 5xx (default 3). /settle is retried only
	// when the request cannot have reached the facilitator (connection
	// refused) or on 429.
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound the jittered backoff (defaults
	// 200 ms and 5 s; Retry-After is honoured up to RetryWaitMax).
	RetryWaitMin, RetryWaitMax time.Duration
	// Logger receives retry logs; nil discards them.
	Logger *slog.Logger
}

// Facilitator is a client of an x402 facilitator (/verify, /settle,
// /supported). It is safe for concurrent use.
type Facilitator struct {
	base    string
	headers func(ctx context.Context, method, path string) (http.Header, error)
	quick   *retryablehttp.Client // /verify, /supported
	settle  *retryablehttp.Client // /settle
}

// VerifyResponse is the facilitator's /verify answer.
type VerifyResponse struct {
	IsValid        bool   `json:"isValid"`
	InvalidReason  string `json:"invalidReason,omitempty"`
	InvalidMessage string `json:"invalidMessage,omitempty"`
	Payer          string `json:"payer,omitempty"`
}

// SupportedKind is one (version, scheme, network) a facilitator handles.
type SupportedKind struct {
	X402Version int            `json:"x402Version"`
	Scheme      string         `json:"scheme"`
	Network     string         `json:"network"`
	Extra       map[string]any `json:"extra,omitempty"`
}

// SupportedResponse is the facilitator's /supported answer.
type SupportedResponse struct {
	Kinds      []SupportedKind     `json:"kinds"`
	Extensions []string            `json:"extensions,omitempty"`
	Signers    map[string][]string `json:"signers,omitempty"`
}

// Supports reports whether the facilitator lists (version, scheme, network).
func (s *SupportedResponse) Supports(version int, scheme, network string) bool {
	for _, k := range s.Kinds {
		if k.X402Version == version && k.Scheme == scheme && k.Network == network {
			return true
		}
	}
	return false
}

// PendingError is a settlement whose outcome is not known yet. It matches
// ErrSettlementPending with errors.Is. Transaction is the transaction hash
// when the facilitator reported one. It is payment.PendingError.
type PendingError = wire.PendingError

// FacilitatorError is an unexpected answer from the facilitator (not a
// verification or settlement verdict).
type FacilitatorError struct {
	Path   string
	Status int
	Body   string
}

// Error implements error.
func (e *FacilitatorError) Error() string {
	return fmt.Sprintf("payment: facilitator %s: HTTP %d: %s", e.Path, e.Status, e.Body)
}

// ErrSettlementPending reports a settlement whose outcome is not known yet
// (the same value as payment.ErrSettlementPending): the payer must not be
// asked to pay again.
var ErrSettlementPending = wire.ErrSettlementPending

// ErrFacilitator is matched (errors.Is) by every facilitator transport or
// protocol failure.
var ErrFacilitator = errors.New("payment: facilitator unavailable")

// Is makes errors.Is(err, ErrFacilitator) true.
func (e *FacilitatorError) Is(target error) bool { return target == ErrFacilitator }

type retryModeKey struct{}

const (
	retryIdempotent = 1
	retrySettle     = 2
)

// NewFacilitator returns a facilitator client.
func NewFacilitator(opts *FacilitatorOptions) (*Facilitator, error) {
	if opts == nil || opts.URL == "" {
		return nil, errors.New("payment: facilitator URL is required")
	}
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("payment: facilitator URL %q is not an http(s) URL", opts.URL)
	}
	o := *opts
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 60 * time.Second
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 3
	}
	if o.RetryWaitMin <= 0 {
		o.RetryWaitMin = 200 * time.Millisecond
	}
	if o.RetryWaitMax <= 0 {
		o.RetryWaitMax = 5 * time.Second
	}
	f := &Facilitator{base: strings.TrimRight(opts.URL, "/"), headers: o.Headers}
	f.quick = newRetryClient(o, o.Timeout)
	f.settle = newRetryClient(o, o.SettleTimeout)
	return f, nil
}

func newRetryClient(o FacilitatorOptions, timeout time.Duration) *retryablehttp.Client {
	c := retryablehttp.NewClient()
	if o.Logger != nil {
		c.Logger = o.Logger
	} else {
		c.Logger = nil
	}
	hc := &http.Client{}
	if o.HTTPClient != nil {
		*hc = *o.HTTPClient
	} else {
		hc = c.HTTPClient
	}
	hc.Timeout = timeout
	c.HTTPClient = hc
	c.RetryMax, c.RetryWaitMin, c.RetryWaitMax = o.RetryMax, o.RetryWaitMin, o.RetryWaitMax
	c.ErrorHandler = retryablehttp.PassthroughErrorHandler
	c.CheckRetry = checkRetry
	c.Backoff = func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
		d := retryablehttp.DefaultBackoff(min, max, attempt, resp)
		if d > max {
			d = max
		}
		// ±25 % jitter so that instances do not retry in lockstep.
		return d - d/4 + time.Duration(rand.Int64N(int64(d/2)+1))
	}
	return c
}

// checkRetry retries idempotent calls like ErrorPropagatedRetryPolicy, and
// /settle only when the request certainly did not reach the facilitator.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	mode, _ := ctx.Value(retryModeKey{}).(int)
	if mode == retrySettle {
		if err != nil {
			return isDialError(err), err
		}
		return resp.StatusCode == http.StatusTooManyRequests, nil
	}
	return retryablehttp.ErrorPropagatedRetryPolicy(ctx, resp, err)
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// isTimeout reports whether err is a deadline or timeout.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

type facilitatorRequest struct {
	X402Version         int             `json:"x402Version"`
	PaymentPayload      json.RawMessage `json:"paymentPayload"`
	PaymentRequirements json.RawMessage `json:"paymentRequirements"`
}

// do sends one call and returns status and body (at most 1 MiB).
func (f *Facilitator) do(ctx context.Context, c *retryablehttp.Client, mode int, method, path string, body []byte) (int, []byte, error) {
	ctx = context.WithValue(ctx, retryModeKey{}, mode)
	var rb any
	if body != nil {
		rb = body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, method, f.base+path, rb)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if f.headers != nil {
		h, err := f.headers(ctx, method, path)
		if err != nil {
			return 0, nil, fmt.Errorf("payment: facilitator %s headers: %w", path, err)
		}
		for k, vs := range h {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, b, nil
}

// Verify asks the facilitator to check a payment (signature, balance,
// simulation) without settling it. A negative verdict is a VerifyResponse
// with IsValid false, not an error.
func (f *Facilitator) Verify(ctx context.Context, version int, payload, requirements json.RawMessage) (*VerifyResponse, error) {
	body, err := wire.Marshal(facilitatorRequest{version, payload, requirements})
	if err != nil {
		return nil, err
	}
	status, b, err := f.do(ctx, f.quick, retryIdempotent, http.MethodPost, "/verify", body)
	if err != nil {
		return nil, fmt.Errorf("%w: /verify: %v", ErrFacilitator, err)
	}
	var vr VerifyResponse
	if jerr := json.Unmarshal(b, &vr); jerr == nil && (status == http.StatusOK || (status >= 400 && status < 500 && (vr.InvalidReason != "" || vr.IsValid))) {
		if status != http.StatusOK {
			vr.IsValid = false
		}
		return &vr, nil
	}
	return nil, &FacilitatorError{Path: "/verify", Status: status, Body: wire.Clip(string(b), 300)}
}

// Settle asks the facilitator to execute the transfer and wait for it. A
// refused settlement is a SettleResponse with Success false. When the
// outcome cannot be known (timeout, 5xx, connection lost after sending, or
// errorReason "settlement_pending") the error is a *PendingError matching
// ErrSettlementPending: never treat it as a failure.
func (f *Facilitator) Settle(ctx context.Context, version int, payload, requirements json.RawMessage) (*SettleResponse, error) {
	body, err := wire.Marshal(facilitatorRequest{version, payload, requirements})
	if err != nil {
		return nil, err
	}
	status, b, err := f.do(ctx, f.settle, retrySettle, http.MethodPost, "/settle", body)
	if err != nil {
		if isDialError(err) && !isTimeout(err) {
			return nil, fmt.Errorf("%w: /settle: %v", ErrFacilitator, err)
		}
		return nil, &PendingError{Cause: err}
	}
	var sr SettleResponse
	jerr := json.Unmarshal(b, &sr)
	switch {
	case jerr == nil && sr.ErrorReason == "settlement_pending":
		return nil, &PendingError{Transaction: sr.Transaction}
	case status == http.StatusOK:
		if jerr != nil || (sr.Success && sr.Transaction == "") {
			// Something was done, but we cannot tell what.
			return nil, &PendingError{Transaction: sr.Transaction, Cause: &FacilitatorError{Path: "/settle", Status: status, Body: wire.Clip(string(b), 300)}}
		}
		return &sr, nil
	case status >= 400 && status < 500 && status != http.StatusTooManyRequests:
		if jerr == nil && !sr.Success && (sr.ErrorReason != "" || sr.ErrorMessage != "") {
			return &sr, nil
		}
		// Refused before any settlement (authentication, bad request).
		return nil, &FacilitatorError{Path: "/settle", Status: status, Body: wire.Clip(string(b), 300)}
	}
	// 5xx, 429 after retries, redirects: the outcome is unknown.
	return nil, &PendingError{Transaction: sr.Transaction, Cause: &FacilitatorError{Path: "/settle", Status: status, Body: wire.Clip(string(b), 300)}}
}

// Supported lists what the facilitator can verify and settle.
func (f *Facilitator) Supported(ctx context.Context) (*SupportedResponse, error) {
	status, b, err := f.do(ctx, f.quick, retryIdempotent, http.MethodGet, "/supported", nil)
	if err != nil {
		return nil, fmt.Errorf("%w: /supported: %v", ErrFacilitator, err)
	}
	var sr SupportedResponse
	if status != http.StatusOK || json.Unmarshal(b, &sr) != nil {
		return nil, &FacilitatorError{Path: "/supported", Status: status, Body: wire.Clip(string(b), 300)}
	}
	return &sr, nil
}

// StaticHeaders returns a FacilitatorOptions.Headers function that sends
// the same headers on every call (an API key). For per-request tokens
// such as a Coinbase CDP JWT, write a function that mints one per path.
func StaticHeaders(h http.Header) func(ctx context.Context, method, path string) (http.Header, error) {
	h = h.Clone()
	return func(context.Context, string, string) (http.Header, error) { return h.Clone(), nil }
}

// ParseHeaderLine reads "Name: value" (e.g. from an environment variable)
// into a header for StaticHeaders.
func ParseHeaderLine(line string) (http.Header, error) {
	name, value, ok := strings.Cut(line, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || value == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
		return nil, errors.New(`payment: header must be "Name: value"`)
	}
	h := http.Header{}
	h.Set(name, value)
	return h, nil
}
