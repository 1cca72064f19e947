// Package snapshotmem holds in-memory snapshot stores, for tests, demos
// and one-process programs that keep nothing across restarts: Store, a
// snapshot.Store (with the optional snapshot.BatchStore, HoldStore and
// UseStore), and Blobs, a snapshot.BlobStore. They pass the conformance
// suites the SQL stores (store/snapshotstore) pass: snapshottest.TestStore
// and snapshottest.TestBlobStore. The package imports no testing package
// and no database.
package snapshotmem

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/snapshot"
)

// Store is an in-memory snapshot.Store.
// It is a snapshot.HoldStore and a snapshot.UseStore.
type Store struct {
	mu    sync.Mutex
	recs  map[string]*snapshot.Snapshot
	holds map[string]bool
	uses  map[string]time.Time
}

// New returns an empty store.
func New() *Store {
	return &Store{recs: map[string]*snapshot.Snapshot{}, holds: map[string]bool{}, uses: map[string]time.Time{}}
}

// UseSnapshots implements snapshot.UseStore.
func (m *Store) UseSnapshots(ctx context.Context, ids []string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		if prev, ok := m.uses[id]; !ok || at.After(prev) {
			m.uses[id] = at
		}
	}
	return nil
}

// HoldSnapshots implements snapshot.HoldStore.
func (m *Store) HoldSnapshots(ctx context.Context, ids []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		m.holds[id] = true
	}
	return nil
}

// SnapshotHeld implements snapshot.HoldStore.
func (m *Store) SnapshotHeld(ctx context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holds[id], nil
}

// ReleaseSnapshots implements snapshot.HoldStore.
func (m *Store) ReleaseSnapshots(ctx context.Context, ids []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		delete(m.holds, id)
	}
	return nil
}

// InsertSnapshot implements snapshot.Store.
func (m *Store) InsertSnapshot(ctx context.Context, s *snapshot.Snapshot) error {
	return m.InsertSnapshots(ctx, []*snapshot.Snapshot{s})
}

// InsertSnapshots implements snapshot.BatchStore: all records or none.
func (m *Store) InsertSnapshots(ctx context.Context, snaps []*snapshot.Snapshot) error {
	for _, s := range snaps {
		if s == nil || !ids.Valid(ids.Snapshot, s.ID) || !s.Status.Valid() || s.RetrievedAt.IsZero() || s.RequestedURL == "" ||
			(s.RawSHA256 != nil && !snapshot.ValidSum(*s.RawSHA256)) {
			return snapshot.ErrInvalid
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := make(map[string]bool, len(snaps))
	for _, s := range snaps {
		if _, ok := m.recs[s.ID]; ok || seen[s.ID] {
			return snapshot.ErrConflict
		}
		seen[s.ID] = true
	}
	for _, s := range snaps {
		c := s.Clone()
		c.Text = ""
		c.RetrievedAt = c.RetrievedAt.UTC().Truncate(time.Microsecond)
		m.recs[s.ID] = c
	}
	return nil
}

// GetSnapshot implements snapshot.Store.
func (m *Store) GetSnapshot(ctx context.Context, id string) (*snapshot.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.recs[id]
	if !ok {
		return nil, snapshot.ErrNotFound
	}
	return s.Clone(), nil
}

// DeleteSnapshotsBefore implements snapshot.Store.
func (m *Store) DeleteSnapshotsBefore(ctx context.Context, t time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for id, s := range m.recs {
		if u, ok := m.uses[id]; ok && !u.Before(t) {
			continue
		}
		if s.RetrievedAt.Before(t) && !m.holds[id] {
			delete(m.recs, id)
			n++
		}
	}
	return n, nil
}

// SnapshotBlobInUse implements snapshot.Store.
func (m *Store) SnapshotBlobInUse(ctx context.Context, sum string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.recs {
		if s.RawSHA256 != nil && *s.RawSHA256 == sum {
			return true, nil
		}
	}
	return false, nil
}

// Len returns the number of records.
func (m *Store) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

// Blobs is an in-memory snapshot.BlobStore.
type Blobs struct {
	mu    sync.Mutex
	blobs map[string]memBlob
	now   func() time.Time
}

type memBlob struct {
	data []byte
	put  time.Time
}

// NewBlobs returns an empty blob store using clock now (nil: time.Now).
func NewBlobs(now func() time.Time) *Blobs {
	if now == nil {
		now = time.Now
	}
	return &Blobs{blobs: map[string]memBlob{}, now: now}
}

// PutBlob implements snapshot.BlobStore.
func (m *Blobs) PutBlob(ctx context.Context, sum string, size int64, r io.Reader) error {
	if !snapshot.ValidSum(sum) || size < 0 {
		return snapshot.ErrInvalid
	}
	m.mu.Lock()
	if b, ok := m.blobs[sum]; ok {
		b.put = m.now()
		m.blobs[sum] = b
		m.mu.Unlock()
		return nil
	}
	m.mu.Unlock()
	data, err := io.ReadAll(io.LimitReader(r, size+1))
	if err != nil {
		return err
	}
	if int64(len(data)) != size || snapshot.RawSHA256(data) != sum {
		return snapshot.ErrIntegrity
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs[sum] = memBlob{data: data, put: m.now()}
	return nil
}

// OpenBlob implements snapshot.BlobStore.
func (m *Blobs) OpenBlob(ctx context.Context, sum string) (snapshot.Blob, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[sum]
	if !ok {
		return nil, snapshot.ErrNotFound
	}
	return &readerBlob{Reader: bytes.NewReader(b.data)}, nil
}

type readerBlob struct{ *bytes.Reader }

func (r *readerBlob) Close() error { return nil }

// BlobsBefore implements snapshot.BlobStore.
func (m *Blobs) BlobsBefore(ctx context.Context, t time.Time) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for sum, b := range m.blobs {
		if b.put.Before(t) {
			out = append(out, sum)
		}
	}
	slices.Sort(out)
	return out, nil
}

// DeleteBlob implements snapshot.BlobStore.
func (m *Blobs) DeleteBlob(ctx context.Context, sum string, t time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[sum]
	if !ok || !b.put.Before(t) {
		return false, nil
	}
	delete(m.blobs, sum)
	return true, nil
}

// Len returns the number of blobs.
func (m *Blobs) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.blobs)
}
