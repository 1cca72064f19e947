package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync"

	"github.com/assaykit/assay/store"
)

// A relaxed batch (store.DB.ExecBatchNoSync: a paid call's opening and
// completion), and a statement that is its own transaction
// (store.DB.CachedExec: a paid call's move to settling), are run on the
// writer's driver connection itself, written by hand here rather than
// through a database/sql transaction: database/sql starts a goroutine for
// every transaction it begins (to roll it back if its context ends), and
// the driver one for every statement whose context can end (in a profile
// of bench/payment, beginning the transaction was 14 % of the relaxed
// batches' time, half of it starting that goroutine). Here the batch is PRAGMA synchronous = NORMAL, BEGIN
// IMMEDIATE, its statements, COMMIT and PRAGMA synchronous = FULL, each a
// statement the connection prepared once and keeps (batchStmts), run with
// a context that cannot end: the caller's context bounded the wait for
// the connection (store.DB) and is checked before the batch begins, and a
// statement of the batch waits for nothing but the database's locks, which
// the busy timeout bounds.

// maxBatchStmts bounds the statements a connection keeps for batches;
// further query texts run unprepared.
const maxBatchStmts = 64

// batchStmts keeps the prepared statements of the writer's driver
// connection for batches and single statements. The writer pool has one
// connection; when the pool replaces it (after a failure), the statements
// of the one before are dropped with it.
type batchStmts struct {
	mu   sync.Mutex
	conn driver.Conn
	m    map[string]driver.Stmt
}

// batchConn is what a batch needs of the driver's connection (modernc.org/sqlite's conn).
type batchConn interface {
	driver.ConnPrepareContext
	driver.ExecerContext
}

// exec implements store.Driver.ExecBatch: stmts as one transaction that
// commits without waiting for the disk (synchronous=NORMAL for it), on
// conn, a connection of the writer pool. On failure the transaction is
// rolled back before exec returns (a connection that could not be rolled
// back, or whose synchronous setting could not be restored, is discarded:
// Raw returns driver.ErrBadConn).
func (b *batchStmts) exec(ctx context.Context, conn *sql.Conn, stmts []store.Stmt) ([]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bg := context.WithoutCancel(ctx)
	n := make([]int64, 0, len(stmts))
	var batchErr error
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(batchConn)
		if !ok {
			return fmt.Errorf("store: batch: not an SQLite connection (%T)", dc)
		}
		run := func(q string, args []any) (int64, error) {
			res, err := b.run(bg, c, q, args)
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}
		if _, err := run("PRAGMA synchronous = NORMAL", nil); err != nil {
			return fmt.Errorf("store: relax sync: %w", err)
		}
		began := false
		if _, err := run("BEGIN IMMEDIATE", nil); err != nil {
			batchErr = fmt.Errorf("store: begin: %w", err)
		} else {
			began = true
		}
		for i := 0; batchErr == nil && i < len(stmts); i++ {
			k, err := run(stmts[i].Query, stmts[i].Args)
			if err != nil {
				batchErr = &store.BatchError{Index: i, Err: err}
				break
			}
			n = append(n, k)
		}
		if batchErr == nil {
			if _, err := run("COMMIT", nil); err != nil {
				batchErr = fmt.Errorf("store: commit: %w", err)
			}
		}
		// After a failure the transaction is rolled back; a connection
		// whose rollback fails (a COMMIT that failed may have ended the
		// transaction, or not) is not handed to the next user, nor one
		// left relaxed.
		bad := batchErr != nil && began && func() bool { _, err := run("ROLLBACK", nil); return err != nil }()
		if _, err := run("PRAGMA synchronous = FULL", nil); err != nil || bad {
			return driver.ErrBadConn
		}
		return nil
	})
	if batchErr != nil {
		return nil, batchErr
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// run runs q with args on c, through the statement c prepared for q.
func (b *batchStmts) run(ctx context.Context, c batchConn, q string, args []any) (driver.Result, error) {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("store: argument %d: %w", i+1, err)
		}
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	if s := b.stmt(ctx, c, q); s != nil {
		return s.(driver.StmtExecContext).ExecContext(ctx, nv)
	}
	return c.ExecContext(ctx, q, nv)
}

// execOne implements store.Driver.ExecOne: q as a transaction of its own
// (committed durably, synchronous=FULL), on conn, through the statement
// the connection prepared for it, with a context that cannot end (ctx is
// checked first: see above).
func (b *batchStmts) execOne(ctx context.Context, conn *sql.Conn, q string, args []any) (sql.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var res driver.Result
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(batchConn)
		if !ok {
			return fmt.Errorf("store: exec: not an SQLite connection (%T)", dc)
		}
		var err error
		res, err = b.run(context.WithoutCancel(ctx), c, q, args)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// stmt returns q prepared on c, preparing it on first use (nil when the
// cache is full or q does not prepare: it then runs unprepared, where its
// error shows).
func (b *batchStmts) stmt(ctx context.Context, c batchConn, q string) driver.Stmt {
	b.mu.Lock()
	defer b.mu.Unlock()
	if dc, _ := c.(driver.Conn); b.conn != dc {
		b.conn, b.m = dc, nil
	}
	if s, ok := b.m[q]; ok {
		return s
	}
	if len(b.m) >= maxBatchStmts {
		return nil
	}
	s, err := c.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	if _, ok := s.(driver.StmtExecContext); !ok {
		_ = s.Close()
		return nil
	}
	if b.m == nil {
		b.m = map[string]driver.Stmt{}
	}
	b.m[q] = s
	return s
}
