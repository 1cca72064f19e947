package snapshot

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// BlockedError is why a URL or an address was refused. Captures that end
// with one have status "blocked" and the error's text as failureReason.
type BlockedError struct {
	// URL is the refused URL (empty when only an address was refused).
	URL string
	// Reason says what was refused and why.
	Reason string
}

// Error implements error.
func (e *BlockedError) Error() string { return "blocked: " + e.Reason }

// ErrBlocked matches every *BlockedError with errors.Is.
var ErrBlocked = errors.New("snapshot: blocked")

// Is makes errors.Is(err, ErrBlocked) true for blocked errors.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

func blocked(format string, args ...any) *BlockedError {
	return &BlockedError{Reason: fmt.Sprintf(format, args...)}
}

// guard holds the safety policy shared by the URL checks and the dialler.
type guard struct {
	ports map[int]bool
	allow map[netip.AddrPort]bool
}

// checkURL validates one URL (the requested one or a redirect target) and
// returns it with a numeric IPv4 host in canonical dotted form, so that
// "http://2130706433/" is dialled as 127.0.0.1 rather than looked up.
func (g *guard) checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &BlockedError{URL: raw, Reason: "malformed URL"}
	}
	fail := func(format string, args ...any) (*url.URL, error) {
		return nil, &BlockedError{URL: raw, Reason: fmt.Sprintf(format, args...)}
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		if scheme == "" {
			return fail("URL is not absolute")
		}
		return fail("scheme %q is not allowed (only http and https)", scheme)
	}
	u.Scheme = scheme
	if u.User != nil {
		return fail("URLs with user information are not allowed")
	}
	if u.Opaque != "" {
		return fail("malformed URL")
	}
	host := u.Hostname()
	if host == "" {
		return fail("URL has no host")
	}
	port := 80
	if scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fail("invalid port %q", p)
		}
		port = n
	}
	ip, isIP, err := parseHostIP(host)
	if err != nil {
		return fail("%v", err)
	}
	if isIP {
		ap := netip.AddrPortFrom(ip, uint16(port))
		if !g.allow[ap] {
			if reason := classifyIP(ip); reason != "" {
				return fail("address %s is %s", ip, reason)
			}
			if !g.ports[port] {
				return fail("port %d is not allowed", port)
			}
		}
		h := ip.String()
		if ip.Is6() {
			h = "[" + h + "]"
		}
		if u.Port() != "" {
			h += ":" + u.Port()
		}
		u.Host = h
		return u, nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return fail("host %q is a loopback name", host)
	}
	if !g.ports[port] {
		return fail("port %d is not allowed", port)
	}
	return u, nil
}

// parseHostIP parses a URL host as an IP address the way browsers do (the
// WHATWG URL standard's IPv4 parser accepts 127.1, 2130706433, 0x7f.1 and
// 0177.0.0.1). It reports whether host is an address at all; a host that
// looks numeric but is not a valid address is an error.
func parseHostIP(host string) (netip.Addr, bool, error) {
	if strings.Contains(host, ":") {
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return netip.Addr{}, false, fmt.Errorf("invalid IPv6 address %q", host)
		}
		if ip.Zone() != "" {
			return netip.Addr{}, false, fmt.Errorf("IPv6 zones are not allowed")
		}
		return ip, true, nil
	}
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if !endsInNumber(last) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, false, fmt.Errorf("invalid IPv4 address %q", host)
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false, fmt.Errorf("invalid IPv4 address %q", host)
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false, fmt.Errorf("invalid IPv4 address %q", host)
		}
		v |= n << (8 * (3 - i))
	}
	lastN := nums[len(nums)-1]
	if lastN >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false, fmt.Errorf("invalid IPv4 address %q", host)
	}
	v += lastN
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// endsInNumber: the last label is all decimal digits, or 0x/0X followed by
// hex digits only (WHATWG "ends in a number").
func endsInNumber(label string) bool {
	if label == "" {
		return false
	}
	if allIn(label, "0123456789") {
		return true
	}
	if len(label) >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X') {
		return allIn(label[2:], "0123456789abcdefABCDEF")
	}
	return false
}

func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(set, rune(s[i])) {
			return false
		}
	}
	return true
}

// parseIPv4Number parses one part: 0x hex, leading-0 octal, or decimal.
func parseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil || strings.ContainsAny(p, "+-_") {
		return 0, false
	}
	return n, true
}

// specialRanges are the address blocks a capture may never connect to:
// every block of the IANA IPv4 and IPv6 Special-Purpose Address Registries
// (globally reachable or not), multicast, reserved space, and cloud
// metadata endpoints. IPv6 is further limited to global unicast (2000::/3).
var specialRanges = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" (0.0.0.0/8)`},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (10.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space / CGNAT (100.64.0.0/10)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (127.0.0.0/8)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local / cloud metadata (169.254.0.0/16)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (172.16.0.0/12)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (192.0.2.0/24)"},
	{netip.MustParsePrefix("192.31.196.0/24"), "AS112 (192.31.196.0/24)"},
	{netip.MustParsePrefix("192.52.193.0/24"), "AMT (192.52.193.0/24)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast (192.88.99.0/24)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (192.168.0.0/16)"},
	{netip.MustParsePrefix("192.175.48.0/24"), "AS112 direct delegation (192.175.48.0/24)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (198.51.100.0/24)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (203.0.113.0/24)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (224.0.0.0/4)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},
	{netip.MustParsePrefix("168.63.129.16/32"), "a cloud metadata endpoint (168.63.129.16)"},
	{netip.MustParsePrefix("::/128"), "unspecified (::)"},
	{netip.MustParsePrefix("::1/128"), "loopback (::1)"},
	{netip.MustParsePrefix("::ffff:0:0/96"), "IPv4-mapped (::ffff:0:0/96)"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (::/96)"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 (64:ff9b::/96)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 (64:ff9b:1::/48)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (100::/64)"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments (2001::/23)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (2001:db8::/32)"},
	{netip.MustParsePrefix("2002::/16"), "6to4 (2002::/16)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation (3fff::/20)"},
	{netip.MustParsePrefix("5f00::/16"), "SRv6 SIDs (5f00::/16)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local / cloud metadata (fc00::/7)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local (fe80::/10)"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (fec0::/10)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast (ff00::/8)"},
}

var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// classifyIP returns why ip may not be dialled, or "" when it may.
func classifyIP(ip netip.Addr) string {
	if !ip.IsValid() {
		return "not a valid address"
	}
	if ip.Zone() != "" {
		return "zoned"
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(ip) {
			return r.what
		}
	}
	if ip.Is6() && !globalUnicast6.Contains(ip) {
		return "outside IPv6 global unicast (2000::/3)"
	}
	return ""
}

// control is the net.Dialer Control hook: it runs after name resolution,
// right before connect(2), with the address about to be dialled, so DNS
// rebinding cannot slip a forbidden address past an earlier check.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return blocked("cannot check dialled address %q", address)
	}
	if ap.Addr().Zone() != "" {
		return blocked("address %s is zoned", ap.Addr())
	}
	if g.allow[ap] {
		return nil
	}
	if reason := classifyIP(ap.Addr()); reason != "" {
		return blocked("address %s is %s", ap.Addr(), reason)
	}
	if !g.ports[int(ap.Port())] {
		return blocked("port %d is not allowed", ap.Port())
	}
	return nil
}

// chainControl runs the guard, then an extra hook.
func chainControl(first, then func(string, string, syscall.RawConn) error) func(string, string, syscall.RawConn) error {
	if then == nil {
		return first
	}
	return func(network, address string, c syscall.RawConn) error {
		if err := first(network, address, c); err != nil {
			return err
		}
		return then(network, address, c)
	}
}

// asBlocked extracts a BlockedError from err (dial errors wrap it).
func asBlocked(err error) (*BlockedError, bool) {
	var be *BlockedError
	if errors.As(err, &be) {
		return be, true
	}
	return nil, false
}
