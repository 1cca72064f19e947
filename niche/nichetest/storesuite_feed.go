package nichetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/niche"
)

// FeedPruner is implemented by change feeds whose old entries can be
// pruned (store/nichestore, nichemem.Store): TestStore's IndexFeed check prunes to make
// a gap.
type FeedPruner interface {
	PruneNicheFeed(ctx context.Context, keep int64) (int64, error)
}

// testNicheIndexFeed is the index equivalence suite of stores that keep a
// change feed (niche.ChangeFeed): two instances (engines on two handles
// of one database, as two servers) each keep a search index, loaded once;
// a seeded random sequence of writes — creations, drafts, revisions that
// change text, category and evidence, publications, withdrawals, signal
// rejections and acceptances (which change signal counts and withdraw
// evaluations below the floor) — goes through either instance; after
// every moderation and every 15 writes each instance applies the feed
// incrementally, and its answers to every query (both levels, both sorts,
// a category, broad and narrow) must equal those of an index loaded from
// scratch and of the store's own search. Neither instance may load its index anew (counted:
// IndexStatus.FullLoads stays 1). Then the feed is pruned past what one
// instance applied: that gap, and only it, makes it load anew, and it is
// still equal.
func testNicheIndexFeed(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, another := open(t)
	if _, ok := st.(niche.ChangeFeed); !ok {
		t.Skip("the store keeps no change feed")
	}
	second := another()
	tick := NewClock(nicheEpoch, time.Second)
	narrow := func(o niche.Options) niche.Options {
		o.SearchCandidates, o.SearchWindow, o.Now = 5, 20, tick.Now
		return o
	}
	// Each instance applies the feed before a search (no result cache,
	// no StartIndex loop): synchronously, so that the test never depends
	// on scheduling.
	a := nicheEngine(t, st, new(narrow(niche.Options{})))
	b := nicheEngine(t, second, new(narrow(niche.Options{})))
	plain := nicheEngine(t, st, new(narrow(niche.Options{DisableSearchIndex: true})))
	for _, e := range []*niche.Engine{a, b} {
		if err := e.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	bf := &bruteForce{t: t, st: st, e: a, created: map[string]int{}}
	bf.floor = ingestFloor(t, a)
	var extra []niche.SignalInput
	for n := range 6 {
		extra = append(extra, nicheSignal(9100+n, niche.KindComplaint, fmt.Sprintf("https://extra%d.example.com/p/%d", n%3, n), 5+n))
	}
	if _, err := a.IngestSignals(ctx, extra); err != nil {
		t.Fatal(err)
	}
	signals := append([]string{}, bf.floor...)
	for n := range 6 {
		signals = append(signals, sigID(9100+n))
	}
	rng := rand.New(rand.NewPCG(29, 1))
	pick := func(k int) []string { // k distinct signals
		perm := rng.Perm(len(signals))[:k]
		out := make([]string, k)
		for i, p := range perm {
			out[i] = signals[p]
		}
		return out
	}
	queries := append(append([]string{}, bruteQueries[:12]...), "bookkeeping farmers", "rural", "small plumbers", "for family")
	check := func(step string) {
		t.Helper()
		fresh := nicheEngine(t, st, new(narrow(niche.Options{})))
		if err := fresh.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		for _, e := range []*niche.Engine{a, b} {
			if err := e.LoadIndex(ctx); err != nil { // applies the feed
				t.Fatal(err)
			}
		}
		for qi, raw := range queries {
			for c := range 4 {
				full, sort := c&1 == 1, []string{niche.SortScore, niche.SortRecent}[c>>1]
				o := niche.SearchOptions{Query: raw, Sort: sort, Full: full, Limit: 3}
				if qi%3 == 0 {
					o.Category = new("operations")
				}
				want := indexResult(t, plain, o)
				if diff := cmp.Diff(want, indexResult(t, fresh, o)); diff != "" {
					t.Fatalf("%s: an index loaded from scratch differs from the store: %+v (-store +index):\n%s", step, o, diff)
				}
				for i, e := range []*niche.Engine{a, b} {
					if diff := cmp.Diff(want, indexResult(t, e, o)); diff != "" {
						t.Fatalf("%s: instance %d's incremental index differs from the store and a fresh load: %+v (-want +got):\n%s", step, i, o, diff)
					}
				}
			}
		}
	}
	type live struct {
		ev *niche.Evaluation
	}
	var evals []*live
	rejected := map[string]bool{}
	for step := range 72 {
		moderated := false
		e := a
		if rng.IntN(2) == 1 {
			e = b
		}
		var err error
		switch op := rng.IntN(10); {
		case op < 3 || len(evals) < 4:
			i := len(evals)
			d := bf.draft(i)
			d.SignalIDs = pick(3 + rng.IntN(3))
			d.Publish = rng.IntN(4) != 0
			var ev *niche.Evaluation
			if ev, err = e.Create(ctx, niche.Op{ID: fmt.Sprintf("feed-%d", step)}, d); err == nil {
				evals = append(evals, &live{ev})
			}
		case op < 6:
			l := evals[rng.IntN(len(evals))]
			d := bf.draft(rng.IntN(40))
			d.SignalIDs = pick(3 + rng.IntN(3))
			if rng.IntN(3) == 0 {
				d.Category = "Finance"
			}
			var ev *niche.Evaluation
			if ev, err = e.Revise(ctx, l.ev.ID, l.ev.Revision, niche.Op{}, d); err == nil {
				l.ev = ev
			}
		case op < 7:
			l := evals[rng.IntN(len(evals))]
			var ev *niche.Evaluation
			if ev, err = e.Publish(ctx, l.ev.ID, l.ev.Revision, niche.Op{}); err == nil {
				l.ev = ev
			}
		case op < 8:
			l := evals[rng.IntN(len(evals))]
			if l.ev.Status == niche.StatusPublished {
				var ev *niche.Evaluation
				if ev, err = e.Withdraw(ctx, l.ev.ID, l.ev.Revision, niche.Op{}); err == nil {
					l.ev = ev
				}
			}
		default:
			moderated = true
			id := signals[rng.IntN(len(signals))]
			state := niche.StateRejected
			if rejected[id] {
				state = niche.StateAccepted
			}
			if _, err = e.ModerateSignal(ctx, id, state, "feed test", ""); err == nil {
				rejected[id] = state == niche.StateRejected
			}
			// Rejections may withdraw evaluations: read them again.
			for _, l := range evals {
				if l.ev, err = e.Evaluation(ctx, l.ev.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err != nil && !errors.Is(err, niche.ErrEvidence) && !errors.Is(err, niche.ErrSignalRefs) && !errors.Is(err, niche.ErrInvalid) {
			t.Fatalf("step %d: %v", step, err)
		}
		if step%15 == 14 || moderated {
			check(fmt.Sprintf("after write %d", step))
		}
	}
	check("after the writes")
	for i, e := range []*niche.Engine{a, b} {
		s := e.IndexStatus()
		if !s.Ready || s.FullLoads != 1 || s.Applied == 0 {
			t.Fatalf("instance %d: %+v; want one full load and the rest applied incrementally", i, s)
		}
	}
	// A gap: b misses entries pruned before it applied them, and loads
	// anew (once); a, up to date, does not.
	p, ok := st.(FeedPruner)
	if !ok {
		return
	}
	for id, r := range rejected {
		if r {
			if _, err := a.ModerateSignal(ctx, id, niche.StateAccepted, "feed test", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 3 {
		d := bf.draft(100 + i)
		d.SignalIDs, d.Publish = bf.floor, true
		if _, err := a.Create(ctx, niche.Op{ID: fmt.Sprintf("feed-gap-%d", i)}, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.PruneNicheFeed(ctx, 1); err != nil {
		t.Fatal(err)
	}
	check("after a gap")
	if s := b.IndexStatus(); s.FullLoads != 2 {
		t.Fatalf("instance b after a gap: %+v; want a second full load", s)
	}
	if s := a.IndexStatus(); s.FullLoads != 1 {
		t.Fatalf("instance a, up to date, loaded anew: %+v", s)
	}
}
