package snapshottest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/snapshot"
)

func sp[T any](v T) *T { return &v }

// sampleSnapshots returns one record of every status, as captures make them.
func sampleSnapshots(at time.Time) []*snapshot.Snapshot {
	body := []byte("<p>Base mainnet chain id is 8453.</p>")
	sum := snapshot.RawSHA256(body)
	nz := snapshot.Normalize(body, "text/html; charset=utf-8")
	captured := &snapshot.Snapshot{
		ID: ids.New(ids.Snapshot), RequestedURL: "http://docs.example.org/chains#x",
		FinalURL: sp("http://docs.example.org/chains"), RetrievedAt: at, Status: snapshot.StatusCaptured,
		HTTPStatus: sp(200), ContentType: sp("text/html; charset=utf-8"), ContentLength: sp(int64(len(body))),
		RawSHA256: sp(sum), NormalizedSHA256: sp(nz.SHA256), Normalization: nz.Version, Charset: nz.Charset,
		Exchange: &snapshot.Exchange{
			Method: "GET", URL: "http://docs.example.org/chains",
			RequestHeader: http.Header{"User-Agent": {"assay"}, "Host": {"docs.example.org"}},
			Proto:         "HTTP/1.1", StatusCode: 200, Status: "200 OK",
			ResponseHeader: http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Set-Cookie": {"a=1", "b=2"}},
			RemoteAddr:     "127.0.0.1:41234",
		},
		Text: nz.Text,
	}
	return []*snapshot.Snapshot{
		captured,
		{ID: ids.New(ids.Snapshot), RequestedURL: "http://docs.example.org/gone", FinalURL: sp("http://docs.example.org/gone"),
			RetrievedAt: at, Status: snapshot.StatusFailed, HTTPStatus: sp(404), ContentType: sp("text/plain"),
			FailureReason: sp("HTTP 404 Not Found")},
		{ID: ids.New(ids.Snapshot), RequestedURL: "http://127.0.0.1/", RetrievedAt: at, Status: snapshot.StatusBlocked,
			FailureReason: sp("address 127.0.0.1 is loopback (127.0.0.0/8)")},
		{ID: ids.New(ids.Snapshot), RequestedURL: "http://x.example/big", FinalURL: sp("http://x.example/big"),
			RetrievedAt: at, Status: snapshot.StatusTooLarge, HTTPStatus: sp(200), ContentType: sp("text/plain"),
			ContentLength: sp(int64(1 << 30)), FailureReason: sp("declared length exceeds the limit")},
		{ID: ids.New(ids.Snapshot), RequestedURL: "http://x.example/img", FinalURL: sp("http://x.example/img"),
			RetrievedAt: at, Status: snapshot.StatusUnsupported, HTTPStatus: sp(200), ContentType: sp("image/png"),
			FailureReason: sp(`content type "image/png" is not captured`)},
	}
}

// TestStore is the conformance suite for snapshot.Store. open must
// return an empty store.
func TestStore(t *testing.T, open func(t *testing.T) snapshot.Store) {
	at := time.Date(2026, 2, 3, 4, 5, 6, 789123000, time.UTC)
	t.Run("RoundTrip", func(t *testing.T) { storeRoundTrip(t, open, at) })
	// Batch is registered only for a store that implements the optional
	// snapshot.BatchStore: a store without it has nothing to test there, and
	// no subtest is skipped for it.
	if _, ok := open(t).(snapshot.BatchStore); ok {
		t.Run("Batch", func(t *testing.T) { testSnapshotBatch(t, open, at) })
	}
	t.Run("Immutable", func(t *testing.T) { storeImmutable(t, open, at) })
	t.Run("InvalidLeavesNothing", func(t *testing.T) { storeInvalidLeavesNothing(t, open, at) })
	t.Run("NotFound", func(t *testing.T) { storeNotFound(t, open) })
	t.Run("PurgeAndReferences", func(t *testing.T) { storePurgeAndReferences(t, open, at) })
	t.Run("Concurrent", func(t *testing.T) { storeConcurrent(t, open, at) })
	if _, ok := open(t).(snapshot.HoldStore); ok {
		t.Run("Holds", func(t *testing.T) { storeHolds(t, open, at) })
	}
	if _, ok := open(t).(snapshot.UseStore); ok {
		t.Run("Uses", func(t *testing.T) { storeUses(t, open, at) })
	}
}

// storeUses checks that a record used at or after a purge's cutoff
// survives it, that the latest use wins, and that it is purged once its
// last use is older than the cutoff.
func storeUses(t *testing.T, open func(t *testing.T) snapshot.Store, at time.Time) {
	ctx := context.Background()
	st := open(t)
	u := st.(snapshot.UseStore)
	old := sampleSnapshots(at)
	for _, s := range old {
		if err := st.InsertSnapshot(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	used := old[0]
	if err := u.UseSnapshots(ctx, []string{used.ID, ids.New(ids.Snapshot)}, at.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := u.UseSnapshots(ctx, []string{used.ID}, at.Add(time.Hour)); err != nil {
		t.Fatal(err) // an earlier use changes nothing
	}
	n, err := st.DeleteSnapshotsBefore(ctx, at.Add(2*time.Hour))
	if err != nil || n != int64(len(old)-1) {
		t.Fatalf("purge with one record in use deleted %d (%v), want %d", n, err, len(old)-1)
	}
	if _, err := st.GetSnapshot(ctx, used.ID); err != nil {
		t.Fatalf("record in use purged: %v", err)
	}
	if n, err := st.DeleteSnapshotsBefore(ctx, at.Add(2*time.Hour+time.Microsecond)); err != nil || n != 1 {
		t.Fatalf("purge after the last use deleted %d (%v), want 1", n, err)
	}
}

// storeHolds checks that a held record survives a purge that reaches it,
// keeps its content in use, and is purged once released.
func storeHolds(t *testing.T, open func(t *testing.T) snapshot.Store, at time.Time) {
	ctx := context.Background()
	st := open(t)
	h := st.(snapshot.HoldStore)
	old := sampleSnapshots(at)
	for _, s := range old {
		if err := st.InsertSnapshot(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	held := old[0]
	unknown := ids.New(ids.Snapshot)
	if err := h.HoldSnapshots(ctx, []string{held.ID, held.ID, unknown}); err != nil {
		t.Fatal(err)
	}
	if err := h.HoldSnapshots(ctx, []string{held.ID}); err != nil {
		t.Fatalf("holding again: %v", err)
	}
	if yes, err := h.SnapshotHeld(ctx, held.ID); err != nil || !yes {
		t.Fatalf("held record reported not held: %v", err)
	}
	if yes, err := h.SnapshotHeld(ctx, old[1].ID); err != nil || yes {
		t.Fatalf("record never held reported held: %v", err)
	}
	n, err := st.DeleteSnapshotsBefore(ctx, at.Add(time.Hour))
	if err != nil || n != int64(len(old)-1) {
		t.Fatalf("purge with one hold deleted %d (%v), want %d", n, err, len(old)-1)
	}
	if _, err := st.GetSnapshot(ctx, held.ID); err != nil {
		t.Fatalf("held record purged: %v", err)
	}
	if used, err := st.SnapshotBlobInUse(ctx, *held.RawSHA256); err != nil || !used {
		t.Fatalf("content of a held record reported unused: %v %v", used, err)
	}
	if err := h.ReleaseSnapshots(ctx, []string{held.ID, unknown}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.DeleteSnapshotsBefore(ctx, at.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("purge after release deleted %d (%v), want 1", n, err)
	}
	if _, err := st.GetSnapshot(ctx, held.ID); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("released record survived the purge: %v", err)
	}
	if yes, err := h.SnapshotHeld(ctx, held.ID); err != nil || yes {
		t.Fatalf("released record reported held: %v", err)
	}
}

// storeRoundTrip is the RoundTrip part of TestStore.
func storeRoundTrip(t *testing.T, open func(t *testing.T) snapshot.Store, at time.Time) {
	ctx := context.Background()
	st := open(t)
	for _, s := range sampleSnapshots(at) {
		if err := st.InsertSnapshot(ctx, s); err != nil {
			t.Fatalf("insert %s: %v", s.Status, err)
		}
		got, err := st.GetSnapshot(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := s.Clone()
		want.Text = "" // never stored
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s record (-want +got):\n%s", s.Status, diff)
		}
		if got.RetrievedAt.Location() != time.UTC {
			t.Fatal("retrievedAt not UTC")
		}
	}
}

// storeImmutable is the Immutable part of TestStore.
func storeImmutable(t *testing.T, open func(t *testing.T) snapshot.Store, at time.Time) {
	ctx := context.Background()
	st := open(t)
	s := sampleSnapshots(at)[0]
	if err := st.InsertSnapshot(ctx, s); err != nil {
		t.Fatal(err)
	}
	changed := s.Clone()
	changed.Status = snapshot.StatusFailed
	changed.FailureReason = sp("rewritten")
	if err := st.InsertSnapshot(ctx, changed); !errors.Is(err, snapshot.ErrConflict) {
		t.Fatalf("second insert: %v, want ErrConflict", err)
	}
	got, _ := st.GetSnapshot(ctx, s.ID)
	if got.Status != snapshot.StatusCaptured || got.FailureReason != nil {
		t.Fatal("a stored record changed")
	}
}

// storeInvalidLeavesNothing is the InvalidLeavesNothing part of TestStore.
func storeInvalidLeavesNothing(t *testing.T, open func(t *testing.T) snapshot.Store, at time.Time) {
	ctx := context.Background()
	st := open(t)
	good := sampleSnapshots(at)[1]
	bad := []*snapshot.Snapshot{
		nil,
		{ID: "snap_123", RequestedURL: "http://x/", RetrievedAt: at, Status: snapshot.StatusFailed},
		{ID: ids.New(ids.Niche), RequestedURL: "http://x/", RetrievedAt: at, Status: snapshot.StatusFailed},
		{ID: good.ID, RequestedURL: "http://x/", RetrievedAt: at, Status: "done"},
		{ID: good.ID, RequestedURL: "http://x/", Status: snapshot.StatusFailed},
	}
	for i, b := range bad {
		if err := st.InsertSnapshot(ctx, b); !errors.Is(err, snapshot.ErrInvalid) {
			t.Errorf("bad record %d: %v, want ErrInvalid", i, err)
		}
	}
	if _, err := st.GetSnapshot(ctx, good.ID); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("a rejected record was stored: %v", err)
	}
}

// storeNotFound is the NotFound part of TestStore.
func storeNotFound(t *testing.T, open func(t *testing.T) snapshot.Store) {
	ctx := context.Background()
	st := open(t)
	for _, id := range []string{ids.New(ids.Snapshot), "", "snap_", "x' OR '1'='1", strings.Repeat("a", 5000)} {
		if _, err := st.GetSnapshot(ctx, id); !errors.Is(err, snapshot.ErrNotFound) {
			t.Errorf("GetSnapshot(%.20q) = %v", id, err)
		}
	}
}

// storePurgeAndReferences is the PurgeAndReferences part of TestStore.
func storePurgeAndReferences(t *testing.T, open func(t *testing.T) snapshot.Store, at time.Time) {
	ctx := context.Background()
	st := open(t)
	old := sampleSnapshots(at)
	recent := sampleSnapshots(at.Add(48 * time.Hour))
	for _, s := range append(old, recent...) {
		if err := st.InsertSnapshot(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	sum := *old[0].RawSHA256
	if used, err := st.SnapshotBlobInUse(ctx, sum); err != nil || !used {
		t.Fatalf("in use: %v %v", used, err)
	}
	n, err := st.DeleteSnapshotsBefore(ctx, at.Add(time.Hour))
	if err != nil || n != int64(len(old)) {
		t.Fatalf("deleted %d (%v), want %d", n, err, len(old))
	}
	for _, s := range old {
		if _, err := st.GetSnapshot(ctx, s.ID); !errors.Is(err, snapshot.ErrNotFound) {
			t.Fatal("old record survived")
		}
	}
	for _, s := range recent {
		if _, err := st.GetSnapshot(ctx, s.ID); err != nil {
			t.Fatal("recent record purged")
		}
	}
	if used, _ := st.SnapshotBlobInUse(ctx, sum); !used {
		t.Fatal("blob used by a recent record reported unused")
	}
	if n, _ := st.DeleteSnapshotsBefore(ctx, at.Add(72*time.Hour)); n != int64(len(recent)) {
		t.Fatalf("second purge deleted %d", n)
	}
	if used, _ := st.SnapshotBlobInUse(ctx, sum); used {
		t.Fatal("blob still in use after every record went")
	}
}

// storeConcurrent is the Concurrent part of TestStore.
func storeConcurrent(t *testing.T, open func(t *testing.T) snapshot.Store, at time.Time) {
	ctx := context.Background()
	st := open(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 40 {
		wg.Go(func() {
			s := sampleSnapshots(at)[0]
			if err := st.InsertSnapshot(ctx, s); err != nil {
				errs <- err
				return
			}
			if _, err := st.GetSnapshot(ctx, s.ID); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestBlobStore is the conformance suite for snapshot.BlobStore.
// open must return an empty store that reads the time from now.
func TestBlobStore(t *testing.T, open func(t *testing.T, now func() time.Time) snapshot.BlobStore) {
	c := &blobClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	t.Run("PutOpen", func(t *testing.T) { blobsPutOpen(t, open, c) })
	t.Run("Integrity", func(t *testing.T) { blobsIntegrity(t, open, c) })
	t.Run("DedupeAndAge", func(t *testing.T) { blobsDedupeAndAge(t, open, c) })
	t.Run("Concurrent", func(t *testing.T) { blobsConcurrent(t, open, c) })
}

// blobClock is the clock of TestBlobStore: it moves only when advanced.
type blobClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *blobClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *blobClock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// blobContent is the content TestBlobStore stores, and its address.
func blobContent() ([]byte, string) {
	content := bytes.Repeat([]byte("evidence "), 1000)
	return content, snapshot.RawSHA256(content)
}

// blobsPutOpen is the PutOpen part of TestBlobStore.
func blobsPutOpen(t *testing.T, open func(t *testing.T, now func() time.Time) snapshot.BlobStore, c *blobClock) {
	ctx := context.Background()
	content, sum := blobContent()
	bs := open(t, c.Now)
	if err := bs.PutBlob(ctx, sum, int64(len(content)), bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	b, err := bs.OpenBlob(ctx, sum)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Size() != int64(len(content)) {
		t.Fatalf("size %d", b.Size())
	}
	got, _ := io.ReadAll(b)
	if !bytes.Equal(got, content) {
		t.Fatal("content differs")
	}
	// Seekable, for range requests.
	if _, err := b.Seek(9, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 8)
	if _, err := io.ReadFull(b, part); err != nil || string(part) != "evidence" {
		t.Fatalf("after seek: %q %v", part, err)
	}
}

// blobsIntegrity is the Integrity part of TestBlobStore.
func blobsIntegrity(t *testing.T, open func(t *testing.T, now func() time.Time) snapshot.BlobStore, c *blobClock) {
	ctx := context.Background()
	content, sum := blobContent()
	bs := open(t, c.Now)
	other := snapshot.RawSHA256([]byte("other"))
	if err := bs.PutBlob(ctx, other, int64(len(content)), bytes.NewReader(content)); !errors.Is(err, snapshot.ErrIntegrity) {
		t.Fatalf("wrong hash: %v", err)
	}
	if err := bs.PutBlob(ctx, sum, int64(len(content))-1, bytes.NewReader(content)); !errors.Is(err, snapshot.ErrIntegrity) {
		t.Fatalf("wrong size: %v", err)
	}
	for _, bad := range []string{"", "abc", strings.ToUpper(sum), "../" + sum[3:]} {
		if err := bs.PutBlob(ctx, bad, 1, strings.NewReader("x")); !errors.Is(err, snapshot.ErrInvalid) {
			t.Fatalf("address %q: %v", bad, err)
		}
		if _, err := bs.OpenBlob(ctx, bad); !errors.Is(err, snapshot.ErrNotFound) {
			t.Fatalf("open %q: %v", bad, err)
		}
	}
	for _, s := range []string{other, sum} {
		if _, err := bs.OpenBlob(ctx, s); !errors.Is(err, snapshot.ErrNotFound) {
			t.Fatalf("rejected content was stored: %v", err)
		}
	}
}

// blobsDedupeAndAge is the DedupeAndAge part of TestBlobStore.
func blobsDedupeAndAge(t *testing.T, open func(t *testing.T, now func() time.Time) snapshot.BlobStore, c *blobClock) {
	ctx := context.Background()
	content, sum := blobContent()
	bs := open(t, c.Now)
	if err := bs.PutBlob(ctx, sum, int64(len(content)), bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	small := []byte("small")
	smallSum := snapshot.RawSHA256(small)
	if err := bs.PutBlob(ctx, smallSum, int64(len(small)), bytes.NewReader(small)); err != nil {
		t.Fatal(err)
	}
	c.advance(time.Hour)
	cut := c.Now()
	c.advance(time.Hour)
	// Re-putting refreshes; the reader need not even be read.
	if err := bs.PutBlob(ctx, sum, int64(len(content)), bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	old, err := bs.BlobsBefore(ctx, cut)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{smallSum}, old); diff != "" {
		t.Fatalf("old blobs (-want +got):\n%s", diff)
	}
	if del, err := bs.DeleteBlob(ctx, sum, cut); err != nil || del {
		t.Fatalf("deleted a refreshed blob: %v %v", del, err)
	}
	if del, err := bs.DeleteBlob(ctx, smallSum, cut); err != nil || !del {
		t.Fatalf("delete: %v %v", del, err)
	}
	if del, err := bs.DeleteBlob(ctx, smallSum, cut); err != nil || del {
		t.Fatalf("delete twice: %v %v", del, err)
	}
	if _, err := bs.OpenBlob(ctx, smallSum); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatal("deleted blob opens")
	}
	if b, err := bs.OpenBlob(ctx, sum); err != nil {
		t.Fatal(err)
	} else {
		b.Close()
	}
}

// blobsConcurrent is the Concurrent part of TestBlobStore.
func blobsConcurrent(t *testing.T, open func(t *testing.T, now func() time.Time) snapshot.BlobStore, c *blobClock) {
	ctx := context.Background()
	content, sum := blobContent()
	bs := open(t, c.Now)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			if err := bs.PutBlob(ctx, sum, int64(len(content)), bytes.NewReader(content)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	b, err := bs.OpenBlob(ctx, sum)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(b)
	b.Close()
	if !bytes.Equal(got, content) {
		t.Fatal("content differs after concurrent puts")
	}
}

// testSnapshotBatch is the Batch part of TestStore, for stores that
// implement snapshot.BatchStore.
func testSnapshotBatch(t *testing.T, open func(t *testing.T) snapshot.Store, at time.Time) {
	ctx := context.Background()
	st := open(t)
	batch, ok := st.(snapshot.BatchStore)
	if !ok {
		t.Fatalf("open returned a %T this time, which is not a snapshot.BatchStore", st)
	}
	snaps := sampleSnapshots(at)
	// A batch with one malformed record stores nothing.
	bad := snaps[len(snaps)-1].Clone()
	bad.Status = "bogus"
	if err := batch.InsertSnapshots(ctx, append(append([]*snapshot.Snapshot{}, snaps[:2]...), bad)); !errors.Is(err, snapshot.ErrInvalid) {
		t.Fatalf("batch with a malformed record: %v, want ErrInvalid", err)
	}
	if _, err := st.GetSnapshot(ctx, snaps[0].ID); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("part of a refused batch was stored: %v", err)
	}
	if err := batch.InsertSnapshots(ctx, snaps); err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		if _, err := st.GetSnapshot(ctx, s.ID); err != nil {
			t.Fatalf("%s not stored: %v", s.ID, err)
		}
	}
	// A batch repeating a stored id is refused as a whole.
	dup := sampleSnapshots(at)
	dup[0] = snaps[0]
	if err := batch.InsertSnapshots(ctx, dup); !errors.Is(err, snapshot.ErrConflict) {
		t.Fatalf("batch with a stored id: %v, want ErrConflict", err)
	}
	if _, err := st.GetSnapshot(ctx, dup[1].ID); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatal("part of a conflicting batch was stored")
	}
}
