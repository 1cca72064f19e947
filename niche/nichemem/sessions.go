package nichemem

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/assaykit/assay/niche"
)

// Sessions is an in-memory niche.SubscriberSessions (it passes
// nichetest.TestSubscriberSessions). The zero value is ready to use; safe
// for concurrent use.
type Sessions struct {
	mu sync.Mutex
	m  map[string]niche.SubscriberSession
}

var _ niche.SubscriberSessions = (*Sessions)(nil)

// CreateSubscriberSession implements niche.SubscriberSessions.
func (s *Sessions) CreateSubscriberSession(_ context.Context, sess niche.SubscriberSession) error {
	if sess.Hash == "" || sess.TokenHash == "" {
		return errors.New("nichemem: create session: hash and token hash are required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]niche.SubscriberSession{}
	}
	if _, ok := s.m[sess.Hash]; ok {
		return errors.New("nichemem: create session: the session exists")
	}
	s.m[sess.Hash] = sess
	return nil
}

// SubscriberSession implements niche.SubscriberSessions.
func (s *Sessions) SubscriberSession(_ context.Context, hash string, now time.Time) (*niche.SubscriberSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.m[hash]
	if !ok || !sess.ExpiresAt.After(now) {
		return nil, niche.ErrSessionNotFound
	}
	return &sess, nil
}

// DeleteSubscriberSession implements niche.SubscriberSessions.
func (s *Sessions) DeleteSubscriberSession(_ context.Context, hash string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, hash)
	return nil
}

// PruneSubscriberSessions implements niche.SubscriberSessions.
func (s *Sessions) PruneSubscriberSessions(_ context.Context, before time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for h, sess := range s.m {
		if !sess.ExpiresAt.After(before) {
			delete(s.m, h)
			n++
		}
	}
	return n, nil
}
