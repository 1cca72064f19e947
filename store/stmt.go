package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps prepared statements of the SQLite reader pool by query
// text. Preparing (parsing and planning) a statement cost modernc.org/sqlite
// 10–15 % of a catalogue list or search; database/sql prepares a cached
// *sql.Stmt once per pooled connection and reuses it. PostgreSQL needs no
// such cache: pgx keeps its own per connection. Statements are finalised
// with their connections when the DB is closed.
type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// maxCachedStmts bounds the cache; further query texts run unprepared.
const maxCachedStmts = 256

// stmt returns the prepared reader statement for q (already rebound), or
// nil when q is not cached (PostgreSQL, or a full cache).
func (db *DB) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if db.drv.Dialect != SQLite {
		return nil, nil
	}
	c := &db.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[q]; ok {
		return s, nil
	}
	if len(c.m) >= maxCachedStmts {
		return nil, nil
	}
	s, err := db.r.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[q] = s
	return s, nil
}

// cachedQuery is db.query through a cached prepared statement.
func (db *DB) CachedQuery(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q = db.rebind(q)
	s, err := db.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return db.r.QueryContext(ctx, q, args...)
	}
	return s.QueryContext(ctx, args...)
}

// cachedQueryRow is db.queryRow through a cached prepared statement.
func (db *DB) CachedQueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	q = db.rebind(q)
	s, err := db.stmt(ctx, q)
	if err != nil || s == nil {
		// A preparation error shows again, in the Row, when run unprepared.
		return db.r.QueryRowContext(ctx, q, args...)
	}
	return s.QueryRowContext(ctx, args...)
}
