// Package snapshottest provides fakes for testing code that uses package
// snapshot: a resolver that answers from a table without any network, and
// a dial tripwire that refuses (and records) every non-loopback
// connection; and the conformance suites of snapshot.Store (TestStore,
// with the optional snapshot.BatchStore, HoldStore and UseStore) and
// snapshot.BlobStore (TestBlobStore). internal/conformance runs them on
// the in-memory stores (snapshot/snapshotmem), snapshot.FileBlobStore,
// SQLite and PostgreSQL (store/snapshotstore) and store/s3blobs.
package snapshottest

import (
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

	"golang.org/x/net/dns/dnsmessage"
)

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
