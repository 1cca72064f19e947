package corpus

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/snapshot"
)

func serveDemo(t *testing.T) (*Collection, *LoopbackServer) {
	t.Helper()
	c, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Serve(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return c, s
}

// get sends a real HTTP request to the loopback listener with the given
// Host header, the way a capturer dialling the mapped address does.
func get(t *testing.T, s *LoopbackServer, method, host, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+s.Addr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestLoopbackServesByHost(t *testing.T) {
	_, s := serveDemo(t)
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Fatalf("listening on %s, not loopback", s.Addr())
	}
	resp, body := get(t, s, http.MethodGet, "docs.base.example", "/network-information")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !strings.Contains(body, "<p>Base Mainnet uses chain ID 8453. The native gas token is ETH") {
		t.Errorf("page lacks the text:\n%s", body)
	}
	// The same path on another host is another document (or none).
	if resp, _ := get(t, s, http.MethodGet, "blog.base.example", "/network-information"); resp.StatusCode != 404 {
		t.Errorf("wrong host: status %d", resp.StatusCode)
	}
	// Host with the default port and upper case.
	if resp, _ := get(t, s, http.MethodGet, "DOCS.base.example:80", "/network-information"); resp.StatusCode != 200 {
		t.Errorf("host with port: status %d", resp.StatusCode)
	}
	// Canonicalised forms: "www." dropped or added, trailing slash.
	for _, hp := range [][2]string{{"rfc-archive.example", "/rfc/rfc9110"}, {"www.docs.base.example", "/network-information/"}} {
		if resp, _ := get(t, s, http.MethodGet, hp[0], hp[1]); resp.StatusCode != 200 {
			t.Errorf("%s%s: status %d", hp[0], hp[1], resp.StatusCode)
		}
	}
	// A path with parentheses (escaped form) and the HTML document.
	if resp, body := get(t, s, http.MethodGet, "wiki.openledger.example", "/wiki/Base_(blockchain)"); resp.StatusCode != 200 || !strings.Contains(body, "The Base mainnet chain ID is 8453.") {
		t.Errorf("wiki page: status %d", resp.StatusCode)
	}
	if resp, body := get(t, s, http.MethodGet, "chainregistry.example", "/chains/8453"); resp.StatusCode != 200 || !strings.Contains(body, "<script>") {
		t.Errorf("HTML document not served as written: %d", resp.StatusCode)
	}
	if resp, body := get(t, s, http.MethodHead, "docs.base.example", "/network-information"); resp.StatusCode != 200 || body != "" || resp.ContentLength <= 0 {
		t.Errorf("HEAD: status %d, body %q, length %d", resp.StatusCode, body, resp.ContentLength)
	}
	if resp, _ := get(t, s, http.MethodPost, "docs.base.example", "/network-information"); resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d", resp.StatusCode)
	}
	if resp, _ := get(t, s, http.MethodGet, "unknown.example", "/"); resp.StatusCode != 404 {
		t.Errorf("unknown host: status %d", resp.StatusCode)
	}
	if resp, body := get(t, s, http.MethodGet, s.Addr(), "/"); resp.StatusCode != 200 || !strings.Contains(body, "http://docs.base.example/network-information") {
		t.Errorf("index: status %d", resp.StatusCode)
	}
}

func TestLoopbackHostMap(t *testing.T) {
	c, s := serveDemo(t)
	m := s.HostMap()
	if len(m) != 2*len(c.Hosts()) {
		t.Errorf("host map has %d entries for %d hosts", len(m), len(c.Hosts()))
	}
	if m["docs.base.example:80"] != s.Addr() || m["www.docs.base.example:80"] != s.Addr() ||
		m["www.rfc-archive.example:80"] != s.Addr() || m["rfc-archive.example:80"] != s.Addr() {
		t.Errorf("host map = %v", m)
	}
	if d := cmp.Diff([]string{s.Addr()}, s.AllowList()); d != "" {
		t.Errorf("allow list: %s", d)
	}
	if s.URL() != "http://"+s.Addr() {
		t.Errorf("URL = %s", s.URL())
	}
}

// TestExcerptsAreCapturable runs verifications and fetches every evidence
// URL over loopback, as the snapshot capturer does with HostMap and
// AllowList, then checks each excerpt against the captured text with
// snapshot.Snapshot.Contains.
func TestExcerptsAreCapturable(t *testing.T) {
	c, s := serveDemo(t)
	p, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := s.Client()
	checked := 0
	for _, tc := range demoClaims {
		r, err := p.Search(context.Background(), tierQuery(claims.Research, tc.claim))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Analysis.Evidence {
			resp, err := client.Get(e.URL)
			if err != nil {
				t.Fatalf("GET %s: %v", e.URL, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: status %d", e.URL, resp.StatusCode)
			}
			snap := &snapshot.Snapshot{Status: snapshot.StatusCaptured, Text: visibleText(t, body)}
			if !snap.Contains(e.Excerpt) {
				t.Errorf("excerpt %q not found in the capture of %s", e.Excerpt, e.URL)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Errorf("only %d excerpts checked", checked)
	}
	if _, err := client.Get("http://not-in-corpus.example/"); err == nil {
		t.Error("the client reached a host outside the corpus")
	}
}

func TestLoopbackClose(t *testing.T) {
	c, _ := Demo()
	s, err := Serve(c)
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Error("server still accepts connections after Close")
	}
	if _, err := Serve(nil); err == nil {
		t.Error("Serve(nil) succeeded")
	}
}

// TestHandlerIsPlain checks the handler works mounted anywhere.
func TestHandlerIsPlain(t *testing.T) {
	c, _ := Demo()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://www.health-agency.example/fact-sheets/salt-reduction", nil)
	c.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Adults should consume less than 5 grams of salt per day") {
		t.Errorf("status %d", rec.Code)
	}
	if rec.Header().Get("Last-Modified") != "Thu, 14 Sep 2023 00:00:00 GMT" {
		t.Errorf("Last-Modified = %q", rec.Header().Get("Last-Modified"))
	}
}
