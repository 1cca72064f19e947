package store_test

import (
	"context"
	"testing"

	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/storetest"
)

// TestWriterCommitsCheckpointInBackground: on an SQLite file the writer
// keeps its automatic checkpoint only as a backstop (WalBackstopFrames),
// and its everyday commits (single statements, transactions, relaxed
// batches) are copied into the database file by background checkpoints
// (fewer commits than the backstop's frames: none of them checkpointed on
// the writer).
func TestWriterCommitsCheckpointInBackground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mustOpen(t, storetest.SQLitePath(t))
	if auto := writerPragma(t, db, "wal_autocheckpoint"); auto != store.WalBackstopFrames {
		t.Fatalf("the writer's wal_autocheckpoint is %d, want the backstop %d", auto, store.WalBackstopFrames)
	}
	if _, err := db.Exec(ctx, `CREATE TABLE ck_rows (n INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i := range 2 * store.WalCheckpointCommits {
		var err error
		switch i % 3 {
		case 0:
			_, err = db.CachedExec(ctx, `INSERT INTO ck_rows (n, v) VALUES (?, 'cached')`, i)
		case 1:
			err = db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO ck_rows (n, v) VALUES (?, 'tx')`, i)
				return err
			})
		default:
			_, err = db.ExecBatchNoSync(ctx, store.Stmt{Query: `INSERT INTO ck_rows (n, v) VALUES (?, 'batch')`, Args: []any{i}})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if frames, copied := db.LastCheckpoint(); frames == 0 || copied != frames {
		t.Fatalf("after %d commits the background checkpoint saw %d frames in the WAL and copied %d", 2*store.WalCheckpointCommits, frames, copied)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM ck_rows`).Scan(&n); err != nil || n != 2*store.WalCheckpointCommits {
		t.Fatalf("%d rows, %v", n, err)
	}
}
