package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/storetest"
)

// writerPragma reads an SQLite pragma on the writer connection.
func writerPragma(t *testing.T, db *store.DB, name string) int64 {
	t.Helper()
	var v int64
	if err := db.InTx(context.Background(), func(tx *store.Tx) error {
		return tx.QueryRow(context.Background(), "PRAGMA "+name).Scan(&v)
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestBulkTxCheckpointsInBackground: on an SQLite file, a bulk
// transaction's commit leaves its WAL frames to a checkpoint that runs on
// a reader connection after it, which copies them all into the database
// file; the writer connection gets its settings back (the automatic
// checkpoint and temporary storage at once, the page cache once no bulk
// transaction has followed for a while); the rows are there after the
// database is closed and opened again.
func TestBulkTxCheckpointsInBackground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := storetest.SQLitePath(t)
	db := mustOpen(t, path)
	autoBefore, tempBefore, cacheBefore := writerPragma(t, db, "wal_autocheckpoint"), writerPragma(t, db, "temp_store"), writerPragma(t, db, "cache_size")
	if _, err := db.Exec(ctx, `CREATE TABLE bulk_rows (n INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for batch := range 3 {
		rows := make([][]any, 1000)
		for i := range rows {
			rows[i] = []any{int64(batch*1000 + i), strings.Repeat("x", 1000)}
		}
		if err := db.InBulkTx(ctx, func(tx *store.Tx) error {
			return tx.InsertRows(ctx, "bulk_rows", []string{"n", "v"}, rows)
		}); err != nil {
			t.Fatal(err)
		}
	}
	frames, copied := db.LastCheckpoint()
	// The last batch alone is 1 MB of rows, at least 250 pages of 4 KB
	// (the WAL starts again from its beginning when a batch begins with
	// every frame checkpointed).
	if frames < 250 || copied != frames {
		t.Fatalf("the background checkpoint after the bulk transactions: %d frames in the WAL, %d copied", frames, copied)
	}
	if auto, temp := writerPragma(t, db, "wal_autocheckpoint"), writerPragma(t, db, "temp_store"); auto != autoBefore || temp != tempBefore {
		t.Fatalf("after a bulk transaction the writer has wal_autocheckpoint %d (before %d), temp_store %d (before %d)", auto, autoBefore, temp, tempBefore)
	}
	deadline := time.Now().Add(10 * time.Second)
	for writerPragma(t, db, "cache_size") != cacheBefore {
		if time.Now().After(deadline) {
			t.Fatalf("the writer's page cache is still %d, not %d as before the bulk transactions", writerPragma(t, db, "cache_size"), cacheBefore)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, path)
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM bulk_rows`).Scan(&n); err != nil || n != 3000 {
		t.Fatalf("after reopening: %d rows, %v", n, err)
	}
	if err := db.CheckIntegrity(ctx); err != nil {
		t.Fatal(err)
	}
}
