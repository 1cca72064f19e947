package claimstest_test

import (
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
)

// An implementation of claims.Store proves itself by running the
// conformance suite from its own test, the way testing/fstest.TestFS is
// used: open returns a fresh, empty store for each subtest. Package
// store's tests run it this way on SQLite (a file and :memory:) and
// PostgreSQL; this package's tests on MemStore.
func ExampleTestStore() {
	_ = func(t *testing.T) {
		claimstest.TestStore(t, func(t *testing.T) claims.Store { return claimstest.NewMemStore(nil) })
	}
}
