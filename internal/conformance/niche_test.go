package conformance_test

import (
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/store/storetest"
)

// TestNicheStore runs the niche.Store suite on every backend; a second
// handle on the same database plays a second instance (an in-memory
// SQLite database has no second handle: the suite gets the same one).
func TestNicheStore(t *testing.T) {
	t.Parallel()
	for name, dsn := range storetest.Backends() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nichetest.TestStore(t, nicheOpener(dsn))
		})
	}
}

// nicheOpener opens a fresh database of the backend dsn names for the
// niche suites; another handle on it plays a second instance (an
// in-memory SQLite database has no second handle: the suite gets the
// same one).
func nicheOpener(dsn func(testing.TB) string) nichetest.StoreOpener {
	return func(t *testing.T) (niche.Store, func() niche.Store) {
		d := dsn(t)
		db := mustOpen(t, d)
		if d == ":memory:" {
			return db, func() niche.Store { return db }
		}
		return db, func() niche.Store { return mustOpen(t, d) }
	}
}
