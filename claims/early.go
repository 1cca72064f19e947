package claims

import (
	"context"
	"errors"
	"sync"

	"github.com/assaykit/assay/internal/urlnorm"
	"github.com/assaykit/assay/snapshot"
)

// early captures the sources that streaming providers report before they
// answer (see ProviderQuery.OnSearchCall), so that on tiers that take
// snapshots the pages are being captured while the model still writes:
//
//   - all_sources (research): every reported source is a page the tier
//     captures anyway (up to maxSnapshots);
//   - cited (standard, deep): the sources are captured speculatively, in
//     the order reported, at most the tier's maxSnapshots at a time.
//
// Sources on blocked domains or outside allowedDomains are never
// captured. Once the answer is reconciled, take waits for the early
// captures of the pages the tier checks (planChecks), captures the rest in
// one batch and cancels every early capture the answer does not need. The
// result is the one a provider that does not stream gets: the same pages,
// in the same order, checked the same way.
type early struct {
	ctx   context.Context
	snaps Snapshotter
	eff   *Effective
	limit int

	mu      sync.Mutex
	closed  bool // the answer is in: later reports are ignored
	byKey   map[string]*pending
	running int // captures started and not cancelled
	wg      sync.WaitGroup
}

// pending is one early capture.
type pending struct {
	cancel context.CancelFunc
	done   chan struct{}
	snap   *snapshot.Snapshot
	err    error
}

// newEarly returns the early capturer of one verification, or nil when
// its tier takes no snapshots or no Snapshotter is configured (a nil
// *early ignores reports and captures nothing).
func (e *Engine) newEarly(ctx context.Context, eff *Effective) *early {
	if e.snaps == nil || eff.Tier.SnapshotMode == SnapshotNone || eff.Tier.MaxSnapshots <= 0 {
		return nil
	}
	return &early{ctx: ctx, snaps: e.snaps, eff: eff, limit: eff.Tier.MaxSnapshots, byKey: map[string]*pending{}}
}

// report starts captures of the sources of one finished tool action. It
// never blocks.
func (p *early) report(c SearchCall) {
	if p == nil {
		return
	}
	cands := append([]SourceRef(nil), c.Sources...)
	if c.URL != "" {
		cands = append(cands, SourceRef{URL: c.URL})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range cands {
		if p.closed || p.running >= p.limit {
			return
		}
		canon, err := urlnorm.Canonical(clean(s.URL))
		if err != nil || domainFilter(p.eff, urlnorm.Host(canon)) != "" {
			continue
		}
		key, _ := urlnorm.Key(canon)
		if p.byKey[key] != nil {
			continue
		}
		p.byKey[key] = p.start(canon)
		p.running++
	}
}

// start runs one capture in the background; p.mu is held.
func (p *early) start(u string) *pending {
	ctx, cancel := context.WithCancel(p.ctx)
	c := &pending{cancel: cancel, done: make(chan struct{})}
	p.wg.Go(func() {
		defer close(c.done)
		snaps, err := p.snaps.CaptureAll(ctx, []string{u})
		switch {
		case err != nil:
			c.err = err
		case len(snaps) != 1 || snaps[0] == nil:
			c.err = errWrongCount
		default:
			c.snap = snaps[0]
		}
	})
	return c
}

var errWrongCount = errors.New("the snapshotter returned a wrong number of records")

// close stops accepting reports: the provider has answered.
func (p *early) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}

// started reports whether any early capture was started.
func (p *early) started() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byKey) > 0
}

// take returns one record per URL of urls, in order: the early capture of
// its page when there is one, else a capture made now (all of those in one
// CaptureAll). Early captures of other pages are cancelled.
func (p *early) take(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error) {
	p.close()
	p.mu.Lock()
	wanted := map[string]bool{}
	byURL := make([]*pending, len(urls))
	var rest []string
	var restIdx []int
	for i, u := range urls {
		key, err := urlnorm.Key(u)
		if err == nil {
			wanted[key] = true
			byURL[i] = p.byKey[key]
		}
		if byURL[i] == nil {
			rest = append(rest, u)
			restIdx = append(restIdx, i)
		}
	}
	for key, c := range p.byKey {
		if !wanted[key] {
			c.cancel()
			p.running--
		}
	}
	p.mu.Unlock()

	out := make([]*snapshot.Snapshot, len(urls))
	var restErr error
	if len(rest) > 0 {
		snaps, err := p.snaps.CaptureAll(ctx, rest)
		switch {
		case err != nil:
			restErr = err
		case len(snaps) != len(rest):
			restErr = errWrongCount
		default:
			for j, i := range restIdx {
				out[i] = snaps[j]
			}
		}
	}
	for i, c := range byURL {
		if c == nil {
			continue
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if c.err != nil {
			return nil, c.err
		}
		out[i] = c.snap
	}
	if restErr != nil {
		return nil, restErr
	}
	return out, nil
}

// stop cancels every early capture still running and waits for them to
// end (they honour their context).
func (p *early) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	for _, c := range p.byKey {
		c.cancel()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
