// Command evidence measures evidence bundles against a named baseline in
// one run and prints the ratios:
//
//	go run ./bench/evidence
//
// For 1, 8 and 20 captured pages of 1 MB (HTML text, captured for real
// from a loopback server into a file blob store, as the example server
// keeps them), it times building the bundle into a file (Prepare and
// WriteTo: every page read back, checked against its hash, framed as
// WARC records, gzipped, indexed, the WACZ manifests hashed and signed)
// and samples the Go heap in use every millisecond (with GOGC at 10, so
// that it follows the live data rather than uncollected garbage). The baseline, in the
// same run, writes the same page bytes from the blob store to a file.
// Both ratios are printed per page count. Target: peak heap growth flat
// in the page count — the growth at 20 pages at most -flat (1.5) times
// the growth at 1 page plus 2 MiB of sampling noise. It exits 1 when the
// target fails. Timings keep the fastest of -rounds rounds, alternating
// candidate and baseline, so that a busy machine slows both alike.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
	"github.com/assaykit/assay/snapshot/snapshottest"
)

func main() {
	rounds := flag.Int("rounds", 3, "rounds per measurement")
	flat := flag.Float64("flat", 1.5, "largest allowed ratio of the heap growth at 20 pages to that at 1 page (plus 2 MiB)")
	flag.Parse()
	// A small GC target, so that the heap in use follows the live data
	// rather than the garbage the pacer lets pile up (both sides alike).
	debug.SetGCPercent(10)
	ok, err := run(*rounds, *flat)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if !ok {
		fmt.Println("target FAILED")
		os.Exit(1)
	}
}

const pageSize = 1 << 20

// page is 1 MB of HTML: paragraphs of random words (compressible about
// as ordinary text is).
func page(i int) []byte {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("<!doctype html><html><head><title>Page %d</title></head><body>", i))
	word := make([]byte, 4)
	for b.Len() < pageSize-64 {
		b.WriteString("<p>")
		for range 12 {
			_, _ = rand.Read(word)
			b.WriteString(hex.EncodeToString(word)[:3+int(word[0])%5])
			b.WriteByte(' ')
		}
		b.WriteString("</p>\n")
	}
	b.WriteString("</body></html>")
	return []byte(b.String())
}

func run(rounds int, flat float64) (bool, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "assay-bench-evidence-*")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	pages := make([][]byte, 20)
	for i := range pages {
		pages[i] = page(i)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		fmt.Sscanf(r.URL.Path, "/page/%d", &i)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(pages[i%len(pages)])
	}))
	defer srv.Close()
	blobs, err := snapshot.NewFileBlobStore(filepath.Join(dir, "blobs"), nil)
	if err != nil {
		return false, err
	}
	svc, err := snapshot.NewService(snapshotmem.New(), blobs, &snapshot.Options{
		AllowAddrs: []string{srv.Listener.Addr().String()}, Resolver: snapshottest.Resolver(nil),
		DialControl: (&snapshottest.Tripwire{}).Control, MaxBytes: 2 * pageSize, SpoolDir: dir})
	if err != nil {
		return false, err
	}
	defer svc.Close()
	var urls []string
	for i := range pages {
		urls = append(urls, fmt.Sprintf("%s/page/%d", srv.URL, i))
	}
	snaps, err := svc.CaptureAll(ctx, urls)
	if err != nil {
		return false, err
	}
	for _, s := range snaps {
		if !s.Captured() {
			return false, fmt.Errorf("%s: %s", s.RequestedURL, s.Status)
		}
		s.Text = "" // the records as a store gives them back
	}
	// The pages now live in the blob store only: the heap holds neither
	// them nor the server's copy while measuring.
	srv.Close()
	clear(pages)
	spec, err := evidence.GenerateKeySpec()
	if err != nil {
		return false, err
	}
	keys, err := evidence.ParseKeys(spec)
	if err != nil {
		return false, err
	}
	b, err := evidence.New(svc, keys, nil)
	if err != nil {
		return false, err
	}
	out := filepath.Join(dir, "out")
	fmt.Printf("%-6s %12s %12s %8s %14s %14s %10s %10s\n", "pages", "bundle", "file copy", "ratio", "bundle heap", "copy heap", "heap ratio", "size")
	var growth1, growth20 float64
	for _, n := range []int{1, 8, 20} {
		var ids []string
		for _, s := range snaps[:n] {
			ids = append(ids, s.ID)
		}
		res := &claims.Result{VerificationID: "cv_bench", Snapshots: []snapshot.Snapshot{}}
		src := &evidence.Source{Kind: evidence.KindVerification, ID: res.VerificationID, Result: []byte(`{"verificationId":"cv_bench"}`),
			Form: evidence.FormResult, PageIDs: ids}
		bundle := func() (int64, error) {
			f, err := os.Create(out)
			if err != nil {
				return 0, err
			}
			defer f.Close()
			bd, err := b.Prepare(ctx, src)
			if err != nil {
				return 0, err
			}
			if err := bd.WriteTo(ctx, f); err != nil {
				return 0, err
			}
			st, err := f.Stat()
			return st.Size(), err
		}
		copyPages := func() (int64, error) {
			f, err := os.Create(out)
			if err != nil {
				return 0, err
			}
			defer f.Close()
			var total int64
			for _, s := range snaps[:n] {
				blob, err := blobs.OpenBlob(ctx, *s.RawSHA256)
				if err != nil {
					return 0, err
				}
				m, err := io.Copy(f, blob)
				blob.Close()
				if err != nil {
					return 0, err
				}
				total += m
			}
			return total, nil
		}
		var tb, tc time.Duration = 1 << 62, 1 << 62
		var hb, hc float64 = 1 << 62, 1 << 62
		var size int64
		for range rounds {
			d, h, sz, err := measure(bundle)
			if err != nil {
				return false, err
			}
			tb, hb, size = min(tb, d), min(hb, h), sz
			d, h, _, err = measure(copyPages)
			if err != nil {
				return false, err
			}
			tc, hc = min(tc, d), min(hc, h)
		}
		fmt.Printf("%-6d %12v %12v %7.1fx %11.2f MiB %11.2f MiB %9.1fx %7.1f MB\n", n, tb.Round(10*time.Microsecond), tc.Round(10*time.Microsecond),
			float64(tb)/float64(tc), hb, hc, hb/max(hc, 0.01), float64(size)/1e6)
		switch n {
		case 1:
			growth1 = hb
		case 20:
			growth20 = hb
		}
	}
	limit := growth1*flat + 2
	ok := growth20 <= limit
	verdict := "PASS"
	if !ok {
		verdict = "FAIL"
	}
	fmt.Printf("%s memory flat in the page count: heap growth %.2f MiB at 20 pages, %.2f MiB at 1 page (limit %.2f MiB); ratio %.2f\n",
		verdict, growth20, growth1, limit, growth20/max(growth1, 0.01))
	return ok, nil
}

// measure runs f after a GC and returns its duration, the peak growth of
// the Go heap in use over the heap before (MiB, sampled every millisecond)
// and f's result.
func measure(f func() (int64, error)) (time.Duration, float64, int64, error) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	peak.Store(before.HeapInuse)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	n, err := f()
	d := time.Since(start)
	close(stop)
	<-done
	return d, float64(peak.Load()-before.HeapInuse) / (1 << 20), n, err
}
