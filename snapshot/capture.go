package snapshot

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/sync/errgroup"

	"github.com/assaykit/assay/internal/ids"
)

// Capturer fetches URLs safely and turns each into a Snapshot record. It
// stores nothing; Service adds storage. A Capturer is safe for concurrent
// use.
type Capturer struct {
	s      *settings
	client *retryablehttp.Client
	tr     *http.Transport
}

// NewCapturer builds a capturer. Invalid options (a malformed allow-list
// entry or host-map entry, a port out of range) are errors.
func NewCapturer(opts *Options) (*Capturer, error) {
	s, err := opts.settings()
	if err != nil {
		return nil, err
	}
	c := &Capturer{s: s}
	res := s.Resolver
	if res == nil {
		res = NewResolver(&ResolverOptions{AttemptTimeout: s.DNSAttemptTimeout})
	}
	dialer := &net.Dialer{
		Timeout:   s.ConnectTimeout,
		KeepAlive: 30 * time.Second,
		Resolver:  res,
		Control:   chainControl(s.guard.control, s.DialControl),
	}
	tlsConf := s.TLSConfig
	if tlsConf == nil {
		tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		tlsConf = tlsConf.Clone()
	}
	c.tr = &http.Transport{
		Proxy: nil, // never a proxy from the environment
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to, ok := s.hostMap[strings.ToLower(addr)]; ok {
				addr = to
			}
			return dialer.DialContext(ctx, network, addr)
		},
		TLSClientConfig:        tlsConf,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxConnsPerHost:        s.MaxPerHost,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    s.ConnectTimeout,
		DisableCompression:     true, // we ask for and decode encodings ourselves
		MaxResponseHeaderBytes: 64 << 10,
	}
	c.client = &retryablehttp.Client{
		HTTPClient: &http.Client{
			// go-retryablehttp calls CloseIdleConnections after every request
			// that fails for good; behind keepIdle that is a no-op, so one
			// blocked or exhausted capture does not drop the keep-alive
			// connections of the others. Close still closes them.
			Transport: keepIdle{c.tr},
			// Redirects are followed by hand so that every hop is checked.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		RetryMax:       s.Retries,
		RetryWaitMin:   s.RetryWaitMin,
		RetryWaitMax:   s.RetryWaitMax,
		CheckRetry:     c.checkRetry,
		Backoff:        c.backoff,
		ErrorHandler:   retryablehttp.PassthroughErrorHandler,
		RequestLogHook: countAttempt,
	}
	return c, nil
}

// keepIdle is a RoundTripper without a CloseIdleConnections method, so
// http.Client.CloseIdleConnections does nothing through it.
type keepIdle struct{ rt http.RoundTripper }

func (k keepIdle) RoundTrip(r *http.Request) (*http.Response, error) { return k.rt.RoundTrip(r) }

// Close releases idle connections.
func (c *Capturer) Close() { c.tr.CloseIdleConnections() }

// Capture fetches one URL and returns its record. Problems with the URL or
// the fetch are not errors: they are records with status failed, blocked,
// too_large or unsupported and a failureReason. The content is hashed and
// normalised (Text is set), then discarded.
func (c *Capturer) Capture(ctx context.Context, rawURL string) (*Snapshot, error) {
	return c.capture(ctx, ctx, rawURL, nil)
}

// CaptureAll captures urls concurrently (Options.Concurrency at a time)
// under one deadline (Options.BatchTimeout and ctx's) and returns one
// record per URL, in input order. Captures still running at the deadline
// end as failed records.
func (c *Capturer) CaptureAll(ctx context.Context, urls []string) ([]*Snapshot, error) {
	return c.captureAll(ctx, urls, nil)
}

// keepFunc receives each finished record and, for captured ones, the
// content. It runs with a context that outlives the capture deadline.
type keepFunc func(ctx context.Context, s *Snapshot, content *spool) error

// keepTimeout bounds the storing of one record after its capture ended.
const keepTimeout = 15 * time.Second

func (c *Capturer) captureAll(ctx context.Context, urls []string, keep keepFunc) ([]*Snapshot, error) {
	out := make([]*Snapshot, len(urls))
	bctx, cancel := context.WithTimeout(ctx, c.s.BatchTimeout)
	defer cancel()
	g, gctx := errgroup.WithContext(bctx)
	g.SetLimit(c.s.Concurrency)
	for i, u := range urls {
		g.Go(func() error {
			snap, err := c.capture(gctx, ctx, u, keep)
			out[i] = snap
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// capture runs one capture under ctx (which may be a batch context) and
// hands the result to keep. parent is the caller's own context, used to
// tell a caller's cancellation from a batch deadline.
func (c *Capturer) capture(ctx, parent context.Context, rawURL string, keep keepFunc) (*Snapshot, error) {
	s := &Snapshot{ID: ids.New(ids.Snapshot), RequestedURL: rawURL, RetrievedAt: c.s.Now().UTC().Truncate(time.Microsecond)}
	cctx, cancel := context.WithTimeout(ctx, c.s.CaptureTimeout)
	defer cancel()
	sp := &spool{dir: c.s.SpoolDir}
	defer sp.Close()

	if err := ctx.Err(); err != nil {
		c.fail(s, StatusFailed, c.deadlineReason(ctx, parent, cctx))
	} else if err := c.fetch(cctx, s, sp); err != nil {
		var re *redirectError
		redirect := errors.As(err, &re)
		switch be, ok := asBlocked(err); {
		case ok && redirect:
			c.fail(s, StatusBlocked, "redirect to "+re.URL+" refused: "+be.Reason)
		case ok:
			c.fail(s, StatusBlocked, be.Reason)
		case cctx.Err() != nil:
			c.fail(s, StatusFailed, c.deadlineReason(ctx, parent, cctx))
		case redirect:
			c.fail(s, StatusFailed, truncate("redirect to "+re.URL+" failed: "+describe(re.Err)))
		default:
			c.fail(s, StatusFailed, describe(err))
		}
	}
	c.s.Logger.Debug("snapshot: captured", "id", s.ID, "url", rawURL, "status", s.Status)
	if keep == nil {
		return s, nil
	}
	kctx, kcancel := context.WithTimeout(context.WithoutCancel(ctx), keepTimeout)
	defer kcancel()
	if err := keep(kctx, s, sp); err != nil {
		return nil, err
	}
	return s, nil
}

func (c *Capturer) fail(s *Snapshot, st Status, reason string) {
	s.Status = st
	s.FailureReason = ptr(reason)
	s.RawSHA256, s.NormalizedSHA256, s.Normalization, s.Text = nil, nil, "", ""
}

func (c *Capturer) deadlineReason(batch, parent, capture context.Context) string {
	switch {
	case parent.Err() != nil && errors.Is(parent.Err(), context.Canceled):
		return "capture cancelled"
	case parent.Err() != nil, batch.Err() != nil:
		return "capture deadline exceeded"
	case capture.Err() != nil:
		return fmt.Sprintf("timed out after %s", c.s.CaptureTimeout)
	}
	return "capture deadline exceeded"
}

// redirectError is a failure (blocked or not) of a redirect's target,
// after an earlier hop answered.
type redirectError struct {
	URL string // the target as given in Location, resolved
	Err error
}

func (e *redirectError) Error() string { return "redirect to " + e.URL + ": " + e.Err.Error() }
func (e *redirectError) Unwrap() error { return e.Err }

// fetch follows redirects by hand, checking every hop, and reads the final
// body into sp. It fills s; a returned error is a blocked or failed
// outcome (the caller classifies it). FinalURL, like HTTPStatus, is set
// only by a response: it is the URL whose response the record describes,
// so a refused or failed redirect target leaves it at the redirecting
// hop, and a capture that got no response has none (package docs).
func (c *Capturer) fetch(ctx context.Context, s *Snapshot, sp *spool) error {
	cur := s.RequestedURL
	for hop := 0; ; hop++ {
		onHop := func(err error) error {
			if hop > 0 {
				return &redirectError{URL: cur, Err: err}
			}
			return err
		}
		u, err := c.s.guard.checkURL(cur)
		if err != nil {
			return onHop(err)
		}
		u.Fragment, u.RawFragment = "", "" // never sent; not part of what was fetched
		resp, exch, err := c.do(ctx, u)
		if err != nil {
			return onHop(err)
		}
		s.FinalURL = ptr(u.String())
		s.RetrievedAt = c.s.Now().UTC().Truncate(time.Microsecond)
		s.HTTPStatus = ptr(resp.StatusCode)
		s.Exchange = exch
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			s.ContentType = ptr(ct)
		}
		if isRedirect(resp.StatusCode) && resp.Header.Get("Location") != "" {
			drain(resp.Body)
			if hop >= c.s.MaxRedirects {
				return fmt.Errorf("too many redirects (limit %d)", c.s.MaxRedirects)
			}
			next, err := u.Parse(resp.Header.Get("Location"))
			if err != nil {
				return fmt.Errorf("invalid redirect location %q", resp.Header.Get("Location"))
			}
			cur = next.String()
			s.ContentType = nil
			continue
		}
		defer resp.Body.Close()
		return c.readBody(ctx, s, resp, sp)
	}
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// drain reads a little of a body so that the connection can be reused,
// then closes it.
func drain(b io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, b, 4<<10)
	_ = b.Close()
}

// do sends one GET (with retries) and returns the response and exchange.
func (c *Capturer) do(ctx context.Context, u *url.URL) (*http.Response, *Exchange, error) {
	var mu sync.Mutex
	var remote string
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		mu.Lock()
		remote = info.Conn.RemoteAddr().String()
		mu.Unlock()
	}}
	ctx = httptrace.WithClientTrace(context.WithValue(ctx, attemptsKey{}, &attempts{}), trace)
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot build request: %v", err)
	}
	req.Header.Set("User-Agent", c.s.UserAgent)
	req.Header.Set("Accept", c.s.Accept)
	req.Header.Set("Accept-Encoding", acceptEncoding)
	resp, err := c.client.Do(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, nil, err
	}
	hdr := req.Header.Clone()
	hdr.Set("Host", u.Host)
	mu.Lock()
	defer mu.Unlock()
	exch := &Exchange{
		Method:         http.MethodGet,
		URL:            u.String(),
		RequestHeader:  hdr,
		Proto:          resp.Proto,
		StatusCode:     resp.StatusCode,
		Status:         resp.Status,
		ResponseHeader: resp.Header.Clone(),
		RemoteAddr:     remote,
	}
	return resp, exch, nil
}

// readBody classifies the final response and, for a capture, reads the
// decoded body into sp (never more than MaxBytes+1 bytes) and hashes it.
func (c *Capturer) readBody(ctx context.Context, s *Snapshot, resp *http.Response, sp *spool) error {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		text := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
		if text == "" {
			text = http.StatusText(resp.StatusCode)
		}
		c.fail(s, StatusFailed, strings.TrimSpace(fmt.Sprintf("HTTP %d %s", resp.StatusCode, text)))
		return nil
	}
	encodings := contentEncodings(resp.Header)
	if resp.ContentLength >= 0 && len(encodings) == 0 {
		s.ContentLength = ptr(resp.ContentLength)
	}
	body, err := decodeContent(resp.Body, encodings)
	if err != nil {
		c.fail(s, StatusUnsupported, err.Error())
		return nil
	}
	ct := resp.Header.Get("Content-Type")
	var br *bufio.Reader
	if ct == "" {
		// No declared type: sniff the decoded content (WHATWG MIME sniffing
		// as implemented by net/http) and record what was sniffed.
		br = bufio.NewReaderSize(body, 512)
		head, _ := br.Peek(512)
		ct = http.DetectContentType(head)
		s.ContentType = ptr(ct)
		body = br
	}
	mt, _ := parseContentType(ct)
	if !c.s.typeAllowed(mt) {
		c.fail(s, StatusUnsupported, fmt.Sprintf("content type %q is not captured", mt))
		return nil
	}
	if resp.ContentLength > c.s.MaxBytes && len(encodings) == 0 {
		c.fail(s, StatusTooLarge, fmt.Sprintf("declared length %d exceeds the limit of %d bytes", resp.ContentLength, c.s.MaxBytes))
		return nil
	}
	n, sum, err := streamBody(sp, body, c.s.MaxBytes+1)
	if n > c.s.MaxBytes {
		c.fail(s, StatusTooLarge, fmt.Sprintf("body exceeds the limit of %d bytes", c.s.MaxBytes))
		s.ContentLength = nil
		if resp.ContentLength > 0 && len(encodings) == 0 {
			s.ContentLength = ptr(resp.ContentLength)
		}
		return nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reading body: %w", err)
	}
	s.Status = StatusCaptured
	s.FailureReason = nil
	s.ContentLength = ptr(n)
	s.RawSHA256 = ptr(hex.EncodeToString(sum[:]))
	if mediaKind(mt) == kindNone {
		return nil // no normalised form (PDF): nothing more to read
	}
	content, err := sp.Bytes()
	if err != nil {
		return fmt.Errorf("reading staged body: %w", err)
	}
	if nz := Normalize(content, ct); nz != nil {
		s.NormalizedSHA256 = ptr(nz.SHA256)
		s.Normalization = nz.Version
		s.Charset = nz.Charset
		s.Text = nz.Text
	}
	return nil
}

// contentEncodings lists the codings applied to the body, in the order
// they were applied, without identity.
func contentEncodings(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for _, e := range strings.Split(v, ",") {
			e = strings.ToLower(strings.TrimSpace(e))
			if e != "" && e != "identity" {
				out = append(out, e)
			}
		}
	}
	return out
}

// maxEncodings bounds stacked content codings.
const maxEncodings = 2

// decodeContent undoes the content codings (gzip, x-gzip, deflate as zlib
// or raw, br), last applied first.
func decodeContent(r io.Reader, encodings []string) (io.Reader, error) {
	if len(encodings) > maxEncodings {
		return nil, fmt.Errorf("too many content encodings (%s)", strings.Join(encodings, ", "))
	}
	for i := len(encodings) - 1; i >= 0; i-- {
		switch encodings[i] {
		case "gzip", "x-gzip":
			zr, err := gzip.NewReader(r)
			if err != nil {
				return nil, fmt.Errorf("gzip content is corrupt: %v", err)
			}
			r = zr
		case "deflate":
			br := bufio.NewReader(r)
			head, _ := br.Peek(2)
			if len(head) == 2 && head[0]&0x0F == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
				zr, err := zlib.NewReader(br)
				if err != nil {
					return nil, fmt.Errorf("deflate content is corrupt: %v", err)
				}
				r = zr
			} else {
				r = flate.NewReader(br)
			}
		case "br":
			r = brotli.NewReader(r)
		default:
			return nil, fmt.Errorf("content encoding %q is not supported", encodings[i])
		}
	}
	return r, nil
}

// attempts counts the attempts of one request (retryablehttp tells the
// count to RequestLogHook but not to CheckRetry).
type attempts struct {
	mu sync.Mutex
	n  int
}

type attemptsKey struct{}

func countAttempt(_ retryablehttp.Logger, req *http.Request, n int) {
	if a, ok := req.Context().Value(attemptsKey{}).(*attempts); ok {
		a.mu.Lock()
		a.n = n
		a.mu.Unlock()
	}
}

// checkRetry retries transient failures only, and only when the wait
// before the next attempt ends before the capture's deadline.
func (c *Capturer) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		if _, ok := asBlocked(err); ok {
			return false, err
		}
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return false, err
		}
		retry, perr := retryablehttp.ErrorPropagatedRetryPolicy(ctx, resp, err)
		if !retry {
			return false, perr
		}
	} else if resp.StatusCode != http.StatusTooManyRequests &&
		(resp.StatusCode < 500 || resp.StatusCode == http.StatusNotImplemented) {
		return false, nil
	}
	n := 0
	if a, ok := ctx.Value(attemptsKey{}).(*attempts); ok {
		a.mu.Lock()
		n = a.n
		a.mu.Unlock()
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= c.maxWait(n, resp) {
		return false, nil
	}
	return true, nil
}

// maxWait is the longest backoff for attempt n.
func (c *Capturer) maxWait(n int, resp *http.Response) time.Duration {
	if ra, ok := retryAfter(resp, c.s.Now()); ok {
		return min(ra, c.s.RetryWaitMax)
	}
	d := c.s.RetryWaitMin << min(n, 20)
	return min(d, c.s.RetryWaitMax)
}

// backoff waits a server's Retry-After (429/503) capped at RetryWaitMax,
// else an exponential backoff with jitter in [d/2, d].
func (c *Capturer) backoff(minWait, maxWait time.Duration, n int, resp *http.Response) time.Duration {
	if ra, ok := retryAfter(resp, c.s.Now()); ok {
		return min(ra, maxWait)
	}
	d := min(minWait<<min(n, 20), maxWait)
	return d/2 + rand.N(d/2+1)
}

// retryAfter parses Retry-After (seconds or an HTTP date) on 429 and 503.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return 0, false
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > 86400 {
			secs = 86400
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// describe turns a fetch error into a short failureReason.
func describe(err error) string {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return fmt.Sprintf("DNS lookup failed for %s: no such host", dnsErr.Name)
		}
		return fmt.Sprintf("DNS lookup failed for %s: %s", dnsErr.Name, dnsErr.Err)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		msg := opErr.Err.Error()
		if opErr.Op == "dial" {
			return truncate("connection failed: " + msg)
		}
		return truncate(opErr.Op + ": " + msg)
	}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return truncate("TLS certificate not trusted: " + certErr.Err.Error())
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return truncate(err.Error())
}

func truncate(s string) string {
	const limit = 300
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// streamBody copies at most limit bytes from src to dst and hashes them
// with SHA-256 on a second goroutine, so that hashing overlaps reading
// and staging. Memory use is fixed: streamBuffers buffers of
// streamBufferSize bytes, whatever the body's size.
func streamBody(dst io.Writer, src io.Reader, limit int64) (int64, [sha256.Size]byte, error) {
	const streamBuffers, streamBufferSize = 4, 128 << 10
	free := make(chan []byte, streamBuffers)
	for range streamBuffers {
		free <- make([]byte, streamBufferSize)
	}
	work := make(chan []byte, streamBuffers)
	var sum [sha256.Size]byte
	done := make(chan struct{})
	go func() {
		defer close(done)
		h := sha256.New()
		for b := range work {
			h.Write(b)
			free <- b[:cap(b)]
		}
		h.Sum(sum[:0])
	}()
	var n int64
	var err error
	lr := io.LimitReader(src, limit)
	for {
		buf := <-free
		m, rerr := io.ReadFull(lr, buf)
		if m > 0 {
			if _, werr := dst.Write(buf[:m]); werr != nil {
				err = werr
				break
			}
			n += int64(m)
			work <- buf[:m]
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	close(work)
	<-done
	return n, sum, err
}
