package nichestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
)

// Store implements niche.SubscriptionStore (tables from 0006_subscriptions).
//
// Locking: every transaction that changes tokens or checkouts of a
// subscription first locks the subscription row, then the checkout, then
// tokens, so concurrent claims, rotations and reissues serialise per
// subscription without deadlocks. De-duplication of billing events relies
// on the primary key of niche_billing_events: of two concurrent
// transactions inserting one event id, the second waits for the first and
// then inserts nothing.
var _ niche.SubscriptionStore = (*Store)(nil)

const subscriptionColumns = `id, provider, provider_ref, customer_ref, price_ref, status, current_period_end,
	cancel_at_period_end, past_due_since, synced_at, created_at, updated_at`

type subRowScanner interface{ Scan(dest ...any) error }

func scanSubscription(r subRowScanner) (*niche.Subscription, error) {
	var s niche.Subscription
	var periodEnd, pastDue, synced, created, updated int64
	if err := r.Scan(&s.ID, &s.Provider, &s.ProviderRef, &s.CustomerRef, &s.PriceRef, &s.Status, &periodEnd,
		&s.CancelAtPeriodEnd, &pastDue, &synced, &created, &updated); err != nil {
		return nil, err
	}
	s.CurrentPeriodEnd, s.PastDueSince = store.FromMicros(periodEnd), store.FromMicros(pastDue)
	s.SyncedAt, s.CreatedAt, s.UpdatedAt = store.FromMicros(synced), store.FromMicros(created), store.FromMicros(updated)
	return &s, nil
}

// notFound translates sql.ErrNoRows into the given sentinel.
func subNotFound(err, sentinel error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return sentinel
	}
	return err
}

// SubscriptionEventSeen implements niche.SubscriptionStore.
func (ns *Store) SubscriptionEventSeen(ctx context.Context, provider, eventID string) (bool, error) {
	var n int
	err := ns.db.QueryRow(ctx, "SELECT COUNT(*) FROM niche_billing_events WHERE provider = ? AND event_id = ?",
		provider, eventID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: billing event seen: %w", err)
	}
	return n > 0, nil
}

// ApplySubscriptionEvent implements niche.SubscriptionStore.
func (ns *Store) ApplySubscriptionEvent(ctx context.Context, ev niche.BillingEvent) (bool, error) {
	if ev.Provider == "" || ev.ID == "" {
		return false, errors.New("store: apply billing event: provider and event id are required")
	}
	for _, c := range ev.Changes {
		if c.ProviderRef == "" || (c.Create && c.Status == "") {
			return false, fmt.Errorf("store: apply billing event %s: incomplete change %+v", ev.ID, c)
		}
	}
	var applied bool
	err := ns.db.InTx(ctx, func(tx *store.Tx) error {
		applied = false
		res, err := tx.Exec(ctx, `INSERT INTO niche_billing_events (provider, event_id, event_type, received_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (provider, event_id) DO NOTHING`,
			ev.Provider, ev.ID, ev.Type, store.ToMicros(ev.ReceivedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // duplicate: nothing else happens
		}
		for _, c := range ev.Changes {
			if err := ns.applySubscriptionChange(ctx, tx, ev, c); err != nil {
				return err
			}
		}
		applied = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: apply billing event %s: %w", ev.ID, err)
	}
	return applied, nil
}

func (ns *Store) lockSubscriptionByRef(ctx context.Context, tx *store.Tx, provider, ref string) (*niche.Subscription, error) {
	return scanSubscription(tx.QueryRow(ctx, "SELECT "+subscriptionColumns+
		" FROM niche_subscriptions WHERE provider = ? AND provider_ref = ?"+ns.db.ForUpdate(), provider, ref))
}

func (ns *Store) lockSubscription(ctx context.Context, tx *store.Tx, id string) (*niche.Subscription, error) {
	return scanSubscription(tx.QueryRow(ctx, "SELECT "+subscriptionColumns+
		" FROM niche_subscriptions WHERE id = ?"+ns.db.ForUpdate(), id))
}

func (ns *Store) applySubscriptionChange(ctx context.Context, tx *store.Tx, ev niche.BillingEvent, c niche.SubscriptionChange) error {
	now := ns.db.NowMicros()
	observed := store.ToMicros(c.ObservedAt)
	cur, err := ns.lockSubscriptionByRef(ctx, tx, ev.Provider, c.ProviderRef)
	if errors.Is(err, sql.ErrNoRows) {
		if !c.Create {
			return nil // not a subscription we sold
		}
		pastDue := int64(0)
		if c.Status == niche.SubscriptionPastDue {
			pastDue = observed
		}
		if _, err := tx.Exec(ctx, `INSERT INTO niche_subscriptions (id, provider, provider_ref, customer_ref, price_ref,
			status, current_period_end, cancel_at_period_end, past_due_since, synced_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (provider, provider_ref) DO NOTHING`,
			ids.New(niche.SubscriptionIDPrefix), ev.Provider, c.ProviderRef, c.CustomerRef, c.PriceRef, c.Status,
			store.ToMicros(c.CurrentPeriodEnd), c.CancelAtPeriodEnd, pastDue, observed, now, now); err != nil {
			return err
		}
		cur, err = ns.lockSubscriptionByRef(ctx, tx, ev.Provider, c.ProviderRef)
		if err != nil {
			return err
		}
	} else if err != nil {
		return err
	} else if observed >= store.ToMicros(cur.SyncedAt) {
		next := *cur
		if c.Status != "" {
			next.Status, next.CancelAtPeriodEnd = c.Status, c.CancelAtPeriodEnd
		}
		if c.CustomerRef != "" {
			next.CustomerRef = c.CustomerRef
		}
		if c.PriceRef != "" {
			next.PriceRef = c.PriceRef
		}
		if !c.CurrentPeriodEnd.IsZero() {
			next.CurrentPeriodEnd = c.CurrentPeriodEnd
		}
		pastDue := int64(0)
		if next.Status == niche.SubscriptionPastDue {
			pastDue = store.ToMicros(cur.PastDueSince)
			if cur.Status != niche.SubscriptionPastDue || pastDue == 0 {
				pastDue = observed
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE niche_subscriptions SET customer_ref = ?, price_ref = ?, status = ?,
			current_period_end = ?, cancel_at_period_end = ?, past_due_since = ?, synced_at = ?, updated_at = ?
			WHERE id = ?`, next.CustomerRef, next.PriceRef, next.Status, store.ToMicros(next.CurrentPeriodEnd),
			next.CancelAtPeriodEnd, pastDue, observed, now, cur.ID); err != nil {
			return err
		}
	}
	if c.CheckoutSession != "" {
		if _, err := tx.Exec(ctx, `INSERT INTO niche_subscription_checkouts (provider, session_hash, subscription_id,
			completed_at) VALUES (?, ?, ?, ?) ON CONFLICT (provider, session_hash) DO NOTHING`,
			ev.Provider, c.CheckoutSession, cur.ID, store.ToMicros(ev.ReceivedAt)); err != nil {
			return err
		}
	}
	return nil
}

// PruneSubscriptionEvents implements niche.SubscriptionStore.
func (ns *Store) PruneSubscriptionEvents(ctx context.Context, before time.Time) (int64, error) {
	res, err := ns.db.Exec(ctx, "DELETE FROM niche_billing_events WHERE received_at < ?", store.ToMicros(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune billing events: %w", err)
	}
	return res.RowsAffected()
}

// Subscription implements niche.SubscriptionStore.
func (ns *Store) Subscription(ctx context.Context, id string) (*niche.Subscription, error) {
	s, err := scanSubscription(ns.db.QueryRow(ctx, "SELECT "+subscriptionColumns+" FROM niche_subscriptions WHERE id = ?", id))
	if err != nil {
		return nil, subNotFound(err, niche.ErrSubscriptionNotFound)
	}
	return s, nil
}

// SubscriptionByRef implements niche.SubscriptionStore.
func (ns *Store) SubscriptionByRef(ctx context.Context, provider, providerRef string) (*niche.Subscription, error) {
	s, err := scanSubscription(ns.db.QueryRow(ctx, "SELECT "+subscriptionColumns+
		" FROM niche_subscriptions WHERE provider = ? AND provider_ref = ?", provider, providerRef))
	if err != nil {
		return nil, subNotFound(err, niche.ErrSubscriptionNotFound)
	}
	return s, nil
}

// SubscriptionByToken implements niche.SubscriptionStore.
func (ns *Store) SubscriptionByToken(ctx context.Context, tokenHash string) (*niche.Subscription, error) {
	s, err := scanSubscription(ns.db.QueryRow(ctx, `SELECT s.id, s.provider, s.provider_ref, s.customer_ref, s.price_ref,
		s.status, s.current_period_end, s.cancel_at_period_end, s.past_due_since, s.synced_at, s.created_at, s.updated_at
		FROM niche_subscription_tokens t JOIN niche_subscriptions s ON s.id = t.subscription_id
		WHERE t.token_hash = ? AND t.revoked_at = 0`, tokenHash))
	if err != nil {
		return nil, subNotFound(err, niche.ErrSubscriptionTokenInvalid)
	}
	return s, nil
}

// replaceSubscriberTokens revokes the subscription's live tokens and stores newHash.
func replaceSubscriberTokens(ctx context.Context, tx *store.Tx, subscriptionID, newHash string, at int64) error {
	if _, err := tx.Exec(ctx, "UPDATE niche_subscription_tokens SET revoked_at = ? WHERE subscription_id = ? AND revoked_at = 0",
		at, subscriptionID); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, "INSERT INTO niche_subscription_tokens (token_hash, subscription_id, created_at) VALUES (?, ?, ?)",
		newHash, subscriptionID, at)
	return err
}

// ClaimSubscriptionCheckout implements niche.SubscriptionStore.
func (ns *Store) ClaimSubscriptionCheckout(ctx context.Context, provider, sessionHash, tokenHash string, at, completedAfter time.Time) (*niche.Subscription, error) {
	var sub *niche.Subscription
	err := ns.db.InTx(ctx, func(tx *store.Tx) error {
		var subID string
		err := tx.QueryRow(ctx, "SELECT subscription_id FROM niche_subscription_checkouts WHERE provider = ? AND session_hash = ?",
			provider, sessionHash).Scan(&subID)
		if err != nil {
			return subNotFound(err, niche.ErrClaimPending)
		}
		if sub, err = ns.lockSubscription(ctx, tx, subID); err != nil {
			return err
		}
		var completed, claimed int64
		if err := tx.QueryRow(ctx, "SELECT completed_at, claimed_at FROM niche_subscription_checkouts WHERE provider = ? AND session_hash = ?"+
			ns.db.ForUpdate(), provider, sessionHash).Scan(&completed, &claimed); err != nil {
			return err
		}
		switch {
		case claimed != 0:
			return niche.ErrClaimUsed
		case completed < store.ToMicros(completedAfter):
			return niche.ErrClaimExpired
		}
		res, err := tx.Exec(ctx, "UPDATE niche_subscription_checkouts SET claimed_at = ? WHERE provider = ? AND session_hash = ? AND claimed_at = 0",
			store.ToMicros(at), provider, sessionHash)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return errors.Join(niche.ErrClaimUsed, err)
		}
		return replaceSubscriberTokens(ctx, tx, subID, tokenHash, store.ToMicros(at))
	})
	if err != nil {
		return nil, subStoreErr("claim checkout", err)
	}
	return sub, nil
}

// ReplaceSubscriberToken implements niche.SubscriptionStore.
func (ns *Store) ReplaceSubscriberToken(ctx context.Context, oldHash, newHash string, at time.Time) (*niche.Subscription, error) {
	var sub *niche.Subscription
	err := ns.db.InTx(ctx, func(tx *store.Tx) error {
		var subID string
		err := tx.QueryRow(ctx, "SELECT subscription_id FROM niche_subscription_tokens WHERE token_hash = ? AND revoked_at = 0",
			oldHash).Scan(&subID)
		if err != nil {
			return subNotFound(err, niche.ErrSubscriptionTokenInvalid)
		}
		if sub, err = ns.lockSubscription(ctx, tx, subID); err != nil {
			return err
		}
		// Re-check under the lock: a concurrent rotation may have won.
		err = tx.QueryRow(ctx, "SELECT subscription_id FROM niche_subscription_tokens WHERE token_hash = ? AND revoked_at = 0"+
			ns.db.ForUpdate(), oldHash).Scan(&subID)
		if err != nil {
			return subNotFound(err, niche.ErrSubscriptionTokenInvalid)
		}
		return replaceSubscriberTokens(ctx, tx, subID, newHash, store.ToMicros(at))
	})
	if err != nil {
		return nil, subStoreErr("replace token", err)
	}
	return sub, nil
}

// IssueSubscriberToken implements niche.SubscriptionStore.
func (ns *Store) IssueSubscriberToken(ctx context.Context, subscriptionID, newHash string, at time.Time) (*niche.Subscription, error) {
	var sub *niche.Subscription
	err := ns.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if sub, err = ns.lockSubscription(ctx, tx, subscriptionID); err != nil {
			return subNotFound(err, niche.ErrSubscriptionNotFound)
		}
		if _, err := tx.Exec(ctx, "UPDATE niche_subscription_checkouts SET claimed_at = ? WHERE subscription_id = ? AND claimed_at = 0",
			store.ToMicros(at), subscriptionID); err != nil {
			return err
		}
		return replaceSubscriberTokens(ctx, tx, subscriptionID, newHash, store.ToMicros(at))
	})
	if err != nil {
		return nil, subStoreErr("issue token", err)
	}
	return sub, nil
}

// RevokeSubscriberToken implements niche.SubscriptionStore.
func (ns *Store) RevokeSubscriberToken(ctx context.Context, tokenHash string, at time.Time) error {
	res, err := ns.db.Exec(ctx, "UPDATE niche_subscription_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at = 0",
		store.ToMicros(at), tokenHash)
	if err != nil {
		return fmt.Errorf("store: revoke token: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: revoke token: %w", err)
	}
	if n == 0 {
		return niche.ErrSubscriptionTokenInvalid
	}
	return nil
}

// subStoreErr returns domain sentinels unchanged and wraps other failures.
func subStoreErr(op string, err error) error {
	for _, s := range []error{niche.ErrClaimPending, niche.ErrClaimUsed, niche.ErrClaimExpired,
		niche.ErrSubscriptionTokenInvalid, niche.ErrSubscriptionNotFound} {
		if errors.Is(err, s) {
			return err
		}
	}
	return fmt.Errorf("store: %s: %w", op, err)
}
