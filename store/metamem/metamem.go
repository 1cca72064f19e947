// Package metamem is an in-memory store of instance-wide settings: the
// MetaStore of payment (the receipt signing key), niche (the unlock and
// quota keys) and evidence (the bundle signing key), which *store.DB keeps
// in the database (assay_meta). It is for tests, demos and one-process
// programs whose generated keys need not outlive the process. It passes
// storetest.TestMetaStore, as the databases do, and imports no testing
// package and no database.
package metamem

import (
	"context"
	"sync"
)

// Store keeps settings in a map under a lock. The zero value is an empty
// store, ready to use. Safe for concurrent use; it is one process's store.
type Store struct {
	mu sync.Mutex
	m  map[string]string
}

// SetMetaOnce stores value under key unless a value is there, and returns
// the stored value (the earlier one, if any).
func (s *Store) SetMetaOnce(ctx context.Context, key, value string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[key]; ok {
		return v, nil
	}
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[key] = value
	return value, nil
}
