package store

import (
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/store/storetest"
)

func TestClaimsStore(t *testing.T) {
	for name, open := range openers() {
		t.Run(name, func(t *testing.T) {
			storetest.TestClaimsStore(t, func(t *testing.T) claims.Store { return open(t) })
		})
	}
}

func TestClaimsStoreShared(t *testing.T) {
	cases := map[string]func(t *testing.T) (claims.Store, claims.Store){
		"sqlite-file": func(t *testing.T) (claims.Store, claims.Store) {
			p := storetest.SQLitePath(t)
			return mustOpen(t, p), mustOpen(t, p)
		},
		"postgres": func(t *testing.T) (claims.Store, claims.Store) {
			u := storetest.PostgresURL(t)
			return mustOpen(t, u), mustOpen(t, u)
		},
	}
	for name, open := range cases {
		t.Run(name, func(t *testing.T) { storetest.TestClaimsStoreShared(t, open) })
	}
}
