package server

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/shapes"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/google/go-cmp/cmp"
)

func testHandler(t *testing.T, routes ...*Route) http.Handler {
	t.Helper()
	s, err := New(Config{MaxBodyBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	rt := &router{maxBody: s.cfg.MaxBodyBytes}
	s.routes = append(s.routes, routes...)
	for _, r := range s.routes {
		for _, p := range r.Patterns() {
			if err := rt.add(r.Method, p, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s.observe(s.cors(rt))
}

func do(t *testing.T, h http.Handler, method, target string, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func echoParams(names ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := map[string]string{}
		for _, n := range names {
			out[n] = r.PathValue(n)
		}
		_ = json.NewEncoder(w).Encode(out)
	})
}

func TestRouterMatchesAndErrors(t *testing.T) {
	h := testHandler(t,
		&Route{ID: "item.get", Method: "GET", Path: "/v1/items/{id}", Handler: echoParams("id"),
			Prefixes: []string{"/svc"}, Aliases: []string{"/v1/legacy/{slug}/items/{id}"}},
		&Route{ID: "item.preview", Method: "GET", Path: "/v1/items/{id}/preview", Handler: echoParams("id")},
		&Route{ID: "item.special", Method: "GET", Path: "/v1/items/special", Handler: echoParams()},
		&Route{ID: "item.create", Method: "POST", Path: "/v1/items", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				http.Error(w, "too big", http.StatusRequestEntityTooLarge)
				return
			}
			w.WriteHeader(201)
		})},
		&Route{ID: "boom", Method: "GET", Path: "/v1/boom", Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("kaboom") })},
	)
	tests := []struct {
		name, method, target, body string
		status                     int
		want                       string
		allow                      string
	}{
		{"param", "GET", "/v1/items/abc", "", 200, `{"id":"abc"}`, ""},
		{"escaped param", "GET", "/v1/items/a%2Fb", "", 200, `{"id":"a/b"}`, ""},
		{"prefix", "GET", "/svc/v1/items/x1", "", 200, `{"id":"x1"}`, ""},
		{"alias", "GET", "/v1/legacy/s/items/x2", "", 200, `{"id":"x2"}`, ""},
		{"literal beats param", "GET", "/v1/items/special", "", 200, `{}`, ""},
		{"nested", "GET", "/v1/items/q/preview", "", 200, `{"id":"q"}`, ""},
		{"unknown", "GET", "/v1/nope", "", 404, `{"detail":"Not Found"}`, ""},
		{"empty param", "GET", "/v1/items/", "", 404, `{"detail":"Not Found"}`, ""},
		{"wrong method", "DELETE", "/v1/items/abc", "", 405, `{"detail":"Method Not Allowed"}`, "GET, HEAD"},
		{"wrong method post", "GET", "/v1/items", "", 405, `{"detail":"Method Not Allowed"}`, "POST"},
		{"head", "HEAD", "/v1/items/abc", "", 200, ``, ""},
		{"too large", "POST", "/v1/items", strings.Repeat("x", 65), 413, `{"detail":"Request body too large"}`, ""},
		{"fits", "POST", "/v1/items", strings.Repeat("x", 64), 201, ``, ""},
		{"panic", "GET", "/v1/boom", "", 500, `{"detail":"Internal Server Error"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, h, tc.method, tc.target, tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d (body %s)", rec.Code, tc.status, rec.Body)
			}
			if got := strings.TrimSpace(rec.Body.String()); tc.method != "HEAD" && got != tc.want {
				t.Fatalf("body %s, want %s", got, tc.want)
			}
			if got := rec.Header().Get("Allow"); got != tc.allow {
				t.Fatalf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
}

func TestTrailingSlashRedirects(t *testing.T) {
	h := testHandler(t, &Route{ID: "x", Method: "GET", Path: "/v1/things", Handler: echoParams()})
	rec := do(t, h, "GET", "/v1/things/?a=1", "")
	if rec.Code != http.StatusTemporaryRedirect || rec.Header().Get("Location") != "/v1/things?a=1" {
		t.Fatalf("got %d %q", rec.Code, rec.Header().Get("Location"))
	}
}

func TestDuplicateRouteRejected(t *testing.T) {
	rt := &router{}
	r := &Route{ID: "a", Method: "GET", Path: "/x", Handler: echoParams()}
	if err := rt.add("GET", "/x", r); err != nil {
		t.Fatal(err)
	}
	if err := rt.add("GET", "/x", r); err == nil {
		t.Fatal("duplicate accepted")
	}
}

func TestHealthAndCapabilities(t *testing.T) {
	s, err := New(Config{Service: "assay-test"})
	if err != nil {
		t.Fatal(err)
	}
	rec := do(t, s, "GET", "/healthz", "")
	if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != `{"status":"ok"}` {
		t.Fatalf("healthz: %d %s", rec.Code, rec.Body)
	}
	rec = do(t, s, "GET", "/v1/capabilities", "")
	if rec.Code != 200 {
		t.Fatalf("capabilities: %d", rec.Code)
	}
	var got struct {
		Service      string
		Version      string
		Capabilities []map[string]string
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Service != "assay-test" || got.Version != Version {
		t.Fatalf("service/version: %+v", got)
	}
	// Every route of the table, and nothing else, is listed.
	var ids []string
	for _, c := range got.Capabilities {
		ids = append(ids, c["id"])
		for _, k := range []string{"id", "summary", "status", "method", "path"} {
			if c[k] == "" {
				t.Errorf("capability %v lacks %s", c, k)
			}
		}
	}
	var want []string
	for _, r := range s.Routes() {
		want = append(want, r.ID)
	}
	if diff := cmp.Diff(len(want), len(ids)); diff != "" {
		t.Fatalf("capabilities count (-want +got):\n%s", diff)
	}
}

// TestRequestLogging: every request is logged once with method, path,
// route id, status, size and duration; a panic is logged with its value
// and stack before the 500 line.
func TestRequestLogging(t *testing.T) {
	var buf bytes.Buffer
	s, err := New(Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	rt := &router{maxBody: s.cfg.MaxBodyBytes}
	s.routes = append(s.routes, &Route{ID: "boom", Method: "GET", Path: "/v1/boom",
		Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("kaboom") })})
	for _, r := range s.routes {
		for _, p := range r.Patterns() {
			if err := rt.add(r.Method, p, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := s.observe(s.cors(rt))
	do(t, h, "GET", "/healthz", "")
	do(t, h, "POST", "/v1/nope?x=1", "{}")
	do(t, h, "GET", "/v1/boom", "")

	var lines []map[string]any
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var l map[string]any
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("log is not JSON lines: %v\n%s", err, buf.String())
		}
		lines = append(lines, l)
	}
	if len(lines) != 4 {
		t.Fatalf("%d log lines, want 4 (three requests and a panic):\n%v", len(lines), lines)
	}
	// The fields compared exactly; duration and stack are only checked to
	// be there.
	pick := func(l map[string]any, keys ...string) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			if v, ok := l[k]; ok {
				out[k] = v
			}
		}
		return out
	}
	req := []string{"level", "msg", "method", "path", "route", "status", "bytes"}
	wantReq := []map[string]any{
		{"level": "INFO", "msg": "request", "method": "GET", "path": "/healthz", "route": "health.live", "status": 200.0, "bytes": 15.0},
		{"level": "INFO", "msg": "request", "method": "POST", "path": "/v1/nope", "route": "", "status": 404.0, "bytes": 22.0},
	}
	for i, w := range wantReq {
		if diff := cmp.Diff(w, pick(lines[i], req...)); diff != "" {
			t.Errorf("request line %d (-want +got):\n%s", i, diff)
		}
		if _, ok := lines[i]["duration"].(float64); !ok {
			t.Errorf("request line %d has no duration: %v", i, lines[i])
		}
	}
	wantPanic := map[string]any{"level": "ERROR", "msg": "panic serving request", "method": "GET", "path": "/v1/boom", "panic": "kaboom"}
	if diff := cmp.Diff(wantPanic, pick(lines[2], "level", "msg", "method", "path", "panic")); diff != "" {
		t.Errorf("panic line (-want +got):\n%s", diff)
	}
	if st, _ := lines[2]["stack"].(string); !strings.Contains(st, "TestRequestLogging") {
		t.Errorf("panic line without the stack: %v", lines[2]["stack"])
	}
	wantAfter := map[string]any{"level": "INFO", "msg": "request", "method": "GET", "path": "/v1/boom", "route": "boom", "status": 500.0}
	if diff := cmp.Diff(wantAfter, pick(lines[3], "level", "msg", "method", "path", "route", "status")); diff != "" {
		t.Errorf("request line after the panic (-want +got):\n%s", diff)
	}
}

func TestCORS(t *testing.T) {
	s, _ := New(Config{})
	rec := do(t, s, "OPTIONS", "/healthz", "", "Origin", "https://a.example", "Access-Control-Request-Method", "GET",
		"Access-Control-Request-Headers", "payment-signature")
	if rec.Code != 204 || rec.Header().Get("Access-Control-Allow-Headers") != "payment-signature" {
		t.Fatalf("preflight: %d %v", rec.Code, rec.Header())
	}
	rec = do(t, s, "GET", "/healthz", "", "Origin", "https://a.example")
	if !strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "PAYMENT-REQUIRED") {
		t.Fatalf("expose headers missing: %v", rec.Header())
	}
	s2, _ := New(Config{CORSOrigins: []string{"https://ok.example"}})
	rec = do(t, s2, "GET", "/healthz", "", "Origin", "https://evil.example")
	if rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("foreign origin allowed")
	}
}

func TestAdminGuard(t *testing.T) {
	for _, tc := range []struct {
		key, hdr string
		status   int
	}{
		{"", "Bearer x", 403},
		{"secret", "", 401},
		{"secret", "Bearer wrong", 401},
		{"secret", "Bearer secret", 200},
	} {
		s := &Server{cfg: Config{AdminKey: tc.key}}
		h := s.requireAdmin(echoParams())
		rec := do(t, h, "GET", "/v1/admin/x", "", "Authorization", tc.hdr)
		if rec.Code != tc.status {
			t.Errorf("key %q header %q: %d, want %d", tc.key, tc.hdr, rec.Code, tc.status)
		}
	}
}

// TestMountedUnderStripPrefix: links and redirects keep the host's prefix
// when the handler is mounted with http.StripPrefix.
func TestMountedUnderStripPrefix(t *testing.T) {
	h := testHandler(t, &Route{ID: "x", Method: "GET", Path: "/v1/things", Handler: echoParams()})
	mounted := http.StripPrefix("/api", h)
	rec := do(t, mounted, "GET", "/api/v1/things/?a=1", "")
	if rec.Code != http.StatusTemporaryRedirect || rec.Header().Get("Location") != "/api/v1/things?a=1" {
		t.Fatalf("got %d %q", rec.Code, rec.Header().Get("Location"))
	}
	req := httptest.NewRequest("GET", "/api/v1/x/y", nil)
	req.URL.Path = "/v1/x/y" // what StripPrefix hands on
	if got := httpjson.ExternalPath(req); got != "/api/v1/x/y" {
		t.Fatalf("externalPath = %q", got)
	}
	req = httptest.NewRequest("GET", "/v1/x/y", nil)
	if got := httpjson.ExternalPath(req); got != "/v1/x/y" {
		t.Fatalf("externalPath without prefix = %q", got)
	}
}

// TestParamsThatNameNothing: NUL or invalid UTF-8 in a path parameter names
// no resource (and must never reach a database as text).
func TestParamsThatNameNothing(t *testing.T) {
	h := testHandler(t, &Route{ID: "item.get", Method: "GET", Path: "/v1/items/{id}", Handler: echoParams("id")})
	for _, p := range []string{"/v1/items/%00", "/v1/items/a%00b", "/v1/items/%ff%fe"} {
		if rec := do(t, h, "GET", p, ""); rec.Code != 404 || strings.TrimSpace(rec.Body.String()) != `{"detail":"Not Found"}` {
			t.Errorf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	if rec := do(t, h, "GET", "/v1/items/%C3%A9t%C3%A9", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), "été") {
		t.Errorf("valid UTF-8 id refused: %d %s", rec.Code, rec.Body)
	}
}

// TestPrefixMountKeepsEveryRoute: a host that mounts the handler under its
// services' prefix (mux.Handle("/api/", h), services at Prefix "/api")
// finds every route under it, the server-wide ones included.
func TestPrefixMountKeepsEveryRoute(t *testing.T) {
	db := emptyDB.Open(t, nil)
	eng, err := claims.New(nil, claimsstore.New(db), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Paywall: httpgate.Free{}, Claims: ClaimsConfig{Engine: eng, Prefix: "/api"}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", s)
	for _, p := range []string{"/api/healthz", "/api/readyz", "/api/v1/capabilities"} {
		if rec := do(t, mux, "GET", p, ""); rec.Code != http.StatusOK {
			t.Errorf("GET %s under the mount: %d %s", p, rec.Code, rec.Body)
		}
	}
	rec := do(t, mux, "GET", "/api/v1/capabilities", "")
	var caps shapes.CapabilitiesResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &caps); err != nil {
		t.Fatal(err)
	}
	for _, c := range caps.Capabilities {
		r := routeByID(s, c.ID)
		if r == nil {
			t.Fatalf("capability %s has no route", c.ID)
		}
		under := false
		for _, p := range r.Patterns() {
			under = under || strings.HasPrefix(p, "/api/")
		}
		if !under {
			t.Errorf("route %s is not served under /api: %v", c.ID, r.Patterns())
		}
	}
}

func routeByID(s *Server, id string) *Route {
	for _, r := range s.Routes() {
		if r.ID == id {
			return r
		}
	}
	return nil
}
