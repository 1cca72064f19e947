package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/assaykit/assay/snapshot"
)

// The capture of each signal's page is kept in the signal's row
// (snapshot_id, and the record as JSON in snapshot) so that every read of
// signals returns it without a join; snapshot_holds exempts the captured
// records from the snapshot retention purge while evaluations need them
// (migration 0011).

var _ snapshot.HoldStore = (*DB)(nil)

// SetSignalSnapshots implements niche.EvidenceStore.
func (db *DB) SetSignalSnapshots(ctx context.Context, snaps map[string]*snapshot.Snapshot) error {
	return db.inTx(ctx, func(tx *Tx) error {
		for _, id := range slices.Sorted(maps.Keys(snaps)) { // a fixed lock order
			s := snaps[id]
			if s == nil {
				continue
			}
			b, err := json.Marshal(s)
			if err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `UPDATE niche_signals SET snapshot_id = ?, snapshot = ? WHERE id = ?`, s.ID, string(b), id); err != nil {
				return fmt.Errorf("store: set signal snapshot: %w", err)
			}
		}
		return nil
	})
}

// releasable is the condition of a captured signal no evaluation needs:
// rejected, or linked by no draft or published evaluation.
const releasable = `snapshot_id <> '' AND (state = 'rejected' OR NOT EXISTS (SELECT 1 FROM niche_links l
	JOIN niche_evaluations e ON e.id = l.niche_id WHERE l.signal_id = niche_signals.id AND e.status <> 'withdrawn'))`

// ReleaseSignalSnapshots implements niche.EvidenceStore.
func (db *DB) ReleaseSignalSnapshots(ctx context.Context, scope []string, limit int) ([]string, error) {
	if scope != nil && len(scope) == 0 {
		return []string{}, nil
	}
	q, args := `SELECT id, snapshot_id FROM niche_signals WHERE `+releasable, []any{}
	if scope != nil {
		q += ` AND id IN (` + placeholders(len(scope)) + `)`
		args = anyArgs(scope)
	}
	args = append(args, limit)
	out := []string{}
	err := db.inTx(ctx, func(tx *Tx) error {
		out = out[:0]
		rows, err := tx.query(ctx, q+` ORDER BY id LIMIT ?`, args...)
		if err != nil {
			return err
		}
		var sigs []string
		for rows.Next() {
			var id, snap string
			if err := rows.Scan(&id, &snap); err != nil {
				rows.Close()
				return err
			}
			sigs, out = append(sigs, id), append(out, snap)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(sigs) == 0 {
			return err
		}
		_, err = tx.exec(ctx, `UPDATE niche_signals SET snapshot_id = '', snapshot = ''
			WHERE id IN (`+placeholders(len(sigs))+`)`, anyArgs(sigs)...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: release signal snapshots: %w", err)
	}
	return out, nil
}

// HoldSnapshots implements snapshot.HoldStore.
func (db *DB) HoldSnapshots(ctx context.Context, ids []string) error {
	return db.inTx(ctx, func(tx *Tx) error {
		for _, id := range ids {
			if _, err := tx.exec(ctx, `INSERT INTO snapshot_holds (snapshot_id) VALUES (?) ON CONFLICT DO NOTHING`, id); err != nil {
				return fmt.Errorf("store: hold snapshot: %w", err)
			}
		}
		return nil
	})
}

// SnapshotHeld implements snapshot.HoldStore.
func (db *DB) SnapshotHeld(ctx context.Context, id string) (bool, error) {
	var one int
	err := db.queryRow(ctx, `SELECT 1 FROM snapshot_holds WHERE snapshot_id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: snapshot held: %w", err)
	}
	return true, nil
}

// ReleaseSnapshots implements snapshot.HoldStore.
func (db *DB) ReleaseSnapshots(ctx context.Context, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		if _, err := db.exec(ctx, `DELETE FROM snapshot_holds WHERE snapshot_id IN (`+placeholders(len(chunk))+`)`, anyArgs(chunk)...); err != nil {
			return fmt.Errorf("store: release snapshots: %w", err)
		}
	}
	return nil
}
