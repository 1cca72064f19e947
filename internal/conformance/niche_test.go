package conformance_test

import (
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichemem"
	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// TestNicheStore runs the niche.Store suite on every backend; a second
// handle on the same database plays a second instance (an in-memory
// SQLite database has no second handle, nor has the in-memory store: the
// suite gets the same one).
func TestNicheStore(t *testing.T) {
	t.Parallel()
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		nichetest.TestStore(t, nicheMem)
	})
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
		st := nichestore.New(mustOpen(t, d))
		if d == ":memory:" {
			return st, func() niche.Store { return st }
		}
		return st, func() niche.Store { return nichestore.New(mustOpen(t, d)) }
	}
}

// nicheMem opens an in-memory store, which plays both instances.
func nicheMem(*testing.T) (niche.Store, func() niche.Store) {
	st := nichemem.New()
	return st, func() niche.Store { return st }
}
