package conformance_test

import (
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichemem"
	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
)

func TestSubscriptionStore(t *testing.T) {
	t.Parallel()
	for name, open := range backends(subscriptionsMem, subscriptionsSQL) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nichetest.TestSubscriptionStore(t, open)
		})
	}
}

// TestSubscriptionStoreShared runs the concurrency suite against two
// handles on one database: two SQLite handles on one file, two PostgreSQL
// pools on one schema, one in-memory store.
func TestSubscriptionStoreShared(t *testing.T) {
	t.Parallel()
	for name, open := range sharedBackends(subscriptionsMem, subscriptionsSQL) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nichetest.TestSubscriptionStoreShared(t, open)
		})
	}
}

func subscriptionsMem() niche.SubscriptionStore             { return nichemem.NewSubscriptions(nil) }
func subscriptionsSQL(db *store.DB) niche.SubscriptionStore { return nichestore.New(db) }

func TestSubscriberSessions(t *testing.T) {
	t.Parallel()
	for name, open := range backends(func() niche.SubscriberSessions { return &nichemem.Sessions{} },
		func(db *store.DB) niche.SubscriberSessions { return nichestore.New(db) }) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			nichetest.TestSubscriberSessions(t, open)
		})
	}
}
