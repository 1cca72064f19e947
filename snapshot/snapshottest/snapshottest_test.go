package snapshottest_test

import (
	"testing"
	"time"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
)

func TestMemStoreConforms(t *testing.T) {
	snapshottest.TestStore(t, func(t *testing.T) snapshot.Store { return snapshottest.NewMemStore() })
}

func TestMemBlobsConform(t *testing.T) {
	snapshottest.TestBlobStore(t, func(t *testing.T, now func() time.Time) snapshot.BlobStore {
		return snapshottest.NewMemBlobs(now)
	})
}

func TestFileBlobStoreConforms(t *testing.T) {
	snapshottest.TestBlobStore(t, func(t *testing.T, now func() time.Time) snapshot.BlobStore {
		bs, err := snapshot.NewFileBlobStore(t.TempDir(), now)
		if err != nil {
			t.Fatal(err)
		}
		return bs
	})
}
