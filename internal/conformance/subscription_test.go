package conformance_test

import (
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/store/storetest"
)

func TestSubscriptionStore(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nichetest.TestSubscriptionStore(t, func(t *testing.T) niche.SubscriptionStore { return open(t) })
		})
	}
}

// TestSubscriptionStoreShared runs the concurrency suite against two
// handles on one database: two SQLite handles on one file, two PostgreSQL
// pools on one schema.
func TestSubscriptionStoreShared(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.SharedStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nichetest.TestSubscriptionStoreShared(t, func(t *testing.T) (niche.SubscriptionStore, niche.SubscriptionStore) { a, b := open(t); return a, b })
		})
	}
}
