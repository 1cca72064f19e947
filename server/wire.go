package server

import (
	"time"
)

// Helpers that render values the same way in every service's responses.

// rfc3339 renders a time as UTC RFC 3339 (sub-second digits only when present).
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// optionalTime renders a time, or nil for the zero time (JSON null).
func optionalTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	v := rfc3339(t)
	return &v
}

// optional renders a string, or nil for "" (JSON null).
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
