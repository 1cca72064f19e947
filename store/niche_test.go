package store

import (
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store/storetest"
)

func TestNicheStoreSQLiteFile(t *testing.T) {
	storetest.TestNicheStore(t, func(t *testing.T) (niche.Store, func() niche.Store) {
		path := storetest.SQLitePath(t)
		db := mustOpen(t, path)
		return db, func() niche.Store { return mustOpen(t, path) }
	})
}

func TestNicheStoreSQLiteMemory(t *testing.T) {
	storetest.TestNicheStore(t, func(t *testing.T) (niche.Store, func() niche.Store) {
		db := mustOpen(t, ":memory:")
		return db, func() niche.Store { return db }
	})
}

func TestNicheStorePostgres(t *testing.T) {
	storetest.TestNicheStore(t, func(t *testing.T) (niche.Store, func() niche.Store) {
		url := storetest.PostgresURL(t)
		db := mustOpen(t, url)
		return db, func() niche.Store { return mustOpen(t, url) }
	})
}
