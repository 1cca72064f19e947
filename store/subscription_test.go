package store_test

import (
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/store/storetest"
)

func TestSubscriptionStore(t *testing.T) {
	for name, open := range openers() {
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
	pairs := map[string]func(t *testing.T) (niche.SubscriptionStore, niche.SubscriptionStore){
		"sqlite-file": func(t *testing.T) (niche.SubscriptionStore, niche.SubscriptionStore) {
			path := storetest.SQLitePath(t)
			return mustOpen(t, path), mustOpen(t, path)
		},
		"postgres": func(t *testing.T) (niche.SubscriptionStore, niche.SubscriptionStore) {
			url := storetest.PostgresURL(t)
			return mustOpen(t, url), mustOpen(t, url)
		},
	}
	for name, open := range pairs {
		t.Run(name, func(t *testing.T) { nichetest.TestSubscriptionStoreShared(t, open) })
	}
}
