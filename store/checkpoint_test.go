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
	insert := `INSERT INTO ck_rows (n, v) VALUES (?, 'x')`
	kinds := map[string]func(ctx context.Context, db *store.DB, i int) error{
		"CachedExec": func(ctx context.Context, db *store.DB, i int) error {
			_, err := db.CachedExec(ctx, insert, i)
			return err
		},
		"Exec": func(ctx context.Context, db *store.DB, i int) error {
			_, err := db.Exec(ctx, insert, i)
			return err
		},
		"InTx": func(ctx context.Context, db *store.DB, i int) error {
			return db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, insert, i)
				return err
			})
		},
		"InTxNoSync": func(ctx context.Context, db *store.DB, i int) error {
			return db.InTxNoSync(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, insert, i)
				return err
			})
		},
		"ExecBatchNoSync": func(ctx context.Context, db *store.DB, i int) error {
			_, err := db.ExecBatchNoSync(ctx, store.Stmt{Query: insert, Args: []any{i}})
			return err
		},
	}
	for name, commit := range kinds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := mustOpen(t, storetest.SQLitePath(t))
			if auto := writerPragma(t, db, "wal_autocheckpoint"); auto != store.WalBackstopFrames {
				t.Fatalf("the writer's wal_autocheckpoint is %d, want the backstop %d", auto, store.WalBackstopFrames)
			}
			// The table's creation and the pragma's read are commits too.
			if _, err := db.Exec(ctx, `CREATE TABLE ck_rows (n INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			for i := range store.WalCheckpointCommits {
				if err := commit(ctx, db, i); err != nil {
					t.Fatal(err)
				}
			}
			if frames, copied := db.LastCheckpoint(); frames == 0 || copied != frames {
				t.Fatalf("after %d commits the background checkpoint saw %d frames in the WAL and copied %d", store.WalCheckpointCommits, frames, copied)
			}
			var n int
			if err := db.QueryRow(ctx, `SELECT count(*) FROM ck_rows`).Scan(&n); err != nil || n != store.WalCheckpointCommits {
				t.Fatalf("%d rows, %v", n, err)
			}
		})
	}
}
