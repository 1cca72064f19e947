package snapshot_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
)

// slowServers starts n loopback servers that answer after delay and
// returns a capturer allowed to reach them and their URLs.
func slowServers(b *testing.B, n int, delay time.Duration) (*snapshot.Capturer, []string) {
	b.Helper()
	var urls, allow []string
	for i := range n {
		srv := newBenchServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "page %d", i)
		}))
		urls = append(urls, srv.URL+"/")
		allow = append(allow, srv.Listener.Addr().String())
	}
	c, err := snapshot.NewCapturer(&snapshot.Options{AllowAddrs: allow, Resolver: snapshottest.Resolver(nil), SpoolDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c, urls
}

// slowSameHost starts one loopback server that answers every request
// after delay and returns a capturer allowed to reach it and n URLs on it.
func slowSameHost(b *testing.B, n int, delay time.Duration) (*snapshot.Capturer, []string) {
	b.Helper()
	srv := newBenchServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "page %s", r.URL.Path)
	}))
	var urls []string
	for i := range n {
		urls = append(urls, fmt.Sprintf("%s/page/%d", srv.URL, i))
	}
	c, err := snapshot.NewCapturer(&snapshot.Options{AllowAddrs: []string{srv.Listener.Addr().String()}, Resolver: snapshottest.Resolver(nil), SpoolDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c, urls
}

func BenchmarkCaptureAll20Slow(b *testing.B) {
	c, urls := slowServers(b, 20, 100*time.Millisecond)
	for b.Loop() {
		got, err := c.CaptureAll(context.Background(), urls)
		if err != nil || got[19].Status != snapshot.StatusCaptured {
			b.Fatal(err)
		}
	}
}

func BenchmarkCaptureSequential20Slow(b *testing.B) {
	c, urls := slowServers(b, 20, 100*time.Millisecond)
	for b.Loop() {
		for _, u := range urls {
			if s, err := c.Capture(context.Background(), u); err != nil || s.Status != snapshot.StatusCaptured {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCaptureAll20SlowSameHost: the 20 URLs share one host, which
// by default is no slower than 20 hosts (about one delay, not five rounds
// of four); compare with BenchmarkCaptureSequential20SlowSameHost.
func BenchmarkCaptureAll20SlowSameHost(b *testing.B) {
	c, urls := slowSameHost(b, 20, 100*time.Millisecond)
	for b.Loop() {
		got, err := c.CaptureAll(context.Background(), urls)
		if err != nil || got[19].Status != snapshot.StatusCaptured {
			b.Fatal(err)
		}
	}
}

func BenchmarkCaptureSequential20SlowSameHost(b *testing.B) {
	c, urls := slowSameHost(b, 20, 100*time.Millisecond)
	for b.Loop() {
		for _, u := range urls {
			if s, err := c.Capture(context.Background(), u); err != nil || s.Status != snapshot.StatusCaptured {
				b.Fatal(err)
			}
		}
	}
}

const benchBody = 4_900_000

func BenchmarkCapturePDF5MB(b *testing.B) {
	body := bytes.Repeat([]byte("%PDF-1.7 0123456789abcdef\n"), benchBody/26)
	srv := newBenchServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	c, err := snapshot.NewCapturer(&snapshot.Options{AllowAddrs: []string{srv.Listener.Addr().String()}, Resolver: snapshottest.Resolver(nil), SpoolDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if s, err := c.Capture(context.Background(), srv.URL+"/x.pdf"); err != nil || s.Status != snapshot.StatusCaptured {
			b.Fatal(err, s.Status)
		}
	}
}

func BenchmarkSHA256InMemory5MB(b *testing.B) {
	body := bytes.Repeat([]byte("%PDF-1.7 0123456789abcdef\n"), benchBody/26)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		sha256.Sum256(body)
	}
}

func BenchmarkNormalizeHTML(b *testing.B) {
	page := bytes.Repeat([]byte(`<div class="x"><p>Revenue rose <b>12,5%</b> in Q3 &mdash; not "flat".</p><script>var a=1;</script></div>`), 10000)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		snapshot.Normalize(page, "text/html; charset=utf-8")
	}
}

func BenchmarkContains(b *testing.B) {
	nz := snapshot.Normalize(bytes.Repeat([]byte(`<p>Revenue rose 12,5% in Q3 — not “flat”.</p>`), 5000), "text/html")
	s := &snapshot.Snapshot{Text: nz.Text + " Base mainnet chain id is 8453."}
	b.SetBytes(int64(len(s.Text)))
	for b.Loop() {
		if !s.Contains("chain id is 8453") {
			b.Fatal("not found")
		}
	}
}

func newBenchServer(b *testing.B, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv
}
