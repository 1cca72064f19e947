package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/analysis"
)

// APIError is an error answer of the Anthropic API: a non-2xx status, or
// an error event in the stream (StatusCode is then the status the error
// type stands for, e.g. 529 for overloaded_error, and InStream is true).
// It is wrapped in a *claims.ProviderError; use errors.As to read it.
type APIError struct {
	StatusCode int    // HTTP status
	Type       string // error.type, e.g. "rate_limit_error", "overloaded_error"
	Code       string // error.details.error_code, e.g. "enforced_spend_limit_reached"
	Message    string // error.message
	RequestID  string // request-id header or body field
	InStream   bool   // an error event after the stream began
}

// Error describes the status, type, code, message and request id.
func (e *APIError) Error() string {
	s := fmt.Sprintf("anthropic: HTTP %d", e.StatusCode)
	if e.InStream {
		s = "anthropic: error event"
	}
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// quota reports whether the error is a billing or spend-limit failure,
// which waiting does not cure: HTTP 402 billing_error, a spend limit
// (429 rate_limit_error with details.error_code *_spend_limit_reached),
// or the 400 "credit balance is too low" answer (which has no code).
func (e *APIError) quota() bool {
	return e.StatusCode == http.StatusPaymentRequired || e.Type == "billing_error" ||
		strings.HasSuffix(e.Code, "spend_limit_reached") || strings.Contains(e.Code, "billing") ||
		strings.Contains(strings.ToLower(e.Message), "credit balance is too low")
}

// wireError is the documented error body:
// {"type":"error","error":{"type","message","details":{"error_code"}},"request_id"}.
type wireError struct {
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Details *struct {
			ErrorCode string `json:"error_code"`
		} `json:"details"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

// parseAPIError reads an error body; a body of another shape keeps a
// short one as the message.
func parseAPIError(status int, h http.Header, body []byte) *APIError {
	e := &APIError{StatusCode: status, RequestID: h.Get("request-id")}
	var w wireError
	if json.Unmarshal(body, &w) != nil || w.Error == nil {
		if len(body) > 0 && len(body) <= 200 {
			e.Message = string(body)
		}
		return e
	}
	fillFrom(e, &w)
	return e
}

func fillFrom(e *APIError, w *wireError) {
	e.Type = w.Error.Type
	e.Message = analysis.StripCites(w.Error.Message)
	if w.Error.Details != nil {
		e.Code = w.Error.Details.ErrorCode
	}
	if e.RequestID == "" {
		e.RequestID = w.RequestID
	}
}

// streamStatus is the HTTP status an error type stands for, for error
// events (documented in the API's error list).
var streamStatus = map[string]int{
	"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
	"permission_error": 403, "not_found_error": 404, "request_too_large": 413,
	"rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529,
}

// httpError reads the APIError of a failed call: an error event of the
// stream (the SDK returns it as its Error, or as a plain error holding the
// event's JSON), else the non-2xx answer of the last attempt.
func httpError(err error, resp *http.Response) *APIError {
	const prefix = "received error while streaming: "
	if se, ok := errors.AsType[*sdk.Error](err); ok && se.StatusCode < 400 {
		return streamError([]byte(se.RawJSON()), se.RequestID)
	}
	if msg := err.Error(); strings.HasPrefix(msg, prefix) {
		return streamError([]byte(strings.TrimPrefix(msg, prefix)), "")
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

func streamError(data []byte, requestID string) *APIError {
	e := &APIError{InStream: true, RequestID: requestID, StatusCode: http.StatusInternalServerError}
	var w wireError
	if json.Unmarshal(data, &w) != nil || w.Error == nil {
		e.Message = string(data)
		return e
	}
	fillFrom(e, &w)
	if s, ok := streamStatus[e.Type]; ok {
		e.StatusCode = s
	}
	return e
}

// ResponseError is an answer that stopped short: stop_reason max_tokens
// (truncated JSON), refusal, pause_turn (the server paused a long turn),
// model_context_window_exceeded, or a stop reason this package does not
// know.
type ResponseError struct {
	MessageID  string
	StopReason string
}

// Error describes the message and its stop reason.
func (e *ResponseError) Error() string {
	return "anthropic: message " + e.MessageID + " stopped: " + e.StopReason
}

// OutputError is an answer whose output cannot be used: the stream is not
// JSON events or ends early, the analysis text is missing, is not JSON or
// violates the schema.
type OutputError struct {
	MessageID string // empty when the stream itself was unreadable
	Reason    string
}

// Error describes what was wrong with the output.
func (e *OutputError) Error() string {
	if e.MessageID == "" {
		return "anthropic: unusable output: " + e.Reason
	}
	return "anthropic: unusable output in message " + e.MessageID + ": " + e.Reason
}

func providerErr(kind claims.ProviderErrorKind, retryAfter time.Duration, err error) error {
	return &claims.ProviderError{Kind: kind, RetryAfter: retryAfter, Err: err}
}

func badOutput(messageID, format string, args ...any) error {
	return providerErr(claims.ProviderBadOutput, 0, &OutputError{MessageID: messageID, Reason: fmt.Sprintf(format, args...)})
}

// classifyAPIError maps an error answer to a provider error kind.
func classifyAPIError(e *APIError, retryAfter time.Duration) error {
	switch {
	case e.quota():
		return providerErr(claims.ProviderQuotaExhausted, 0, e)
	case e.StatusCode == http.StatusTooManyRequests:
		return providerErr(claims.ProviderRateLimited, retryAfter, e)
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		return providerErr(claims.ProviderNotConfigured, 0, e)
	case e.StatusCode == http.StatusRequestTimeout || e.StatusCode == http.StatusGatewayTimeout:
		return providerErr(claims.ProviderTimeout, 0, e)
	case (e.StatusCode == http.StatusServiceUnavailable || e.StatusCode == 529) && retryAfter > 0:
		return providerErr(claims.ProviderRateLimited, retryAfter, e)
	}
	return providerErr(claims.ProviderFailed, 0, e)
}
