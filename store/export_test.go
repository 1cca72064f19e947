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

// LastCheckpoint waits for the background checkpoint of bulk
// transactions, if one runs, and returns the WAL's frames at the last one
// and how many of them were then in the database file.
func (db *DB) LastCheckpoint() (frames, copied int64) {
	c := &db.ckpt
	c.mu.Lock()
	idle, running := c.idle, c.running
	c.mu.Unlock()
	if running {
		<-idle
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frames, c.copied
}

// WalCheckpointCommits is walCheckpointCommits.
const WalCheckpointCommits = walCheckpointCommits
