package claimsstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/store"
)

// Store implements claims.Store.
var _ claims.Store = (*Store)(nil)

const (
	idemPending = "pending"
	idemDone    = "done"
)

// AcquireIdempotency implements claims.Store. A completed or live row is
// answered from a plain read; only a missing or expired row takes the
// write lock (INSERT … ON CONFLICT DO NOTHING, then the row locked FOR
// UPDATE on PostgreSQL), so concurrent callers on several instances agree
// on one lease holder.
func (cs *Store) AcquireIdempotency(ctx context.Context, key claims.IdempotencyKey, requestHash string, now time.Time, ttl time.Duration) (*claims.IdempotencyState, error) {
	const sel = `SELECT request_hash, state, verification_id, lease_expires FROM claim_idempotency
		WHERE scope = ? AND tier = ? AND idem_key = ?`
	judge := func(hash, state string, vid sql.NullString, expires int64) (*claims.IdempotencyState, bool, error) {
		switch {
		case hash != requestHash:
			return nil, true, claims.ErrIdempotencyConflict
		case state == idemDone && vid.Valid:
			return &claims.IdempotencyState{VerificationID: vid.String}, true, nil
		case expires > store.ToMicros(now):
			return &claims.IdempotencyState{InFlightUntil: store.FromMicros(expires)}, true, nil
		}
		return nil, false, nil
	}
	var hash, state string
	var vid sql.NullString
	var expires int64
	err := cs.db.QueryRow(ctx, sel, key.Scope, key.Tier, key.Key).Scan(&hash, &state, &vid, &expires)
	switch {
	case err == nil:
		if st, ok, err := judge(hash, state, vid, expires); ok {
			return st, err
		}
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("store: idempotency lookup: %w", err)
	}
	lease := &claims.Lease{Key: key, Token: ids.Token("lease_"), Expires: now.Add(ttl).UTC()}
	var out *claims.IdempotencyState
	err = cs.db.InTx(ctx, func(tx *store.Tx) error {
		out = nil
		res, err := tx.Exec(ctx, `INSERT INTO claim_idempotency
			(scope, tier, idem_key, request_hash, state, verification_id, lease_token, lease_expires, created_at)
			VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?) ON CONFLICT (scope, tier, idem_key) DO NOTHING`,
			key.Scope, key.Tier, key.Key, requestHash, idemPending, lease.Token, store.ToMicros(lease.Expires), store.ToMicros(now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out = &claims.IdempotencyState{Lease: lease}
			return nil
		}
		if err := tx.QueryRow(ctx, sel+cs.db.ForUpdate(), key.Scope, key.Tier, key.Key).Scan(&hash, &state, &vid, &expires); err != nil {
			return err
		}
		st, ok, err := judge(hash, state, vid, expires)
		if ok {
			out = st
			return err
		}
		// A pending row whose lease expired: its holder died. Take it over.
		if _, err := tx.Exec(ctx, `UPDATE claim_idempotency SET lease_token = ?, lease_expires = ?, state = ?
			WHERE scope = ? AND tier = ? AND idem_key = ?`,
			lease.Token, store.ToMicros(lease.Expires), idemPending, key.Scope, key.Tier, key.Key); err != nil {
			return err
		}
		out = &claims.IdempotencyState{Lease: lease}
		return nil
	})
	if errors.Is(err, claims.ErrIdempotencyConflict) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("store: idempotency acquire: %w", err)
	}
	return out, nil
}

// ReleaseIdempotency implements claims.Store.
func (cs *Store) ReleaseIdempotency(ctx context.Context, key claims.IdempotencyKey, token string) error {
	_, err := cs.db.Exec(ctx, `DELETE FROM claim_idempotency
		WHERE scope = ? AND tier = ? AND idem_key = ? AND lease_token = ? AND state = ?`,
		key.Scope, key.Tier, key.Key, token, idemPending)
	if err != nil {
		return fmt.Errorf("store: idempotency release: %w", err)
	}
	return nil
}

// ReleaseIdempotencyLeases deletes every pending idempotency row and
// returns how many it deleted. It is for the start-up of a process that
// holds the database alone (SQLite with its data directory locked): every
// pending row then belongs to a process that died mid-call, and a retry
// with the same Idempotency-Key may start again at once instead of being
// refused 409 until the dead holder's lease expires. Never call it while
// another process may be serving calls from the same database.
func (cs *Store) ReleaseIdempotencyLeases(ctx context.Context) (int64, error) {
	res, err := cs.db.Exec(ctx, `DELETE FROM claim_idempotency WHERE state = ?`, idemPending)
	if err != nil {
		return 0, fmt.Errorf("store: idempotency leases: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// SaveVerification implements claims.Store.
func (cs *Store) SaveVerification(ctx context.Context, rec *claims.Record, lease *claims.Lease) error {
	if rec == nil || rec.Result == nil || rec.Result.VerificationID == "" {
		return errors.New("store: save verification: empty record")
	}
	body, err := json.Marshal(rec.Result)
	if err != nil {
		return fmt.Errorf("store: save verification: %w", err)
	}
	var pages *string
	if rec.PageIDs != nil {
		b, err := json.Marshal(rec.PageIDs)
		if err != nil {
			return fmt.Errorf("store: save verification: %w", err)
		}
		pages = store.Ptr(string(b))
	}
	r := rec.Result
	created := rec.CreatedAt
	if created.IsZero() {
		created = cs.db.Now()
	}
	err = cs.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO claim_verifications
			(id, tier, scope, request_hash, provider, status, order_id, result, page_ids, observed_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.VerificationID, rec.Tier, rec.Scope, rec.RequestHash, rec.Provider, string(r.Status), rec.OrderID,
			string(body), pages, store.ToMicros(r.ObservedAt), store.ToMicros(created)); err != nil {
			return err
		}
		if rec.OrderTokenHash != "" {
			if _, err := tx.Exec(ctx, `INSERT INTO claim_verification_access (verification_id, order_token_hash, order_id, created_at)
				VALUES (?, ?, ?, ?)`, r.VerificationID, rec.OrderTokenHash, rec.OrderID, store.ToMicros(created)); err != nil {
				return err
			}
		}
		if lease != nil {
			if _, err := tx.Exec(ctx, `UPDATE claim_idempotency SET state = ?, verification_id = ?, lease_token = NULL
				WHERE scope = ? AND tier = ? AND idem_key = ? AND lease_token = ? AND state = ?`,
				idemDone, r.VerificationID, lease.Key.Scope, lease.Key.Tier, lease.Key.Key, lease.Token, idemPending); err != nil {
				return err
			}
		}
		return nil
	})
	if cs.db.IsUniqueViolation(err) {
		return fmt.Errorf("store: save verification %s: %w", r.VerificationID, claims.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("store: save verification: %w", err)
	}
	return nil
}

// GrantVerification implements claims.Store.
func (cs *Store) GrantVerification(ctx context.Context, id, orderID, orderTokenHash string, now time.Time) error {
	err := cs.db.InTx(ctx, func(tx *store.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, "SELECT 1 FROM claim_verifications WHERE id = ?", id).Scan(&one); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO claim_verification_access (verification_id, order_token_hash, order_id, created_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (verification_id, order_token_hash) DO NOTHING`, id, orderTokenHash, orderID, store.ToMicros(now))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return claims.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: grant verification: %w", err)
	}
	return nil
}

const verificationCols = "id, tier, scope, request_hash, provider, order_id, result, page_ids, created_at"

func scanVerification(row interface{ Scan(...any) error }) (*claims.Record, error) {
	var rec claims.Record
	var id, body string
	var pages sql.NullString
	var created int64
	if err := row.Scan(&id, &rec.Tier, &rec.Scope, &rec.RequestHash, &rec.Provider, &rec.OrderID, &body, &pages, &created); err != nil {
		return nil, err
	}
	if pages.Valid {
		if err := json.Unmarshal([]byte(pages.String), &rec.PageIDs); err != nil || rec.PageIDs == nil {
			return nil, fmt.Errorf("store: verification %s: stored page ids are not a JSON array", id)
		}
	}
	rec.Result = &claims.Result{}
	if err := json.Unmarshal([]byte(body), rec.Result); err != nil {
		return nil, fmt.Errorf("store: verification %s: stored result is not valid JSON: %w", id, err)
	}
	rec.CreatedAt = store.FromMicros(created)
	return &rec, nil
}

// Verification implements claims.Store.
func (cs *Store) Verification(ctx context.Context, id string) (*claims.Record, error) {
	if !ids.Valid(ids.Verification, id) {
		return nil, claims.ErrNotFound
	}
	rec, err := scanVerification(cs.db.QueryRow(ctx, "SELECT "+verificationCols+" FROM claim_verifications WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, claims.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: verification: %w", err)
	}
	rows, err := cs.db.Query(ctx, `SELECT order_token_hash, order_id FROM claim_verification_access
		WHERE verification_id = ? ORDER BY created_at, order_token_hash`, id)
	if err != nil {
		return nil, fmt.Errorf("store: verification access: %w", err)
	}
	defer rows.Close()
	rec.Access, rec.Grants = []string{}, []claims.Grant{}
	for rows.Next() {
		var h, order string
		if err := rows.Scan(&h, &order); err != nil {
			return nil, err
		}
		rec.Access = append(rec.Access, h)
		rec.Grants = append(rec.Grants, claims.Grant{OrderID: order, OrderTokenHash: h})
		if order == rec.OrderID && rec.OrderTokenHash == "" {
			rec.OrderTokenHash = h
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: verification access: %w", err)
	}
	return rec, nil
}

// LatestVerification implements claims.Store.
func (cs *Store) LatestVerification(ctx context.Context, tier, requestHash, provider string, since time.Time) (*claims.Record, error) {
	rec, err := scanVerification(cs.db.QueryRow(ctx, "SELECT "+verificationCols+` FROM claim_verifications
		WHERE tier = ? AND request_hash = ? AND provider = ? AND observed_at >= ?
		ORDER BY observed_at DESC, id LIMIT 1`, tier, requestHash, provider, store.ToMicros(since)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, claims.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: latest verification: %w", err)
	}
	return rec, nil
}

// PurgeVerifications implements claims.Store.
func (cs *Store) PurgeVerifications(ctx context.Context, before time.Time) (int64, error) {
	b := store.ToMicros(before)
	var n int64
	err := cs.db.InTx(ctx, func(tx *store.Tx) error {
		old := "SELECT id FROM claim_verifications WHERE created_at < ?"
		if _, err := tx.Exec(ctx, "DELETE FROM claim_idempotency WHERE verification_id IN ("+old+")", b); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM claim_idempotency WHERE state = ? AND created_at < ? AND lease_expires < ?",
			idemPending, b, b); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM claim_verification_access WHERE verification_id IN ("+old+")", b); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, "DELETE FROM claim_verifications WHERE created_at < ?", b)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: purge verifications: %w", err)
	}
	return n, nil
}
