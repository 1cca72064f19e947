// Package snapshottest provides fakes for testing code that uses package
// snapshot: in-memory record and blob stores, a resolver that answers from
// a table without any network, and a dial tripwire that refuses (and
// records) every non-loopback connection; and the conformance suites of
// snapshot.Store (TestStore, with the optional snapshot.BatchStore) and
// snapshot.BlobStore (TestBlobStore). MemStore, MemBlobs and
// snapshot.FileBlobStore pass them in this package's tests; package store
// runs them on SQLite and PostgreSQL.
package snapshottest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/snapshot"
)

// MemStore is an in-memory snapshot.Store.
// It is a snapshot.HoldStore and a snapshot.UseStore.
type MemStore struct {
	mu    sync.Mutex
	recs  map[string]*snapshot.Snapshot
	holds map[string]bool
	uses  map[string]time.Time
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{recs: map[string]*snapshot.Snapshot{}, holds: map[string]bool{}, uses: map[string]time.Time{}}
}

// UseSnapshots implements snapshot.UseStore.
func (m *MemStore) UseSnapshots(ctx context.Context, ids []string, at time.Time) error {
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
func (m *MemStore) HoldSnapshots(ctx context.Context, ids []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		m.holds[id] = true
	}
	return nil
}

// SnapshotHeld implements snapshot.HoldStore.
func (m *MemStore) SnapshotHeld(ctx context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holds[id], nil
}

// ReleaseSnapshots implements snapshot.HoldStore.
func (m *MemStore) ReleaseSnapshots(ctx context.Context, ids []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		delete(m.holds, id)
	}
	return nil
}

// InsertSnapshot implements snapshot.Store.
func (m *MemStore) InsertSnapshot(ctx context.Context, s *snapshot.Snapshot) error {
	return m.InsertSnapshots(ctx, []*snapshot.Snapshot{s})
}

// InsertSnapshots implements snapshot.BatchStore: all records or none.
func (m *MemStore) InsertSnapshots(ctx context.Context, snaps []*snapshot.Snapshot) error {
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
func (m *MemStore) GetSnapshot(ctx context.Context, id string) (*snapshot.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.recs[id]
	if !ok {
		return nil, snapshot.ErrNotFound
	}
	return s.Clone(), nil
}

// DeleteSnapshotsBefore implements snapshot.Store.
func (m *MemStore) DeleteSnapshotsBefore(ctx context.Context, t time.Time) (int64, error) {
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
func (m *MemStore) SnapshotBlobInUse(ctx context.Context, sum string) (bool, error) {
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
func (m *MemStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

// MemBlobs is an in-memory snapshot.BlobStore.
type MemBlobs struct {
	mu    sync.Mutex
	blobs map[string]memBlob
	now   func() time.Time
}

type memBlob struct {
	data []byte
	put  time.Time
}

// NewMemBlobs returns an empty blob store using clock now (nil: time.Now).
func NewMemBlobs(now func() time.Time) *MemBlobs {
	if now == nil {
		now = time.Now
	}
	return &MemBlobs{blobs: map[string]memBlob{}, now: now}
}

// PutBlob implements snapshot.BlobStore.
func (m *MemBlobs) PutBlob(ctx context.Context, sum string, size int64, r io.Reader) error {
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
func (m *MemBlobs) OpenBlob(ctx context.Context, sum string) (snapshot.Blob, error) {
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
func (m *MemBlobs) BlobsBefore(ctx context.Context, t time.Time) ([]string, error) {
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
func (m *MemBlobs) DeleteBlob(ctx context.Context, sum string, t time.Time) (bool, error) {
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
func (m *MemBlobs) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.blobs)
}

// Resolver returns a *net.Resolver that answers A and AAAA queries from
// table (name → addresses; names without a trailing dot) and NXDOMAIN
// for anything else. It never opens a socket: queries travel over
// in-memory pipes. Names in /etc/hosts (such as localhost) are still
// answered from that file, as by any Go resolver.
func Resolver(table map[string][]string) *net.Resolver {
	t := map[string][]netip.Addr{}
	for name, addrs := range table {
		key := strings.ToLower(strings.TrimSuffix(name, ".")) + "."
		for _, a := range addrs {
			t[key] = append(t[key], netip.MustParseAddr(a))
		}
	}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			client, server := net.Pipe()
			go serveDNS(server, t)
			return client, nil
		},
	}
}

// serveDNS answers length-prefixed (TCP-style) DNS queries on c.
func serveDNS(c net.Conn, table map[string][]netip.Addr) {
	defer c.Close()
	for {
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		resp, err := answer(msg, table)
		if err != nil {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

func answer(query []byte, table map[string][]netip.Addr) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	name := strings.ToLower(q.Name.String())
	addrs, known := table[name]
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionAvailable: true}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	for _, a := range addrs {
		rrh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}
		switch {
		case q.Type == dnsmessage.TypeA && a.Is4():
			err = b.AResource(rrh, dnsmessage.AResource{A: a.As4()})
		case q.Type == dnsmessage.TypeAAAA && a.Is6():
			err = b.AAAAResource(rrh, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// Tripwire is a snapshot.Options.DialControl hook for tests. It runs after
// the capturer's own check passed, records every address that reached it,
// and refuses every address outside 127.0.0.0/8 and ::1 — so a broken
// check can never make a test send traffic off the machine.
type Tripwire struct {
	mu     sync.Mutex
	dialed []string
	denied []string
}

// ErrTripwire is returned for a refused non-loopback dial.
var ErrTripwire = errors.New("snapshottest: tripwire refused a non-loopback dial")

// Control implements the DialControl hook.
func (t *Tripwire) Control(network, address string, _ syscall.RawConn) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		t.denied = append(t.denied, address)
		return fmt.Errorf("%w: %s", ErrTripwire, address)
	}
	t.dialed = append(t.dialed, address)
	return nil
}

// Dialed returns the loopback addresses that passed the capturer's check
// and were dialled.
func (t *Tripwire) Dialed() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.dialed)
}

// Denied returns the non-loopback addresses that passed the capturer's
// check (a bug) and were refused here.
func (t *Tripwire) Denied() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.denied)
}

// Reset forgets what was recorded.
func (t *Tripwire) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dialed, t.denied = nil, nil
}
