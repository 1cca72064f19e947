package nichedemo

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Pages serves an illustrative page at the source URL of every demo
// signal, so that the engine's Capturer (the snapshot service) captures
// real HTTP responses, as the claims demo corpus does (claims/corpus).
// The demo's URLs name real sites over HTTPS; Pages answers for them on
// 127.0.0.1 only, with a certificate made at start-up for those host
// names and trusted only by the TLSConfig it hands out. Give
// HostMap, AllowList and TLSConfig to the snapshot.Options of the service
// that captures the demo's evidence (never to one that captures the live
// web: it would send those hosts to the loopback server).
type Pages struct {
	pages map[string][]byte // host + request URI → page
	hosts []string
	cert  *x509.Certificate
	ln    net.Listener
	srv   *http.Server
	done  chan struct{}
}

// ServePages starts the demo pages on 127.0.0.1 at a free port over TLS.
// Close stops them.
func ServePages() (*Pages, error) {
	p := &Pages{pages: map[string][]byte{}, done: make(chan struct{})}
	if err := p.load(); err != nil {
		return nil, err
	}
	cert, err := selfSigned(p.hosts)
	if err != nil {
		return nil, fmt.Errorf("nichedemo: pages certificate: %w", err)
	}
	p.cert = cert.Leaf
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("nichedemo: %w", err)
	}
	p.ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(p.done)
		_ = p.srv.Serve(p.ln) // http.ErrServerClosed on Close
	}()
	return p, nil
}

// load renders one page per distinct source URL of the catalogue.
func (p *Pages) load() error {
	type sig struct {
		Type        string `json:"type"`
		SourceURL   string `json:"sourceUrl"`
		Title       string `json:"title"`
		Excerpt     string `json:"excerpt"`
		ObservedAt  string `json:"observedAt"`
		Attribution string `json:"attribution"`
		License     string `json:"license"`
	}
	hosts := map[string]bool{}
	for line := range bytes.Lines(catalogue) {
		var s sig
		if err := json.Unmarshal(line, &s); err != nil {
			return fmt.Errorf("nichedemo: embedded catalogue: %w", err)
		}
		if s.Type != "signal" {
			continue
		}
		u, err := url.Parse(s.SourceURL)
		if err != nil || u.Scheme != "https" {
			return fmt.Errorf("nichedemo: signal URL %q is not https", s.SourceURL)
		}
		key := pageKey(u.Hostname(), u.RequestURI())
		if _, ok := p.pages[key]; ok {
			continue
		}
		hosts[u.Hostname()] = true
		p.pages[key] = []byte(fmt.Sprintf(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title></head>
<body><article>
<h1>%s</h1>
<p>%s</p>
<p><small>%s. %s. This page is served by the assay demo on loopback in place of %s.</small></p>
</article></body></html>
`, html.EscapeString(s.Title), html.EscapeString(s.Title), html.EscapeString(s.Excerpt),
			html.EscapeString(s.Attribution), html.EscapeString(s.License), html.EscapeString(s.SourceURL)))
	}
	for h := range hosts {
		p.hosts = append(p.hosts, h)
	}
	slices.Sort(p.hosts)
	return nil
}

func pageKey(host, requestURI string) string {
	return strings.ToLower(host) + cmp.Or(requestURI, "/")
}

// ServeHTTP serves the page of the request's host and URI (404 for any
// other), as text/html.
func (p *Pages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	page, ok := p.pages[pageKey(host, r.URL.RequestURI())]
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", fmt.Sprint(len(page)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(page)
}

// Addr is the listener's address, "127.0.0.1:port".
func (p *Pages) Addr() string { return p.ln.Addr().String() }

// Len is the number of pages served.
func (p *Pages) Len() int { return len(p.pages) }

// HostMap maps "host:443" of every demo host to Addr: the form of the
// snapshot capturer's dial map.
func (p *Pages) HostMap() map[string]string {
	m := make(map[string]string, len(p.hosts))
	for _, h := range p.hosts {
		m[net.JoinHostPort(h, "443")] = p.Addr()
	}
	return m
}

// AllowList is the loopback address the capturer must be allowed to dial.
func (p *Pages) AllowList() []string { return []string{p.Addr()} }

// TLSConfig trusts the pages' certificate besides the system roots (so a
// capturer given it still captures other sites), or the pages' certificate
// alone when the system roots cannot be read.
func (p *Pages) TLSConfig() *tls.Config {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	pool.AddCert(p.cert)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// Close stops the server and waits for it.
func (p *Pages) Close() error {
	err := p.srv.Close()
	<-p.done
	return err
}

// selfSigned makes a certificate for hosts, valid for a day.
func selfSigned(hosts []string) (tls.Certificate, error) {
	if len(hosts) == 0 {
		return tls.Certificate{}, errors.New("no hosts")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "assay niche demo pages"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		DNSNames: hosts,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// Client returns an HTTP client that sends requests for the demo hosts to
// the pages server (other hosts fail), for tests and examples.
func (p *Pages) Client() *http.Client {
	hosts := p.HostMap()
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			Proxy:           nil,
			TLSClientConfig: p.TLSConfig(),
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				to, ok := hosts[strings.ToLower(addr)]
				if !ok {
					return nil, fmt.Errorf("nichedemo: %s is not a demo host", addr)
				}
				return d.DialContext(ctx, network, to)
			},
		},
	}
}
