package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3/responses"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/analysis"
)

// sdkError is the SDK's HTTP error (openai.Error).
type sdkError = responses.Error

// httpError reads the APIError of a non-2xx answer: from the SDK's error
// when it parsed one, else from the answer itself (the SDK fails to parse
// an error body that is not JSON, e.g. a proxy's HTML page, and then
// returns only the JSON error).
func httpError(err error, resp *http.Response) *APIError {
	if se, ok := errors.AsType[*sdkError](err); ok {
		a := &APIError{StatusCode: se.StatusCode, Type: se.Type, Code: se.Code, Param: se.Param, Message: analysis.StripCites(se.Message)}
		if se.Response != nil {
			a.RequestID = se.Response.Header.Get("x-request-id")
		}
		return a
	}
	if resp == nil || resp.StatusCode < 400 {
		return nil
	}
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	}
	return parseAPIError(resp.StatusCode, resp.Header, body)
}

// APIError is an HTTP error answer of the OpenAI API (any non-2xx status),
// copied from the SDK's error with the x-request-id header. It is wrapped in a *claims.ProviderError; use errors.As to read it.
type APIError struct {
	StatusCode int    // HTTP status
	Type       string // error.type, e.g. "insufficient_quota", "requests"
	Code       string // error.code, e.g. "rate_limit_exceeded"
	Param      string // error.param
	Message    string // error.message
	RequestID  string // x-request-id response header
}

// Error describes the status, code, message and request id.
func (e *APIError) Error() string {
	s := fmt.Sprintf("openai: HTTP %d", e.StatusCode)
	if code := e.code(); code != "" {
		s += " " + code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// code returns Code, or Type when Code is empty.
func (e *APIError) code() string {
	if e.Code != "" {
		return e.Code
	}
	return e.Type
}

// quota reports whether the error is a billing-quota failure, which is never
// retried.
func (e *APIError) quota() bool {
	return e.Code == "insufficient_quota" || e.Type == "insufficient_quota"
}

// parseAPIError reads {"error":{"message","type","param","code"}} from an
// error body as the retry middleware peeks at it (before the SDK reads it);
// a body of another shape leaves the fields empty.
func parseAPIError(status int, h http.Header, body []byte) *APIError {
	e := &APIError{StatusCode: status, RequestID: h.Get("x-request-id")}
	var wire struct {
		Error *struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Param   json.RawMessage `json:"param"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &wire) != nil || wire.Error == nil {
		if len(body) > 0 && len(body) <= 200 {
			e.Message = string(body)
		}
		return e
	}
	e.Message = analysis.StripCites(wire.Error.Message)
	e.Type = wire.Error.Type
	e.Code = rawString(wire.Error.Code)
	e.Param = rawString(wire.Error.Param)
	return e
}

// rawString renders a JSON string, number or null as a Go string.
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// ResponseError is an in-band failure: a stream whose final response status
// is not "completed" (failed, incomplete, cancelled, queued, in_progress),
// or an error event in the stream (Status "error").
type ResponseError struct {
	ResponseID string
	Status     string // response status
	Reason     string // incomplete_details.reason, e.g. "max_output_tokens"
	Code       string // error.code of a failed response, e.g. "server_error"
	Message    string // error.message of a failed response
}

// Error describes the response status, reason and error.
func (e *ResponseError) Error() string {
	s := "openai: response " + e.ResponseID + " " + e.Status
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// OutputError is a completed response whose output cannot be used: the
// stream is not JSON events or has no final response, the analysis text is missing, malformed, violates the schema,
// or the model refused.
type OutputError struct {
	ResponseID string // empty when the body itself was unreadable
	Reason     string // what was wrong
}

// Error describes what was wrong with the output.
func (e *OutputError) Error() string {
	if e.ResponseID == "" {
		return "openai: unusable output: " + e.Reason
	}
	return "openai: unusable output in response " + e.ResponseID + ": " + e.Reason
}

// providerErr wraps err in a *claims.ProviderError of the given kind.
func providerErr(kind claims.ProviderErrorKind, retryAfter time.Duration, err error) error {
	return &claims.ProviderError{Kind: kind, RetryAfter: retryAfter, Err: err}
}

// classifyAPIError maps an HTTP error answer to a provider error kind.
func classifyAPIError(e *APIError, retryAfter time.Duration) error {
	switch {
	case e.quota():
		return providerErr(claims.ProviderQuotaExhausted, 0, e)
	case e.StatusCode == http.StatusTooManyRequests:
		return providerErr(claims.ProviderRateLimited, retryAfter, e)
	case e.StatusCode == http.StatusUnauthorized:
		// A rejected key is an operator configuration problem.
		return providerErr(claims.ProviderNotConfigured, 0, e)
	case e.StatusCode == http.StatusRequestTimeout || e.StatusCode == http.StatusGatewayTimeout:
		return providerErr(claims.ProviderTimeout, 0, e)
	case e.StatusCode == http.StatusServiceUnavailable && retryAfter > 0:
		return providerErr(claims.ProviderRateLimited, retryAfter, e)
	}
	return providerErr(claims.ProviderFailed, 0, e)
}

// classifyResponseError maps an in-band failure to a provider error kind.
func classifyResponseError(e *ResponseError) error {
	switch {
	case e.Status == "incomplete":
		// Truncated output (max_output_tokens, content_filter, ...) cannot
		// be parsed into an analysis.
		return providerErr(claims.ProviderBadOutput, 0, e)
	case e.Code == "rate_limit_exceeded":
		return providerErr(claims.ProviderRateLimited, 0, e)
	case e.Code == "insufficient_quota":
		return providerErr(claims.ProviderQuotaExhausted, 0, e)
	}
	return providerErr(claims.ProviderFailed, 0, e)
}
