// Command snapshot measures the URL capturer against named baselines in
// one run and prints the ratios (run it with bench/snapshot/run.sh, which
// also runs the hashing-stage benchmark):
//
//  1. batch: CaptureAll of 20 URLs whose servers each answer after 100 ms,
//     against capturing the same URLs one after another (baseline) and
//     against the slowest single response (100 ms);
//  2. memory: a 1 GiB response (chunked, no Content-Length) against a
//     5 MB limit must end as too_large with the heap and RSS growing by a
//     few MB at most (baseline: the process before the capture);
//  3. end to end: capturing a 4.9 MB PDF from a loopback server against
//     sha256.Sum256 over the same bytes in memory (baseline).
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
)

func main() {
	rounds := flag.Int("rounds", 5, "rounds per timing")
	flag.Parse()
	if err := run(*rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(rounds int) error {
	if err := batch(rounds); err != nil {
		return err
	}
	if err := memory(); err != nil {
		return err
	}
	return endToEnd(rounds)
}

func capturer(allow []string, o snapshot.Options) (*snapshot.Capturer, error) {
	o.AllowAddrs = allow
	dir, err := os.MkdirTemp("", "assay-bench-*")
	if err != nil {
		return nil, err
	}
	o.SpoolDir = dir
	return snapshot.NewCapturer(&o)
}

func batch(rounds int) error {
	const n, delay = 20, 100 * time.Millisecond
	var urls, allow []string
	for i := range n {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "page %d", i)
		}))
		defer srv.Close()
		urls = append(urls, srv.URL+"/")
		allow = append(allow, srv.Listener.Addr().String())
	}
	c, err := capturer(allow, snapshot.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	var bestBatch, bestSeq time.Duration
	for range rounds {
		t0 := time.Now()
		got, err := c.CaptureAll(ctx, urls)
		if err != nil {
			return err
		}
		for _, s := range got {
			if s.Status != snapshot.StatusCaptured {
				return fmt.Errorf("batch capture %s: %s", s.Status, deref(s.FailureReason))
			}
		}
		t1 := time.Now()
		for _, u := range urls {
			if s, err := c.Capture(ctx, u); err != nil || s.Status != snapshot.StatusCaptured {
				return fmt.Errorf("sequential capture: %v", err)
			}
		}
		t2 := time.Now()
		bestBatch = minPos(bestBatch, t1.Sub(t0))
		bestSeq = minPos(bestSeq, t2.Sub(t1))
	}
	fmt.Printf("batch: 20 URLs x 100 ms: CaptureAll %v, sequential (baseline) %v\n", bestBatch.Round(time.Millisecond), bestSeq.Round(time.Millisecond))
	fmt.Printf("batch: ratio CaptureAll/sequential = %.3f (%.1fx faster); CaptureAll/slowest response = %.2f\n",
		float64(bestBatch)/float64(bestSeq), float64(bestSeq)/float64(bestBatch), float64(bestBatch)/float64(delay))
	return nil
}

func memory() error {
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
		return err
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
		return err
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	rssAfter, hwmAfter := procStatus("VmRSS"), procStatus("VmHWM")
	fmt.Printf("memory: 1 GiB body, 5 MB limit: status %s (%s) in %v; server had written %.1f MB when the capturer hung up\n",
		s.Status, deref(s.FailureReason), elapsed.Round(time.Millisecond), float64(sent.Load())/1e6)
	fmt.Printf("memory: heap in use before %.1f MB, peak during capture %.1f MB (growth %.1f MB); total allocated during capture %.1f MB\n",
		mb(before.HeapInuse), mb(peakHeap.Load()), mb(peakHeap.Load())-mb(before.HeapInuse), mb(after.TotalAlloc-before.TotalAlloc))
	if rssBefore > 0 {
		fmt.Printf("memory: RSS before %.1f MB, after %.1f MB (growth %.1f MB); peak RSS (VmHWM) before %.1f MB, after %.1f MB\n",
			kb(rssBefore), kb(rssAfter), kb(rssAfter)-kb(rssBefore), kb(hwmBefore), kb(hwmAfter))
	}
	if s.Status != snapshot.StatusTooLarge {
		return fmt.Errorf("1 GiB capture ended as %s", s.Status)
	}
	return nil
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
	fmt.Printf("end to end: 4.9 MB PDF over loopback HTTP %v (%.0f MB/s), sha256 in memory (baseline) %v (%.0f MB/s): ratio %.2f\n",
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
