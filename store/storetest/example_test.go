package storetest_test

import (
	"context"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/storetest"
)

// An implementation of a domain Store proves itself by running the
// conformance suite from its own test, the way testing/fstest.TestFS is
// used. This is what store's own tests do for SQLite (a file and
// :memory:) and, when ASSAY_TEST_POSTGRES is set, PostgreSQL:
//
//	func TestClaimsStore(t *testing.T) {
//		storetest.TestClaimsStore(t, openSQLite)
//	}
func ExampleTestClaimsStore() {
	openSQLite := func(t *testing.T) claims.Store {
		db, err := store.Open(context.Background(), storetest.SQLitePath(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	openPostgres := func(t *testing.T) claims.Store {
		db, err := store.Open(context.Background(), storetest.PostgresURL(t), nil) // skips, saying so, without ASSAY_TEST_POSTGRES
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	_ = func(t *testing.T) {
		t.Run("sqlite", func(t *testing.T) { storetest.TestClaimsStore(t, openSQLite) })
		t.Run("postgres", func(t *testing.T) { storetest.TestClaimsStore(t, openPostgres) })
	}
}
