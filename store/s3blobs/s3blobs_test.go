package s3blobs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/s3blobs"
	"github.com/assaykit/assay/store/s3blobs/s3blobstest"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/storetest"
)

// open returns a store on the test server under a fresh prefix, indexed
// in a fresh in-memory SQLite database whose clock is now.
func open(t *testing.T, now func() time.Time) (*s3blobs.Store, *store.DB) {
	t.Helper()
	o := s3blobstest.Options(t)
	db := storetest.Open(t, ":memory:", &store.Options{Now: now})
	st, err := s3blobs.New(context.Background(), snapshotstore.New(db), o)
	if err != nil {
		t.Fatal(err)
	}
	return st, db
}

func TestConformance(t *testing.T) {
	snapshottest.TestBlobStore(t, func(t *testing.T, now func() time.Time) snapshot.BlobStore {
		st, _ := open(t, now)
		return st
	})
}

// A blob is stored once under its address, whoever puts it, and a put of
// content that does not match its address stores nothing even when the
// length is right (the body is cut short before its last byte).
func TestContentAddressedAndVerified(t *testing.T) {
	ctx := context.Background()
	st, _ := open(t, time.Now)
	content := []byte("a captured page")
	sum := snapshot.RawSHA256(content)
	forged := []byte("a captured pagE")
	if err := st.PutBlob(ctx, sum, int64(len(forged)), bytes.NewReader(forged)); !errors.Is(err, snapshot.ErrIntegrity) {
		t.Fatalf("forged content of the right length: %v, want ErrIntegrity", err)
	}
	if _, err := st.OpenBlob(ctx, sum); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("forged content was stored: %v", err)
	}
	for range 2 {
		if err := st.PutBlob(ctx, sum, int64(len(content)), bytes.NewReader(content)); err != nil {
			t.Fatal(err)
		}
	}
	srv := s3blobstest.Lookup(t)
	o := s3blobstest.Options(t)
	_ = o
	list, err := srv.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &srv.Bucket, Prefix: new(keyPrefix(t, st, sum))})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Contents) != 1 || !strings.HasSuffix(*list.Contents[0].Key, sum[:2]+"/"+sum) {
		t.Fatalf("objects under the blob's key: %+v", list.Contents)
	}
}

// keyPrefix finds the key prefix st stores sum under, from the object
// store's listing of the bucket.
func keyPrefix(t *testing.T, st *s3blobs.Store, sum string) string {
	t.Helper()
	srv := s3blobstest.Lookup(t)
	var token *string
	for {
		out, err := srv.Client().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &srv.Bucket, ContinuationToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out.Contents {
			if strings.HasSuffix(*o.Key, "/"+sum) {
				return strings.TrimSuffix(*o.Key, sum)
			}
		}
		if out.NextContinuationToken == nil {
			t.Fatalf("no object ends with %s", sum)
		}
		token = out.NextContinuationToken
	}
}

// An upload is streamed: putting 32 MiB allocates far less than the
// content, and a range read returns the bytes asked for.
func TestStreamed(t *testing.T) {
	ctx := context.Background()
	st, _ := open(t, time.Now)
	const size = 32 << 20
	content := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	sum := snapshot.RawSHA256(content)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := st.PutBlob(ctx, sum, size, struct{ io.Reader }{bytes.NewReader(content)}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > size/4 {
		t.Fatalf("uploading %d bytes allocated %d: the body was buffered", size, grew)
	}
	b, err := st.OpenBlob(ctx, sum)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Size() != size {
		t.Fatalf("size %d", b.Size())
	}
	runtime.ReadMemStats(&before)
	n, err := io.Copy(io.Discard, b)
	runtime.ReadMemStats(&after)
	if err != nil || n != size {
		t.Fatalf("read %d: %v", n, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > size/4 {
		t.Fatalf("reading %d bytes allocated %d: the body was buffered", size, grew)
	}
	if _, err := b.Seek(size-20, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	tail, err := io.ReadAll(b)
	if err != nil || !bytes.Equal(tail, content[size-20:]) {
		t.Fatalf("range read: %q %v", tail, err)
	}
}

// A store whose server does not answer fails with ErrUnavailable, and a
// failed put leaves nothing that a record could rely on.
func TestUnavailable(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more
	srv := s3blobstest.Lookup(t)
	o := srv.Options("down/")
	o.Endpoint = "http://" + addr
	db := storetest.Open(t, ":memory:", nil)
	st, err := s3blobs.New(ctx, snapshotstore.New(db), o)
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("page")
	sum := snapshot.RawSHA256(content)
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := st.PutBlob(tctx, sum, 4, bytes.NewReader(content)); !errors.Is(err, snapshot.ErrUnavailable) {
		t.Fatalf("put: %v, want ErrUnavailable", err)
	}
	if _, err := st.OpenBlob(tctx, sum); !errors.Is(err, snapshot.ErrUnavailable) {
		t.Fatalf("open: %v, want ErrUnavailable", err)
	}
	if err := st.Check(tctx); !errors.Is(err, snapshot.ErrUnavailable) {
		t.Fatalf("check: %v, want ErrUnavailable", err)
	}
	// The purge cannot delete what it cannot reach: the entry stays.
	if del, err := st.DeleteBlob(tctx, sum, time.Now().Add(time.Hour)); !errors.Is(err, snapshot.ErrUnavailable) || del {
		t.Fatalf("delete: %v %v, want ErrUnavailable", del, err)
	}
	if left, err := st.BlobsBefore(tctx, time.Now().Add(time.Hour)); err != nil || len(left) != 1 {
		t.Fatalf("index after a failed delete: %v %v", left, err)
	}
}

// A blob that a record uses is never deleted, however old; once unused it
// is.
func TestPurgeKeepsUsedBlobs(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st, db := open(t, func() time.Time { return clock })
	svc, err := snapshot.NewService(snapshotstore.New(db), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	content := []byte("<p>evidence</p>")
	sum := snapshot.RawSHA256(content)
	if err := st.PutBlob(ctx, sum, int64(len(content)), bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	rec := &snapshot.Snapshot{ID: "snap_" + strings.Repeat("ab", 16), RequestedURL: "https://example.org/", RetrievedAt: clock.Add(48 * time.Hour),
		Status: snapshot.StatusCaptured, RawSHA256: &sum}
	if err := snapshotstore.New(db).InsertSnapshot(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if ps, err := svc.Purge(ctx, clock.Add(24*time.Hour)); err != nil || ps.Blobs != 0 {
		t.Fatalf("purge with the blob in use: %+v %v", ps, err)
	}
	if del, err := st.DeleteBlob(ctx, sum, clock.Add(24*time.Hour)); err != nil || del {
		t.Fatalf("DeleteBlob of a used blob: %v %v", del, err)
	}
	if ps, err := svc.Purge(ctx, clock.Add(72*time.Hour)); err != nil || ps.Records != 1 || ps.Blobs != 1 {
		t.Fatalf("purge once unused: %+v %v", ps, err)
	}
	if _, err := st.OpenBlob(ctx, sum); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("purged blob: %v", err)
	}
}
