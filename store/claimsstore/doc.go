// Package claimsstore is the SQL implementation of claims.Store: the
// verification records, the grants that let an order's token read one
// (claim_verification_access) and the idempotency keys of verification
// calls (migration 0004 and later), on a database opened with store/sqlite
// or store/postgres (package store holds the shared SQL helper, the
// migrations and the choices both databases share).
//
// It passes claimstest.TestStore and, two instances on one database,
// claimstest.TestStoreShared; internal/conformance runs them on every
// backend. claims/claimsmem is the in-memory implementation.
package claimsstore

import "github.com/assaykit/assay/store"

// Store is the claims store of one database. Safe for concurrent use; any
// number of Stores (and instances) may share the database.
type Store struct{ db *store.DB }

// New returns the claims store of db.
func New(db *store.DB) *Store { return &Store{db: db} }
