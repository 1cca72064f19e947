package shapes

import (
	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/valid"
)

// IdempotencyKeyError is the FastAPI answer for an over-long
// Idempotency-Key header (422 at ["header", "idempotency-key"]).
func IdempotencyKeyError(key string) *ValidationError {
	return &ValidationError{Detail: []ErrorDetail{{
		Type:  "string_too_long",
		Loc:   []any{"header", "idempotency-key"},
		Msg:   valid.StringTooLong(claims.MaxIdempotencyKeyLength),
		Input: key,
		Ctx:   map[string]any{"max_length": claims.MaxIdempotencyKeyLength},
	}}}
}
