package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/storetest"
)

func mustOpen(t *testing.T, dsn string) *store.DB { return storetest.Open(t, dsn, nil) }

func TestOpenMigratesAndMeta(t *testing.T) {
	eachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		names, err := store.Migrations(db.Dialect())
		if err != nil || len(names) == 0 {
			t.Fatalf("Migrations: %v %v", names, err)
		}
		var n int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM schema_migrations").Scan(&n); err != nil || n != len(names) {
			t.Fatalf("applied %d of %d migrations (%v)", n, len(names), err)
		}
		if err := db.MigrateT(ctx); err != nil { // idempotent
			t.Fatalf("second migrate: %v", err)
		}
		if _, err := db.Meta(ctx, "absent"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Meta(absent) = %v, want ErrNotFound", err)
		}
		if err := db.SetMeta(ctx, "k", "v1"); err != nil {
			t.Fatal(err)
		}
		if err := db.SetMeta(ctx, "k", "v2"); err != nil {
			t.Fatal(err)
		}
		if v, err := db.Meta(ctx, "k"); err != nil || v != "v2" {
			t.Fatalf("Meta = %q, %v", v, err)
		}
		if err := db.CheckIntegrity(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestUniqueViolationDetected(t *testing.T) {
	eachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := "INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)"
		if _, err := db.Exec(ctx, q, "dup", "a", 1); err != nil {
			t.Fatal(err)
		}
		_, err := db.Exec(ctx, q, "dup", "b", 2)
		if !db.IsUniqueViolation(err) {
			t.Fatalf("second insert: %v, want unique violation", err)
		}
		if db.IsUniqueViolation(errors.New("other")) {
			t.Fatal("plain error classified as unique violation")
		}
	})
}

func TestTimesAndTx(t *testing.T) {
	eachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 22, 10, 11, 12, 123456000, time.UTC)
		if got := store.FromMicros(store.ToMicros(now)); !got.Equal(now) || got.Location() != time.UTC {
			t.Fatalf("round trip %v -> %v", now, got)
		}
		if !store.FromMicros(store.ToMicros(time.Time{})).IsZero() {
			t.Fatal("zero time not preserved")
		}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, "INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)", "t", "1", store.ToMicros(now)); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, "SELECT key FROM assay_meta WHERE key = ?"+db.ForUpdate(), "t")
			if err != nil {
				return err
			}
			defer rows.Close()
			if !rows.Next() {
				return errors.New("row not visible inside its transaction")
			}
			return errors.New("roll back")
		})
		if err == nil || err.Error() != "roll back" {
			t.Fatalf("inTx: %v", err)
		}
		rows, err := db.Query(ctx, "SELECT key FROM assay_meta WHERE key = ?", "t")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if rows.Next() {
			t.Fatal("rolled-back row is visible")
		}
	})
}

// TestNewRefusesAnUnknownDialect: New needs a writer and one of the two
// dialects whose SQL it holds.
func TestNewRefusesAnUnknownDialect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := store.New(ctx, store.Driver{Dialect: "oracle"}, nil, nil, nil); err == nil {
		t.Fatal("New accepted an unknown dialect without handles")
	}
	if _, err := store.New(ctx, store.Driver{Dialect: store.SQLite}, nil, nil, nil); err == nil {
		t.Fatal("New accepted no writer")
	}
}

// TestMigrationLockIsPerSchema: the migrations' advisory lock held on one
// schema (as by an instance migrating it) makes an Open of that schema
// wait, and an Open of another schema in the same database go ahead.
func TestMigrationLockIsPerSchema(t *testing.T) {
	t.Parallel()
	held, other := storetest.PostgresURL(t), storetest.PostgresURL(t)
	ctx := context.Background()
	pool, err := sql.Open("pgx", held)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	conn, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock("+store.MigrationLockKey+")"); err != nil {
		t.Fatal(err)
	}
	otherCtx, cancelOther := context.WithTimeout(ctx, 10*time.Second)
	defer cancelOther()
	db, err := anydb.Open(otherCtx, other, nil)
	if err != nil {
		t.Fatalf("Open of another schema waited for this one's migration lock: %v", err)
	}
	db.Close()
	waitCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	db, err = anydb.Open(waitCtx, held, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open of the schema whose migration lock is held did not wait for it")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open of the schema whose migration lock is held: %v, want it to wait until the deadline", err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock("+store.MigrationLockKey+")"); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, held)
}

// TestInTxNoSync: a transaction that does not wait for the disk commits
// and rolls back like InTx, runs relaxed (SQLite synchronous=NORMAL,
// PostgreSQL synchronous_commit=off), and leaves the writer's setting as
// it was for the next transaction.
func TestInTxNoSync(t *testing.T) {
	eachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		q := "SHOW synchronous_commit"
		relaxed := "off"
		if db.Dialect() == store.SQLite {
			q, relaxed = "PRAGMA synchronous", "1"
		}
		setting := func(tx *store.Tx) string {
			var s string
			if err := tx.QueryRow(ctx, q).Scan(&s); err != nil {
				t.Fatal(err)
			}
			return s
		}
		var before, inside, after string
		if err := db.InTx(ctx, func(tx *store.Tx) error { before = setting(tx); return nil }); err != nil {
			t.Fatal(err)
		}
		err := db.InTxNoSync(ctx, func(tx *store.Tx) error {
			inside = setting(tx)
			_, err := tx.Exec(ctx, "INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)", "kept", "1", 1)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		err = db.InTxNoSync(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, "INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)", "dropped", "1", 1); err != nil {
				return err
			}
			return errors.New("roll back")
		})
		if err == nil || err.Error() != "roll back" {
			t.Fatalf("rollback: %v", err)
		}
		for key, want := range map[string]bool{"kept": true, "dropped": false} {
			if _, err := db.Meta(ctx, key); (err == nil) != want {
				t.Errorf("%s: %v, want present=%v", key, err, want)
			}
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { after = setting(tx); return nil }); err != nil {
			t.Fatal(err)
		}
		if inside != relaxed || after != before {
			t.Errorf("setting before %q, inside %q (want %q), after %q (want %q)", before, inside, relaxed, after, before)
		}
	})
}

// TestExecBatchNoSyncKeepsTheWriter: on SQLite a batch runs on the
// writer's connection itself (store/sqlite's Driver.ExecBatch); after
// batches that fail (a unique violation, a statement that does not
// prepare) and ones that succeed, the writer is the same connection (its
// temporary table is there), out of any transaction, and durable again
// (synchronous=FULL).
func TestExecBatchNoSyncKeepsTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mustOpen(t, storetest.SQLitePath(t))
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "CREATE TEMP TABLE writer_mark (n INTEGER)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	insert := func(key string) store.Stmt {
		return store.Stmt{Query: "INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)", Args: []any{key, "1", 1}}
	}
	if _, err := db.ExecBatchNoSync(ctx, insert("a")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []store.Stmt{insert("a"), {Query: "INSERT INTO no_such_table VALUES (?)", Args: []any{1}}} {
		var be *store.BatchError
		if _, err := db.ExecBatchNoSync(ctx, insert("b"), bad); !errors.As(err, &be) || be.Index != 1 {
			t.Fatalf("a batch failing at its second statement: %v", err)
		}
	}
	if n, err := db.ExecBatchNoSync(ctx, insert("b"), insert("c")); err != nil || fmt.Sprint(n) != "[1 1]" {
		t.Fatalf("a batch after failed ones: %v, %v", n, err)
	}
	if sync := writerPragma(t, db, "synchronous"); sync != 2 {
		t.Errorf("after batches the writer has synchronous=%d, want 2 (FULL)", sync)
	}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO writer_mark (n) VALUES (1)")
		return err
	}); err != nil {
		t.Errorf("the writer's connection was replaced: %v", err)
	}
}

// TestInTxNoSyncCancelled: a relaxed transaction whose context is done
// before it begins, or between two of its statements (on SQLite its
// statements are not watched while they run, but checked before), fails
// with the context's error and writes nothing; the writer serves the next
// transaction.
func TestInTxNoSyncCancelled(t *testing.T) {
	eachStore(t, func(t *testing.T, db *store.DB) {
		insert := "INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)"
		done, cancel := context.WithCancel(context.Background())
		cancel()
		err := db.InTxNoSync(done, func(tx *store.Tx) error {
			_, err := tx.Exec(done, insert, "before", "1", 1)
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a transaction begun with a done context: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		err = db.InTxNoSync(ctx, func(tx *store.Tx) error {
			if _, err := tx.CachedExec(ctx, insert, "between", "1", 1); err != nil {
				return err
			}
			cancel()
			if _, err := tx.CachedExec(ctx, insert, "between-2", "1", 1); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, insert, "between-3", "1", 1)
			return err
		})
		// pgx may report the connection it gave up rather than the
		// context.
		if err == nil || db.Dialect() == store.SQLite && !errors.Is(err, context.Canceled) {
			t.Fatalf("a transaction whose context ended between statements: %v", err)
		}
		bg := context.Background()
		for _, key := range []string{"before", "between", "between-2", "between-3"} {
			if _, err := db.Meta(bg, key); err == nil {
				t.Errorf("%s was written by a cancelled transaction", key)
			}
		}
		if err := db.InTxNoSync(bg, func(tx *store.Tx) error {
			_, err := tx.Exec(bg, insert, "after", "1", 1)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Meta(bg, "after"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCachedWriterStatements: a transaction's cached statements run
// unprepared at first (the writer's only connection is the
// transaction's), are prepared before the next transaction, and give the
// same results through both kinds of transaction.
func TestCachedWriterStatements(t *testing.T) {
	eachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for i := range 4 {
			run := db.InTx
			if i%2 == 1 {
				run = db.InTxNoSync
			}
			err := run(ctx, func(tx *store.Tx) error {
				key := fmt.Sprintf("k%d", i)
				if _, err := tx.CachedExec(ctx, "INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)", key, key, i); err != nil {
					return err
				}
				var v string
				if err := tx.CachedQueryRow(ctx, "SELECT value FROM assay_meta WHERE key = ?", key).Scan(&v); err != nil || v != key {
					return fmt.Errorf("read back %q: %v", v, err)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("transaction %d: %v", i, err)
			}
		}
		want := 2
		if db.Dialect() != store.SQLite {
			want = 0 // pgx keeps its own statements per connection
		}
		if got := db.WriterStmts(); got != want {
			t.Errorf("%d writer statements kept, want %d", got, want)
		}
	})
}

// TestExecBatchNoSync: a batch is one transaction: every statement's rows
// are counted, and when one fails nothing of the batch is written, the
// error names it, and the connection is fit for what follows.
func TestExecBatchNoSync(t *testing.T) {
	eachStore(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		insert := func(key string) store.Stmt {
			return store.Stmt{Query: "INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)", Args: []any{key, "1", 1}}
		}
		n, err := db.ExecBatchNoSync(ctx, insert("a"), insert("b"),
			store.Stmt{Query: "UPDATE assay_meta SET value = ? WHERE key IN (?, ?, ?)", Args: []any{"2", "a", "b", "none"}},
			store.Stmt{Query: "UPDATE assay_meta SET value = ? WHERE key = ?", Args: []any{"3", "none"}})
		if err != nil || fmt.Sprint(n) != "[1 1 2 0]" {
			t.Fatalf("batch = %v, %v; want [1 1 2 0]", n, err)
		}
		for range 3 { // a pool of several connections: each gets one failure
			_, err = db.ExecBatchNoSync(ctx, insert("c"), insert("a"), insert("d"))
			var be *store.BatchError
			if !errors.As(err, &be) || be.Index != 1 || !db.IsUniqueViolation(err) {
				t.Fatalf("failed batch: %v; want a *BatchError at 1 that is a unique violation", err)
			}
		}
		for key, want := range map[string]string{"a": "2", "b": "2", "c": "", "d": ""} {
			if v, err := db.Meta(ctx, key); v != want || (err == nil) != (want != "") {
				t.Errorf("%s = %q, %v; want %q", key, v, err, want)
			}
		}
		if _, err := db.ExecBatchNoSync(ctx, insert("e")); err != nil {
			t.Fatalf("a batch after a failed one: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)", "f", "1", 1)
			return err
		}); err != nil {
			t.Fatalf("a transaction after a failed batch: %v", err)
		}
		res, err := db.CachedExec(ctx, "UPDATE assay_meta SET value = ? WHERE key IN (?, ?)", "4", "e", "f")
		if err != nil {
			t.Fatal(err)
		}
		if rows, err := res.RowsAffected(); err != nil || rows != 2 {
			t.Errorf("CachedExec changed %d rows, %v; want 2", rows, err)
		}
	})
}

// eachStore runs fn in parallel on every database of storetest.Stores.
func eachStore(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Parallel()
	for name, open := range storetest.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, open(t))
		})
	}
}

// TestEachRawRowStreamsInIndexOrder: EachRawRow's query runs where the
// planner sorts only when no index gives the order (a search index load
// then streams rows in seq order from the first, with or without the
// table's statistics), in a transaction that leaves the connection as it
// was; an error of fn is returned as it is.
func TestEachRawRowStreamsInIndexOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mustOpen(t, storetest.MigratedPostgresURL(t))
	var got []string
	for range 2 { // the second read finds the pooled connection as it was
		if err := db.EachRawRow(ctx, `SELECT current_setting('enable_sort'), current_setting('transaction_read_only')`, nil,
			func(row [][]byte) error {
				got = append(got, string(row[0])+" "+string(row[1]))
				return nil
			}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 || got[0] != "off on" || got[1] != "off on" {
		t.Fatalf("enable_sort and transaction_read_only in EachRawRow: %q", got)
	}
	var setting string
	if err := db.QueryRow(ctx, `SELECT current_setting('enable_sort')`).Scan(&setting); err != nil || setting != "on" {
		t.Fatalf("enable_sort outside: %q %v", setting, err)
	}
	stop := errors.New("stop")
	if err := db.EachRawRow(ctx, `SELECT 1`, nil, func([][]byte) error { return stop }); err != stop {
		t.Fatalf("fn's error: %v", err)
	}
}

// TestCachedExecAcrossProcesses: statements that are their own
// transaction (CachedExec), run at once by two DBs on one SQLite file (as
// two processes would), all commit: a lock the other holds is waited for
// and no increment is lost.
func TestCachedExecAcrossProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	var dbs []*store.DB
	for range 2 {
		db, err := anydb.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		dbs = append(dbs, db)
	}
	if err := dbs[0].SetMeta(ctx, "counter", "0"); err != nil {
		t.Fatal(err)
	}
	const each = 150
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for _, db := range dbs {
		wg.Go(func() {
			for range each {
				if _, err := db.CachedExec(ctx, "UPDATE assay_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ?", "counter"); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if v, err := dbs[1].Meta(ctx, "counter"); err != nil || v != strconv.Itoa(2*each) {
		t.Errorf("counter %q, %v; want %d", v, err, 2*each)
	}
}
