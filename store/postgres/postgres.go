// Package postgres opens an assay database in PostgreSQL (through pgx),
// for deployments of several instances sharing one database. It registers
// pgx's "pgx" database/sql driver and links no SQLite driver; the SQL
// itself is package store's and its domain packages' (store/claimsstore,
// ...), and nothing here links them: a program links the domains it
// imports.
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
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/assaykit/assay/store"
)

// Driver describes pgx to store.New, for callers that open their own
// handles (see store.New).
func Driver() store.Driver {
	return store.Driver{Dialect: store.Postgres, IsUniqueViolation: isUniqueViolation, IsRetryable: isRetryable, Listen: listen,
		CopyFrom: copyFrom, RawRows: rawRows, ExecBatch: execBatch}
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
// listen implements store.Driver.Listen with pgx: LISTEN on a connection
// taken from db, notify once listening, then WaitForNotification until
// ctx is done or the connection fails. The connection is discarded afterwards rather than
// returned to the pool still listening.
func listen(ctx context.Context, db *sql.DB, channel string, notify func()) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	defer conn.Close()
	var listenErr error
	_ = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			listenErr = fmt.Errorf("store: listen: not a pgx connection (%T)", dc)
			return driver.ErrBadConn
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+channel); err != nil {
			listenErr = fmt.Errorf("store: listen: %w", err)
			return driver.ErrBadConn
		}
		notify() // listening: what committed before is for the caller to read now
		for {
			if _, err := pc.WaitForNotification(ctx); err != nil {
				listenErr = err
				return driver.ErrBadConn // still listening: never back to the pool
			}
			notify()
		}
	})
	return listenErr
}

// copyFrom implements store.Driver.CopyFrom with pgx's CopyFrom (the
// binary COPY protocol) on conn's session.
func copyFrom(ctx context.Context, conn *sql.Conn, table string, cols []string, rows [][]any) error {
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: copy: not a pgx connection (%T)", dc)
		}
		_, err := sc.Conn().CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
		return err
	})
}

// execBatch implements store.Driver.ExecBatch with a pgx batch: BEGIN,
// SET LOCAL synchronous_commit = off, the statements and COMMIT go to the
// server at once. After a statement fails the server skips the rest of the
// pipeline, and the transaction it began is left aborted: it is rolled
// back, and a connection that cannot be is discarded.
func execBatch(ctx context.Context, conn *sql.Conn, stmts []store.Stmt) ([]int64, error) {
	var n []int64
	var batchErr error
	err := conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: batch: not a pgx connection (%T)", dc)
		}
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		b.Queue("SET LOCAL synchronous_commit = off")
		for _, s := range stmts {
			b.Queue(s.Query, s.Args...)
		}
		b.Queue("COMMIT")
		br := sc.Conn().SendBatch(ctx, b)
		first := func() error {
			for range 2 {
				if _, err := br.Exec(); err != nil {
					return fmt.Errorf("store: begin: %w", err)
				}
			}
			for i := range stmts {
				tag, err := br.Exec()
				if err != nil {
					return &store.BatchError{Index: i, Err: err}
				}
				n = append(n, tag.RowsAffected())
			}
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("store: commit: %w", err)
			}
			return nil
		}()
		if err := br.Close(); first == nil {
			first = err
		}
		if batchErr = first; batchErr == nil {
			return nil
		}
		if _, err := sc.Conn().Exec(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
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

// rawRows implements store.Driver.RawRows with pgx: every column in text
// format, each row's values as pgx read them into its buffer.
func rawRows(ctx context.Context, conn *sql.Conn, query string, args []any, fn func(row [][]byte) error) error {
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: raw rows: not a pgx connection (%T)", dc)
		}
		rows, err := sc.Conn().Query(ctx, query, append([]any{pgx.QueryResultFormats{pgx.TextFormatCode}}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := fn(rows.RawValues()); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

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
