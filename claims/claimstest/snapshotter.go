package claimstest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/internal/urlnorm"
	"github.com/assaykit/assay/snapshot"
	"golang.org/x/sync/errgroup"
)

// Page is a page served by Snapshotter.
type Page struct {
	// Text is the page's (normalised) text.
	Text string
	// Status overrides the capture status (default captured).
	Status snapshot.Status
	// FinalURL is where the fetch ended up (default the requested URL).
	FinalURL string
	// ContentType is the page's Content-Type. Empty means text/html with
	// Text taken as the page's normalised text. Otherwise Text is the body
	// and the record is made as the snapshot capturer makes it: the body
	// is normalised with snapshot.Normalize, and a type without a
	// normalised form (application/pdf) gives a captured record with a
	// rawSha256 but no normalizedSha256 and no text to check excerpts
	// against.
	ContentType string
}

// Snapshotter is a fake claims.Snapshotter serving pages from memory.
// URLs are looked up by page key (urlnorm.Key), so the spelling of the
// requested URL does not matter; an unknown URL gives a failed record with
// "HTTP 404". All captures of one call run "concurrently": the call waits
// Delay once. Safe for concurrent use.
type Snapshotter struct {
	Pages map[string]Page
	// Delay is waited per CaptureAll call (honouring the context).
	Delay time.Duration
	// Err, when set, is returned instead of records.
	Err error
	// Now is the capture clock (default time.Now).
	Now func() time.Time
	// Started, when set, is called with the URLs of every CaptureAll and
	// FetchAll call as it starts (before Delay and Hold): tests use it to
	// see captures begin, e.g. before the provider has answered.
	Started func(urls []string)
	// Hold, when set, is asked for every call with its URLs; a non-nil
	// channel it returns is waited on (or the context's end, which makes
	// the call return the context's error) before the records are made.
	// Tests use it to keep captures running until they are cancelled.
	Hold func(urls []string) <-chan struct{}

	mu       sync.Mutex
	requests [][]string
	fetches  [][]string
}

// Requests returns the URL lists of every CaptureAll call (FetchAll calls
// are in Fetches).
func (s *Snapshotter) Requests() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.requests...)
}

func sha(s string) *string {
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])
	return &h
}

// CaptureAll implements claims.Snapshotter.
func (s *Snapshotter) CaptureAll(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error) {
	s.mu.Lock()
	s.requests = append(s.requests, append([]string(nil), urls...))
	s.mu.Unlock()
	return s.records(ctx, urls)
}

// FetchAll implements claims.PageFetcher: the same records as CaptureAll
// (the fake keeps nothing either way), recorded apart in Fetches.
func (s *Snapshotter) FetchAll(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error) {
	s.mu.Lock()
	s.fetches = append(s.fetches, append([]string(nil), urls...))
	s.mu.Unlock()
	return s.records(ctx, urls)
}

// Fetches returns the URL lists of every FetchAll call.
func (s *Snapshotter) Fetches() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.fetches...)
}

func (s *Snapshotter) records(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error) {
	if s.Started != nil {
		s.Started(append([]string(nil), urls...))
	}
	if s.Hold != nil {
		if ch := s.Hold(urls); ch != nil {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-ch:
			}
		}
	}
	if s.Delay > 0 {
		t := time.NewTimer(s.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if s.Err != nil {
		return nil, s.Err
	}
	pages := map[string]Page{}
	for u, p := range s.Pages {
		if k, err := urlnorm.Key(u); err == nil {
			pages[k] = p
		}
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	out := make([]*snapshot.Snapshot, len(urls))
	for i, u := range urls {
		rec := &snapshot.Snapshot{ID: ids.New(ids.Snapshot), RequestedURL: u, RetrievedAt: now().UTC()}
		k, _ := urlnorm.Key(u)
		p, ok := pages[k]
		switch {
		case !ok:
			rec.Status = snapshot.StatusFailed
			code, reason := 404, "HTTP 404"
			rec.HTTPStatus, rec.FailureReason = &code, &reason
		case p.Status != "" && p.Status != snapshot.StatusCaptured:
			rec.Status = p.Status
			reason := string(p.Status)
			rec.FailureReason = &reason
		default:
			final := u
			if p.FinalURL != "" {
				final = p.FinalURL
			}
			code, ct, n := 200, "text/html; charset=utf-8", int64(len(p.Text))
			if p.ContentType != "" {
				ct = p.ContentType
			}
			rec.Status, rec.FinalURL, rec.HTTPStatus, rec.ContentType, rec.ContentLength = snapshot.StatusCaptured, &final, &code, &ct, &n
			rec.RawSHA256 = sha(p.Text)
			if p.ContentType == "" {
				rec.NormalizedSHA256, rec.Text = sha(strings.Join(strings.Fields(p.Text), " ")), p.Text
			} else if nz := snapshot.Normalize([]byte(p.Text), ct); nz != nil {
				h := nz.SHA256
				rec.NormalizedSHA256, rec.Normalization, rec.Charset, rec.Text = &h, nz.Version, nz.Charset, nz.Text
			}
		}
		out[i] = rec
	}
	return out, nil
}

// HTTPSnapshotter is a MINIMAL concurrent fetcher for loopback tests and
// benchmarks. It is NOT the snapshot service: no SSRF protection, no
// content-type policy, no HTML-to-text normalisation, nothing stored. It
// exists so the engine can be measured before the real capturer is wired.
type HTTPSnapshotter struct {
	// Client is used for every fetch (default http.DefaultClient).
	Client *http.Client
	// MaxBytes bounds each body (default 5 MB).
	MaxBytes int64
}

// FetchAll is CaptureAll (nothing is stored either way): it makes the
// fetcher a claims.PageFetcher for the quick tier.
func (h *HTTPSnapshotter) FetchAll(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error) {
	return h.CaptureAll(ctx, urls)
}

// CaptureAll fetches every URL concurrently and returns one record per URL.
func (h *HTTPSnapshotter) CaptureAll(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error) {
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	limit := h.MaxBytes
	if limit <= 0 {
		limit = 5_000_000
	}
	out := make([]*snapshot.Snapshot, len(urls))
	var g errgroup.Group
	for i, u := range urls {
		g.Go(func() error {
			rec := &snapshot.Snapshot{ID: ids.New(ids.Snapshot), RequestedURL: u}
			out[i] = rec
			fail := func(reason string) {
				rec.Status, rec.FailureReason, rec.RetrievedAt = snapshot.StatusFailed, &reason, time.Now().UTC()
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				fail(err.Error())
				return nil
			}
			resp, err := client.Do(req)
			if err != nil {
				fail(err.Error())
				return nil
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
			rec.RetrievedAt = time.Now().UTC()
			code := resp.StatusCode
			rec.HTTPStatus = &code
			switch {
			case err != nil:
				fail(err.Error())
			case int64(len(body)) > limit:
				rec.Status = snapshot.StatusTooLarge
			case code >= 400:
				fail(fmt.Sprintf("HTTP %d", code))
			default:
				final, ct, n := resp.Request.URL.String(), resp.Header.Get("Content-Type"), int64(len(body))
				rec.Status, rec.FinalURL, rec.ContentType, rec.ContentLength = snapshot.StatusCaptured, &final, &ct, &n
				rec.RawSHA256, rec.NormalizedSHA256, rec.Text = sha(string(body)), sha(string(body)), string(body)
			}
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
