package claims

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors of the engine. Every error Verify, Check and Verification
// return either is one of these, wraps one, is a *RequestError, or is a
// *ProviderError (see the ErrProvider* sentinels).
var (
	// ErrNotFound: no stored verification has that id (or the caller may
	// not see it).
	ErrNotFound = errors.New("claims: verification not found")
	// ErrIdempotencyConflict: the Idempotency-Key was already used, in the
	// same scope and tier, for a different effective request.
	ErrIdempotencyConflict = errors.New("claims: Idempotency-Key was already used for a different request")
	// ErrInFlight: a request with the same Idempotency-Key is still being
	// processed. Returned wrapped in an *InFlightError.
	ErrInFlight = errors.New("claims: a request with this Idempotency-Key is still being processed")
	// ErrTimeout: the verification did not finish within its deadline.
	// Nothing was stored.
	ErrTimeout = errors.New("claims: verification timed out")
	// ErrExists: a verification with that id is already stored.
	ErrExists = errors.New("claims: verification already exists")
	// ErrInvalidRequest is matched by every *RequestError.
	ErrInvalidRequest = errors.New("claims: invalid request")
)

// RequestError reports a request the engine refuses before doing any work
// (and so before any payment): a tier rule, a cross-field rule or a bound.
// Msg is a sentence for the caller, e.g. "minimumSources (5) must not
// exceed the effective maxSources (3 on the quick tier)".
type RequestError struct {
	// Field names the offending request field ("" for cross-field rules
	// that involve several fields).
	Field string
	Msg   string
}

func (e *RequestError) Error() string { return "claims: " + e.Msg }

// Is makes errors.Is(err, ErrInvalidRequest) true.
func (e *RequestError) Is(target error) bool { return target == ErrInvalidRequest }

// InFlightError is returned when a duplicate request (same scope, tier and
// Idempotency-Key) arrives while the first is still running and did not
// finish within Options.IdempotencyWait. RetryAfter is a hint for the
// caller's retry.
type InFlightError struct {
	RetryAfter time.Duration
}

func (e *InFlightError) Error() string {
	return fmt.Sprintf("%v; retry after %v", ErrInFlight, e.RetryAfter.Round(time.Second))
}

// Is makes errors.Is(err, ErrInFlight) true.
func (e *InFlightError) Is(target error) bool { return target == ErrInFlight }
