package snapshottest

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/net/dns/dnsmessage"
)

// DNSServer is a DNS server on loopback UDP that answers A queries from a
// table (every other question gets an empty answer) and drops the queries
// its Drop function picks, as a congested network or resolver does: the
// way to test what a dropped query costs a capture.
type DNSServer struct {
	// Addr is its "127.0.0.1:port".
	Addr string

	conn    *net.UDPConn
	hosts   map[string]netip.Addr
	drop    func(name string, n int) bool
	mu      sync.Mutex
	seen    map[string]int
	dropped atomic.Int64
	asked   atomic.Int64
	done    chan struct{}
}

// StartDNS starts a DNS server answering hosts (name → IPv4 address;
// names without the trailing dot). drop, when set, is asked for each query
// with its name and how many queries of that name came before (0 for the
// first): true drops it unanswered. Close stops the server.
func StartDNS(hosts map[string]string, drop func(name string, n int) bool) (*DNSServer, error) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	s := &DNSServer{Addr: conn.LocalAddr().String(), conn: conn, hosts: map[string]netip.Addr{}, drop: drop,
		seen: map[string]int{}, done: make(chan struct{})}
	for h, a := range hosts {
		ip, err := netip.ParseAddr(a)
		if err != nil || !ip.Is4() {
			conn.Close()
			return nil, &net.AddrError{Err: "not an IPv4 address", Addr: a}
		}
		s.hosts[strings.ToLower(strings.TrimSuffix(h, "."))] = ip
	}
	go s.serve()
	return s, nil
}

// Dropped and Asked count the queries dropped and received.
func (s *DNSServer) Dropped() int64 { return s.dropped.Load() }

// Asked counts the queries received.
func (s *DNSServer) Asked() int64 { return s.asked.Load() }

// Close stops the server.
func (s *DNSServer) Close() {
	_ = s.conn.Close()
	<-s.done
}

func (s *DNSServer) serve() {
	defer close(s.done)
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		s.asked.Add(1)
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		name := strings.ToLower(strings.TrimSuffix(q.Name.String(), "."))
		s.mu.Lock()
		k := name + "|" + q.Type.String()
		count := s.seen[k]
		s.seen[k]++
		s.mu.Unlock()
		if s.drop != nil && s.drop(name, count) {
			s.dropped.Add(1)
			continue
		}
		out := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionAvailable: true})
		out.EnableCompression()
		_ = out.StartQuestions()
		_ = out.Question(q)
		_ = out.StartAnswers()
		if ip, ok := s.hosts[name]; ok && q.Type == dnsmessage.TypeA {
			_ = out.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: ip.As4()})
		}
		msg, err := out.Finish()
		if err != nil {
			continue
		}
		_, _ = s.conn.WriteToUDP(msg, from)
	}
}
