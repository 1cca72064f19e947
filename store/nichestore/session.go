package nichestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
)

// Store implements niche.SubscriberSessions (table from
// 0035_subscriber_sessions).
var _ niche.SubscriberSessions = (*Store)(nil)

// CreateSubscriberSession implements niche.SubscriberSessions.
func (ns *Store) CreateSubscriberSession(ctx context.Context, s niche.SubscriberSession) error {
	if s.Hash == "" || s.TokenHash == "" {
		return errors.New("store: create session: hash and token hash are required")
	}
	_, err := ns.db.Exec(ctx, `INSERT INTO niche_subscriber_sessions (session_hash, token_hash, created_at, expires_at)
		VALUES (?, ?, ?, ?)`, s.Hash, s.TokenHash, store.ToMicros(s.CreatedAt), store.ToMicros(s.ExpiresAt))
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	return nil
}

// SubscriberSession implements niche.SubscriberSessions.
func (ns *Store) SubscriberSession(ctx context.Context, hash string, now time.Time) (*niche.SubscriberSession, error) {
	var s niche.SubscriberSession
	var created, expires int64
	err := ns.db.QueryRow(ctx, `SELECT session_hash, token_hash, created_at, expires_at FROM niche_subscriber_sessions
		WHERE session_hash = ? AND expires_at > ?`, hash, store.ToMicros(now)).Scan(&s.Hash, &s.TokenHash, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, niche.ErrSessionNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: session: %w", err)
	}
	s.CreatedAt, s.ExpiresAt = store.FromMicros(created), store.FromMicros(expires)
	return &s, nil
}

// DeleteSubscriberSession implements niche.SubscriberSessions.
func (ns *Store) DeleteSubscriberSession(ctx context.Context, hash string) error {
	if _, err := ns.db.Exec(ctx, "DELETE FROM niche_subscriber_sessions WHERE session_hash = ?", hash); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

// PruneSubscriberSessions implements niche.SubscriberSessions.
func (ns *Store) PruneSubscriberSessions(ctx context.Context, before time.Time) (int64, error) {
	res, err := ns.db.Exec(ctx, "DELETE FROM niche_subscriber_sessions WHERE expires_at <= ?", store.ToMicros(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune sessions: %w", err)
	}
	return res.RowsAffected()
}
