package snapshot

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Defaults used when the corresponding Options field is zero.
const (
	DefaultMaxBytes       = 5_000_000
	DefaultCaptureTimeout = 15 * time.Second
	DefaultBatchTimeout   = 60 * time.Second
	DefaultConcurrency    = 20
	DefaultMaxRedirects   = 5
	DefaultRetries        = 2
	DefaultRetryWaitMin   = 200 * time.Millisecond
	DefaultRetryWaitMax   = 2 * time.Second
	DefaultRetention      = 30 * 24 * time.Hour
	DefaultUserAgent      = "assay-snapshot/1.0 (+https://github.com/assaykit/assay; evidence capture)"
	DefaultAccept         = "text/html,application/xhtml+xml;q=0.9,application/json;q=0.9,text/plain;q=0.8,application/xml;q=0.8,application/pdf;q=0.7,*/*;q=0.1"
	// acceptEncoding lists what the capturer decodes.
	acceptEncoding = "gzip, deflate, br"
)

// DefaultContentTypes is the content-type allow-list used when
// Options.ContentTypes is empty: HTML, XHTML, text, JSON, XML and PDF.
func DefaultContentTypes() []string {
	return []string{
		"text/html", "application/xhtml+xml", "text/*",
		"application/json", "application/*+json",
		"application/xml", "application/*+xml",
		"application/pdf",
	}
}

// Options configure a Capturer and a Service. A nil *Options means
// defaults everywhere.
type Options struct {
	// MaxBytes is the largest body captured, counted after content
	// decoding; larger bodies end as too_large. 0 means 5,000,000.
	MaxBytes int64
	// CaptureTimeout bounds one capture: every attempt, redirect and the
	// body. 0 means 15 s.
	CaptureTimeout time.Duration
	// BatchTimeout bounds a whole CaptureAll call. 0 means 60 s. The
	// caller's context deadline applies too.
	BatchTimeout time.Duration
	// Concurrency is how many captures of a CaptureAll run at once.
	// 0 means 20.
	Concurrency int
	// MaxPerHost bounds simultaneous connections to one host (per
	// scheme, host and port) across all captures of the Capturer. 0 means
	// Concurrency, so that a batch whose URLs share a host runs all at
	// once rather than in rounds. Operators who want to be gentler with
	// sites can set it lower: a batch of 20 URLs on one host with
	// MaxPerHost 4 then takes five rounds.
	MaxPerHost int
	// MaxRedirects is how many redirects are followed. 0 means 5;
	// negative means none.
	MaxRedirects int
	// Retries is how many times a transient failure (connection error,
	// 429, 5xx other than 501) is retried. 0 means 2; negative means none.
	Retries int
	// RetryWaitMin and RetryWaitMax bound the exponential backoff between
	// attempts. RetryWaitMax also caps a server's Retry-After. 0 means
	// 200 ms and 2 s. No wait outlasts the capture's deadline.
	RetryWaitMin, RetryWaitMax time.Duration
	// UserAgent identifies the capturer. Empty means DefaultUserAgent.
	UserAgent string
	// Accept is the Accept header. Empty means DefaultAccept.
	Accept string
	// ContentTypes is the media-type allow-list ("type/subtype",
	// "type/*", "type/*+suffix"). Empty means DefaultContentTypes().
	ContentTypes []string
	// AllowedPorts are the ports a URL and a dialled address may use.
	// Empty means 80 and 443.
	AllowedPorts []int
	// AllowAddrs lists dialled addresses ("ip:port") that are exempt from
	// the address and port checks: the only way past them. Meant for tests
	// and the demo corpus (one loopback server).
	AllowAddrs []string
	// HostMap redirects dials: "host:port" (as in the URL, default port
	// included) to the "ip:port" to dial instead, like /etc/hosts with
	// ports. It is applied before the connect-time check, so a mapped
	// address must also be in AllowAddrs if it is otherwise forbidden.
	HostMap map[string]string
	// Resolver resolves host names. Nil means NewResolver with
	// DNSAttemptTimeout (the system's servers, each query bounded). Tests
	// inject a resolver that answers from a table.
	Resolver *net.Resolver
	// DNSAttemptTimeout bounds one DNS query of the default resolver: a
	// dropped query is asked again after this long, not after resolv.conf's
	// 5 s. 0 means DefaultDNSAttemptTimeout (1 s).
	DNSAttemptTimeout time.Duration
	// ConnectTimeout bounds one connection (lookup and TCP connect) and
	// one TLS handshake, so that one slow step leaves a capture time for a
	// retry. 0 means a third of CaptureTimeout, at most 10 s.
	ConnectTimeout time.Duration
	// DialControl runs after the built-in address check passed, right
	// before connecting. It can refuse a connection (tests use it as a
	// tripwire) but never allow one the check refused.
	DialControl func(network, address string, c syscall.RawConn) error
	// TLSConfig is the client TLS configuration (tests add their CA).
	// Nil means the system roots and TLS 1.2 or later.
	TLSConfig *tls.Config
	// SpoolDir holds temporary files for bodies being captured. Empty
	// means os.TempDir().
	SpoolDir string
	// Retention is how long records and content are kept (Service.Purge
	// with PurgeExpired). 0 means 30 days, the documented retention.
	Retention time.Duration
	// Logger receives capture and purge messages. Nil discards them.
	Logger *slog.Logger
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// OnCapture, when set, is called by Service after each record (of any
	// status) has been stored: metrics hook in here. It must be fast and
	// must not block or modify the record.
	OnCapture func(s *Snapshot)
}

// settings is Options with defaults applied and lists parsed.
type settings struct {
	Options
	guard   *guard
	hostMap map[string]string
}

func (o *Options) settings() (*settings, error) {
	var v Options
	if o != nil {
		v = *o
	}
	v.applyDefaults()
	g, err := newGuard(v.AllowedPorts, v.AllowAddrs)
	if err != nil {
		return nil, err
	}
	hm, err := parseHostMap(v.HostMap)
	if err != nil {
		return nil, err
	}
	for _, t := range v.ContentTypes {
		if !strings.Contains(t, "/") {
			return nil, fmt.Errorf("snapshot: content type pattern %q has no '/'", t)
		}
	}
	return &settings{Options: v, guard: g, hostMap: hm}, nil
}

// applyDefaults replaces every unset (zero or negative) option with its
// documented default.
func (o *Options) applyDefaults() {
	positive(&o.MaxBytes, DefaultMaxBytes)
	positive(&o.CaptureTimeout, DefaultCaptureTimeout)
	positive(&o.BatchTimeout, DefaultBatchTimeout)
	positive(&o.DNSAttemptTimeout, DefaultDNSAttemptTimeout)
	positive(&o.ConnectTimeout, min(o.CaptureTimeout/3, 10*time.Second))
	positive(&o.Concurrency, DefaultConcurrency)
	positive(&o.MaxPerHost, o.Concurrency)
	zeroOrNone(&o.MaxRedirects, DefaultMaxRedirects)
	zeroOrNone(&o.Retries, DefaultRetries)
	positive(&o.RetryWaitMin, DefaultRetryWaitMin)
	positive(&o.RetryWaitMax, DefaultRetryWaitMax)
	o.RetryWaitMax = max(o.RetryWaitMax, o.RetryWaitMin)
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Accept == "" {
		o.Accept = DefaultAccept
	}
	if len(o.ContentTypes) == 0 {
		o.ContentTypes = DefaultContentTypes()
	}
	positive(&o.Retention, DefaultRetention)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// positive sets *p to def when it is zero or negative.
func positive[T int | int64 | time.Duration](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}

// zeroOrNone sets *p to def when it is zero and to 0 (none) when it is
// negative: the convention of the counts where 0 is a real choice.
func zeroOrNone(p *int, def int) {
	switch {
	case *p == 0:
		*p = def
	case *p < 0:
		*p = 0
	}
}

// newGuard builds the dial guard from the allowed ports (nil means 80
// and 443) and the ip:port allow-list.
func newGuard(allowedPorts []int, allowAddrs []string) (*guard, error) {
	g := &guard{ports: map[int]bool{}, allow: map[netip.AddrPort]bool{}}
	ports := allowedPorts
	if len(ports) == 0 {
		ports = []int{80, 443}
	}
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("snapshot: allowed port %d out of range", p)
		}
		g.ports[p] = true
	}
	for _, a := range allowAddrs {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			return nil, fmt.Errorf("snapshot: allow-list entry %q is not ip:port", a)
		}
		g.allow[ap] = true
	}
	return g, nil
}

// parseHostMap normalises the host map's keys (lower case, no trailing
// dot) and checks both sides are host:port.
func parseHostMap(m map[string]string) (map[string]string, error) {
	hm := map[string]string{}
	for from, to := range m {
		h, p, err := net.SplitHostPort(from)
		if err != nil || h == "" || p == "" {
			return nil, fmt.Errorf("snapshot: host map key %q is not host:port", from)
		}
		if _, _, err := net.SplitHostPort(to); err != nil {
			return nil, fmt.Errorf("snapshot: host map target %q is not host:port", to)
		}
		hm[strings.ToLower(strings.TrimSuffix(h, "."))+":"+p] = to
	}
	return hm, nil
}

// typeAllowed matches a media type against the allow-list patterns.
func (s *settings) typeAllowed(mt string) bool {
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok {
		return false
	}
	for _, p := range s.ContentTypes {
		p = strings.ToLower(p)
		pt, ps, _ := strings.Cut(p, "/")
		if pt != typ {
			continue
		}
		switch {
		case ps == "*" || ps == sub:
			return true
		case strings.HasPrefix(ps, "*+") && strings.HasSuffix(sub, ps[1:]):
			return true
		}
	}
	return false
}
