package httpjson

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// HTMLPage sends a rendered page as an inert document: not cached, not
// sniffed, not framed, no referrer, and the given Content-Security-Policy.
func HTMLPage(w http.ResponseWriter, r *http.Request, status int, page []byte, csp string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(page)))
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", csp)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(page)
	}
}

// ExternalPath is the path the client asked for, including any prefix the
// host stripped before handing the request on (http.StripPrefix rewrites
// URL.Path but leaves RequestURI intact). Links and redirects built from it
// stay valid for the client wherever the handler is mounted.
func ExternalPath(r *http.Request) string {
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && strings.HasSuffix(u.Path, r.URL.Path) {
		return u.Path
	}
	return r.URL.Path
}
