package server

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/server/route"
)

// Route is one operation of the routing table (package route holds it, so
// that the mounts and documents built over the table need not import this
// package).
type Route = route.Route

// Tool is one MCP tool as the discovery documents describe it.
type Tool = route.Tool

// Service keys of the discovery documents.
const (
	ClaimsServiceKey = route.ClaimsServiceKey
	NicheServiceKey  = route.NicheServiceKey
)

type segment struct {
	lit   string
	param string // non-empty for {name}
}

type entry struct {
	method  string
	pattern string
	segs    []segment
	route   *Route
}

// router dispatches requests to routes, answering unknown paths and wrong
// methods the way FastAPI does.
type router struct {
	entries []entry
	maxBody int64
	// notFound answers browsers on unknown paths (route.Route.NotFound).
	notFound *Route
}

func parsePattern(p string) ([]segment, bool) {
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	var segs []segment
	for _, s := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") && len(s) > 2 {
			segs = append(segs, segment{param: s[1 : len(s)-1]})
		} else {
			segs = append(segs, segment{lit: s})
		}
	}
	return segs, true
}

// specificity orders matching entries: a literal segment beats a parameter,
// compared from the left.
func moreSpecific(a, b []segment) bool {
	for i := range min(len(a), len(b)) {
		al, bl := a[i].param == "", b[i].param == ""
		if al != bl {
			return al
		}
	}
	return false
}

func (rt *router) add(method, pattern string, r *Route) error {
	segs, ok := parsePattern(pattern)
	if !ok {
		return errorf("route %s: pattern %q must start with /", r.ID, pattern)
	}
	for _, e := range rt.entries {
		// A page may share its method and pattern with one operation
		// (Route.Page): two pages or two operations may not.
		if e.method == method && e.pattern == pattern && e.route.Page == r.Page {
			return errorf("route %s: %s %s already served by %s", r.ID, method, pattern, e.route.ID)
		}
	}
	rt.entries = append(rt.entries, entry{method: method, pattern: pattern, segs: segs, route: r})
	return nil
}

func match(segs []segment, parts []string) bool {
	if len(segs) != len(parts) {
		return false
	}
	for i, s := range segs {
		if s.param != "" {
			if parts[i] == "" {
				return false
			}
		} else if s.lit != parts[i] {
			return false
		}
	}
	return true
}

// lookup returns the best entry for method, the methods allowed on the path
// (when any entry matches the path), and the decoded path parts. Where a
// page and an operation share a pattern, html chooses the page.
func (rt *router) lookup(method, escapedPath string, html bool) (*entry, []string, []string) {
	raw := strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
	parts := make([]string, len(raw))
	for i, p := range raw {
		u, err := url.PathUnescape(p)
		if err != nil {
			return nil, nil, nil
		}
		parts[i] = u
	}
	var best *entry
	var allowed []string
	for i := range rt.entries {
		e := &rt.entries[i]
		if !match(e.segs, parts) {
			continue
		}
		allowed = append(allowed, e.method)
		if e.method == "GET" {
			allowed = append(allowed, "HEAD")
		}
		if e.method == method || (method == "HEAD" && e.method == "GET") {
			switch {
			case best == nil || moreSpecific(e.segs, best.segs):
				best = e
			case best.pattern == e.pattern && best.route.Page != e.route.Page && e.route.Page == html:
				best = e // the variant the client prefers
			}
		}
	}
	sort.Strings(allowed)
	return best, slices.Compact(allowed), parts
}

type routeKey struct{}

// RouteFrom returns the route serving the request, when the router matched one.
func RouteFrom(ctx context.Context) (*Route, bool) {
	h, ok := ctx.Value(routeKey{}).(*routeHolder)
	if !ok || h.route == nil {
		return nil, false
	}
	return h.route, true
}

// routeHolder lets the router report the matched route to outer middleware
// (logging, metrics) that created the request context.
type routeHolder struct{ route *Route }

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	html := httpjson.PrefersHTML(r.Header.Values("Accept"))
	e, allowed, parts := rt.lookup(r.Method, r.URL.EscapedPath(), html)
	if e == nil {
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			httpjson.Detail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		// FastAPI redirects a trailing slash to the route without it.
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
			if e2, _, _ := rt.lookup(r.Method, strings.TrimSuffix(r.URL.EscapedPath(), "/"), html); e2 != nil {
				u := url.URL{Path: strings.TrimSuffix(httpjson.ExternalPath(r), "/"), RawQuery: r.URL.RawQuery}
				http.Redirect(w, r, u.RequestURI(), http.StatusTemporaryRedirect)
				return
			}
		}
		if html && rt.notFound != nil {
			rt.notFound.Handler.ServeHTTP(w, r)
			return
		}
		httpjson.Detail(w, http.StatusNotFound, "Not Found")
		return
	}
	if h, ok := r.Context().Value(routeKey{}).(*routeHolder); ok {
		h.route = e.route
	}
	for i, s := range e.segs {
		if s.param != "" {
			// No identifier contains NUL or invalid UTF-8 (and PostgreSQL
			// text cannot hold them): such a path names nothing.
			if !utf8.ValidString(parts[i]) || strings.IndexByte(parts[i], 0) >= 0 {
				httpjson.Detail(w, http.StatusNotFound, "Not Found")
				return
			}
			r.SetPathValue(s.param, parts[i])
		}
	}
	limit := rt.maxBody
	if e.route.MaxBodyBytes > 0 {
		limit = e.route.MaxBodyBytes
	}
	if r.ContentLength > limit {
		httpjson.Detail(w, http.StatusRequestEntityTooLarge, "Request body too large")
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	e.route.Handler.ServeHTTP(w, r)
}
