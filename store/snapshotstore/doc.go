// Package snapshotstore is the SQL implementation of the snapshot stores:
// snapshot.Store with its optional BatchStore, HoldStore and UseStore
// (records, holds, uses), snapshot.BlobStore (content in the database
// itself, for deployments of several instances sharing PostgreSQL), and
// the index of content kept in an object store (store/s3blobs.Index), on
// a database opened with store/sqlite or store/postgres (package store
// holds the shared SQL helper and the migrations).
//
// It passes snapshottest.TestStore and snapshottest.TestBlobStore;
// internal/conformance runs them on every backend. snapshot/snapshotmem is
// the in-memory implementation.
package snapshotstore

import "github.com/assaykit/assay/store"

// Store is the snapshot store of one database. Safe for concurrent use;
// any number of Stores (and instances) may share the database.
type Store struct{ db *store.DB }

// New returns the snapshot store of db.
func New(db *store.DB) *Store { return &Store{db: db} }
