// Package sqlite opens an assay database in SQLite (modernc.org/sqlite:
// pure Go, no cgo), the embedded default. It registers the "sqlite"
// database/sql driver and links no PostgreSQL driver; the SQL itself is
// package store's.
//
// A file database runs in WAL mode with a busy timeout
// (store.Options.BusyTimeout), foreign keys on and synchronous=FULL (a
// committed payment survives power loss). Writes go through one writer
// connection whose transactions begin IMMEDIATE (they take the database's
// write lock at BEGIN, so two writers never deadlock upgrading a read
// lock); reads outside transactions go through a separate pool of
// query_only connections (store.Options.MaxOpenConns) that read the file
// through a memory map (readerMmapSize).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"

	driver "modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/assaykit/assay/store"
)

// Driver describes modernc.org/sqlite to store.New, for callers that open their own
// handles (see store.New).
func Driver() store.Driver {
	return store.Driver{Dialect: store.SQLite, IsUniqueViolation: isUniqueViolation, IsRetryable: isRetryable}
}

var memoryDBs atomic.Int64

// readerMmapSize is the most of the database file a reader connection
// maps (SQLite's PRAGMA mmap_size): address space, not memory; the
// operating system's page cache is shared by every connection.
const readerMmapSize = 1 << 34

// Open opens (creating it and its directory if needed) the SQLite
// database at path, or a private in-memory database when path is
// ":memory:" (or empty), and applies pending migrations.
//
// An in-memory database has one connection, used for reads and writes
// alike (every pooled connection to ":memory:" would otherwise see its own
// empty database); it is gone when the DB is closed.
func Open(ctx context.Context, path string, opts *store.Options) (*store.DB, error) {
	o := opts.WithDefaults()
	pragmas := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", o.BusyTimeout.Milliseconds())
	if path == ":memory:" || path == "" {
		name := fmt.Sprintf("file:assay-mem-%d-%d?mode=memory&cache=shared&%s&_txlock=immediate",
			os.Getpid(), memoryDBs.Add(1), pragmas)
		w, err := sql.Open("sqlite", name)
		if err != nil {
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		w.SetMaxOpenConns(1)
		w.SetConnMaxIdleTime(0)
		w.SetConnMaxLifetime(0)
		return store.New(ctx, Driver(), w, w, opts)
	}
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
	// Readers map the file (mmap_size) instead of copying each page into
	// a private 2 MB page cache per connection: with a catalogue larger
	// than that cache, a broad search spent about half its CPU time in
	// read system calls.
	r, err := sql.Open("sqlite", base+"?"+common+fmt.Sprintf("&_pragma=query_only(1)&_pragma=mmap_size(%d)", readerMmapSize))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	r.SetMaxOpenConns(o.MaxOpenConns)
	r.SetMaxIdleConns(o.MaxOpenConns)
	return store.New(ctx, Driver(), w, r, opts)
}

// isUniqueViolation reports whether err is a unique or primary-key
// constraint failure.
func isUniqueViolation(err error) bool {
	var se *driver.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// isRetryable reports whether err is a busy error that outlasted the busy
// timeout.
func isRetryable(err error) bool {
	var se *driver.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}
