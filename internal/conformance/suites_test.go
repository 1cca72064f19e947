package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimsmem"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymentmem"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/metamem"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/s3blobs"
	"github.com/assaykit/assay/store/s3blobs/s3blobstest"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/storetest"
)

func claimsMem() claims.Store                  { return claimsmem.New(nil) }
func claimsSQL(db *store.DB) claims.Store      { return claimsstore.New(db) }
func ledgerMem() payment.Ledger                { return paymentmem.New(nil) }
func ledgerSQL(db *store.DB) payment.Ledger    { return paymentstore.New(db) }
func snapshotsMem() snapshot.Store             { return snapshotmem.New() }
func snapshotsSQL(db *store.DB) snapshot.Store { return snapshotstore.New(db) }

func TestClaimsStore(t *testing.T) {
	t.Parallel()
	for name, open := range backends(claimsMem, claimsSQL) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			claimstest.TestStore(t, open)
		})
	}
}

func TestClaimsStoreShared(t *testing.T) {
	t.Parallel()
	for name, open := range sharedBackends(claimsMem, claimsSQL) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			claimstest.TestStoreShared(t, open)
		})
	}
}

func TestLedgerConformance(t *testing.T) {
	t.Parallel()
	for name, open := range backends(ledgerMem, ledgerSQL) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			paymenttest.TestLedger(t, open)
		})
	}
}

// TestLedgerSharedDatabase runs the concurrency tests on two handles to one
// database: two SQLite connections to one file, two PostgreSQL pools on one
// schema (two server instances), and one in-memory ledger.
func TestLedgerSharedDatabase(t *testing.T) {
	t.Parallel()
	for name, open := range sharedBackends(ledgerMem, ledgerSQL) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			paymenttest.TestLedgerShared(t, open)
		})
	}
}

func TestSnapshotStoreConformance(t *testing.T) {
	t.Parallel()
	for name, open := range backends(snapshotsMem, snapshotsSQL) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			snapshottest.TestStore(t, open)
		})
	}
}

func TestSnapshotBlobStoreConformance(t *testing.T) {
	t.Parallel()
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		snapshottest.TestBlobStore(t, func(t *testing.T, now func() time.Time) snapshot.BlobStore {
			return snapshotmem.NewBlobs(now)
		})
	})
	for name, dsn := range storetest.Backends() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			snapshottest.TestBlobStore(t, func(t *testing.T, now func() time.Time) snapshot.BlobStore {
				return snapshotstore.New(storetest.Open(t, dsn(t), &store.Options{Now: now}))
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
				st, err := s3blobs.New(context.Background(), snapshotstore.New(storetest.Open(t, dsn(t), &store.Options{Now: now})), s3blobstest.Options(t))
				if err != nil {
					t.Fatal(err)
				}
				return st
			})
		})
	}
}

// TestMetaStore runs the settings suite on the in-memory store and on two
// handles of one database (SetMetaOnce agrees across instances).
func TestMetaStore(t *testing.T) {
	t.Parallel()
	mem := func() storetest.MetaStore { return &metamem.Store{} }
	sql := func(db *store.DB) storetest.MetaStore { return db }
	for name, open := range sharedBackends(mem, sql) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.TestMetaStore(t, open)
		})
	}
}
