package corpus

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strings"
	"time"
)

// Handler serves the collection's pages by Host header and path: GET or
// HEAD of a document's URL path on its host (any port) returns its page as
// text/html (Markdown rendered, HTML as written). Requests to a numeric
// host (the listener's own address) at "/" get an index of every URL.
// Anything else is 404; methods other than GET and HEAD are 405.
func (c *Collection) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		host := hostKey(r.Host)
		p := r.URL.EscapedPath()
		if p == "" {
			p = "/"
		}
		if r.URL.RawQuery != "" {
			p += "?" + r.URL.RawQuery
		}
		d := c.Lookup(host, p)
		if d == nil {
			if net.ParseIP(strings.Trim(host, "[]")) != nil && p == "/" {
				c.serveIndex(w, r)
				return
			}
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		if d.PublishedAt != nil {
			h.Set("Last-Modified", d.PublishedAt.UTC().Format(http.TimeFormat))
		}
		h.Set("Content-Length", fmt.Sprint(len(d.page)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(d.page)
	})
}

func (c *Collection) serveIndex(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html.EscapeString(c.label) + "</title></head><body>\n<ul>\n")
	for _, d := range c.docs {
		fmt.Fprintf(&b, "<li>%s (%s, %s)</li>\n", html.EscapeString(d.URL), html.EscapeString(d.Title), d.Kind)
	}
	b.WriteString("</ul>\n</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write([]byte(b.String()))
}

// LoopbackServer serves a collection on 127.0.0.1 so that snapshots of its
// URLs are real HTTP captures. Give HostMap and AllowList to the snapshot
// capturer: it then dials this server for every corpus host.
type LoopbackServer struct {
	c    *Collection
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
}

// Serve starts the collection's Handler on 127.0.0.1 at a free port. Close
// stops it.
func Serve(c *Collection) (*LoopbackServer, error) {
	if c == nil {
		return nil, errors.New("corpus: nil collection")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	s := &LoopbackServer{
		c:    c,
		ln:   ln,
		srv:  &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 5 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return s, nil
}

// Addr is the listener's address, "127.0.0.1:port".
func (s *LoopbackServer) Addr() string { return s.ln.Addr().String() }

// URL is "http://127.0.0.1:port" (the index page).
func (s *LoopbackServer) URL() string { return "http://" + s.Addr() }

// HostMap maps "host:80" of every corpus host, with and without a leading
// "www.", to Addr: the form of the snapshot capturer's dial map.
func (s *LoopbackServer) HostMap() map[string]string {
	m := make(map[string]string)
	for _, h := range s.c.Hosts() {
		alt := "www." + h
		if rest, ok := strings.CutPrefix(h, "www."); ok {
			alt = rest
		}
		m[net.JoinHostPort(h, "80")] = s.Addr()
		m[net.JoinHostPort(alt, "80")] = s.Addr()
	}
	return m
}

// AllowList is the loopback address the capturer must be allowed to dial:
// []string{Addr()}.
func (s *LoopbackServer) AllowList() []string { return []string{s.Addr()} }

// Client returns an HTTP client that sends requests for corpus hosts to
// this server (other hosts fail), for tests and examples.
func (s *LoopbackServer) Client() *http.Client {
	hosts := s.HostMap()
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				to, ok := hosts[strings.ToLower(addr)]
				if !ok {
					return nil, fmt.Errorf("corpus: %s is not a corpus host", addr)
				}
				return d.DialContext(ctx, network, to)
			},
		},
	}
}

// Close stops the server and waits for it.
func (s *LoopbackServer) Close() error {
	err := s.srv.Close()
	<-s.done
	return err
}
