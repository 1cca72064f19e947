package discovery

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/assaykit/assay/server"
)

// decodeIndex reads a JSON index answer.
func decodeIndex(t *testing.T, rec *httptest.ResponseRecorder) ServiceIndex {
	t.Helper()
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("index: %d %s\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var b ServiceIndex
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func rels(ls []IndexLink) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Rel)
	}
	return out
}

// GET / answers an agent (no Accept, */*, application/json) with the JSON
// index of everything mounted, and every link it gives is served: GET
// links answer 200, POST endpoints exist (405 to a GET).
func TestIndexJSONListsWhatIsMounted(t *testing.T) {
	e := newDiscoveryEnv(t, true, nil)
	for _, accept := range []string{"", "*/*", "application/json", "application/json, text/html"} {
		b := decodeIndex(t, do(t, e.srv, "GET", "/", "", "Accept", accept))
		if b.Service != "assay" || b.Version != server.Version {
			t.Errorf("Accept %q: service %q %q", accept, b.Service, b.Version)
		}
		var keys []string
		for _, sv := range b.Services {
			keys = append(keys, sv.Key)
		}
		if !slices.Equal(keys, []string{ClaimsServiceKey, NicheServiceKey}) {
			t.Errorf("Accept %q: services %v", accept, keys)
		}
	}
	b := decodeIndex(t, do(t, e.srv, "GET", "/", ""))
	want := map[string][]string{
		"": {"health", "readiness", "capabilities", "receipt-keys", "mcp", "openapi", "x402", "agent-service", "mcp-server", "agent-card",
			"docs", "paying-client"},
		ClaimsServiceKey: {"receipt-keys", "mcp", "a2a", "openapi", "agent-service", "x402", "mcp-server", "agent-card"},
		NicheServiceKey:  {"receipt-keys", "mcp", "openapi", "agent-service", "x402", "mcp-server"},
	}
	check := func(key string, links []IndexLink) {
		t.Helper()
		if got := rels(links); !slices.Equal(got, want[key]) {
			t.Errorf("%q links %v, want %v", key, got, want[key])
		}
		for _, l := range links {
			path, ok := strings.CutPrefix(l.Href, testPublicBase)
			if !ok {
				if l.Rel != "docs" && l.Rel != "paying-client" {
					t.Errorf("%s: %s is not on the public base URL", l.Rel, l.Href)
				}
				continue
			}
			rec := do(t, e.srv, "GET", path, "")
			switch {
			case l.Method == "" && rec.Code != 200:
				t.Errorf("%s: GET %s: %d", l.Rel, path, rec.Code)
			case l.Method != "" && rec.Code != http.StatusMethodNotAllowed:
				t.Errorf("%s: GET %s: %d, want 405 (a %s endpoint)", l.Rel, path, rec.Code, l.Method)
			}
		}
	}
	check("", b.Links)
	for _, sv := range b.Services {
		if sv.Name == "" || sv.Summary == "" || !strings.HasPrefix(sv.URL, testPublicBase+"/") {
			t.Errorf("service %+v", sv)
		}
		check(sv.Key, sv.Links)
		// Each service's own root is its index, with or without the slash.
		for _, p := range []string{strings.TrimPrefix(sv.URL, testPublicBase), strings.TrimPrefix(sv.URL, testPublicBase) + "/"} {
			one := decodeIndex(t, do(t, e.srv, "GET", p, ""))
			if len(one.Services) != 1 || one.Services[0].Key != sv.Key || !slices.Equal(rels(one.Links), want[""]) {
				t.Errorf("GET %s: services %+v, links %v", p, one.Services, rels(one.Links))
			}
		}
	}
}

// A browser (text/html ranked first) gets an inert HTML page: every value
// escaped, nosniff, a CSP without scripts.
func TestIndexHTMLIsInert(t *testing.T) {
	e := newDiscoveryEnv(t, false, func(c *Config) {
		c.Discovery.Services = map[string]ServiceText{ClaimsServiceKey: {Name: `<script>alert(1)</script>`, Summary: `"><img src=x onerror=alert(1)>`}}
	})
	rec := do(t, e.srv, "GET", "/", "", "Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("%d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	h := rec.Header()
	if h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") ||
		strings.Contains(h.Get("Content-Security-Policy"), "script-src") || !strings.Contains(h.Get("Vary"), "Accept") {
		t.Errorf("headers %v", h)
	}
	page := rec.Body.String()
	if strings.Contains(page, "<script") || strings.Contains(page, "<img") {
		t.Errorf("unescaped service text:\n%s", page)
	}
	for _, s := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", `href="` + testPublicBase + `/v1/capabilities"`,
		`href="` + testPublicBase + `/openapi.json"`, `href="` + testPublicBase + `/claim-verification/.well-known/agent-card.json"`,
		`href="` + DefaultRepository + `#readme"`} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %s:\n%s", s, page)
		}
	}
	// Unpaid: no paying client to point at.
	if strings.Contains(page, "examples/client") {
		t.Errorf("unpaid server links a paying client")
	}
	if rec := do(t, e.srv, "HEAD", "/", "", "Accept", "text/html"); rec.Code != 200 || rec.Body.Len() != 0 {
		t.Errorf("HEAD: %d, %d bytes", rec.Code, rec.Body.Len())
	}
}

// Without a public base URL the links are absolute paths that keep the
// prefix a host stripped in front of the handler.
func TestIndexLinksUnderStripPrefix(t *testing.T) {
	e := newDiscoveryEnv(t, false, func(c *Config) { c.Discovery.PublicBaseURL = "" })
	h := http.StripPrefix("/api", e.srv)
	req := httptest.NewRequest("GET", "/api/niche-discovery", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b := decodeIndex(t, rec)
	if len(b.Services) != 1 || b.Services[0].URL != "/api/niche-discovery" {
		t.Fatalf("services %+v", b.Services)
	}
	for _, l := range append(b.Services[0].Links, b.Links...) {
		if !strings.HasPrefix(l.Href, "/api/") && !strings.HasPrefix(l.Href, DefaultRepository) {
			t.Errorf("%s: %s", l.Rel, l.Href)
		}
	}
}

// The index is an operation of the routing table like any other: listed
// in the capabilities and in the OpenAPI documents, JSON by default with
// the HTML page as an alternative.
func TestIndexIsDocumented(t *testing.T) {
	e := newDiscoveryEnv(t, true, nil)
	var caps struct {
		Capabilities []struct{ ID, Path, Method string } `json:"capabilities"`
	}
	if err := json.Unmarshal(do(t, e.srv, "GET", "/v1/capabilities", "").Body.Bytes(), &caps); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(caps.Capabilities, func(c struct{ ID, Path, Method string }) bool {
		return c.ID == "index" && c.Path == "/" && c.Method == "GET"
	}) {
		t.Errorf("capabilities lack the index: %+v", caps.Capabilities)
	}
	for _, doc := range []struct{ path, op string }{{PathOpenAPI, "/"}, {"/claim-verification" + PathOpenAPI, "/"}} {
		var oa struct {
			Paths map[string]map[string]struct {
				Responses map[string]struct {
					Content map[string]struct {
						Schema map[string]any `json:"schema"`
					} `json:"content"`
				} `json:"responses"`
			} `json:"paths"`
		}
		if err := json.Unmarshal(do(t, e.srv, "GET", doc.path, "").Body.Bytes(), &oa); err != nil {
			t.Fatal(err)
		}
		ok := oa.Paths[doc.op]["get"].Responses["200"].Content
		if ok["application/json"].Schema["$ref"] != "#/components/schemas/ServiceIndex" || ok["text/html"].Schema["type"] != "string" {
			t.Errorf("%s: GET %s 200 content %+v", doc.path, doc.op, ok)
		}
	}
}

func TestPrefersHTML(t *testing.T) {
	for _, tc := range []struct {
		accept []string
		html   bool
	}{
		{nil, false},
		{[]string{"*/*"}, false},
		{[]string{"application/json"}, false},
		{[]string{"text/html"}, true},
		{[]string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, true}, // Firefox, Chrome
		{[]string{"text/html;q=0.5, application/json"}, false},
		{[]string{"text/html, application/json"}, false}, // a tie: JSON
		{[]string{"text/*, application/json;q=0.5"}, true},
		{[]string{"text/html;q=0, */*"}, false},
		{[]string{"text/html;q=oops"}, false},
		{[]string{"application/json;q=0.1", "text/html"}, true}, // several header lines
		{[]string{"TEXT/HTML"}, true},
	} {
		if got := prefersHTML(tc.accept); got != tc.html {
			t.Errorf("%q: html %v, want %v", tc.accept, got, tc.html)
		}
	}
}

// Services may share one prefix: its root lists both.
func TestIndexOfASharedPrefix(t *testing.T) {
	e := newDiscoveryEnv(t, false, func(c *Config) {
		c.Claims.Prefix, c.Niche.Prefix = "/api", "/api"
		c.Snapshots.Prefixes = []string{"/api"}
		c.Discovery.Enabled = false
	})
	for _, p := range []string{"/api", "/api/", "/"} {
		b := decodeIndex(t, do(t, e.srv, "GET", p, ""))
		if len(b.Services) != 2 || b.Services[0].URL != testPublicBase+"/api" || b.Services[1].URL != testPublicBase+"/api" {
			t.Errorf("GET %s: services %+v", p, b.Services)
		}
	}
}
