package conformance_test

import (
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store"
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
	for name, open := range sharedDatabases() {
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
	for name, open := range sharedDatabases() {
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

// sharedDatabases gives, by backend name, two handles on one fresh
// database, as two server instances have: two SQLite handles on one file,
// two PostgreSQL pools on one schema.
func sharedDatabases() map[string]func(t *testing.T) (*store.DB, *store.DB) {
	return map[string]func(t *testing.T) (*store.DB, *store.DB){
		"sqlite-file": func(t *testing.T) (*store.DB, *store.DB) {
			p := storetest.SQLitePath(t)
			return mustOpen(t, p), mustOpen(t, p)
		},
		"postgres": func(t *testing.T) (*store.DB, *store.DB) {
			u := storetest.PostgresURL(t)
			return mustOpen(t, u), mustOpen(t, u)
		},
	}
}
