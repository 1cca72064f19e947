package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// stmtCache keeps prepared statements of the SQLite reader pool by query
// text. Preparing (parsing and planning) a statement cost modernc.org/sqlite
// 10–15 % of a catalogue list or search; database/sql prepares a cached
// *sql.Stmt once per pooled connection and reuses it. PostgreSQL needs no
// such cache: pgx keeps its own per connection. Statements are finalised
// with their connections when the DB is closed.
type stmtCache struct {
	mu   sync.Mutex
	m    map[string]*sql.Stmt
	want map[string]bool // writer statements to prepare before the next transaction
}

// The writer has a cache of its own (DB.wstmts) for the statements of hot
// write transactions (Tx.CachedExec, Tx.CachedQueryRow): SQLite's single
// writer connection prepares each once, and a transaction binds it
// (sql.Tx.StmtContext reuses a statement already prepared on its
// connection). A statement cannot be prepared on the pool from inside a
// transaction, which holds the writer's only connection: its first use
// runs unprepared and asks for it, and the next transaction prepares it
// before it begins (prepareWanted).

// maxCachedStmts bounds the cache; further query texts run unprepared.
const maxCachedStmts = 256

// stmt returns the prepared reader statement for q (already rebound), or
// nil when q is not cached (PostgreSQL, or a full cache).
func (db *DB) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	return db.cached(ctx, &db.stmts, db.r, q)
}

// cached returns the statement q prepared on pool and kept in c, or nil
// when q is not cached (PostgreSQL, or a full cache).
func (db *DB) cached(ctx context.Context, c *stmtCache, pool *sql.DB, q string) (*sql.Stmt, error) {
	if db.drv.Dialect != SQLite {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[q]; ok {
		return s, nil
	}
	if len(c.m) >= maxCachedStmts {
		return nil, nil
	}
	s, err := pool.PrepareContext(ctx, q)
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

// txStmt returns q's cached writer statement bound to t's transaction, or
// nil when q is not cached (PostgreSQL, a full cache, or a transaction on
// a lent connection, InBulkTx).
func (t *Tx) txStmt(ctx context.Context, q string) *sql.Stmt {
	sqlTx, ok := t.tx.(*sql.Tx)
	if !ok {
		return nil
	}
	if t.db.drv.Dialect != SQLite {
		return nil
	}
	c := &t.db.wstmts
	c.mu.Lock()
	s, ok := c.m[q]
	if !ok && len(c.m)+len(c.want) < maxCachedStmts {
		if c.want == nil {
			c.want = map[string]bool{}
		}
		c.want[q] = true
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	return sqlTx.StmtContext(ctx, s)
}

// prepareWanted prepares, on the writer pool, the statements transactions
// asked for (txStmt). It runs before a transaction begins, when the
// writer's connection is not held by the caller. A statement that fails to
// prepare is not asked for again: it keeps running unprepared, where its
// error shows.
func (db *DB) prepareWanted(ctx context.Context) {
	c := &db.wstmts
	c.mu.Lock()
	if len(c.want) == 0 {
		c.mu.Unlock()
		return
	}
	want := c.want
	c.want = nil
	c.mu.Unlock()
	// Prepared without the lock: preparing waits for the writer's
	// connection, whose transaction may be asking the cache.
	for q := range want {
		s, err := db.w.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]*sql.Stmt{}
		}
		if _, dup := c.m[q]; dup {
			_ = s.Close()
		} else {
			c.m[q] = s
		}
		c.mu.Unlock()
	}
}

// execOne runs q on a connection of the writer pool (Driver.ExecOne):
// ctx bounds the wait for it.
func (db *DB) execOne(ctx context.Context, q string, args []any) (sql.Result, error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: connection: %w", err)
	}
	defer conn.Close()
	return db.drv.ExecOne(ctx, conn, q, args)
}

// CachedExec runs one write statement as a transaction of its own,
// committed durably as InTx commits, and retried a few times after a lock
// conflict or a serialization failure as InTx is. The statement alone is
// the transaction: on PostgreSQL one round trip, not three (BEGIN, the
// statement, COMMIT); on SQLite one step of a statement the writer's
// connection prepared once (Driver.ExecOne: ctx bounds the wait for the
// connection, and is not watched while the statement runs, as in
// InTxNoSync), without the BEGIN and COMMIT statements. An SQLite
// statement that is its own transaction begins as a reader: when another
// process's commit made its snapshot stale it cannot take the write lock
// (SQLITE_BUSY_SNAPSHOT bypasses the busy timeout), and it is run again,
// with a fresh snapshot; a write lock another process holds is waited
// for through the busy timeout, as BEGIN IMMEDIATE waits.
func (db *DB) CachedExec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	q = db.rebind(q)
	const attempts = 5
	var res sql.Result
	var err error
	for i := range attempts {
		if db.drv.ExecOne != nil {
			res, err = db.execOne(ctx, q, args)
		} else {
			res, err = db.w.ExecContext(ctx, q, args...)
		}
		if err == nil {
			db.committed()
		}
		if err == nil || !db.isRetryable(err) || ctx.Err() != nil {
			return res, err
		}
		time.Sleep(time.Duration(i+1) * 5 * time.Millisecond)
	}
	return res, err
}

// CachedExec is Exec through a prepared statement the writer keeps (one
// statement per text; for the hot statements of paid calls, not for
// statements built per call).
func (t *Tx) CachedExec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	q = t.db.rebind(q)
	ctx = t.stmtCtx(ctx)
	if s := t.txStmt(ctx, q); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, q, args...)
}

// CachedQueryRow is QueryRow through a prepared statement the writer
// keeps (as CachedExec).
func (t *Tx) CachedQueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	q = t.db.rebind(q)
	ctx = t.stmtCtx(ctx)
	if s := t.txStmt(ctx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, q, args...)
}
