package snapshot_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/snapshot/warc"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

const corpusPage = `<html><head><title>Chain list</title></head><body><p>Base mainnet uses chain id 8453.</p></body></html>`

// corpus serves a few pages on one loopback server reachable as
// docs.example.org:80 and news.example.org:80 through the host map.
func corpus(t *testing.T) *countingServer {
	mux := http.NewServeMux()
	mux.HandleFunc("/chains", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Served-By", "corpus")
		io.WriteString(w, corpusPage)
	})
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, corpusPage)
	})
	mux.HandleFunc("/gone", http.NotFound)
	return newCountingServer(t, mux)
}

func newService(t *testing.T, srv *countingServer, now func() time.Time, blobs snapshot.BlobStore, records snapshot.Store) *snapshot.Service {
	return newServiceObserved(t, srv, now, blobs, records, nil)
}

func newServiceObserved(t *testing.T, srv *countingServer, now func() time.Time, blobs snapshot.BlobStore, records snapshot.Store, onCapture func(*snapshot.Snapshot)) *snapshot.Service {
	t.Helper()
	tw := &snapshottest.Tripwire{}
	svc, err := snapshot.NewService(records, blobs, &snapshot.Options{
		OnCapture: onCapture,
		HostMap: map[string]string{
			"docs.example.org:80": srv.addr(),
			"news.example.org:80": srv.addr(),
		},
		AllowAddrs:  []string{srv.addr()},
		Resolver:    snapshottest.Resolver(nil),
		DialControl: tw.Control,
		SpoolDir:    t.TempDir(),
		Now:         now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc
}

func TestServiceStoresAndRechecks(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)}
	dir := t.TempDir()
	blobs, err := snapshot.NewFileBlobStore(dir, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	records := snapshotmem.New()
	svc := newService(t, corpus(t), clk.Now, blobs, records)

	got, err := svc.CaptureAll(ctx, []string{
		"http://docs.example.org/chains", "http://news.example.org/same", "http://docs.example.org/gone", "http://127.0.0.1/",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Status != snapshot.StatusCaptured || got[1].Status != snapshot.StatusCaptured ||
		got[2].Status != snapshot.StatusFailed || got[3].Status != snapshot.StatusBlocked {
		t.Fatalf("statuses %s %s %s %s", got[0].Status, got[1].Status, got[2].Status, got[3].Status)
	}
	if !got[0].Contains("Base mainnet uses chain id 8453") {
		t.Fatal("fresh capture cannot be searched")
	}
	if *got[0].RawSHA256 != *got[1].RawSHA256 {
		t.Fatal("identical pages hash differently")
	}
	if records.Len() != 4 {
		t.Fatalf("%d records stored, want every capture (4)", records.Len())
	}
	// Identical content is stored once.
	sums, _ := blobs.BlobsBefore(ctx, clk.Now().Add(time.Hour))
	if len(sums) != 1 {
		t.Fatalf("blobs %v", sums)
	}

	// Stored, retrieved and re-hashed: the same rawSha256.
	s, blob, err := svc.Open(ctx, got[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(blob)
	blob.Close()
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != *got[0].RawSHA256 || string(body) != corpusPage || s.Text != "" {
		t.Fatalf("re-hash %x, want %s", sum, *got[0].RawSHA256)
	}
	if s.Exchange == nil || s.Exchange.ResponseHeader.Get("X-Served-By") != "corpus" || s.Charset != "utf-8" {
		t.Fatalf("stored exchange %+v", s.Exchange)
	}
	re, err := svc.Recheck(ctx, got[0].ID)
	if err != nil || re.Text != got[0].Text || !re.Contains("chain id 8453") {
		t.Fatalf("recheck: %v %q", err, re.Text)
	}

	failed, err := svc.Get(ctx, got[2].ID)
	if err != nil || failed.Status != snapshot.StatusFailed || *failed.FailureReason != "HTTP 404 Not Found" {
		t.Fatalf("failed record: %v %+v", err, failed)
	}
	if _, _, err := svc.Open(ctx, got[2].ID); !errors.Is(err, snapshot.ErrNoContent) {
		t.Fatalf("content of a failed capture: %v", err)
	}
	for _, id := range []string{"snap_00000000000000000000000000000000", "nope", "snap_ABC", "../etc/passwd", ""} {
		if _, err := svc.Get(ctx, id); !errors.Is(err, snapshot.ErrNotFound) {
			t.Errorf("Get(%q) = %v", id, err)
		}
	}

	// Tampered content is detected.
	path := filepath.Join(dir, (*got[0].RawSHA256)[:2], *got[0].RawSHA256)
	if err := os.WriteFile(path, []byte(strings.Replace(corpusPage, "8453", "8454", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Recheck(ctx, got[0].ID); !errors.Is(err, snapshot.ErrIntegrity) {
		t.Fatalf("tampered content: %v", err)
	}
	if _, _, err := svc.WARC(ctx, got[0].ID); !errors.Is(err, snapshot.ErrIntegrity) {
		t.Fatalf("WARC of tampered content: %v", err)
	}
}

func TestPurge(t *testing.T) {
	ctx := context.Background()
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &clock{t: day0}
	blobs := snapshotmem.NewBlobs(clk.Now)
	records := snapshotmem.New()
	svc := newService(t, corpus(t), clk.Now, blobs, records)

	old, err := svc.Capture(ctx, "http://docs.example.org/chains")
	if err != nil {
		t.Fatal(err)
	}
	oldFail, _ := svc.Capture(ctx, "http://docs.example.org/gone")
	clk.Set(day0.Add(40 * 24 * time.Hour))
	recent, _ := svc.Capture(ctx, "http://docs.example.org/gone")

	st, err := svc.PurgeExpired(ctx) // 30 days back: day 10
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 2 || st.Blobs != 1 || blobs.Len() != 0 {
		t.Fatalf("purge %+v, blobs left %d", st, blobs.Len())
	}
	for _, id := range []string{old.ID, oldFail.ID} {
		if _, err := svc.Get(ctx, id); !errors.Is(err, snapshot.ErrNotFound) {
			t.Fatalf("purged %s still there: %v", id, err)
		}
	}
	if _, err := svc.Get(ctx, recent.ID); err != nil {
		t.Fatal(err)
	}

	// A blob shared with a recent record survives; one re-put during the
	// purge window survives too.
	clk.Set(day0)
	a, _ := svc.Capture(ctx, "http://docs.example.org/chains")
	clk.Set(day0.Add(40 * 24 * time.Hour))
	b, _ := svc.Capture(ctx, "http://news.example.org/same") // same content, recent record
	st, err = svc.Purge(ctx, day0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 1 || st.Blobs != 0 {
		t.Fatalf("purge %+v", st)
	}
	if _, blob, err := svc.Open(ctx, b.ID); err != nil {
		t.Fatalf("shared blob purged: %v", err)
	} else {
		blob.Close()
	}
	if _, err := svc.Get(ctx, a.ID); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatal("old record kept")
	}
}

// failingStore fails every insert, one at a time or in a batch.
type failingStore struct{ *snapshotmem.Store }

func (failingStore) InsertSnapshot(context.Context, *snapshot.Snapshot) error {
	return errors.New("disk full")
}

func (failingStore) InsertSnapshots(context.Context, []*snapshot.Snapshot) error {
	return errors.New("disk full")
}

// singleStore hides snapshotmem.Store's batch insert, so CaptureAll stores record by record.
type singleStore struct{ snapshot.Store }

func TestStorageFailureFailsTheCall(t *testing.T) {
	svc := newService(t, corpus(t), nil, snapshotmem.NewBlobs(nil), failingStore{snapshotmem.New()})
	if _, err := svc.Capture(context.Background(), "http://docs.example.org/chains"); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Capture: %v", err)
	}
	if got, err := svc.CaptureAll(context.Background(), []string{"http://docs.example.org/chains", "ftp://x/"}); err == nil || got != nil {
		t.Fatalf("CaptureAll: %v %v", got, err)
	}
	// The same without a batch insert: the first failing record fails the call.
	single := newService(t, corpus(t), nil, snapshotmem.NewBlobs(nil), singleStore{failingStore{snapshotmem.New()}})
	if got, err := single.CaptureAll(context.Background(), []string{"http://docs.example.org/chains", "ftp://x/"}); err == nil || got != nil {
		t.Fatalf("CaptureAll record by record: %v %v", got, err)
	}
}

func TestFileBlobStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	bs, err := snapshot.NewFileBlobStore(dir, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("hello blob")
	sum := snapshot.RawSHA256(content)
	// A wrong hash stores nothing.
	wrong := snapshot.RawSHA256([]byte("other"))
	if err := bs.PutBlob(ctx, wrong, int64(len(content)), bytes.NewReader(content)); !errors.Is(err, snapshot.ErrIntegrity) {
		t.Fatalf("wrong hash: %v", err)
	}
	if err := bs.PutBlob(ctx, sum, 99, bytes.NewReader(content)); !errors.Is(err, snapshot.ErrIntegrity) {
		t.Fatalf("wrong size: %v", err)
	}
	if err := bs.PutBlob(ctx, "../../etc", 1, strings.NewReader("x")); !errors.Is(err, snapshot.ErrInvalid) {
		t.Fatalf("bad address: %v", err)
	}
	if _, err := bs.OpenBlob(ctx, wrong); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("open missing: %v", err)
	}
	if err := bs.PutBlob(ctx, sum, int64(len(content)), bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, sum[:2], sum)); err != nil {
		t.Fatalf("layout: %v", err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	// A second put keeps the content and refreshes the time.
	clk.Set(clk.Now().Add(time.Hour))
	if err := bs.PutBlob(ctx, sum, int64(len(content)), bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	if got, _ := bs.BlobsBefore(ctx, clk.Now()); len(got) != 0 {
		t.Fatalf("refreshed blob listed as old: %v", got)
	}
	if del, _ := bs.DeleteBlob(ctx, sum, clk.Now()); del {
		t.Fatal("deleted a blob put at the cut-off")
	}
	b, err := bs.OpenBlob(ctx, sum)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(b)
	b.Close()
	if !bytes.Equal(got, content) || b.Size() != int64(len(content)) {
		t.Fatalf("read %q", got)
	}
	if del, err := bs.DeleteBlob(ctx, sum, clk.Now().Add(time.Second)); err != nil || !del {
		t.Fatalf("delete: %v %v", del, err)
	}
	if _, err := bs.OpenBlob(ctx, sum); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatal("deleted blob still opens")
	}
}

func TestWARCExportReadsBack(t *testing.T) {
	ctx := context.Background()
	blobs := snapshotmem.NewBlobs(nil)
	svc := newService(t, corpus(t), nil, blobs, snapshotmem.New())
	s, err := svc.Capture(ctx, "http://docs.example.org/chains?x=1#top")
	if err != nil || s.Status != snapshot.StatusCaptured {
		t.Fatalf("%v %+v", err, s)
	}
	w, closer, err := svc.WARC(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	closer.Close()
	if err != nil || n != w.Size() || int64(buf.Len()) != w.Size() {
		t.Fatalf("wrote %d of %d: %v", n, w.Size(), err)
	}
	recs := checkWARC(t, buf.Bytes())
	if len(recs) != 3 || recs[0].typ != "warcinfo" || recs[1].typ != "request" || recs[2].typ != "response" {
		t.Fatalf("records %+v", recs)
	}
	if recs[2].payload != corpusPage || recs[2].payloadDigestHex != *s.RawSHA256 {
		t.Fatalf("payload %q digest %s", recs[2].payload, recs[2].payloadDigestHex)
	}
	if !strings.HasPrefix(recs[1].block, "GET /chains?x=1 HTTP/1.1\r\nHost: docs.example.org\r\n") {
		t.Fatalf("request block %q", recs[1].block)
	}
	if recs[2].header.Get("WARC-Target-URI") != "http://docs.example.org/chains?x=1" {
		t.Fatalf("target %q", recs[2].header.Get("WARC-Target-URI"))
	}
	// Deterministic: exporting twice gives the same bytes.
	w2, c2, _ := svc.WARC(ctx, s.ID)
	var buf2 bytes.Buffer
	w2.WriteTo(&buf2)
	c2.Close()
	if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
		t.Fatal("export is not deterministic")
	}
}

type warcRec struct {
	typ, block, payload, payloadDigestHex string
	header                                warc.Header
}

// checkWARC reads an export with the warc package's reader and checks, per
// the WARC 1.1 specification: every block digest; the response's payload
// digest over the entity body of its HTTP message; record ids are unique
// URNs; concurrent-to and warcinfo references resolve.
func checkWARC(t *testing.T, data []byte) []warcRec {
	t.Helper()
	r := warc.NewReader(bytes.NewReader(data))
	var out []warcRec
	idsSeen := map[string]bool{}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		block, err := io.ReadAll(rec.Block)
		if err != nil || int64(len(block)) != rec.Size {
			t.Fatalf("block: %v", err)
		}
		id := rec.Header.Get("WARC-Record-ID")
		if !strings.HasPrefix(id, "<urn:uuid:") || idsSeen[id] {
			t.Fatalf("record id %q", id)
		}
		idsSeen[id] = true
		if _, err := time.Parse(time.RFC3339Nano, rec.Header.Get("WARC-Date")); err != nil {
			t.Fatalf("WARC-Date: %v", err)
		}
		alg, want, err := warc.ParseDigest(rec.Header.Get("WARC-Block-Digest"))
		sum := sha256.Sum256(block)
		if err != nil || alg != "sha256" || !bytes.Equal(want, sum[:]) {
			t.Fatalf("block digest of %s: %v", rec.Header.Get("WARC-Type"), err)
		}
		wr := warcRec{typ: rec.Header.Get("WARC-Type"), block: string(block), header: rec.Header}
		if wr.typ == "response" {
			if rec.Header.Get("Content-Type") != "application/http;msgtype=response" {
				t.Fatal("response content type")
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(block)), nil)
			if err != nil {
				t.Fatal(err)
			}
			payload, _ := io.ReadAll(resp.Body)
			if resp.ContentLength != int64(len(payload)) {
				t.Fatalf("HTTP Content-Length %d, payload %d", resp.ContentLength, len(payload))
			}
			alg, want, err := warc.ParseDigest(rec.Header.Get("WARC-Payload-Digest"))
			ps := sha256.Sum256(payload)
			if err != nil || alg != "sha256" || !bytes.Equal(want, ps[:]) {
				t.Fatalf("payload digest: %v", err)
			}
			if !strings.HasPrefix(rec.Header.Get("WARC-Payload-Digest"), "sha256:") || len(rec.Header.Get("WARC-Payload-Digest")) != len("sha256:")+56 {
				t.Fatalf("payload digest is not base32: %s", rec.Header.Get("WARC-Payload-Digest"))
			}
			wr.payload, wr.payloadDigestHex = string(payload), hex.EncodeToString(ps[:])
		}
		out = append(out, wr)
	}
	for _, rec := range out {
		for _, ref := range []string{"WARC-Concurrent-To", "WARC-Warcinfo-ID"} {
			if v := rec.header.Get(ref); v != "" && !idsSeen[v] {
				t.Fatalf("%s %s does not resolve", ref, v)
			}
		}
	}
	return out
}

func TestWARCReaderRejectsMalformed(t *testing.T) {
	good := "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:1>\r\nWARC-Date: 2026-01-01T00:00:00Z\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n"
	for name, in := range map[string]string{
		"version":    strings.Replace(good, "WARC/1.1", "WARC/9", 1),
		"length":     strings.Replace(good, "Content-Length: 3", "Content-Length: x", 1),
		"short":      strings.Replace(good, "Content-Length: 3", "Content-Length: 30", 1),
		"trailer":    strings.Replace(good, "abc\r\n\r\n", "abcd\r\n\r\n", 1),
		"field":      strings.Replace(good, "WARC-Type: resource", "WARC-Type resource", 1),
		"lf only":    strings.ReplaceAll(good, "\r\n", "\n"),
		"no id":      strings.Replace(good, "WARC-Record-ID: <urn:uuid:1>\r\n", "", 1),
		"truncation": good[:30],
	} {
		r := warc.NewReader(strings.NewReader(in))
		var err error
		for err == nil {
			var rec *warc.Record
			rec, err = r.Next()
			if rec != nil {
				_, _ = io.ReadAll(rec.Block)
			}
		}
		if err == io.EOF {
			t.Errorf("%s: malformed WARC accepted", name)
		}
	}
	r := warc.NewReader(strings.NewReader(good + good))
	for i := range 2 {
		if _, err := r.Next(); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
	if _, err := warc.WriteRecord(io.Discard, warc.Header{{Name: "Bad Name", Value: "x"}}, 0, strings.NewReader("")); err == nil {
		t.Fatal("bad field name written")
	}
	if _, err := warc.WriteRecord(io.Discard, warc.Header{{Name: "X", Value: "a\r\nb"}}, 0, strings.NewReader("")); err == nil {
		t.Fatal("CRLF in a value written")
	}
}

func TestServiceReportsEveryStoredCapture(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	blobs, err := snapshot.NewFileBlobStore(t.TempDir(), clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[snapshot.Status]int{}
	svc := newServiceObserved(t, corpus(t), clk.Now, blobs, snapshotmem.New(), func(s *snapshot.Snapshot) {
		mu.Lock()
		defer mu.Unlock()
		seen[s.Status]++
	})
	if _, err := svc.CaptureAll(context.Background(), []string{"http://docs.example.org/chains", "http://docs.example.org/gone", "http://127.0.0.1/"}); err != nil {
		t.Fatal(err)
	}
	want := map[snapshot.Status]int{snapshot.StatusCaptured: 1, snapshot.StatusFailed: 1, snapshot.StatusBlocked: 1}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("reported %v, want %v", seen, want)
	}
}
