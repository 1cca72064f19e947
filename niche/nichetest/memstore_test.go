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

func TestMemSubscriptionsConform(t *testing.T) {
	nichetest.TestSubscriptionStore(t, func(t *testing.T) niche.SubscriptionStore { return nichetest.NewMemSubscriptions(nil) })
	t.Run("Shared", func(t *testing.T) {
		nichetest.TestSubscriptionStoreShared(t, func(t *testing.T) (a, b niche.SubscriptionStore) {
			s := nichetest.NewMemSubscriptions(nil)
			return s, s
		})
	})
}
