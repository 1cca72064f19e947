package nichetest_test

import (
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichetest"
)

func TestMemStoreConforms(t *testing.T) {
	nichetest.TestStore(t, func(t *testing.T) (niche.Store, func() niche.Store) {
		st := nichetest.NewMemStore()
		return st, func() niche.Store { return st }
	})
}
