// Package postgres opens an assay database in PostgreSQL (through pgx),
// for deployments of several instances sharing one database. It registers
// pgx's "pgx" database/sql driver and links no SQLite driver; the SQL
// itself is package store's.
//
// A DB has two pools: writes and write transactions on one
// (store.Options.MaxWriteConns), reads outside transactions on the other
// (store.Options.MaxOpenConns), so that reads never queue behind paid
// writes. Migrations run under an advisory lock of the schema, so several
// instances may start at once (other schemas' never wait for it); serialization failures and deadlocks are retried.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/assaykit/assay/store"
)

// Driver describes pgx to store.New, for callers that open their own
// handles (see store.New).
func Driver() store.Driver {
	return store.Driver{Dialect: store.Postgres, IsUniqueViolation: isUniqueViolation, IsRetryable: isRetryable}
}

// Open connects to the PostgreSQL server at url (a pgx connection string,
// "postgres://user:pass@host:5432/db?sslmode=require") and applies pending
// migrations.
func Open(ctx context.Context, url string, opts *store.Options) (*store.DB, error) {
	o := opts.WithDefaults()
	w, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	w.SetMaxOpenConns(o.MaxWriteConns)
	w.SetMaxIdleConns(o.MaxWriteConns)
	r, err := sql.Open("pgx", url)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	r.SetMaxOpenConns(o.MaxOpenConns)
	r.SetMaxIdleConns(o.MaxOpenConns)
	return store.New(ctx, Driver(), w, r, opts)
}

// isUniqueViolation reports whether err is a unique_violation (23505).
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// isRetryable reports whether err is a serialization_failure (40001) or a
// deadlock_detected (40P01).
func isRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}
