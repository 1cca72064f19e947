// Package nichetest offers fakes for testing code that uses the niche
// catalogue, and the conformance suites of its stores:
//
//   - TestStore, the suite every niche.Store passes (the
//     testing/fstest.TestFS pattern: the suite takes a constructor and
//     runs against any implementation; internal/conformance runs it on
//     nichemem.Store, SQLite and PostgreSQL);
//   - TestSubscriptionStore and TestSubscriptionStoreShared, the suites of
//     niche.SubscriptionStore;
//   - Subscribers, an in-memory niche.Subscribers;
//   - Capturer, a niche.Capturer that fetches nothing (pages from a table,
//     every other URL a 404) and keeps the holds;
//   - Clock, a deterministic clock.
//
// Nothing here opens a database: a test of code built on the catalogue
// runs on the in-memory stores of package nichemem alone.
package nichetest

import (
	"context"
	"sync"

	"github.com/assaykit/assay/niche"
)

// Subscribers is an in-memory niche.Subscribers: each token maps to a
// subscriber until revoked. The zero value is ready to use.
type Subscribers struct {
	mu    sync.Mutex
	subs  map[string]niche.Subscriber
	calls int
}

// Add makes token an active subscription of sub.
func (s *Subscribers) Add(token string, sub niche.Subscriber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs == nil {
		s.subs = map[string]niche.Subscriber{}
	}
	if sub.Status == "" {
		sub.Status = "active"
	}
	s.subs[token] = sub
}

// Revoke ends token's subscription.
func (s *Subscribers) Revoke(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, token)
}

// Calls returns how many times Active was called.
func (s *Subscribers) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Active implements niche.Subscribers.
func (s *Subscribers) Active(ctx context.Context, token string) (*niche.Subscriber, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	sub, ok := s.subs[token]
	if !ok {
		return nil, niche.ErrNotSubscribed
	}
	return &sub, nil
}

var _ niche.Subscribers = (*Subscribers)(nil)
