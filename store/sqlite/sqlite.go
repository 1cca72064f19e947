// Package sqlite opens an assay database in SQLite (modernc.org/sqlite:
// pure Go, no cgo), the embedded default. It registers the "sqlite"
// database/sql driver and links no PostgreSQL driver; the SQL itself is
// package store's and its domain packages' (store/claimsstore, ...), and
// nothing here links them: a program links the domains it imports.
//
// A file database runs in WAL mode with a busy timeout
// (store.Options.BusyTimeout), foreign keys on and synchronous=FULL (a
// committed payment survives power loss). Writes go through one writer
// connection whose transactions begin IMMEDIATE (they take the database's
// write lock at BEGIN, so two writers never deadlock upgrading a read
// lock), and which checkpoints at a commit only when the WAL passed
// store.WalBackstopFrames (the store checkpoints in the background, on a
// reader connection, every few hundred commits); reads outside
// transactions go through a separate pool of query_only connections
// (store.Options.MaxOpenConns) that read the file through a memory map
// (readerMmapSize).
//
// An in-memory database (OpenMemory) can be copied as an image
// (sqlite3_serialize and sqlite3_deserialize), so that tests which each
// need the same prepared contents prepare them once.
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
	b := &batchStmts{}
	return store.Driver{Dialect: store.SQLite, IsUniqueViolation: isUniqueViolation, IsRetryable: isRetryable, ExecBatch: b.exec, ExecOne: b.execOne}
}

var memoryDBs atomic.Int64

// readerMmapSize is the most of the database file a reader connection
// maps (SQLite's PRAGMA mmap_size): address space, not memory; the
// operating system's page cache is shared by every connection.
const readerMmapSize = 1 << 34

// Open opens (creating it and its directory if needed) the SQLite
// database at path, or a private in-memory database when path is
// ":memory:" (or empty; see OpenMemory), and applies pending migrations.
func Open(ctx context.Context, path string, opts *store.Options) (*store.DB, error) {
	o := opts.WithDefaults()
	if path == ":memory:" || path == "" {
		m, err := OpenMemory(ctx, nil, opts)
		if err != nil {
			return nil, err
		}
		return m.DB, nil
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("store: create directory: %w", err)
		}
	}
	base := "file:" + (&url.URL{Path: path}).EscapedPath()
	common := pragmas(o) + "&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	w, err := sql.Open("sqlite", base+"?"+common+fmt.Sprintf("&_txlock=immediate&_pragma=wal_autocheckpoint(%d)", store.WalBackstopFrames))
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

// Memory is a private in-memory database (OpenMemory): a *store.DB
// whose contents can be copied out (Image) to start others from.
type Memory struct {
	*store.DB
	conn *sql.DB
}

// OpenMemory opens a private in-memory database holding a copy of image,
// the bytes a Memory's Image returned (nil means an empty database), and
// applies pending migrations. Tests that each need the same prepared
// contents (a catalogue, say) prepare them once and start every database
// from the image: about 1 ms, where preparing again repeats every write.
// A malformed image is an error.
//
// The database has one connection, used for reads and writes alike
// (every pooled connection to one in-memory database would otherwise see
// its own empty database); it is gone when the DB is closed.
func OpenMemory(ctx context.Context, image []byte, opts *store.Options) (*Memory, error) {
	name := fmt.Sprintf("file:assay-mem-%d-%d?mode=memory&cache=shared&%s&_txlock=immediate",
		os.Getpid(), memoryDBs.Add(1), pragmas(opts.WithDefaults()))
	w, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	if image != nil {
		err := raw(ctx, w, func(c serializer) error { return c.Deserialize(image) })
		if err != nil {
			_ = w.Close()
			return nil, fmt.Errorf("store: sqlite image: %w", err)
		}
	}
	db, err := store.New(ctx, Driver(), w, w, opts)
	if err != nil {
		if image != nil {
			return nil, fmt.Errorf("store: sqlite image: %w", err)
		}
		return nil, err
	}
	return &Memory{DB: db, conn: w}, nil
}

// Image returns a copy of the database's bytes, for OpenMemory.
func (m *Memory) Image(ctx context.Context) ([]byte, error) {
	var image []byte
	err := raw(ctx, m.conn, func(c serializer) error {
		var err error
		image, err = c.Serialize()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: sqlite image: %w", err)
	}
	return image, nil
}

// serializer is the part of modernc.org/sqlite's connection that copies
// a database's bytes out and in (sqlite3_serialize, sqlite3_deserialize).
type serializer interface {
	Serialize() ([]byte, error)
	Deserialize([]byte) error
}

// raw runs fn on db's connection.
func raw(ctx context.Context, db *sql.DB, fn func(serializer) error) error {
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		s, ok := dc.(serializer)
		if !ok {
			return fmt.Errorf("driver connection %T cannot copy images", dc)
		}
		return fn(s)
	})
}

// pragmas are the connection settings of every database: the busy
// timeout and foreign keys.
func pragmas(o store.Options) string {
	return fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", o.BusyTimeout.Milliseconds())
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
