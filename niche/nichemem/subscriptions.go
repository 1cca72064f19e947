package nichemem

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/internal/memstore"
	"github.com/assaykit/assay/niche"
)

// Subscriptions is an in-memory niche.SubscriptionStore: subscriptions,
// subscriber token hashes, completed checkouts and processed event ids in
// maps under one lock, with the SQL store's rules (it passes
// nichetest.TestSubscriptionStore). The zero value is not usable: call
// NewSubscriptions. Safe for concurrent use; it is one process's store.
type Subscriptions struct {
	mu        sync.Mutex
	now       func() time.Time
	events    map[[2]string]time.Time // (provider, event id) → received at
	subs      map[string]*niche.Subscription
	byRef     map[[2]string]string // (provider, processor ref) → id
	checkouts map[[2]string]*memCheckout
	tokens    map[string]*memToken // by token hash
}

type memCheckout struct {
	subscriptionID       string
	completed, claimedAt time.Time
}

type memToken struct {
	subscriptionID string
	revokedAt      time.Time // zero while live
}

var _ niche.SubscriptionStore = (*Subscriptions)(nil)

// NewSubscriptions returns an empty store whose clock (for the creation
// and update times of subscriptions) is now; nil means time.Now.
func NewSubscriptions(now func() time.Time) *Subscriptions {
	return &Subscriptions{now: memstore.Clock(now), events: map[[2]string]time.Time{}, subs: map[string]*niche.Subscription{},
		byRef: map[[2]string]string{}, checkouts: map[[2]string]*memCheckout{}, tokens: map[string]*memToken{}}
}

// SubscriptionEventSeen implements niche.SubscriptionEvents.
func (m *Subscriptions) SubscriptionEventSeen(ctx context.Context, provider, eventID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.events[[2]string{provider, eventID}]
	return ok, nil
}

// ApplySubscriptionEvent implements niche.SubscriptionEvents. The event is
// checked whole before anything changes.
func (m *Subscriptions) ApplySubscriptionEvent(ctx context.Context, ev niche.BillingEvent) (bool, error) {
	if ev.Provider == "" || ev.ID == "" {
		return false, errors.New("nichemem: apply billing event: provider and event id are required")
	}
	for _, c := range ev.Changes {
		if c.ProviderRef == "" || (c.Create && c.Status == "") {
			return false, fmt.Errorf("nichemem: apply billing event %s: incomplete change %+v", ev.ID, c)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]string{ev.Provider, ev.ID}
	if _, ok := m.events[key]; ok {
		return false, nil
	}
	m.events[key] = memstore.Time(ev.ReceivedAt)
	for _, c := range ev.Changes {
		m.applyChange(ev, c)
	}
	return true, nil
}

// applyChange applies one change of ev: it creates the subscription (with
// Create), or updates it unless the change is older than the stored
// state, and links the change's checkout.
func (m *Subscriptions) applyChange(ev niche.BillingEvent, c niche.SubscriptionChange) {
	now := memstore.Time(m.now())
	observed := memstore.Time(c.ObservedAt)
	ref := [2]string{ev.Provider, c.ProviderRef}
	cur := m.subs[m.byRef[ref]]
	switch {
	case cur == nil && !c.Create:
		return // not a subscription we sold
	case cur == nil:
		cur = &niche.Subscription{ID: ids.New(niche.SubscriptionIDPrefix), Provider: ev.Provider, ProviderRef: c.ProviderRef,
			CustomerRef: c.CustomerRef, PriceRef: c.PriceRef, Status: c.Status, CurrentPeriodEnd: memstore.Time(c.CurrentPeriodEnd),
			CancelAtPeriodEnd: c.CancelAtPeriodEnd, SyncedAt: observed, CreatedAt: now, UpdatedAt: now}
		if c.Status == niche.SubscriptionPastDue {
			cur.PastDueSince = observed
		}
		m.subs[cur.ID], m.byRef[ref] = cur, cur.ID
	case !observed.Before(cur.SyncedAt):
		updateSubscription(cur, c, observed, now)
	}
	if c.CheckoutSession != "" {
		key := [2]string{ev.Provider, c.CheckoutSession}
		if _, ok := m.checkouts[key]; !ok {
			m.checkouts[key] = &memCheckout{subscriptionID: cur.ID, completed: memstore.Time(ev.ReceivedAt)}
		}
	}
}

// updateSubscription applies the set fields of c, observed at observed, to
// sub.
func updateSubscription(sub *niche.Subscription, c niche.SubscriptionChange, observed, now time.Time) {
	was := sub.Status
	if c.Status != "" {
		sub.Status, sub.CancelAtPeriodEnd = c.Status, c.CancelAtPeriodEnd
	}
	if c.CustomerRef != "" {
		sub.CustomerRef = c.CustomerRef
	}
	if c.PriceRef != "" {
		sub.PriceRef = c.PriceRef
	}
	if !c.CurrentPeriodEnd.IsZero() {
		sub.CurrentPeriodEnd = memstore.Time(c.CurrentPeriodEnd)
	}
	switch {
	case sub.Status != niche.SubscriptionPastDue:
		sub.PastDueSince = time.Time{}
	case was != niche.SubscriptionPastDue || sub.PastDueSince.IsZero():
		sub.PastDueSince = observed
	}
	sub.SyncedAt, sub.UpdatedAt = observed, now
}

// PruneSubscriptionEvents implements niche.SubscriptionEvents.
func (m *Subscriptions) PruneSubscriptionEvents(ctx context.Context, before time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for key, at := range m.events {
		if at.Before(memstore.Time(before)) {
			delete(m.events, key)
			n++
		}
	}
	return n, nil
}

// copyOf returns a copy of a stored subscription, or the sentinel when
// there is none.
func copyOf(sub *niche.Subscription, sentinel error) (*niche.Subscription, error) {
	if sub == nil {
		return nil, sentinel
	}
	c := *sub
	return &c, nil
}

// Subscription implements niche.SubscriptionReader.
func (m *Subscriptions) Subscription(ctx context.Context, id string) (*niche.Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return copyOf(m.subs[id], niche.ErrSubscriptionNotFound)
}

// SubscriptionByRef implements niche.SubscriptionReader.
func (m *Subscriptions) SubscriptionByRef(ctx context.Context, provider, providerRef string) (*niche.Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return copyOf(m.subs[m.byRef[[2]string{provider, providerRef}]], niche.ErrSubscriptionNotFound)
}

// SubscriptionByToken implements niche.SubscriptionReader.
func (m *Subscriptions) SubscriptionByToken(ctx context.Context, tokenHash string) (*niche.Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return copyOf(m.liveToken(tokenHash), niche.ErrSubscriptionTokenInvalid)
}

// liveToken returns the subscription of a live token hash, or nil.
func (m *Subscriptions) liveToken(tokenHash string) *niche.Subscription {
	if t, ok := m.tokens[tokenHash]; ok && t.revokedAt.IsZero() {
		return m.subs[t.subscriptionID]
	}
	return nil
}

// replaceTokens revokes the live tokens of sub and stores newHash for it.
// A hash stored before (live or not) is refused first, changing nothing.
func (m *Subscriptions) replaceTokens(op string, sub *niche.Subscription, newHash string, at time.Time) error {
	if _, ok := m.tokens[newHash]; ok {
		return fmt.Errorf("nichemem: %s: token hash already stored", op)
	}
	for _, t := range m.tokens {
		if t.subscriptionID == sub.ID && t.revokedAt.IsZero() {
			t.revokedAt = memstore.Time(at)
		}
	}
	m.tokens[newHash] = &memToken{subscriptionID: sub.ID}
	return nil
}

// ClaimSubscriptionCheckout implements niche.SubscriberTokens.
func (m *Subscriptions) ClaimSubscriptionCheckout(ctx context.Context, provider, sessionHash, tokenHash string, at, completedAfter time.Time) (*niche.Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	co, ok := m.checkouts[[2]string{provider, sessionHash}]
	switch {
	case !ok:
		return nil, niche.ErrClaimPending
	case !co.claimedAt.IsZero():
		return nil, niche.ErrClaimUsed
	case co.completed.Before(memstore.Time(completedAfter)):
		return nil, niche.ErrClaimExpired
	}
	sub := m.subs[co.subscriptionID]
	if err := m.replaceTokens("claim checkout", sub, tokenHash, at); err != nil {
		return nil, err
	}
	co.claimedAt = memstore.Time(at)
	return copyOf(sub, nil)
}

// ReplaceSubscriberToken implements niche.SubscriberTokens.
func (m *Subscriptions) ReplaceSubscriberToken(ctx context.Context, oldHash, newHash string, at time.Time) (*niche.Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sub := m.liveToken(oldHash)
	if sub == nil {
		return nil, niche.ErrSubscriptionTokenInvalid
	}
	if err := m.replaceTokens("replace token", sub, newHash, at); err != nil {
		return nil, err
	}
	return copyOf(sub, nil)
}

// IssueSubscriberToken implements niche.SubscriberTokens.
func (m *Subscriptions) IssueSubscriberToken(ctx context.Context, subscriptionID, newHash string, at time.Time) (*niche.Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sub := m.subs[subscriptionID]
	if sub == nil {
		return nil, niche.ErrSubscriptionNotFound
	}
	if err := m.replaceTokens("issue token", sub, newHash, at); err != nil {
		return nil, err
	}
	for _, co := range m.checkouts {
		if co.subscriptionID == subscriptionID && co.claimedAt.IsZero() {
			co.claimedAt = memstore.Time(at)
		}
	}
	return copyOf(sub, nil)
}

// RevokeSubscriberToken implements niche.SubscriberTokens.
func (m *Subscriptions) RevokeSubscriberToken(ctx context.Context, tokenHash string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[tokenHash]
	if !ok || !t.revokedAt.IsZero() {
		return niche.ErrSubscriptionTokenInvalid
	}
	t.revokedAt = memstore.Time(at)
	return nil
}
