package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"
	"time"
)

func streamPayload() []byte {
	return bytes.Repeat([]byte("%PDF-1.7 0123456789abcdef\n"), 4_900_000/26)
}

func TestStreamBody(t *testing.T) {
	body := streamPayload()
	sp := &spool{dir: t.TempDir()}
	defer sp.Close()
	n, sum, err := streamBody(sp, bytes.NewReader(body), int64(len(body))+1)
	want := sha256.Sum256(body)
	if err != nil || n != int64(len(body)) || sum != want || sp.Size() != n {
		t.Fatalf("n %d err %v sum %x", n, err, sum)
	}
	r, _ := sp.Reader()
	got, _ := io.ReadAll(r)
	if !bytes.Equal(got, body) {
		t.Fatal("staged bytes differ")
	}
	// The limit stops reading: limit bytes are read, not more.
	sp2 := &spool{dir: t.TempDir()}
	defer sp2.Close()
	n, _, err = streamBody(sp2, bytes.NewReader(body), 1000)
	if err != nil || n != 1000 {
		t.Fatalf("limited: %d %v", n, err)
	}
	if hex.EncodeToString(want[:]) != RawSHA256(body) {
		t.Fatal("RawSHA256")
	}
}

// BenchmarkStreamBody5MB is the capture's hashing stage: read a body from
// a stream, stage it (memory, then a temporary file) and hash it.
// Compare with BenchmarkSHA256InMemory5MB (bench/snapshot prints the ratio).
func BenchmarkStreamBody5MB(b *testing.B) {
	body := streamPayload()
	dir := b.TempDir()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		sp := &spool{dir: dir}
		if _, _, err := streamBody(sp, bytes.NewReader(body), int64(len(body))+1); err != nil {
			b.Fatal(err)
		}
		sp.Close()
	}
}

// BenchmarkStreamHashRatio measures the capture's hashing stage against
// the named baseline sha256.Sum256 over the same bytes in memory,
// alternating the two in every iteration (so that a busy machine slows
// both alike) and reporting the ratio of the fastest runs as
// "x-sha256" (1.0 = as fast as hashing in memory; the target is ≤ 1.5).
func BenchmarkStreamHashRatio(b *testing.B) {
	body := streamPayload()
	dir := b.TempDir()
	var bestStream, bestSHA time.Duration
	for b.Loop() {
		t0 := time.Now()
		sha256.Sum256(body)
		t1 := time.Now()
		sp := &spool{dir: dir}
		if _, _, err := streamBody(sp, bytes.NewReader(body), int64(len(body))+1); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		sp.Close()
		if d := t1.Sub(t0); bestSHA == 0 || d < bestSHA {
			bestSHA = d
		}
		if d := t2.Sub(t1); bestStream == 0 || d < bestStream {
			bestStream = d
		}
	}
	b.ReportMetric(float64(bestStream)/float64(bestSHA), "x-sha256")
	b.ReportMetric(float64(len(body))/bestSHA.Seconds()/1e6, "MB/s-sha256")
	b.ReportMetric(float64(len(body))/bestStream.Seconds()/1e6, "MB/s-stream")
}
