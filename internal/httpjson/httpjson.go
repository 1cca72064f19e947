// Package httpjson writes JSON responses the way FastAPI does: compact, UTF-8,
// non-ASCII kept, no HTML escaping, and errors as {"detail": ...}.
package httpjson

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// Marshal encodes v compactly without HTML escaping and without a trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil
}

// Write sends v as a JSON response with the given status. Encoding failures
// become a 500 with a fixed body: v is always one of our own types, so such a
// failure is a programming error that must not leak details.
func Write(w http.ResponseWriter, status int, v any) {
	b, err := Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"detail":"Internal Server Error"}`)
	}
	WriteRaw(w, status, b)
}

// WriteRaw sends already-encoded JSON bytes.
func WriteRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// DetailBody is FastAPI's error body for non-validation errors.
type DetailBody struct {
	Detail string `json:"detail"`
}

// Detail sends {"detail": msg} with the given status.
func Detail(w http.ResponseWriter, status int, msg string) {
	Write(w, status, DetailBody{Detail: msg})
}
