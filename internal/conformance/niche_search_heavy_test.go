//go:build heavy

package conformance_test

import (
	"testing"

	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/store/storetest"
)

// TestNicheSearchExhaustive compares the search index with the store on
// every backend under every combination of level, sort, category and
// limit (TestNicheStore compares a rotating quarter of them).
func TestNicheSearchExhaustive(t *testing.T) {
	t.Parallel()
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		nichetest.TestStoreSearchExhaustive(t, nicheMem)
	})
	for name, dsn := range storetest.Backends() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nichetest.TestStoreSearchExhaustive(t, nicheOpener(dsn))
		})
	}
}
