package snapshotstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store"
)

// Holds (snapshot.HoldStore, migration 0011): snapshot_holds lists the
// records their owners (the niche catalogue's captured signals) exempt
// from the retention purge (DeleteSnapshotsBefore).

var _ snapshot.HoldStore = (*Store)(nil)

// HoldSnapshots implements snapshot.HoldStore.
func (ss *Store) HoldSnapshots(ctx context.Context, ids []string) error {
	return ss.db.InTx(ctx, func(tx *store.Tx) error {
		for _, id := range ids {
			if _, err := tx.Exec(ctx, `INSERT INTO snapshot_holds (snapshot_id) VALUES (?) ON CONFLICT DO NOTHING`, id); err != nil {
				return fmt.Errorf("store: hold snapshot: %w", err)
			}
		}
		return nil
	})
}

// SnapshotHeld implements snapshot.HoldStore.
func (ss *Store) SnapshotHeld(ctx context.Context, id string) (bool, error) {
	var one int
	err := ss.db.QueryRow(ctx, `SELECT 1 FROM snapshot_holds WHERE snapshot_id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: snapshot held: %w", err)
	}
	return true, nil
}

// ReleaseSnapshots implements snapshot.HoldStore.
func (ss *Store) ReleaseSnapshots(ctx context.Context, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		if _, err := ss.db.Exec(ctx, `DELETE FROM snapshot_holds WHERE snapshot_id IN (`+store.Placeholders(len(chunk))+`)`, store.Args(chunk)...); err != nil {
			return fmt.Errorf("store: release snapshots: %w", err)
		}
	}
	return nil
}
