// Package urlnorm canonicalises URLs and normalises domain names, so that
// two spellings of one page or one site compare equal.
//
// Three functions matter:
//
//   - Domain turns what a person types as a domain ("Example.COM.",
//     "https://www.bücher.de/path", "*.gov.uk") into a lowercase ASCII
//     hostname ("example.com", "www.xn--bcher-kva.de", "gov.uk"), or
//     refuses it.
//   - Canonical cleans a URL for display and storage: lowercase scheme and
//     host, IDNA to punycode, default port removed, fragment removed,
//     tracking parameters removed, percent-encoding normalised.
//   - Key reduces a URL to the form used to decide whether two URLs name
//     the same page: Canonical, then "www." removed, http and https
//     unified, trailing slash removed and query parameters sorted.
//
// All functions are deterministic and never panic.
package urlnorm

import (
	"errors"
	"net"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// ErrInvalid is wrapped by every error of this package.
var ErrInvalid = errors.New("urlnorm: invalid")

func invalid(msg string) error { return &Error{Msg: msg} }

// Error describes why a URL or domain was refused.
type Error struct{ Msg string }

func (e *Error) Error() string { return "urlnorm: " + e.Msg }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// profile converts hostnames to ASCII the way a resolver would: IDNA 2008
// lookup rules with UTS #46 mapping (case folding, width mapping).
var profile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false))

// asciiHost lowercases host, removes one trailing dot and converts it to
// punycode. It refuses empty hosts, bad labels and over-long names.
func asciiHost(host string) (string, error) {
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return "", invalid("empty host")
	}
	if !utf8.ValidString(host) {
		return "", invalid("host is not valid UTF-8")
	}
	a, err := profile.ToASCII(host)
	if err != nil {
		return "", invalid("host " + quote(host) + " is not a valid domain name")
	}
	a = strings.ToLower(a)
	// The ASCII form must itself be valid (stable under a second pass).
	if again, err := profile.ToASCII(a); err != nil || again != a {
		return "", invalid("host " + quote(host) + " is not a valid domain name")
	}
	if len(a) > 253 {
		return "", invalid("host " + quote(host) + " is longer than 253 characters")
	}
	for _, label := range strings.Split(a, ".") {
		if label == "" || len(label) > 63 {
			return "", invalid("host " + quote(host) + " has an empty or over-long label")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
			if !ok {
				return "", invalid("host " + quote(host) + " contains " + quote(string(c)))
			}
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return "", invalid("host " + quote(host) + " has a label starting or ending with '-'")
		}
	}
	return a, nil
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return "'" + s + "'"
}

// Domain normalises a domain name given by a person. It accepts a bare
// hostname, a hostname with a scheme, port or path (which are removed), and
// a leading "*." (subdomains are always included). It refuses user
// information, IP addresses, whitespace and anything that is not a valid
// hostname after IDNA conversion. The result is lowercase ASCII without a
// trailing dot; "www." is kept (www.example.com and example.com are
// different domain filters).
func Domain(s string) (string, error) {
	in := s
	s = strings.TrimSpace(s)
	if s == "" {
		return "", invalid("empty domain")
	}
	if s != in || strings.ContainsAny(s, " \t\r\n") {
		return "", invalid("domain " + quote(in) + " contains whitespace")
	}
	if i := strings.Index(s, "://"); i >= 0 {
		scheme := strings.ToLower(s[:i])
		if scheme != "http" && scheme != "https" {
			return "", invalid("domain " + quote(in) + " has an unsupported scheme")
		}
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if strings.Contains(s, "@") {
		return "", invalid("domain " + quote(in) + " contains user information")
	}
	if strings.HasPrefix(s, "[") {
		return "", invalid("domain " + quote(in) + " is an IP address")
	}
	if h, port, err := net.SplitHostPort(s); err == nil {
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return "", invalid("domain " + quote(in) + " has an invalid port")
		}
		s = h
	}
	s = strings.TrimPrefix(s, "*.")
	if net.ParseIP(s) != nil {
		return "", invalid("domain " + quote(in) + " is an IP address")
	}
	h, err := asciiHost(s)
	if err != nil {
		return "", invalid("domain " + quote(in) + " is not a valid domain name")
	}
	return h, nil
}

// trackingParams are query parameters that identify a campaign or a click,
// not a page. Parameters starting with "utm_" are removed too.
var trackingParams = map[string]bool{
	"gclid": true, "gclsrc": true, "dclid": true, "gbraid": true, "wbraid": true,
	"fbclid": true, "msclkid": true, "yclid": true, "twclid": true, "ttclid": true,
	"li_fat_id": true, "igshid": true, "mc_cid": true, "mc_eid": true, "_hsenc": true,
	"_hsmi": true, "mkt_tok": true, "vero_id": true, "oly_anon_id": true, "oly_enc_id": true,
	"rb_clickid": true, "s_cid": true, "ref_src": true, "_ga": true, "_gl": true,
	"srsltid": true,
}

// IsTrackingParam reports whether a query parameter name is removed by
// Canonical.
func IsTrackingParam(name string) bool {
	n := strings.ToLower(name)
	return strings.HasPrefix(n, "utm_") || trackingParams[n]
}

// Canonical returns the cleaned form of an http or https URL:
//
//   - scheme and host lowercase, host converted to punycode, trailing dot
//     of the host removed;
//   - the default port (80 for http, 443 for https) removed;
//   - user information refused, other schemes refused;
//   - the fragment removed;
//   - tracking parameters (utm_*, gclid, fbclid, msclkid, …) removed, the
//     other parameters kept in their order; an empty query removed;
//   - percent-encoding normalised: escapes of unreserved characters
//     decoded, other escapes written in upper case;
//   - an empty path written "/".
func Canonical(raw string) (string, error) {
	u, err := parse(raw)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// canonURL is a parsed canonical URL. Path and query are kept escaped.
type canonURL struct {
	scheme, host, port, path string
	query                    []string // "name=value" pairs, escaped
}

func (u *canonURL) String() string {
	var b strings.Builder
	b.WriteString(u.scheme)
	b.WriteString("://")
	b.WriteString(u.host)
	if u.port != "" {
		b.WriteByte(':')
		b.WriteString(u.port)
	}
	b.WriteString(u.path)
	if len(u.query) > 0 {
		b.WriteByte('?')
		b.WriteString(strings.Join(u.query, "&"))
	}
	return b.String()
}

func parse(raw string) (*canonURL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, invalid("empty URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, invalid("URL " + quote(raw) + " cannot be parsed")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, invalid("URL " + quote(raw) + " is not http or https")
	}
	if u.User != nil {
		return nil, invalid("URL " + quote(raw) + " contains user information")
	}
	if u.Opaque != "" {
		return nil, invalid("URL " + quote(raw) + " has no host")
	}
	hostname := u.Hostname()
	if hostname == "" {
		return nil, invalid("URL " + quote(raw) + " has no host")
	}
	var host string
	if ip := net.ParseIP(hostname); ip != nil {
		host = ip.String()
		if ip.To4() == nil {
			host = "[" + host + "]"
		}
	} else {
		host, err = asciiHost(hostname)
		if err != nil {
			return nil, invalid("URL " + quote(raw) + ": " + err.(*Error).Msg)
		}
	}
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	path := normEscapes(u.EscapedPath())
	if path == "" {
		path = "/"
	}
	var query []string
	if u.RawQuery != "" {
		for _, part := range strings.Split(u.RawQuery, "&") {
			if part == "" {
				continue
			}
			name, _, _ := strings.Cut(part, "=")
			if dn, err := url.QueryUnescape(name); err == nil && IsTrackingParam(dn) {
				continue
			}
			query = append(query, normEscapes(part))
		}
	}
	return &canonURL{scheme: scheme, host: host, port: port, path: path, query: query}, nil
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// mustEscape reports bytes that may not appear unescaped in a URL.
func mustEscape(c byte) bool {
	return c <= 0x20 || c >= 0x7f || strings.IndexByte("\"<>\\^`{|}", c) >= 0
}

// normEscapes decodes percent-escapes of unreserved characters, upper-cases
// the hex digits of the others (RFC 3986 §6.2.2) and escapes bytes that may
// not appear in a URL (spaces, controls, non-ASCII).
func normEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if mustEscape(c) {
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&15])
			continue
		}
		if c == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				v := hi<<4 | lo
				if isUnreserved(v) {
					b.WriteByte(v)
				} else {
					b.WriteByte('%')
					b.WriteString(strings.ToUpper(s[i+1 : i+3]))
				}
				i += 2
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Key returns the matching key of a URL: its Canonical form with the scheme
// dropped (http and https name the same page), a leading "www." removed from
// the host, a trailing slash removed from the path (except the root) and the
// query parameters sorted. Two URLs with equal keys are treated as the same
// page. Keys are for comparison only, not for fetching.
func Key(raw string) (string, error) {
	u, err := parse(raw)
	if err != nil {
		return "", err
	}
	host := strings.TrimPrefix(u.host, "www.")
	path := u.path
	if len(path) > 1 {
		path = strings.TrimRight(path, "/")
		if path == "" {
			path = "/"
		}
	}
	q := append([]string(nil), u.query...)
	sort.Strings(q)
	k := host
	if u.port != "" {
		k += ":" + u.port
	}
	k += path
	if len(q) > 0 {
		k += "?" + strings.Join(q, "&")
	}
	return k, nil
}

// Host returns the canonical host of a URL (lowercase, punycode, no port),
// or "" when the URL is not a valid http(s) URL.
func Host(raw string) string {
	u, err := parse(raw)
	if err != nil {
		return ""
	}
	return strings.Trim(u.host, "[]")
}

// HostMatches reports whether host equals domain or is a subdomain of it.
// Both must already be normalised (Host, Domain).
func HostMatches(host, domain string) bool {
	if host == "" || domain == "" {
		return false
	}
	return host == domain || strings.HasSuffix(host, "."+domain)
}

// MatchesAny reports whether host equals or is a subdomain of any domain.
func MatchesAny(host string, domains []string) bool {
	for _, d := range domains {
		if HostMatches(host, d) {
			return true
		}
	}
	return false
}

// Registrable returns the registrable domain of a host (eTLD+1 by the
// public suffix list: "news.bbc.co.uk" → "bbc.co.uk"), the host itself
// when it is an IP address or a public suffix, and "" for an empty host.
// Sources on one registrable domain are not independent of each other.
func Registrable(host string) string {
	host = strings.TrimPrefix(strings.TrimSuffix(strings.ToLower(host), "."), "www.")
	if host == "" {
		return ""
	}
	if net.ParseIP(strings.Trim(host, "[]")) != nil {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}
