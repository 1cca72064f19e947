package store

import "context"

// Hooks for the external tests (package store_test): they open databases
// through store/sqlite and store/postgres, which import this package, and
// reach a few internals through these names.

// StopAfter returns options that stop migrating after the named file (a
// database as an older version left it).
func StopAfter(name string) *Options { return &Options{stopAfter: name} }

// MigrateT is migrate.
func (db *DB) MigrateT(ctx context.Context) error { return db.migrate(ctx) }

// MigrationLockKey is migrationLockKey.
const MigrationLockKey = migrationLockKey

// WriterStmts is how many writer statements are prepared and kept.
func (db *DB) WriterStmts() int {
	db.wstmts.mu.Lock()
	defer db.wstmts.mu.Unlock()
	return len(db.wstmts.m)
}
