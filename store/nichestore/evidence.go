package nichestore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store"
)

// The capture of each signal's page is kept in the signal's row
// (snapshot_id, and the record as JSON in snapshot) so that every read of
// signals returns it without a join (migration 0011); the snapshot store's
// holds (snapshotstore, snapshot_holds) exempt the captured records from
// the snapshot retention purge while evaluations need them.

// SetSignalSnapshots implements niche.EvidenceStore.
func (ns *Store) SetSignalSnapshots(ctx context.Context, snaps map[string]*snapshot.Snapshot) error {
	return ns.db.InTx(ctx, func(tx *store.Tx) error {
		for _, id := range slices.Sorted(maps.Keys(snaps)) { // a fixed lock order
			s := snaps[id]
			if s == nil {
				continue
			}
			b, err := json.Marshal(s)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE niche_signals SET snapshot_id = ?, snapshot = ? WHERE id = ?`, s.ID, string(b), id); err != nil {
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
func (ns *Store) ReleaseSignalSnapshots(ctx context.Context, scope []string, limit int) ([]string, error) {
	if scope != nil && len(scope) == 0 {
		return []string{}, nil
	}
	q, args := `SELECT id, snapshot_id FROM niche_signals WHERE `+releasable, []any{}
	if scope != nil {
		q += ` AND id IN (` + store.Placeholders(len(scope)) + `)`
		args = store.Args(scope)
	}
	args = append(args, limit)
	out := []string{}
	err := ns.db.InTx(ctx, func(tx *store.Tx) error {
		out = out[:0]
		rows, err := tx.Query(ctx, q+` ORDER BY id LIMIT ?`, args...)
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
		_, err = tx.Exec(ctx, `UPDATE niche_signals SET snapshot_id = '', snapshot = ''
			WHERE id IN (`+store.Placeholders(len(sigs))+`)`, store.Args(sigs)...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: release signal snapshots: %w", err)
	}
	return out, nil
}
