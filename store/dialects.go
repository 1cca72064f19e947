package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var memoryDBs atomic.Int64

// OpenSQLite opens (creating if needed) the SQLite database at path, or a
// private in-memory database when path is ":memory:", and migrates it.
func OpenSQLite(ctx context.Context, path string, opts *Options) (*DB, error) {
	o := opts.withDefaults()
	busy := o.BusyTimeout.Milliseconds()
	pragmas := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", busy)
	db := &DB{dialect: SQLite, log: o.Logger, now: o.Now, stopAfter: o.stopAfter}

	if path == ":memory:" || path == "" {
		// One connection: every pooled connection to ":memory:" would
		// otherwise see its own empty database.
		name := fmt.Sprintf("file:assay-mem-%d-%d?mode=memory&cache=shared&%s&_txlock=immediate",
			os.Getpid(), memoryDBs.Add(1), pragmas)
		w, err := sql.Open("sqlite", name)
		if err != nil {
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		w.SetMaxOpenConns(1)
		w.SetConnMaxIdleTime(0)
		w.SetConnMaxLifetime(0)
		db.w, db.r = w, w
	} else {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("store: create directory: %w", err)
			}
		}
		base := "file:" + (&url.URL{Path: path}).EscapedPath()
		common := pragmas + "&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
		w, err := sql.Open("sqlite", base+"?"+common+"&_txlock=immediate")
		if err != nil {
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		w.SetMaxOpenConns(1)
		w.SetMaxIdleConns(1)
		w.SetConnMaxIdleTime(0)
		w.SetConnMaxLifetime(0)
		r, err := sql.Open("sqlite", base+"?"+common+"&_pragma=query_only(1)")
		if err != nil {
			_ = w.Close()
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		r.SetMaxOpenConns(o.MaxOpenConns)
		r.SetMaxIdleConns(o.MaxOpenConns)
		db.w, db.r = w, r
	}
	if err := db.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// OpenPostgres connects to the PostgreSQL server at url (a pgx connection
// string) and migrates the database. Several instances may share one
// database; migrations are serialised with an advisory lock.
func OpenPostgres(ctx context.Context, url string, opts *Options) (*DB, error) {
	o := opts.withDefaults()
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
	db := &DB{dialect: Postgres, w: w, r: r, log: o.Logger, now: o.Now, stopAfter: o.stopAfter}
	if err := db.Ping(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// isUniqueViolation reports whether err is a unique or primary-key
// constraint failure on either engine.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	return false
}

// isRetryable reports whether a transaction failed for a reason that a
// retry can fix: PostgreSQL serialization failures and deadlocks, or SQLite
// busy errors that outlasted the busy timeout.
func isRetryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqlite3.SQLITE_BUSY
	}
	return false
}
