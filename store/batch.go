package store

import (
	"context"
	"fmt"
	"time"
)

// A few statements that are one transaction, committed without waiting
// for the disk (ExecBatchNoSync): a sale's opening and its completion. On
// PostgreSQL each statement of a transaction is a round trip to the
// server, and so are its BEGIN and COMMIT; a pipeline sends them all at
// once (Driver.ExecBatch).

// Stmt is one statement of ExecBatchNoSync: a query with '?' placeholders
// and its arguments.
type Stmt struct {
	Query string
	Args  []any
}

// BatchError reports the statement of a batch that failed (its index in
// the batch) and why: nothing of the batch was written.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("store: statement %d of a batch: %v", e.Index, e.Err)
}

// Unwrap returns the statement's error.
func (e *BatchError) Unwrap() error { return e.Err }

// ExecBatchNoSync runs stmts in order as one transaction that commits as
// InTxNoSync commits, and returns the number of rows each changed. It stops
// at the first statement that fails: nothing is written and the error is
// a *BatchError naming it. On PostgreSQL the transaction is one pipeline,
// one round trip whatever the number of statements (Driver.ExecBatch); on
// SQLite it runs on the writer's driver connection through statements it
// prepared once (store/sqlite's Driver.ExecBatch), for statements of fixed
// text. Retried as InTxNoSync is.
func (db *DB) ExecBatchNoSync(ctx context.Context, stmts ...Stmt) ([]int64, error) {
	if db.drv.ExecBatch == nil {
		return db.batchInTx(ctx, stmts)
	}
	qs := make([]Stmt, len(stmts))
	for i, s := range stmts {
		qs[i] = Stmt{Query: db.rebind(s.Query), Args: s.Args}
	}
	const attempts = 5
	var n []int64
	var err error
	for i := range attempts {
		n, err = db.tryBatch(ctx, qs)
		if err == nil || !db.isRetryable(err) || ctx.Err() != nil {
			return n, err
		}
		time.Sleep(time.Duration(i+1) * 5 * time.Millisecond)
	}
	return n, err
}

func (db *DB) tryBatch(ctx context.Context, stmts []Stmt) ([]int64, error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: connection: %w", err)
	}
	defer conn.Close()
	n, err := db.drv.ExecBatch(ctx, conn, stmts)
	if err == nil {
		db.committed()
	}
	return n, err
}

func (db *DB) batchInTx(ctx context.Context, stmts []Stmt) ([]int64, error) {
	var n []int64
	err := db.InTxNoSync(ctx, func(tx *Tx) error {
		n = n[:0]
		for i, s := range stmts {
			res, err := tx.CachedExec(ctx, s.Query, s.Args...)
			if err != nil {
				return &BatchError{Index: i, Err: err}
			}
			rows, err := res.RowsAffected()
			if err != nil {
				return &BatchError{Index: i, Err: err}
			}
			n = append(n, rows)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}
