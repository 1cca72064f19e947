package claimsmem

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/internal/memstore"
)

// Store is an in-memory claims.Store: verification results, their
// access grants and idempotency leases in maps under one lock, with the
// SQL store's rules (it passes claimstest.TestStore). Results are kept in
// their JSON form and times to the microsecond, as a database keeps them.
// The zero value is not usable: call New. Safe for concurrent use; it is
// one process's store, so leases do not span instances.
type Store struct {
	mu   sync.Mutex
	now  func() time.Time
	recs map[string]*memVerification
	idem map[claims.IdempotencyKey]*memIdempotency
}

type memVerification struct {
	rec    claims.Record // Result, Access and OrderTokenHash unset
	result *claims.Result
	grants []memGrant
}

type memGrant struct {
	hash, order string
	at          time.Time
}

type memIdempotency struct {
	hash      string
	done      bool
	id        string // verification id once done
	token     string // lease token while pending
	expires   time.Time
	createdAt time.Time
}

var _ claims.Store = (*Store)(nil)

// New returns an empty store whose clock (for records saved
// without a creation time) is now; nil means time.Now.
func New(now func() time.Time) *Store {
	return &Store{now: memstore.Clock(now), recs: map[string]*memVerification{}, idem: map[claims.IdempotencyKey]*memIdempotency{}}
}

// AcquireIdempotency implements claims.Store.
func (m *Store) AcquireIdempotency(ctx context.Context, key claims.IdempotencyKey, requestHash string, now time.Time, ttl time.Duration) (*claims.IdempotencyState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if row, ok := m.idem[key]; ok {
		switch {
		case row.hash != requestHash:
			return nil, claims.ErrIdempotencyConflict
		case row.done:
			return &claims.IdempotencyState{VerificationID: row.id}, nil
		case row.expires.After(memstore.Time(now)):
			return &claims.IdempotencyState{InFlightUntil: row.expires}, nil
		}
	}
	// No row, or a pending row whose holder died: lease it.
	lease := &claims.Lease{Key: key, Token: ids.Token("lease_"), Expires: now.Add(ttl).UTC()}
	row, ok := m.idem[key]
	if !ok {
		row = &memIdempotency{hash: requestHash, createdAt: memstore.Time(now)}
		m.idem[key] = row
	}
	row.token, row.expires = lease.Token, memstore.Time(lease.Expires)
	return &claims.IdempotencyState{Lease: lease}, nil
}

// ReleaseIdempotency implements claims.Store.
func (m *Store) ReleaseIdempotency(ctx context.Context, key claims.IdempotencyKey, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if row, ok := m.idem[key]; ok && !row.done && row.token == token {
		delete(m.idem, key)
	}
	return nil
}

// SaveVerification implements claims.Store.
func (m *Store) SaveVerification(ctx context.Context, rec *claims.Record, lease *claims.Lease) error {
	if rec == nil || rec.Result == nil || rec.Result.VerificationID == "" {
		return errors.New("claimsmem: save verification: empty record")
	}
	result, err := memstore.Copy(rec.Result)
	if err != nil {
		return fmt.Errorf("claimsmem: save verification: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := rec.Result.VerificationID
	if _, ok := m.recs[id]; ok {
		return fmt.Errorf("claimsmem: save verification %s: %w", id, claims.ErrExists)
	}
	created := rec.CreatedAt
	if created.IsZero() {
		created = m.now()
	}
	v := &memVerification{result: result, rec: claims.Record{Tier: rec.Tier, Scope: rec.Scope, RequestHash: rec.RequestHash,
		Provider: rec.Provider, OrderID: rec.OrderID, PageIDs: slices.Clone(rec.PageIDs), CreatedAt: memstore.Time(created)}}
	if rec.OrderTokenHash != "" {
		v.grants = append(v.grants, memGrant{hash: rec.OrderTokenHash, order: rec.OrderID, at: v.rec.CreatedAt})
	}
	m.recs[id] = v
	if lease != nil {
		if row, ok := m.idem[lease.Key]; ok && !row.done && row.token == lease.Token {
			row.done, row.id, row.token = true, id, ""
		}
	}
	return nil
}

// GrantVerification implements claims.Store.
func (m *Store) GrantVerification(ctx context.Context, id, orderID, orderTokenHash string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.recs[id]
	if !ok {
		return claims.ErrNotFound
	}
	if !slices.ContainsFunc(v.grants, func(g memGrant) bool { return g.hash == orderTokenHash }) {
		v.grants = append(v.grants, memGrant{hash: orderTokenHash, order: orderID, at: memstore.Time(now)})
	}
	return nil
}

// Verification implements claims.Store.
func (m *Store) Verification(ctx context.Context, id string) (*claims.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.recs[id]
	if !ok || !ids.Valid(ids.Verification, id) {
		return nil, claims.ErrNotFound
	}
	rec, err := v.record()
	if err != nil {
		return nil, err
	}
	grants := slices.Clone(v.grants)
	slices.SortStableFunc(grants, func(a, b memGrant) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.hash, b.hash))
	})
	rec.Access, rec.Grants = []string{}, []claims.Grant{}
	for _, g := range grants {
		rec.Access = append(rec.Access, g.hash)
		rec.Grants = append(rec.Grants, claims.Grant{OrderID: g.order, OrderTokenHash: g.hash})
		if g.order == rec.OrderID && rec.OrderTokenHash == "" {
			rec.OrderTokenHash = g.hash
		}
	}
	return rec, nil
}

// record returns a copy of the stored record without its grants.
func (v *memVerification) record() (*claims.Record, error) {
	result, err := memstore.Copy(v.result)
	if err != nil {
		return nil, fmt.Errorf("claimsmem: verification: %w", err)
	}
	rec := v.rec
	rec.Result = result
	rec.PageIDs = slices.Clone(v.rec.PageIDs)
	return &rec, nil
}

// LatestVerification implements claims.Store.
func (m *Store) LatestVerification(ctx context.Context, tier, requestHash, provider string, since time.Time) (*claims.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best *memVerification
	var bestID string
	for id, v := range m.recs {
		observed := memstore.Time(v.result.ObservedAt)
		if v.rec.Tier != tier || v.rec.RequestHash != requestHash || v.rec.Provider != provider || observed.Before(memstore.Time(since)) {
			continue
		}
		if best == nil || observed.After(memstore.Time(best.result.ObservedAt)) ||
			observed.Equal(memstore.Time(best.result.ObservedAt)) && id < bestID {
			best, bestID = v, id
		}
	}
	if best == nil {
		return nil, claims.ErrNotFound
	}
	return best.record()
}

// PurgeVerifications implements claims.Store.
func (m *Store) PurgeVerifications(ctx context.Context, before time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	before = memstore.Time(before)
	var n int64
	for key, row := range m.idem {
		if v, ok := m.recs[row.id]; ok && row.done && v.rec.CreatedAt.Before(before) ||
			!row.done && row.createdAt.Before(before) && row.expires.Before(before) {
			delete(m.idem, key)
		}
	}
	for id, v := range m.recs {
		if v.rec.CreatedAt.Before(before) {
			delete(m.recs, id)
			n++
		}
	}
	return n, nil
}
