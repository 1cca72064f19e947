package httpjson

import (
	"mime"
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

// PrefersHTML reports whether the Accept values rank text/html strictly
// above application/json (RFC 9110 §12.5.1: each media type takes the
// quality of the most specific range that matches it; no match is 0), as
// browsers do. An absent Accept header prefers neither: JSON.
//
// Written here rather than taken from a library: the one in the module
// graph (munnerz/goautoneg) ignores q=0 and breaks ties by the header's
// order, and two media types need only the rule of RFC 9110.
func PrefersHTML(accept []string) bool {
	return acceptQuality(accept, "text", "html") > acceptQuality(accept, "application", "json")
}

// acceptQuality is the quality the Accept values give to typ/sub.
func acceptQuality(accept []string, typ, sub string) float64 {
	best, bestSpec := 0.0, -1
	for _, v := range accept {
		for _, rng := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(rng))
			if err != nil {
				continue
			}
			t, st, _ := strings.Cut(mt, "/")
			spec := -1
			switch {
			case t == typ && st == sub:
				spec = 2
			case t == typ && st == "*":
				spec = 1
			case t == "*" && st == "*":
				spec = 0
			}
			if spec < bestSpec || spec < 0 {
				continue
			}
			q := 1.0
			if qs, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(qs, 64); err == nil && f >= 0 && f <= 1 {
					q = f
				} else {
					q = 0
				}
			}
			if spec > bestSpec || q > best {
				best, bestSpec = q, spec
			}
		}
	}
	return best
}
