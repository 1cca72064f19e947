package snapshot_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
)

// countingServer is a loopback server that counts the connections it
// accepts, so a test can prove that none was made.
type countingServer struct {
	*httptest.Server
	conns atomic.Int64
}

func newCountingServer(t *testing.T, h http.Handler) *countingServer {
	t.Helper()
	cs := &countingServer{}
	cs.Server = httptest.NewUnstartedServer(h)
	cs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			cs.conns.Add(1)
		}
	}
	cs.Start()
	t.Cleanup(cs.Close)
	return cs
}

func (cs *countingServer) port() int {
	_, p, _ := net.SplitHostPort(cs.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}

func (cs *countingServer) addr() string { return cs.Listener.Addr().String() }

// capturer builds a capturer whose resolver and tripwire keep every test
// on loopback. The options are completed, not replaced.
func capturer(t *testing.T, o snapshot.Options) (*snapshot.Capturer, *snapshottest.Tripwire) {
	t.Helper()
	tw := &snapshottest.Tripwire{}
	if o.Resolver == nil {
		o.Resolver = snapshottest.Resolver(nil)
	}
	o.DialControl = tw.Control
	if o.RetryWaitMin == 0 {
		o.RetryWaitMin = 5 * time.Millisecond
	}
	if o.RetryWaitMax == 0 {
		o.RetryWaitMax = 20 * time.Millisecond
	}
	o.SpoolDir = t.TempDir()
	c, err := snapshot.NewCapturer(&o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	t.Cleanup(func() {
		if d := tw.Denied(); len(d) > 0 {
			t.Errorf("the capturer let non-loopback dials through its check: %v", d)
		}
	})
	return c, tw
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestBlockedNeverConnects(t *testing.T) {
	target := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secret")
	}))
	p := target.port()
	// An allowed server that redirects wherever ?to= says.
	redirector := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	resolver := snapshottest.Resolver(map[string][]string{
		"loop.test":     {"127.0.0.1"},
		"loop6.test":    {"::1"},
		"private.test":  {"10.1.2.3"},
		"metadata.test": {"169.254.169.254"},
		"cgnat.test":    {"100.100.100.200"},
		"mixed.test":    {"10.0.0.7", "192.168.0.7"},
		"ula.test":      {"fd00:ec2::254"},
	})
	c, tw := capturer(t, snapshot.Options{
		Resolver:     resolver,
		AllowedPorts: []int{80, 443, p},
		AllowAddrs:   []string{redirector.addr()},
	})
	via := func(to string) string { return redirector.URL + "/r?to=" + url.QueryEscape(to) }
	tests := []struct {
		url, reason string
	}{
		{fmt.Sprintf("http://127.0.0.1:%d/", p), "loopback"},
		{fmt.Sprintf("http://127.1:%d/", p), "loopback"},
		{fmt.Sprintf("http://2130706433:%d/", p), "loopback"},
		{fmt.Sprintf("http://0x7f.1:%d/", p), "loopback"},
		{fmt.Sprintf("http://0x7F000001:%d/", p), "loopback"},
		{fmt.Sprintf("http://0177.0.0.1:%d/", p), "loopback"},
		{fmt.Sprintf("http://127.0.0.1.:%d/", p), "loopback"},
		{fmt.Sprintf("http://[::1]:%d/", p), "loopback (::1)"},
		{fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", p), "IPv4-mapped"},
		{fmt.Sprintf("http://[::ffff:7f00:1]:%d/", p), "IPv4-mapped"},
		{fmt.Sprintf("http://localhost:%d/", p), "loopback name"},
		{fmt.Sprintf("http://LOCALHOST.:%d/", p), "loopback name"},
		{fmt.Sprintf("http://api.localhost:%d/", p), "loopback name"},
		{fmt.Sprintf("http://loop.test:%d/", p), "address 127.0.0.1 is loopback"},
		{fmt.Sprintf("http://loop6.test:%d/", p), "address ::1 is loopback"},
		{"http://private.test/", "address 10.1.2.3 is private"},
		{"http://metadata.test/latest/meta-data/", "cloud metadata"},
		{"http://cgnat.test/", "CGNAT"},
		{"http://mixed.test/", "private"},
		{"http://ula.test/", "unique local"},
		{"http://169.254.169.254/latest/meta-data/", "link-local"},
		{"http://10.0.0.1/", "private"},
		{"http://172.16.5.4/", "private"},
		{"http://192.168.1.1/", "private"},
		{"http://100.64.0.1/", "CGNAT"},
		{"http://0.0.0.0/", "this network"},
		{"http://0/", "this network"},
		{"http://224.0.0.251/", "multicast"},
		{"http://255.255.255.255/", "reserved"},
		{"http://192.0.2.10/", "documentation"},
		{"http://198.51.100.1/", "documentation"},
		{"http://203.0.113.9/", "documentation"},
		{"http://198.18.0.1/", "benchmarking"},
		{"http://192.0.0.192/", "IETF protocol assignments"},
		{"http://168.63.129.16/", "cloud metadata"},
		{"http://[::]/", "unspecified"},
		{"http://[fe80::1]/", "link-local"},
		{"http://[fe80::1%25eth0]/", "zones"},
		{"http://[fc00::1]/", "unique local"},
		{"http://[ff02::1]/", "multicast"},
		{"http://[64:ff9b::7f00:1]/", "NAT64"},
		{"http://[64:ff9b:1::a00:1]/", "NAT64"},
		{"http://[2001:db8::1]/", "documentation"},
		{"http://[2002:7f00:1::]/", "6to4"},
		{"http://[2001::1]/", "IETF protocol assignments"},
		{"http://[::127.0.0.1]/", "IPv4-compatible"},
		{"http://[100::1]/", "discard-only"},
		{"http://1.2.3.4.5/", "invalid IPv4"},
		{"http://256.1.1.1/", "invalid IPv4"},
		{"http://example.test:8080/", "port 8080 is not allowed"},
		{"https://example.test:22/", "port 22 is not allowed"},
		{"ftp://example.test/file", `scheme "ftp"`},
		{"file:///etc/passwd", `scheme "file"`},
		{"gopher://example.test/", `scheme "gopher"`},
		{"javascript:alert(1)", `scheme "javascript"`},
		{"//example.test/", "not absolute"},
		{"http://user:pass@example.test/", "user information"},
		{fmt.Sprintf("http://user@127.0.0.1:%d/", p), "user information"},
		{"http://%zz/", "malformed"},
		{via(fmt.Sprintf("http://127.0.0.1:%d/", p)), "redirect to http://127.0.0.1:"},
		{via(fmt.Sprintf("http://2130706433:%d/", p)), "is loopback"},
		{via(fmt.Sprintf("http://loop.test:%d/", p)), "address 127.0.0.1 is loopback"},
		{via("http://metadata.test/"), "cloud metadata"},
		{via("http://example.test:8080/"), "port 8080"},
		{via("ftp://example.test/"), `scheme "ftp"`},
		{via("http://u:p@example.test/"), "user information"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			tw.Reset()
			s, err := c.Capture(context.Background(), tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if s.Status != snapshot.StatusBlocked || !strings.Contains(str(s.FailureReason), tc.reason) {
				t.Fatalf("status %s, reason %q; want blocked with %q", s.Status, str(s.FailureReason), tc.reason)
			}
			if s.RawSHA256 != nil || s.Text != "" {
				t.Fatal("a blocked capture has content")
			}
			for _, d := range tw.Dialed() {
				if d != redirector.addr() {
					t.Fatalf("dialled %s", d)
				}
			}
			// finalUrl is the URL whose response the record describes: the
			// redirecting hop for a refused redirect, none when nothing
			// answered.
			if strings.HasPrefix(tc.url, redirector.URL) {
				if s.HTTPStatus == nil || *s.HTTPStatus != 302 || str(s.FinalURL) != tc.url {
					t.Fatalf("refused redirect: httpStatus %v finalUrl %s, want 302 %s", s.HTTPStatus, str(s.FinalURL), tc.url)
				}
			} else if s.FinalURL != nil || s.HTTPStatus != nil {
				t.Fatalf("refused request: finalUrl %s httpStatus %v, want null", str(s.FinalURL), s.HTTPStatus)
			}
		})
	}
	if n := target.conns.Load(); n != 0 {
		t.Fatalf("the forbidden loopback server accepted %d connections", n)
	}
}

func TestAllowListAndHostMap(t *testing.T) {
	var gotHost atomic.Value
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHost.Store(r.Host)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<title>Docs</title><p>Base mainnet chain id is 8453.</p>")
	}))
	ctx := context.Background()

	// Without the allow-list the mapped loopback address is refused.
	c, _ := capturer(t, snapshot.Options{HostMap: map[string]string{"docs.example.org:80": srv.addr()}})
	s, err := c.Capture(ctx, "http://docs.example.org/page")
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != snapshot.StatusBlocked || !strings.Contains(str(s.FailureReason), "loopback") {
		t.Fatalf("host map without allow-list: %s %q", s.Status, str(s.FailureReason))
	}
	if srv.conns.Load() != 0 {
		t.Fatal("connected without being allowed")
	}

	c, tw := capturer(t, snapshot.Options{
		HostMap:    map[string]string{"Docs.Example.org:80": srv.addr()},
		AllowAddrs: []string{srv.addr()},
	})
	s, err = c.Capture(ctx, "http://docs.example.org/page")
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != snapshot.StatusCaptured {
		t.Fatalf("status %s (%s)", s.Status, str(s.FailureReason))
	}
	if got := gotHost.Load(); got != "docs.example.org" {
		t.Fatalf("Host header %v", got)
	}
	if str(s.FinalURL) != "http://docs.example.org/page" || s.Exchange == nil || s.Exchange.RemoteAddr != srv.addr() {
		t.Fatalf("finalUrl %s exchange %+v", str(s.FinalURL), s.Exchange)
	}
	if !s.Contains("chain id is 8453") || s.Contains("chain id is 84530") {
		t.Fatalf("text %q", s.Text)
	}
	if d := tw.Dialed(); len(d) != 1 || d[0] != srv.addr() {
		t.Fatalf("dialled %v", d)
	}
	// An unmapped name that is not in the resolver fails without dialling.
	s, _ = c.Capture(ctx, "http://other.example.org/")
	if s.Status != snapshot.StatusFailed || !strings.Contains(str(s.FailureReason), "no such host") {
		t.Fatalf("unknown host: %s %q", s.Status, str(s.FailureReason))
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []snapshot.Options{
		{AllowAddrs: []string{"localhost:80"}},
		{AllowAddrs: []string{"127.0.0.1"}},
		{HostMap: map[string]string{"docs.example.org": "127.0.0.1:1"}},
		{HostMap: map[string]string{"docs.example.org:80": "127.0.0.1"}},
		{AllowedPorts: []int{0}},
		{ContentTypes: []string{"html"}},
	} {
		if _, err := snapshot.NewCapturer(&o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestProxyFromEnvironmentIgnored(t *testing.T) {
	proxy := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "from the proxy")
	}))
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	origin := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "from the origin")
	}))
	c, _ := capturer(t, snapshot.Options{
		HostMap:    map[string]string{"origin.test:80": origin.addr()},
		AllowAddrs: []string{origin.addr()},
	})
	s, err := c.Capture(context.Background(), "http://origin.test/")
	if err != nil || s.Status != snapshot.StatusCaptured || s.Text != "from the origin" {
		t.Fatalf("%v %s %q", err, s.Status, s.Text)
	}
	if proxy.conns.Load() != 0 {
		t.Fatal("the environment's proxy was used")
	}
}

// serve starts an allowed loopback server for h and returns a capturer
// that may reach it and its base URL.
func serve(t *testing.T, h http.Handler, o snapshot.Options) (*snapshot.Capturer, string) {
	t.Helper()
	srv := newCountingServer(t, h)
	o.AllowAddrs = append(o.AllowAddrs, srv.addr())
	c, _ := capturer(t, o)
	return c, srv.URL
}

func TestCaptureOutcomes(t *testing.T) {
	page := "<html><head><title>T</title><script>x()</script></head><body><p>Hello&nbsp;<b>wor</b>ld</p></body></html>"
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	zl := func(s string) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	br := func(s string) []byte {
		var b bytes.Buffer
		w := brotli.NewWriter(&b)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	mux := http.NewServeMux()
	var seenUA, seenAccept, seenAE atomic.Value
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		seenUA.Store(r.UserAgent())
		seenAccept.Store(r.Header.Get("Accept"))
		seenAE.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	encoded := func(enc string, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Encoding", enc)
			w.Write(body)
		}
	}
	mux.Handle("/gzip", encoded("gzip", gz(page)))
	mux.Handle("/deflate", encoded("deflate", zl(page)))
	mux.Handle("/br", encoded("br", br(page)))
	mux.Handle("/zstd", encoded("zstd", []byte("whatever")))
	mux.Handle("/badgzip", encoded("gzip", []byte("not gzip at all")))
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/sniff", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no type at all
		io.WriteString(w, "<!DOCTYPE html><p>sniffed</p>")
	})
	mux.HandleFunc("/pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		io.WriteString(w, "%PDF-1.4 fake")
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "2000")
		w.Write(bytes.Repeat([]byte("a"), 2000))
	})
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/b", http.StatusMovedPermanently) })
	mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/page#frag", http.StatusSeeOther) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	c, base := serve(t, mux, snapshot.Options{MaxBytes: 1000, UserAgent: "assay-test/1"})

	want := func(path string, st snapshot.Status, reason string) *snapshot.Snapshot {
		t.Helper()
		s, err := c.Capture(context.Background(), base+path)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != st || !strings.Contains(str(s.FailureReason), reason) {
			t.Fatalf("%s: status %s reason %q, want %s %q", path, s.Status, str(s.FailureReason), st, reason)
		}
		return s
	}
	plain := want("/page", snapshot.StatusCaptured, "<nil>")
	if seenUA.Load() != "assay-test/1" || seenAE.Load() != "gzip, deflate, br" || !strings.Contains(seenAccept.Load().(string), "text/html") {
		t.Fatalf("request headers: UA %v, AE %v, Accept %v", seenUA.Load(), seenAE.Load(), seenAccept.Load())
	}
	if plain.Text != "T Hello world" {
		t.Fatalf("text %q", plain.Text)
	}
	if str(plain.RawSHA256) != snapshot.RawSHA256([]byte(page)) || *plain.ContentLength != int64(len(page)) || *plain.HTTPStatus != 200 {
		t.Fatalf("record %+v", plain)
	}
	if plain.RetrievedAt.IsZero() || plain.RetrievedAt.Location() != time.UTC || plain.Normalization != snapshot.NormalizationVersion || plain.Charset != "utf-8" {
		t.Fatalf("record %+v", plain)
	}
	for _, enc := range []string{"/gzip", "/deflate", "/br"} {
		s := want(enc, snapshot.StatusCaptured, "<nil>")
		if diff := cmp.Diff([]string{str(plain.RawSHA256), str(plain.NormalizedSHA256), plain.Text},
			[]string{str(s.RawSHA256), str(s.NormalizedSHA256), s.Text}); diff != "" {
			t.Fatalf("%s: decoded content differs from identity (-identity +%s):\n%s", enc, enc, diff)
		}
	}
	want("/zstd", snapshot.StatusUnsupported, `content encoding "zstd"`)
	want("/badgzip", snapshot.StatusUnsupported, "gzip content is corrupt")
	png := want("/png", snapshot.StatusUnsupported, `content type "image/png"`)
	if str(png.ContentType) != "image/png" || png.RawSHA256 != nil {
		t.Fatalf("png record %+v", png)
	}
	sn := want("/sniff", snapshot.StatusCaptured, "<nil>")
	if !strings.HasPrefix(str(sn.ContentType), "text/html") || sn.Text != "sniffed" {
		t.Fatalf("sniffed %q %q", str(sn.ContentType), sn.Text)
	}
	pdf := want("/pdf", snapshot.StatusCaptured, "<nil>")
	if pdf.RawSHA256 == nil || pdf.NormalizedSHA256 != nil || pdf.Text != "" {
		t.Fatalf("pdf record %+v", pdf)
	}
	nf := want("/missing", snapshot.StatusFailed, "HTTP 404 Not Found")
	if *nf.HTTPStatus != 404 {
		t.Fatal(nf.HTTPStatus)
	}
	big := want("/big", snapshot.StatusTooLarge, "declared length 2000 exceeds the limit of 1000 bytes")
	if big.ContentLength == nil || *big.ContentLength != 2000 {
		t.Fatalf("too large contentLength %v", big.ContentLength)
	}
	red := want("/a", snapshot.StatusCaptured, "<nil>")
	if str(red.FinalURL) != base+"/page" || red.Text != plain.Text {
		t.Fatalf("redirect: finalUrl %s", str(red.FinalURL))
	}
	want("/loop", snapshot.StatusFailed, "too many redirects (limit 5)")
}

// TestTooLargeStreamsAndStops: a body without Content-Length that is far
// larger than the limit ends as too_large after about the limit has been
// read; the server is not drained.
func TestTooLargeStreamsAndStops(t *testing.T) {
	var sent atomic.Int64
	done := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "text/plain")
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for range 1600 { // 100 MiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
			sent.Add(int64(len(chunk)))
		}
	})
	c, base := serve(t, h, snapshot.Options{MaxBytes: 1 << 20})
	s, err := c.Capture(context.Background(), base+"/")
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != snapshot.StatusTooLarge || s.ContentLength != nil || s.RawSHA256 != nil {
		t.Fatalf("record %+v (%s)", s, str(s.FailureReason))
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("server still writing")
	}
	if n := sent.Load(); n > 20<<20 {
		t.Fatalf("server sent %d bytes before the capturer hung up", n)
	}
}

func TestRetries(t *testing.T) {
	var n503, n429, nReset, n404, n500 atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/503", func(w http.ResponseWriter, r *http.Request) {
		if n503.Add(1) < 3 {
			w.WriteHeader(503)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("/429", func(w http.ResponseWriter, r *http.Request) {
		if n429.Add(1) == 1 {
			w.Header().Set("Retry-After", "3600") // capped by RetryWaitMax
			w.WriteHeader(429)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		if nReset.Add(1) == 1 {
			conn, _, _ := http.NewResponseController(w).Hijack()
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			conn.Close()
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("/404", func(w http.ResponseWriter, r *http.Request) { n404.Add(1); http.NotFound(w, r) })
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) { n500.Add(1); w.WriteHeader(500) })
	c, base := serve(t, mux, snapshot.Options{RetryWaitMax: 50 * time.Millisecond})
	ctx := context.Background()
	start := time.Now()
	for _, path := range []string{"/503", "/429", "/reset"} {
		s, err := c.Capture(ctx, base+path)
		if err != nil || s.Status != snapshot.StatusCaptured || s.Text != "ok" {
			t.Fatalf("%s: %v %s %q", path, err, s.Status, str(s.FailureReason))
		}
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("Retry-After was not capped: %s", time.Since(start))
	}
	if n503.Load() != 3 || n429.Load() != 2 || nReset.Load() != 2 {
		t.Fatalf("attempts: 503 %d, 429 %d, reset %d", n503.Load(), n429.Load(), nReset.Load())
	}
	s, _ := c.Capture(ctx, base+"/404")
	if s.Status != snapshot.StatusFailed || n404.Load() != 1 {
		t.Fatalf("404 retried: %d", n404.Load())
	}
	s, _ = c.Capture(ctx, base+"/500")
	if s.Status != snapshot.StatusFailed || str(s.FailureReason) != "HTTP 500 Internal Server Error" || n500.Load() != 3 {
		t.Fatalf("500: %s %q after %d attempts", s.Status, str(s.FailureReason), n500.Load())
	}
}

// TestRetryRespectsDeadline: a Retry-After longer than what is left of the
// capture's time is not waited for; the 503 is reported.
func TestRetryRespectsDeadline(t *testing.T) {
	var n atomic.Int64
	c, base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(503)
	}), snapshot.Options{CaptureTimeout: 500 * time.Millisecond, RetryWaitMax: 5 * time.Second})
	s, _ := c.Capture(context.Background(), base+"/")
	if s.Status != snapshot.StatusFailed || !strings.HasPrefix(str(s.FailureReason), "HTTP 503") || n.Load() != 1 {
		t.Fatalf("%s %q after %d attempts", s.Status, str(s.FailureReason), n.Load())
	}
}

func TestTimeoutsAndBatch(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/fast/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "page "+strings.TrimPrefix(r.URL.Path, "/fast/"))
	})
	c, base := serve(t, mux, snapshot.Options{CaptureTimeout: 300 * time.Millisecond, BatchTimeout: 2 * time.Second})
	s, _ := c.Capture(context.Background(), base+"/slow")
	if s.Status != snapshot.StatusFailed || str(s.FailureReason) != "timed out after 300ms" {
		t.Fatalf("%s %q", s.Status, str(s.FailureReason))
	}

	c2, base2 := serve(t, mux, snapshot.Options{CaptureTimeout: 10 * time.Second, BatchTimeout: 400 * time.Millisecond})
	urls := []string{base2 + "/fast/1", base2 + "/slow", "ftp://x/", base2 + "/fast/2"}
	start := time.Now()
	got, err := c2.CaptureAll(context.Background(), urls)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("batch took %s", el)
	}
	var summary []string
	for i, s := range got {
		if s.RequestedURL != urls[i] {
			t.Fatalf("order: %d is %s", i, s.RequestedURL)
		}
		summary = append(summary, string(s.Status)+" "+str(s.FailureReason))
	}
	want := []string{"captured <nil>", "failed capture deadline exceeded", `blocked scheme "ftp" is not allowed (only http and https)`, "captured <nil>"}
	if diff := cmp.Diff(want, summary); diff != "" {
		t.Fatalf("batch (-want +got):\n%s", diff)
	}
	if got[0].ID == got[3].ID {
		t.Fatal("ids repeat")
	}
}

func TestHTTPS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "over TLS "+r.Proto)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted handshake below is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	// httptest's certificate is valid for example.com.
	o := snapshot.Options{
		HostMap:    map[string]string{"example.com:443": addr},
		AllowAddrs: []string{addr},
		TLSConfig:  srv.Client().Transport.(*http.Transport).TLSClientConfig,
	}
	c, _ := capturer(t, o)
	s, err := c.Capture(context.Background(), "https://example.com/x")
	if err != nil || s.Status != snapshot.StatusCaptured || !strings.HasPrefix(s.Text, "over TLS HTTP/") {
		t.Fatalf("%v %s %q %q", err, s.Status, str(s.FailureReason), s.Text)
	}
	// Without the test CA the certificate is not trusted: failed, not retried.
	o.TLSConfig = nil
	c2, _ := capturer(t, o)
	s, _ = c2.Capture(context.Background(), "https://example.com/x")
	if s.Status != snapshot.StatusFailed || !strings.Contains(str(s.FailureReason), "certificate") {
		t.Fatalf("%s %q", s.Status, str(s.FailureReason))
	}
}

// TestCaptureAllSameHostAtOnce: by default a batch whose URLs share one
// host has them all in flight together (not in rounds of a per-host
// limit); Options.MaxPerHost, when set, still bounds them. The server
// holds each request until all n have arrived, so the default case ends
// only if they were concurrent; there is no timing assertion.
func TestCaptureAllSameHostAtOnce(t *testing.T) {
	const n = 20
	var inFlight, peak atomic.Int64
	all := make(chan struct{})
	var allOnce sync.Once
	var wait atomic.Bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		if cur == n {
			allOnce.Do(func() { close(all) })
		}
		if wait.Load() {
			select {
			case <-all:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, r.URL.Path)
	})
	var urls []string
	for i := range n {
		urls = append(urls, fmt.Sprintf("/page/%d", i))
	}
	run := func(t *testing.T, o snapshot.Options) []*snapshot.Snapshot {
		t.Helper()
		peak.Store(0)
		srv := newCountingServer(t, h)
		o.AllowAddrs = []string{srv.addr()}
		o.BatchTimeout = 20 * time.Second // a guard against a hang, not a measurement
		c, _ := capturer(t, o)
		var full []string
		for _, u := range urls {
			full = append(full, srv.URL+u)
		}
		got, err := c.CaptureAll(context.Background(), full)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	t.Run("default", func(t *testing.T) {
		wait.Store(true)
		got := run(t, snapshot.Options{})
		for i, s := range got {
			if s.Status != snapshot.StatusCaptured || s.Text != urls[i] {
				t.Fatalf("%s: %s %q: the %d same-host captures were not all in flight together (peak %d)",
					urls[i], s.Status, str(s.FailureReason), n, peak.Load())
			}
		}
		if p := peak.Load(); p != n {
			t.Fatalf("peak %d requests in flight, want %d", p, n)
		}
	})
	t.Run("MaxPerHost", func(t *testing.T) {
		wait.Store(false)
		got := run(t, snapshot.Options{MaxPerHost: 4})
		for i, s := range got {
			if s.Status != snapshot.StatusCaptured || s.Text != urls[i] {
				t.Fatalf("%s: %s %q", urls[i], s.Status, str(s.FailureReason))
			}
		}
		if p := peak.Load(); p > 4 {
			t.Fatalf("peak %d requests in flight with MaxPerHost 4", p)
		}
	})
}

// TestFailedCaptureKeepsIdleConnections: go-retryablehttp closes the
// client's idle connections whenever a request fails for good; the
// capturer's transport does not let that drop the keep-alive connections
// of other captures. Server a sees one connection for two captures with a
// blocked capture and an exhausted retry in between.
func TestFailedCaptureKeepsIdleConnections(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})
	a := newCountingServer(t, ok)
	b := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	c, _ := capturer(t, snapshot.Options{
		AllowAddrs: []string{a.addr(), b.addr()},
		Resolver:   snapshottest.Resolver(map[string][]string{"rebind.test": {"127.0.0.1"}}),
		Retries:    -1,
	})
	ctx := context.Background()
	steps := []struct {
		url    string
		status snapshot.Status
	}{
		{a.URL + "/1", snapshot.StatusCaptured},
		{"http://rebind.test/", snapshot.StatusBlocked}, // refused at connect time
		{b.URL + "/", snapshot.StatusFailed},            // a 503 with no retry left
		{a.URL + "/2", snapshot.StatusCaptured},
	}
	for _, st := range steps {
		s, err := c.Capture(ctx, st.url)
		if err != nil || s.Status != st.status {
			t.Fatalf("%s: %v %s %q, want %s", st.url, err, s.Status, str(s.FailureReason), st.status)
		}
	}
	if n := a.conns.Load(); n != 1 {
		t.Fatalf("server a accepted %d connections, want 1 (the idle one was closed by a failed capture)", n)
	}
}

// TestFinalURL pins finalUrl (package docs, "Record fields"): the URL whose
// response the record describes, null exactly when no response arrived.
func TestFinalURL(t *testing.T) {
	target := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secret")
	}))
	p := target.port()
	mux := http.NewServeMux()
	mux.HandleFunc("/r", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "landed")
	})
	redirector := newCountingServer(t, mux)
	// docs.test is the redirector under a name (dialled through HostMap).
	_, rport, _ := net.SplitHostPort(redirector.addr())
	named := "http://docs.test:" + rport
	c, _ := capturer(t, snapshot.Options{
		Resolver:     snapshottest.Resolver(map[string][]string{"loop.test": {"127.0.0.1"}}),
		AllowedPorts: []int{80, 443, p, redirector.port()},
		AllowAddrs:   []string{redirector.addr()},
		HostMap:      map[string]string{"docs.test:" + rport: redirector.addr()},
	})
	via := func(to string) string { return redirector.URL + "/r?to=" + url.QueryEscape(to) }
	tests := []struct {
		name, url string
		status    snapshot.Status
		final     string // "<nil>" for null
		http      int    // 0 for null
		reason    string
	}{
		{"requested URL refused by the URL check", fmt.Sprintf("http://127.0.0.1:%d/x", p),
			snapshot.StatusBlocked, "<nil>", 0, "address 127.0.0.1 is loopback"},
		{"requested URL refused at connect time", fmt.Sprintf("http://loop.test:%d/x", p),
			snapshot.StatusBlocked, "<nil>", 0, "address 127.0.0.1 is loopback"},
		{"requested URL not found in DNS", "http://nowhere.test/",
			snapshot.StatusFailed, "<nil>", 0, "DNS lookup failed for nowhere.test"},
		{"redirect target refused by the URL check", via(fmt.Sprintf("http://127.0.0.1:%d/x", p)),
			snapshot.StatusBlocked, via(fmt.Sprintf("http://127.0.0.1:%d/x", p)), 302,
			fmt.Sprintf("redirect to http://127.0.0.1:%d/x refused: address 127.0.0.1 is loopback", p)},
		{"redirect target refused at connect time", via(fmt.Sprintf("http://loop.test:%d/x", p)),
			snapshot.StatusBlocked, via(fmt.Sprintf("http://loop.test:%d/x", p)), 302,
			fmt.Sprintf("redirect to http://loop.test:%d/x refused: address 127.0.0.1 is loopback", p)},
		{"redirect target not found in DNS", via("http://nowhere.test/"),
			snapshot.StatusFailed, via("http://nowhere.test/"), 302,
			"redirect to http://nowhere.test/ failed: DNS lookup failed for nowhere.test"},
		{"allowed redirect", via(named + "/page#top"),
			snapshot.StatusCaptured, named + "/page", 200, "<nil>"},
		{"no redirect, fragment dropped", named + "/page#top",
			snapshot.StatusCaptured, named + "/page", 200, "<nil>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := c.Capture(context.Background(), tc.url)
			if err != nil {
				t.Fatal(err)
			}
			httpStatus := 0
			if s.HTTPStatus != nil {
				httpStatus = *s.HTTPStatus
			}
			if s.Status != tc.status || str(s.FinalURL) != tc.final || httpStatus != tc.http || !strings.HasPrefix(str(s.FailureReason), tc.reason) {
				t.Fatalf("got %s finalUrl %s httpStatus %d reason %q\nwant %s finalUrl %s httpStatus %d reason %q",
					s.Status, str(s.FinalURL), httpStatus, str(s.FailureReason), tc.status, tc.final, tc.http, tc.reason)
			}
		})
	}
	if n := target.conns.Load(); n != 0 {
		t.Fatalf("the forbidden server accepted %d connections", n)
	}
}
