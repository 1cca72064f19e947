package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Bulk writes: a transaction on one connection of the writer pool
// (InBulkTx), so that a driver-level COPY on that connection is part of
// it, and InsertRows, which writes many rows with COPY where the driver
// has it (Driver.CopyFrom, PostgreSQL) and multi-row INSERTs otherwise.

// sqliteMaxVars is SQLite's limit of variables in one statement.
const sqliteMaxVars = 32766

// InsertRows writes rows (each one value per column of cols) into table:
// COPY where the driver has it and t is an InBulkTx transaction, else
// multi-row INSERTs of as many rows as SQLite's variable limit allows.
// One statement per thousand rows, rather than one per row, matters for
// full-text indexes: FTS5 writes its pending terms to disk at every
// statement's savepoint, so row by row it wrote one tiny segment per
// evaluation and spent its time merging them.
func (t *Tx) InsertRows(ctx context.Context, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if t.conn != nil && t.db.drv.CopyFrom != nil {
		return t.db.drv.CopyFrom(ctx, t.conn, table, cols, rows)
	}
	per := max(sqliteMaxVars/len(cols), 1)
	row := "(" + Placeholders(len(cols)) + ")"
	query := func(n int) string {
		return `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	}
	// The statement of a full chunk is prepared once and run for each
	// (parsing a statement of a thousand rows' placeholders cost SQLite
	// about a tenth of a bulk write when it was prepared for every chunk).
	var full *sql.Stmt
	if t.conn != nil && len(rows) >= 2*per {
		var err error
		if full, err = t.conn.PrepareContext(ctx, t.db.rebind(query(per))); err != nil {
			return err
		}
		defer full.Close()
	}
	args := make([]any, 0, min(per, len(rows))*len(cols))
	for start := 0; start < len(rows); start += per {
		part := rows[start:min(start+per, len(rows))]
		args = args[:0]
		for _, r := range part {
			args = append(args, r...)
		}
		var err error
		if full != nil && len(part) == per {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = t.Exec(ctx, query(len(part)), args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// InBulkTx runs fn in a write transaction on one connection of the
// writer pool, begun and ended with statements (so that a driver-level
// COPY on the connection, InsertRows, is part of it), and commits it if
// fn returns nil. On SQLite the connection gets a larger page cache and a
// rarer checkpoint for the transaction. Unlike InTx it is not retried.
func (db *DB) InBulkTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: connection: %w", err)
	}
	defer conn.Close()
	begin := "BEGIN"
	if db.drv.Dialect == SQLite {
		begin = "BEGIN IMMEDIATE"
		// A batch writes tens of megabytes: a page cache that holds them
		// keeps SQLite from spilling pages to the WAL in mid-transaction
		// (and writing them again at the commit), and checkpoints every
		// 400 MB of WAL rather than every 4 MB copy each hot page of the
		// indexes into the database file less often (a sixth less CPU
		// for a 30,000-draft import).
		var size, auto int64
		if err := conn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&size); err == nil {
			if _, err := conn.ExecContext(ctx, "PRAGMA cache_size = -262144"); err == nil {
				defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA cache_size = %d", size)) //nolint:errcheck // best effort
			}
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err == nil {
			if _, err := conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 100000"); err == nil {
				defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", auto)) //nolint:errcheck // best effort
			}
		}
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if err = fn(&Tx{db: db, tx: conn, conn: conn}); err != nil {
		return err
	}
	if _, err = conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// HasRawRows reports whether the driver can stream rows without
// database/sql's conversions (EachRawRow).
func (db *DB) HasRawRows() bool { return db.drv.RawRows != nil }

// EachRawRow runs query (placeholders rebound) on a connection of the
// reader pool and calls fn with each row's values in text format (valid
// only during fn; NULL is nil). It is for reads of many rows, where
// database/sql's conversion of each value into a new string or []byte
// cost more than the read (a search index load: 1.5 million values at
// 100,000 evaluations). It fails when the driver cannot (HasRawRows).
//
// The query runs in a read-only transaction in which the planner sorts
// only when no index gives the order (enable_sort off): such a read wants
// its rows in an index's order, streamed from the first one. Without the
// table's statistics (after a bulk import, before autovacuum analyses it)
// PostgreSQL estimated a few hundred rows and sorted 100,000 on disk
// instead, which doubled the search index load.
func (db *DB) EachRawRow(ctx context.Context, query string, args []any, fn func(row [][]byte) error) error {
	if db.drv.RawRows == nil {
		return fmt.Errorf("store: the %s driver streams no raw rows", db.drv.Dialect)
	}
	conn, err := db.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: connection: %w", err)
	}
	defer conn.Close()
	// The read ends with a rollback (a connection it fails on is not
	// reused); without arguments pgx sends the begin as one simple query.
	defer db.discardIfInTx(ctx, conn)
	if _, err := conn.ExecContext(ctx, "BEGIN READ ONLY; SET LOCAL enable_sort = off"); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	return db.drv.RawRows(ctx, conn, db.rebind(query), args, fn)
}
