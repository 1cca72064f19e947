package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/s3blobs"
	"github.com/assaykit/assay/store/s3blobs/s3blobstest"
	"github.com/assaykit/assay/store/storetest"
)

func TestClaimsStore(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			claimstest.TestStore(t, func(t *testing.T) claims.Store { return open(t) })
		})
	}
}

func TestClaimsStoreShared(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.SharedStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			claimstest.TestStoreShared(t, func(t *testing.T) (claims.Store, claims.Store) { a, b := open(t); return a, b })
		})
	}
}

func TestLedgerConformance(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			paymenttest.TestLedger(t, func(t *testing.T) payment.Ledger { return open(t) })
		})
	}
}

// TestLedgerSharedDatabase runs the concurrency tests on two handles to one
// database: two SQLite connections to one file, two PostgreSQL pools on one
// schema (two server instances).
func TestLedgerSharedDatabase(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.SharedStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			paymenttest.TestLedgerShared(t, func(t *testing.T) (payment.Ledger, payment.Ledger) { a, b := open(t); return a, b })
		})
	}
}

func TestSnapshotStoreConformance(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			snapshottest.TestStore(t, func(t *testing.T) snapshot.Store { return open(t) })
		})
	}
}

func TestSnapshotBlobStoreConformance(t *testing.T) {
	t.Parallel()
	for name, dsn := range storetest.Backends() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			snapshottest.TestBlobStore(t, func(t *testing.T, now func() time.Time) snapshot.BlobStore {
				return storetest.Open(t, dsn(t), &store.Options{Now: now})
			})
		})
	}
}

func mustOpen(t *testing.T, dsn string) *store.DB { return storetest.Open(t, dsn, nil) }

// TestSnapshotBlobStoreKinds runs the blob suite on the other kinds of
// content store: files (the default with SQLite) and an S3-compatible
// object store (ASSAY_TEST_S3) indexed in each database.
func TestSnapshotBlobStoreKinds(t *testing.T) {
	t.Parallel()
	t.Run("files", func(t *testing.T) {
		t.Parallel()
		snapshottest.TestBlobStore(t, func(t *testing.T, now func() time.Time) snapshot.BlobStore {
			fb, err := snapshot.NewFileBlobStore(t.TempDir(), now)
			if err != nil {
				t.Fatal(err)
			}
			return fb
		})
	})
	for name, dsn := range storetest.Backends() {
		t.Run("s3-"+name, func(t *testing.T) {
			t.Parallel()
			snapshottest.TestBlobStore(t, func(t *testing.T, now func() time.Time) snapshot.BlobStore {
				st, err := s3blobs.New(context.Background(), storetest.Open(t, dsn(t), &store.Options{Now: now}), s3blobstest.Options(t))
				if err != nil {
					t.Fatal(err)
				}
				return st
			})
		})
	}
}
