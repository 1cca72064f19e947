package nichestore

import (
	"context"
	"fmt"
	"strings"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
)

// This file is the change feed of the niche search rows (niche.ChangeFeed,
// migration 0021): niche_feed holds one entry per change of a published
// evaluation's search row, numbered by niche_version.v in commit order,
// written by triggers in the transaction of the change (so no write path
// can forget it); niche_version.pruned is the last entry pruned. On
// PostgreSQL each logging statement notifies the channel
// niche_feed:<schema> at commit (WatchSearchChanges); SQLite is polled.

var (
	_ niche.ChangeFeed     = (*Store)(nil)
	_ niche.ChangeNotifier = (*Store)(nil)
)

// SearchChanges implements niche.ChangeFeed.
func (ns *Store) SearchChanges(ctx context.Context, after int64, limit int) ([]niche.SearchChange, bool, error) {
	var pruned int64
	if err := ns.db.CachedQueryRow(ctx, `SELECT pruned FROM niche_version WHERE id = 1`).Scan(&pruned); err != nil {
		return nil, false, fmt.Errorf("store: search changes: %w", err)
	}
	if after < pruned {
		return nil, true, nil
	}
	rows, err := ns.db.CachedQuery(ctx, `SELECT seq, niche_id FROM niche_feed WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, false, fmt.Errorf("store: search changes: %w", err)
	}
	defer rows.Close()
	var out []niche.SearchChange
	for rows.Next() {
		var c niche.SearchChange
		if err := rows.Scan(&c.Seq, &c.ID); err != nil {
			return nil, false, fmt.Errorf("store: search changes: %w", err)
		}
		out = append(out, c)
	}
	return out, false, rows.Err()
}

// NotifiesSearchChanges implements niche.ChangeNotifier: true on
// PostgreSQL.
func (ns *Store) NotifiesSearchChanges() bool { return ns.db.CanListen() }

// WatchSearchChanges implements niche.ChangeNotifier on PostgreSQL
// (LISTEN on one connection of the reader pool, held until ctx is done or
// the connection fails). On SQLite it returns store.ErrNoNotifications at
// once: the engine polls.
func (ns *Store) WatchSearchChanges(ctx context.Context, notify func()) error {
	if !ns.db.CanListen() {
		return store.ErrNoNotifications
	}
	var schema string
	if err := ns.db.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("store: watch search changes: %w", err)
	}
	return ns.db.Listen(ctx, `"niche_feed:`+strings.ReplaceAll(schema, `"`, `""`)+`"`, notify)
}

// PruneNicheFeed deletes the niche change feed's entries but the last
// keep (at least 1) and returns how many it deleted. An engine whose
// index had not applied them loads it anew (a gap). The example server
// runs it with its purge.
func (ns *Store) PruneNicheFeed(ctx context.Context, keep int64) (int64, error) {
	keep = max(keep, 1)
	var n int64
	err := ns.db.InTx(ctx, func(tx *store.Tx) error {
		var v, pruned int64
		if err := tx.QueryRow(ctx, `SELECT v, pruned FROM niche_version WHERE id = 1`+ns.db.ForUpdate()).Scan(&v, &pruned); err != nil {
			return err
		}
		cut := v - keep
		if cut <= pruned {
			n = 0
			return nil
		}
		res, err := tx.Exec(ctx, `DELETE FROM niche_feed WHERE seq <= ?`, cut)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		_, err = tx.Exec(ctx, `UPDATE niche_version SET pruned = ? WHERE id = 1`, cut)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: prune niche feed: %w", err)
	}
	return n, nil
}
