// Package wire holds what the payment wire codecs (x402, mpp) and the
// seller core share: the malformed-header sentinel, the pending-settlement
// error, the bound on a decoded header, strict JSON object decoding,
// compact JSON encoding and member setting, and the clipping of untrusted
// input quoted in error messages.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrMalformedHeader reports a payment header that is not base64 of a JSON
// object. payment, x402 and mpp export it under the same name.
var ErrMalformedHeader = errors.New("payment: malformed payment header")

// ErrSettlementPending reports a settlement whose outcome is not known yet
// (facilitator timeout, transaction pending). payment and x402 export it
// under the same name.
var ErrSettlementPending = errors.New("payment: settlement pending")

// PendingError is a settlement whose outcome is not known yet. It matches
// ErrSettlementPending with errors.Is. Transaction is the transaction hash
// when the processor reported one. payment and x402 export it under the
// same name.
type PendingError struct {
	Transaction string
	Cause       error
}

// Error implements error.
func (e *PendingError) Error() string {
	msg := "payment: settlement pending"
	if e.Transaction != "" {
		msg += " (transaction " + e.Transaction + ")"
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrSettlementPending) true.
func (e *PendingError) Is(target error) bool { return target == ErrSettlementPending }

// Unwrap returns the cause.
func (e *PendingError) Unwrap() error { return e.Cause }

// MaxHeaderBytes bounds a decoded payment header: far above any real
// payload (a few KB), far below what would let a caller make us allocate.
const MaxHeaderBytes = 64 << 10

// DecodeObject decodes one JSON object (and nothing after it) into v.
func DecodeObject(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("%w: not a JSON object", ErrMalformedHeader)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedHeader, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: data after the JSON object", ErrMalformedHeader)
	}
	return nil
}

// Marshal encodes without HTML escaping and without a trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Clip returns s cut to n bytes with "…" appended when it was longer.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// SetMember sets one top-level member of a JSON object; an empty obj
// stays empty (nil, nil).
func SetMember(obj json.RawMessage, key string, value any) (json.RawMessage, error) {
	if len(obj) == 0 {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, err
	}
	v, err := Marshal(value)
	if err != nil {
		return nil, err
	}
	m[key] = v
	return Marshal(m)
}
