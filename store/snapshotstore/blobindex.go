package snapshotstore

import (
	"context"
	"fmt"
	"time"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store"
)

// This file is the index of snapshot content kept outside the database
// (store/s3blobs): snapshot_blob_index (migration 0020) holds each blob's
// last-put time. The object store itself cannot make "delete if not
// reused since" atomic (a conditional delete on a modification time is no
// S3 operation), so the decision is taken here, under the row's lock:
//
//   - a put upserts the row (ExternalBlobPut) before it looks for the
//     object; an upsert waits for a deletion of the same blob under way,
//     and then finds the object gone and uploads it again;
//   - a deletion (DeleteExternalBlob) removes the row only if it was last
//     put before the purge's time and no snapshot record uses its content,
//     deletes the object while it holds the row, and commits after.

// ExternalBlobPut records that blob sum, of size bytes, was put now:
// its index row is created or its last-put time refreshed. It waits for a
// deletion of the same blob under way (DeleteExternalBlob) to finish.
func (ss *Store) ExternalBlobPut(ctx context.Context, sum string, size int64) error {
	if !snapshot.ValidSum(sum) || size < 0 {
		return fmt.Errorf("%w: content address %q", snapshot.ErrInvalid, sum)
	}
	_, err := ss.db.Exec(ctx, `INSERT INTO snapshot_blob_index (sha256, size, put_at) VALUES (?, ?, ?)
		ON CONFLICT (sha256) DO UPDATE SET put_at = excluded.put_at, size = excluded.size`, sum, size, ss.db.NowMicros())
	if err != nil {
		return fmt.Errorf("store: external blob put: %w", err)
	}
	return nil
}

// ExternalBlobsBefore lists the indexed blobs last put before t, in
// address order.
func (ss *Store) ExternalBlobsBefore(ctx context.Context, t time.Time) ([]string, error) {
	out, err := ss.db.TextRows(ctx, `SELECT sha256 FROM snapshot_blob_index WHERE put_at < ? ORDER BY sha256`, store.ToMicros(t))
	if err != nil {
		return nil, fmt.Errorf("store: external blobs: %w", err)
	}
	return out, nil
}

// DeleteExternalBlob removes the index row of blob sum if it was last put
// before t and no snapshot record uses the content, calling del (which
// deletes the object) while the row is locked and before the removal
// commits: an error from del keeps the row (the blob is listed again by
// the next purge). It reports whether the blob was deleted.
func (ss *Store) DeleteExternalBlob(ctx context.Context, sum string, t time.Time, del func(context.Context) error) (bool, error) {
	if !snapshot.ValidSum(sum) {
		return false, nil
	}
	deleted := false
	err := ss.db.InTx(ctx, func(tx *store.Tx) error {
		deleted = false
		res, err := tx.Exec(ctx, `DELETE FROM snapshot_blob_index WHERE sha256 = ? AND put_at < ?
			AND NOT EXISTS (SELECT 1 FROM snapshots WHERE raw_sha256 = ?)`, sum, store.ToMicros(t), sum)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		if err := del(ctx); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: delete external blob: %w", err)
	}
	return deleted, nil
}
