package shapes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrUnreadable is wrapped by the ValidationError of an input that is not
// text JSON can be read from: invalid UTF-8, or nesting deeper than
// MaxDepth. FastAPI answers these with 400 "There was an error parsing the
// body" rather than 422; errors.Is(err, ErrUnreadable) tells them apart.
var ErrUnreadable = errors.New("shapes: unreadable JSON text")

// MaxErrors is the most errors a ValidationError lists: Decode and
// DecodeQuery keep the first MaxErrors in Pydantic's order, and
// ValidationError.MarshalJSON writes at most MaxErrors, whoever built the
// list. FastAPI lists every error; a hostile body could make it list one
// per byte.
const MaxErrors = 100

// MaxEchoBytes bounds the input an answer echoes: ValidationError's
// MarshalJSON counts the bytes of every error's rendered input and of the
// strings of its loc, and stops (see MarshalJSON) when they would pass
// MaxEchoBytes — or, for the errors of Decode and DecodeQuery, the size of
// the input when it is larger than MinEchoBytes, so that a large hostile
// body cannot make an answer larger than itself. Decode leaves out
// (OmittedInput) an input whose rendering alone is larger than
// MaxEchoBytes.
const MaxEchoBytes = 256 << 10

// MinEchoBytes is the echo budget of the errors of an input smaller than
// it (see MaxEchoBytes): small bodies get FastAPI's answer whole.
const MinEchoBytes = 64 << 10

// OmittedInput is the Input of an error whose input was not echoed because
// it was too large (see MaxEchoBytes). ErrorDetail.MarshalJSON leaves the
// input member out, as the ValidationError schema allows (input is not
// required).
type OmittedInput struct{}

// ErrorDetail is one entry of an HTTPValidationError, Pydantic v2's error
// object (the interface document's ValidationError): type, loc, msg, input
// and ctx, in that key order.
//
// Errors made by Decode carry Input and Ctx as json.RawMessage, rendered
// exactly as FastAPI renders them (Python's json.dumps of the value
// json.loads produced, ctx keys in Pydantic's order), or OmittedInput{}.
type ErrorDetail struct {
	Type  string `json:"type" validate:"required"`
	Loc   []any  `json:"loc" validate:"required,dive,strint"`
	Msg   string `json:"msg" validate:"required"`
	Input any    `json:"input"`
	Ctx   any    `json:"ctx,omitempty" validate:"omitnil,object"`
}

// ValidationError is FastAPI's HTTPValidationError: {"detail":[...]}. Decode
// returns it with loc relative to the document root; the HTTP layer prefixes
// "body", "query", "path" or "header".
type ValidationError struct {
	Detail []ErrorDetail `json:"detail" validate:"omitnil"`

	cause error // ErrUnreadable, or nil
	// echo is the echo budget of MarshalJSON; 0 means MaxEchoBytes.
	echo int
}

// echoBudget is the echo budget of the errors of an input of n bytes.
func echoBudget(n int) int { return min(MaxEchoBytes, max(MinEchoBytes, n)) }

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

// MarshalJSON writes the error as FastAPI does: keys in Pydantic's order,
// strings as Python's json.dumps(ensure_ascii=False) writes them (U+2028
// unescaped, for one), raw inputs and contexts as they are. An
// OmittedInput leaves the input member out.
func (e ErrorDetail) MarshalJSON() ([]byte, error) {
	in, err := marshalValue(e.Input)
	if err != nil {
		return nil, err
	}
	return e.appendJSON(nil, in)
}

// appendJSON appends the error with the rendered input in (nil: no input
// member).
func (e ErrorDetail) appendJSON(b, in []byte) ([]byte, error) {
	b = append(b, `{"type":`...)
	b = appendPyString(b, []byte(e.Type))
	b = append(b, `,"loc":[`...)
	for i, l := range e.Loc {
		if i > 0 {
			b = append(b, ',')
		}
		if s, ok := l.(string); ok {
			b = appendPyString(b, []byte(s))
			continue
		}
		v, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		b = append(b, v...)
	}
	b = append(b, `],"msg":`...)
	b = appendPyString(b, []byte(e.Msg))
	if in != nil {
		b = append(b, `,"input":`...)
		b = append(b, in...)
	}
	if e.Ctx != nil {
		ctx, err := marshalValue(e.Ctx)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"ctx":`...), ctx...)
	}
	return append(b, '}'), nil
}

// MarshalJSON writes {"detail":[...]} as FastAPI does, bounded: at most
// MaxErrors errors, and the echoed bytes (rendered inputs, and the strings
// of each loc) stay within MaxEchoBytes (for Decode's errors, within the
// input's size when that is between MinEchoBytes and MaxEchoBytes). Errors
// are taken in order; the list ends before the first error (after the
// first) whose loc no longer fits, and an error whose input no longer fits
// is written without its input member. So the answer to an input larger
// than MinEchoBytes echoes at most as many bytes as the input has, plus
// MaxErrors short errors (the first error's loc, one path through the
// input, is always written).
func (e ValidationError) MarshalJSON() ([]byte, error) {
	if e.Detail == nil {
		return []byte(`{"detail":null}`), nil
	}
	b := []byte(`{"detail":[`)
	left := e.echo
	if left <= 0 {
		left = MaxEchoBytes
	}
	for i, d := range e.Detail {
		if i == MaxErrors {
			break
		}
		locBytes := 0
		for _, l := range d.Loc {
			if s, ok := l.(string); ok {
				locBytes += len(s) + 2
			}
		}
		if i > 0 && locBytes > left {
			break
		}
		left -= locBytes
		in, err := marshalValue(d.Input)
		if err != nil {
			return nil, err
		}
		if len(in) > left {
			in = nil
		} else if in != nil {
			left -= len(in)
		}
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = d.appendJSON(b, in); err != nil {
			return nil, err
		}
	}
	return append(b, "]}"...), nil
}

// marshalValue renders an input or ctx: raw JSON as is, strings as
// Python writes them, anything else with encoding/json (no HTML
// escaping); OmittedInput as nil.
func marshalValue(v any) ([]byte, error) {
	switch x := v.(type) {
	case OmittedInput:
		return nil, nil
	case json.RawMessage:
		if x != nil {
			return x, nil
		}
	case string:
		return appendPyString(nil, []byte(strings.ToValidUTF8(x, "\uFFFD"))), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Unwrap returns ErrUnreadable for inputs that are not readable JSON text.
func (e *ValidationError) Unwrap() error { return e.cause }

// WithPrefix returns a copy of e whose every loc starts with prefix.
func (e *ValidationError) WithPrefix(prefix ...any) *ValidationError {
	out := &ValidationError{Detail: make([]ErrorDetail, len(e.Detail)), cause: e.cause, echo: e.echo}
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
		Ctx:   json.RawMessage(`{"error":{}}`),
	}}}
}
