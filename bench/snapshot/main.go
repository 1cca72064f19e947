// Command snapshot measures the URL capturer against named baselines in
// one run, prints the ratios, and says PASS or FAIL for each target (run it
// with bench/snapshot/run.sh, which also runs the hashing-stage benchmark).
// It exits with status 1 when a target fails.
//
//  1. batch: CaptureAll of 20 URLs on 20 hosts whose servers each answer
//     after 100 ms, against capturing the same URLs one after another
//     (baseline, ratio printed) and against the slowest single response
//     (100 ms). Target: CaptureAll within -batch-target (1.5) times the
//     slowest response — "little more than the slowest one".
//  2. batch, same host: the same with all 20 URLs on one host (the default
//     per-host connection limit is the batch's concurrency, so this must
//     not take rounds). Same target.
//  3. memory: a 1 GiB response (chunked, no Content-Length) against a
//     5 MB limit must end as too_large with the Go heap in use growing by
//     at most -max-heap-growth-mb (16) MB above the process before the
//     capture (peak sampled every 2 ms). RSS is printed for information.
//  4. end to end: capturing a 4.9 MB PDF from a loopback server against
//     sha256.Sum256 over the same bytes in memory (baseline). Printed for
//     information: it includes the HTTP transfer; the 1.5x hashing target
//     is checked by the hashing-stage benchmark that run.sh runs next.
//
// Every server is on 127.0.0.1. Timings alternate candidate and baseline
// and keep the fastest of several rounds, so that a busy machine slows
// both alike; they are still noisy on a shared machine.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
)

func main() {
	rounds := flag.Int("rounds", 5, "rounds per timing")
	batchTarget := flag.Float64("batch-target", 1.5, "largest allowed ratio of a 20-URL CaptureAll to the slowest single response")
	maxHeap := flag.Float64("max-heap-growth-mb", 16, "largest allowed growth of the Go heap in use (MiB) while capturing the 1 GiB body")
	flag.Parse()
	failed, err := run(*rounds, *batchTarget, *maxHeap)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if failed > 0 {
		fmt.Printf("%d target(s) FAILED\n", failed)
		os.Exit(1)
	}
	fmt.Println("all targets PASS")
}

// verdict prints a PASS or FAIL line for a target and reports whether it
// failed.
func verdict(name string, got, limit float64, unit string) int {
	if got <= limit {
		fmt.Printf("PASS %s: %.3g%s <= %.3g%s\n", name, got, unit, limit, unit)
		return 0
	}
	fmt.Printf("FAIL %s: %.3g%s > %.3g%s\n", name, got, unit, limit, unit)
	return 1
}

func run(rounds int, batchTarget, maxHeapMB float64) (failed int, err error) {
	for _, sameHost := range []bool{false, true} {
		ratio, err := batch(rounds, sameHost)
		if err != nil {
			return failed, err
		}
		name := "batch (20 hosts): CaptureAll/slowest response"
		if sameHost {
			name = "batch (one host): CaptureAll/slowest response"
		}
		failed += verdict(name, ratio, batchTarget, "x")
	}
	growth, err := memory()
	if err != nil {
		return failed, err
	}
	failed += verdict("memory: heap growth capturing 1 GiB against a 5 MB limit", growth, maxHeapMB, " MiB")
	return failed, endToEnd(rounds)
}

// capturer builds a capturer allowed to reach the loopback servers in
// allow, with the test resolver and dial tripwire so that nothing here can
// look up a name or dial off the machine.
func capturer(allow []string, o snapshot.Options) (*snapshot.Capturer, error) {
	o.AllowAddrs = allow
	o.Resolver = snapshottest.Resolver(nil)
	o.DialControl = (&snapshottest.Tripwire{}).Control
	dir, err := os.MkdirTemp("", "assay-bench-*")
	if err != nil {
		return nil, err
	}
	o.SpoolDir = dir
	return snapshot.NewCapturer(&o)
}

// batch times CaptureAll of 20 slow URLs against capturing them one by
// one, on 20 hosts or (sameHost) all on one, and returns the ratio of the
// batch to the slowest single response.
func batch(rounds int, sameHost bool) (float64, error) {
	const n, delay = 20, 100 * time.Millisecond
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "page %s", r.URL.Path)
	})
	var urls, allow []string
	label := "20 hosts"
	if sameHost {
		label = "one host"
		srv := httptest.NewServer(slow)
		defer srv.Close()
		allow = append(allow, srv.Listener.Addr().String())
		for i := range n {
			urls = append(urls, fmt.Sprintf("%s/page/%d", srv.URL, i))
		}
	} else {
		for i := range n {
			srv := httptest.NewServer(slow)
			defer srv.Close()
			urls = append(urls, fmt.Sprintf("%s/page/%d", srv.URL, i))
			allow = append(allow, srv.Listener.Addr().String())
		}
	}
	c, err := capturer(allow, snapshot.Options{})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	ctx := context.Background()
	var bestBatch, bestSeq time.Duration
	for range rounds {
		t0 := time.Now()
		got, err := c.CaptureAll(ctx, urls)
		if err != nil {
			return 0, err
		}
		for _, s := range got {
			if s.Status != snapshot.StatusCaptured {
				return 0, fmt.Errorf("batch capture %s: %s", s.Status, deref(s.FailureReason))
			}
		}
		t1 := time.Now()
		for _, u := range urls {
			if s, err := c.Capture(ctx, u); err != nil || s.Status != snapshot.StatusCaptured {
				return 0, fmt.Errorf("sequential capture: %v", err)
			}
		}
		t2 := time.Now()
		bestBatch = minPos(bestBatch, t1.Sub(t0))
		bestSeq = minPos(bestSeq, t2.Sub(t1))
	}
	fmt.Printf("batch (%s): 20 URLs x 100 ms: CaptureAll %v, sequential (baseline) %v\n", label, bestBatch.Round(time.Millisecond), bestSeq.Round(time.Millisecond))
	fmt.Printf("batch (%s): ratio CaptureAll/sequential = %.3f (%.1fx faster); CaptureAll/slowest response = %.2f\n",
		label, float64(bestBatch)/float64(bestSeq), float64(bestSeq)/float64(bestBatch), float64(bestBatch)/float64(delay))
	return float64(bestBatch) / float64(delay), nil
}

// memory captures a 1 GiB body against a 5 MB limit and returns how much
// the Go heap in use grew (MiB, peak during the capture over before it).
// A capture that does not end as too_large is an error.
func memory() (float64, error) {
	const total = 1 << 30
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB, reused
		for written := 0; written < total; written += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			sent.Add(int64(len(chunk)))
		}
	}))
	defer srv.Close()
	c, err := capturer([]string{srv.Listener.Addr().String()}, snapshot.Options{MaxBytes: 5_000_000})
	if err != nil {
		return 0, err
	}
	defer c.Close()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore, hwmBefore := procStatus("VmRSS"), procStatus("VmHWM")
	var peakHeap atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peakHeap.Load() {
				peakHeap.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	s, err := c.Capture(context.Background(), srv.URL+"/huge")
	elapsed := time.Since(start)
	close(stop)
	<-sampled
	if err != nil {
		return 0, err
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	rssAfter, hwmAfter := procStatus("VmRSS"), procStatus("VmHWM")
	fmt.Printf("memory: 1 GiB body, 5 MB limit: status %s (%s) in %v; server had written %.1f MB when the capturer hung up\n",
		s.Status, deref(s.FailureReason), elapsed.Round(time.Millisecond), float64(sent.Load())/1e6)
	fmt.Printf("memory: heap in use before %.1f MiB, peak during capture %.1f MiB (growth %.1f MiB); total allocated during capture %.1f MiB\n",
		mb(before.HeapInuse), mb(peakHeap.Load()), mb(peakHeap.Load())-mb(before.HeapInuse), mb(after.TotalAlloc-before.TotalAlloc))
	if rssBefore > 0 {
		fmt.Printf("memory: RSS before %.1f MiB, after %.1f MiB (growth %.1f MiB); peak RSS (VmHWM) before %.1f MiB, after %.1f MiB\n",
			kb(rssBefore), kb(rssAfter), kb(rssAfter)-kb(rssBefore), kb(hwmBefore), kb(hwmAfter))
	}
	if s.Status != snapshot.StatusTooLarge {
		return 0, fmt.Errorf("1 GiB capture ended as %s (%s), not too_large", s.Status, deref(s.FailureReason))
	}
	return max(mb(peakHeap.Load())-mb(before.HeapInuse), 0), nil
}

func endToEnd(rounds int) error {
	body := bytes.Repeat([]byte("%PDF-1.7 0123456789abcdef\n"), 4_900_000/26)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	defer srv.Close()
	c, err := capturer([]string{srv.Listener.Addr().String()}, snapshot.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	var bestCap, bestSHA time.Duration
	for range rounds * 4 {
		t0 := time.Now()
		sha256.Sum256(body)
		t1 := time.Now()
		s, err := c.Capture(context.Background(), srv.URL+"/doc.pdf")
		if err != nil || s.Status != snapshot.StatusCaptured {
			return fmt.Errorf("capture: %v", err)
		}
		t2 := time.Now()
		bestSHA = minPos(bestSHA, t1.Sub(t0))
		bestCap = minPos(bestCap, t2.Sub(t1))
	}
	fmt.Printf("end to end (information): 4.9 MB PDF over loopback HTTP %v (%.0f MB/s), sha256 in memory (baseline) %v (%.0f MB/s): ratio %.2f\n",
		bestCap.Round(10*time.Microsecond), float64(len(body))/bestCap.Seconds()/1e6,
		bestSHA.Round(10*time.Microsecond), float64(len(body))/bestSHA.Seconds()/1e6, float64(bestCap)/float64(bestSHA))
	return nil
}

func minPos(a, b time.Duration) time.Duration {
	if a == 0 || b < a {
		return b
	}
	return a
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }
func kb(k int64) float64  { return float64(k) / 1024 }

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// procStatus reads a "kB" field of /proc/self/status (0 when unavailable).
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
