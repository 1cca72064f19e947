package snapshot

import (
	"context"
	"net"
	"time"
)

// DefaultDNSAttemptTimeout bounds one DNS query of a capture's lookups
// (Options.DNSAttemptTimeout).
const DefaultDNSAttemptTimeout = time.Second

// ResolverOptions configure NewResolver. Nil means defaults.
type ResolverOptions struct {
	// AttemptTimeout bounds one query to one server: a query the network
	// drops is sent again (to the next server, or the same one on the next
	// attempt, as resolv.conf says) after this long. 0 means
	// DefaultDNSAttemptTimeout.
	AttemptTimeout time.Duration
	// Server, when set ("ip:port"), is the one DNS server asked instead of
	// those of the system configuration (tests and load programs point it
	// at a server of their own).
	Server string
}

// NewResolver returns a resolver whose every query is bounded by
// o.AttemptTimeout. Go's own resolver waits for a dropped DNS query as
// long as resolv.conf's timeout says (5 s by default) before it asks
// again; a capture whose budget is 15 s cannot afford that. The resolver
// is Go's (PreferGo), with a Dial that clamps every deadline the resolver
// sets on its connection to AttemptTimeout after the dial, so that a
// dropped query is retried (resolv.conf's attempts and servers, A and AAAA
// in parallel) about a second later. Hand-written because neither the
// standard library nor a well-kept library bounds the per-query wait
// without replacing the resolver.
func NewResolver(o *ResolverOptions) *net.Resolver {
	var attempt time.Duration
	var server string
	if o != nil {
		attempt, server = o.AttemptTimeout, o.Server
	}
	if attempt <= 0 {
		attempt = DefaultDNSAttemptTimeout
	}
	d := &net.Dialer{Timeout: attempt}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		if server != "" {
			address = server
		}
		c, err := d.DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		limit := time.Now().Add(attempt)
		_ = c.SetDeadline(limit)
		if u, ok := c.(*net.UDPConn); ok {
			return &boundedPacketConn{UDPConn: u, limit: limit}, nil
		}
		return &boundedConn{Conn: c, limit: limit}, nil
	}}
}

// earliest is the earlier of t and limit (a zero t means no deadline:
// limit).
func earliest(t, limit time.Time) time.Time {
	if t.IsZero() || t.After(limit) {
		return limit
	}
	return t
}

// boundedPacketConn is a DNS query's UDP connection whose deadlines never
// pass its limit. It keeps *net.UDPConn's methods, so the resolver still
// sees a net.PacketConn (one datagram per message).
type boundedPacketConn struct {
	*net.UDPConn
	limit time.Time
}

func (c *boundedPacketConn) SetDeadline(t time.Time) error {
	return c.UDPConn.SetDeadline(earliest(t, c.limit))
}
func (c *boundedPacketConn) SetReadDeadline(t time.Time) error {
	return c.UDPConn.SetReadDeadline(earliest(t, c.limit))
}
func (c *boundedPacketConn) SetWriteDeadline(t time.Time) error {
	return c.UDPConn.SetWriteDeadline(earliest(t, c.limit))
}

// boundedConn is a DNS query's TCP connection whose deadlines never pass
// its limit.
type boundedConn struct {
	net.Conn
	limit time.Time
}

func (c *boundedConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(earliest(t, c.limit)) }
func (c *boundedConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(earliest(t, c.limit))
}
func (c *boundedConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(earliest(t, c.limit))
}
