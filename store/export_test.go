package store

import (
	"context"
	"database/sql"

	"github.com/assaykit/assay/niche"
)

// Hooks for the external tests (package store_test): they open databases
// through store/sqlite and store/postgres, which import this package, and
// reach a few internals through these names.

// StopAfter returns options that stop migrating after the named file (a
// database as an older version left it).
func StopAfter(name string) *Options { return &Options{stopAfter: name} }

// ExecT is exec.
func (db *DB) ExecT(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return db.exec(ctx, q, args...)
}

// QueryT is query.
func (db *DB) QueryT(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return db.query(ctx, q, args...)
}

// QueryRowT is queryRow.
func (db *DB) QueryRowT(ctx context.Context, q string, args ...any) *sql.Row {
	return db.queryRow(ctx, q, args...)
}

// MigrateT is migrate.
func (db *DB) MigrateT(ctx context.Context) error { return db.migrate(ctx) }

// IsUniqueViolationT is isUniqueViolation.
func (db *DB) IsUniqueViolationT(err error) bool { return db.isUniqueViolation(err) }

// ForUpdateT is forUpdate.
func (db *DB) ForUpdateT() string { return db.forUpdate() }

// InTxT is inTx, with the transaction's exec and query.
func (db *DB) InTxT(ctx context.Context, fn func(exec func(q string, args ...any) (sql.Result, error), query func(q string, args ...any) (*sql.Rows, error)) error) error {
	return db.inTx(ctx, func(tx *Tx) error {
		return fn(func(q string, args ...any) (sql.Result, error) { return tx.exec(ctx, q, args...) },
			func(q string, args ...any) (*sql.Rows, error) { return tx.query(ctx, q, args...) })
	})
}

// TermDocsT is termDocs.
func (db *DB) TermDocsT(ctx context.Context, words []string) (map[string]int64, int64, error) {
	return db.termDocs(ctx, words)
}

// PrunedFirstPassT is prunedFirstPass.
func (db *DB) PrunedFirstPassT(ctx context.Context, q niche.CandidateQuery, frequent []string) ([]niche.Candidate, bool, error) {
	return db.prunedFirstPass(ctx, q, frequent)
}

// Internal functions under test.
var (
	ToMicros      = toMicros
	FromMicros    = fromMicros
	FrequentWords = frequentWords
	FtsExpr       = ftsExpr
)

// MigrationLockKey is migrationLockKey.
const MigrationLockKey = migrationLockKey
