package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
)

// downBlobs is a content store that has become unreachable.
type downBlobs struct{ snapshot.BlobStore }

func (downBlobs) OpenBlob(context.Context, string) (snapshot.Blob, error) {
	return nil, snapshot.ErrUnavailable
}

// Content the store cannot reach is a 503 with Retry-After, not a 404 or
// a 500: the snapshot exists and the caller should come back.
func TestSnapshotStorageUnavailable(t *testing.T) {
	records := snapshotmem.New()
	sum := snapshot.RawSHA256([]byte("page"))
	rec := &snapshot.Snapshot{ID: "snap_" + strings.Repeat("cd", 16), RequestedURL: "https://example.org/",
		RetrievedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Status: snapshot.StatusCaptured, RawSHA256: &sum}
	if err := records.InsertSnapshot(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	svc, err := snapshot.NewService(records, downBlobs{snapshotmem.NewBlobs(nil)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	h, err := New(Config{Snapshots: SnapshotsConfig{Service: svc}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/content", "/warc"} {
		rec := do(t, h, "GET", "/v1/url-snapshots/"+rec.ID+p, "")
		if rec.Code != 503 || rec.Header().Get("Retry-After") != "5" ||
			strings.TrimSpace(rec.Body.String()) != `{"detail":"Snapshot storage is unavailable; retry later"}` {
			t.Errorf("%s: %d %q %s", p, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
}
