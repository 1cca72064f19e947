package server

import (
	"net/http"
	"net/url"
	"strings"
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

// externalPath is the path the client asked for, including any prefix the
// host stripped before handing the request on (http.StripPrefix rewrites
// URL.Path but leaves RequestURI intact). Links and redirects built from it
// stay valid for the client wherever the handler is mounted.
func externalPath(r *http.Request) string {
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && strings.HasSuffix(u.Path, r.URL.Path) {
		return u.Path
	}
	return r.URL.Path
}
