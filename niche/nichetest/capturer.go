package nichetest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/snapshot"
)

// Capturer is a fake niche.Capturer that fetches nothing: a URL of Pages
// is "captured" with its text as an HTML page (hashed as the snapshot
// service hashes content), any other URL fails with HTTP 404. It keeps the
// holds, so a test can check what the engine holds and releases. Set the
// fields before use; the zero value captures nothing (every URL fails).
type Capturer struct {
	// Pages maps a URL, exactly as the signal's sourceUrl, to its HTML.
	Pages map[string]string
	// Now is the capture time. Nil means time.Now.
	Now func() time.Time
	// Err, when set, fails every CaptureAll (a storage failure).
	Err error

	mu      sync.Mutex
	fetched []string
	holds   map[string]bool
}

var _ niche.Capturer = (*Capturer)(nil)

// CaptureAll implements niche.Capturer.
func (c *Capturer) CaptureAll(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error) {
	if c.Err != nil {
		return nil, c.Err
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	out := make([]*snapshot.Snapshot, len(urls))
	for i, u := range urls {
		at := now().UTC().Truncate(time.Microsecond)
		s := &snapshot.Snapshot{ID: ids.New(ids.Snapshot), RequestedURL: u, FinalURL: &u, RetrievedAt: at}
		page, ok := c.Pages[u]
		if !ok {
			st, reason := 404, "HTTP 404 Not Found"
			s.Status, s.HTTPStatus, s.FailureReason = snapshot.StatusFailed, &st, &reason
		} else {
			body := []byte(page)
			st, ct, n := 200, "text/html; charset=utf-8", int64(len(body))
			raw := snapshot.RawSHA256(body)
			s.Status, s.HTTPStatus, s.ContentType, s.ContentLength, s.RawSHA256 = snapshot.StatusCaptured, &st, &ct, &n, &raw
			if nz := snapshot.Normalize(body, ct); nz != nil {
				s.NormalizedSHA256, s.Text = &nz.SHA256, nz.Text
			}
		}
		out[i] = s
	}
	c.mu.Lock()
	c.fetched = append(c.fetched, urls...)
	c.mu.Unlock()
	return out, nil
}

// Hold implements niche.Capturer.
func (c *Capturer) Hold(ctx context.Context, ids []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holds == nil {
		c.holds = map[string]bool{}
	}
	for _, id := range ids {
		c.holds[id] = true
	}
	return nil
}

// Release implements niche.Capturer.
func (c *Capturer) Release(ctx context.Context, ids []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if !c.holds[id] {
			return errors.New("nichetest: releasing a snapshot that is not held: " + id)
		}
		delete(c.holds, id)
	}
	return nil
}

// Held returns the held snapshot ids, sorted.
func (c *Capturer) Held() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.holds))
}

// Fetched returns every URL captured so far, in order.
func (c *Capturer) Fetched() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.fetched)
}
