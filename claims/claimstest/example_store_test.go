package claimstest_test

import (
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimsmem"
	"github.com/assaykit/assay/claims/claimstest"
)

// An implementation of claims.Store proves itself by running the
// conformance suite from its own test, the way testing/fstest.TestFS is
// used: open returns a fresh, empty store for each subtest.
// internal/conformance runs it this way on claimsmem.Store, and on SQLite
// (a file and :memory:) and PostgreSQL.
func ExampleTestStore() {
	_ = func(t *testing.T) {
		claimstest.TestStore(t, func(t *testing.T) claims.Store { return claimsmem.New(nil) })
	}
}
