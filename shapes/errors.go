package shapes

import (
	"fmt"
	"strings"
)

// ErrorDetail is one entry of an HTTPValidationError, Pydantic v2's error
// object: type, loc, msg, input and ctx, in that key order.
type ErrorDetail struct {
	Type  string `json:"type"`
	Loc   []any  `json:"loc"`
	Msg   string `json:"msg"`
	Input any    `json:"input"`
	Ctx   any    `json:"ctx,omitempty"`
}

// ValidationError is FastAPI's HTTPValidationError: {"detail":[...]}. Decode
// returns it with loc relative to the document root; the HTTP layer prefixes
// "body", "query", "path" or "header".
type ValidationError struct {
	Detail []ErrorDetail `json:"detail"`
}

// Error summarises the first errors.
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d validation error", len(e.Detail))
	if len(e.Detail) != 1 {
		b.WriteByte('s')
	}
	for i, d := range e.Detail {
		if i == 3 {
			b.WriteString("; ...")
			break
		}
		fmt.Fprintf(&b, "; %v: %s", d.Loc, d.Msg)
	}
	return b.String()
}

// WithPrefix returns a copy of e whose every loc starts with prefix.
func (e *ValidationError) WithPrefix(prefix ...any) *ValidationError {
	out := &ValidationError{Detail: make([]ErrorDetail, len(e.Detail))}
	for i, d := range e.Detail {
		loc := make([]any, 0, len(prefix)+len(d.Loc))
		loc = append(append(loc, prefix...), d.Loc...)
		d.Loc = loc
		out.Detail[i] = d
	}
	return out
}

// NewValueError is the error of a model-level validator, as FastAPI reports
// it: type value_error, loc at the model root, msg "Value error, <msg>",
// the whole input, and ctx {"error":{}}.
func NewValueError(msg string, input any) *ValidationError {
	return &ValidationError{Detail: []ErrorDetail{{
		Type:  "value_error",
		Loc:   []any{},
		Msg:   "Value error, " + msg,
		Input: input,
		Ctx:   map[string]any{"error": map[string]any{}},
	}}}
}
