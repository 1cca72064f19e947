package nichetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/niche"
)

// testNicheSearchIndex checks that engines answering from the in-memory
// search index (niche.Options.DisableSearchIndex false) return exactly
// what an engine asking the store returns, over the brute-force corpus,
// broad (truncated) searches and categories included: after the engine's
// own writes (create, withdraw, revise, publish), and after writes made
// through a second engine on the same store, which an index checking on
// every search (no cache TTL) sees at once and one with a TTL after it.
//
// Without exhaustive, query i is compared under the combinations c (of
// 16) with c%4 == i%4.
func testNicheSearchIndex(t *testing.T, open StoreOpener, exhaustive bool) {
	ctx := context.Background()
	st, _ := open(t)
	if _, ok := st.(niche.IndexSource); !ok {
		t.Skip("the store is no niche.IndexSource")
	}
	tick := NewClock(nicheEpoch, time.Second)
	var offset atomic.Int64
	now := func() time.Time { return tick.Now().Add(time.Duration(offset.Load())) }
	narrow := func(o niche.Options) *niche.Engine {
		o.SearchCandidates, o.SearchWindow, o.Now = 5, 20, now
		return nicheEngine(t, st, &o)
	}
	plain := narrow(niche.Options{DisableSearchIndex: true})
	every := narrow(niche.Options{})
	hourly := narrow(niche.Options{SearchCacheTTL: time.Hour})
	other := nicheEngine(t, st, &niche.Options{Now: now})
	b := &bruteForce{t: t, st: st, e: hourly, created: map[string]int{}}
	b.floor = ingestFloor(t, b.e)
	check := func(step string, engines ...*niche.Engine) {
		t.Helper()
		for qi, raw := range append(bruteQueries, "bookkeeping farmers", "rural", "small shop owners", "scheduling", "invoicing", "farmers", "booking", "receipts", "rural farmers", "small plumbers", "owners of small", "for family", "shop booking") {
			c := -1
			for _, full := range []bool{false, true} {
				for _, sort := range []string{niche.SortScore, niche.SortRecent} {
					for _, cat := range []*string{nil, new("operations")} {
						for _, limit := range []int{1, 3} {
							if c++; !exhaustive && c%4 != qi%4 {
								continue
							}
							o := niche.SearchOptions{Query: raw, Sort: sort, Full: full, Category: cat, Limit: limit}
							want := indexResult(t, plain, o)
							for i, e := range engines {
								if diff := cmp.Diff(want, indexResult(t, e, o)); diff != "" {
									t.Errorf("%s: engine %d: search %+v (-store +index):\n%s", step, i, o, diff)
								}
							}
						}
					}
				}
			}
		}
	}
	// Load the indexes before the first write, so that the writes are
	// applied to a loaded index (until it is loaded a search asks the
	// store).
	for _, e := range []*niche.Engine{every, hourly} {
		if err := e.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check("empty", every, hourly)
	for i := range 60 {
		ev, err := hourly.Create(ctx, niche.Op{ID: fmt.Sprintf("index-%d", i)}, b.draft(i))
		if err != nil {
			t.Fatal(err)
		}
		b.live = append(b.live, ev)
	}
	check("created", every, hourly)
	for i, ev := range b.live {
		var err error
		switch i % 6 {
		case 0, 3:
			b.live[i], err = hourly.Withdraw(ctx, ev.ID, ev.Revision, niche.Op{})
		case 1:
			d := b.draft(i)
			d.Title = "Bookkeeping for rural farmers"
			d.Problem = "Rural farmers keep books on paper and lose receipts at the end of each season."
			d.Category = "Finance"
			b.live[i], err = hourly.Revise(ctx, ev.ID, ev.Revision, niche.Op{}, d)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	check("revised", every, hourly)
	for i, ev := range b.live {
		if i%12 == 0 {
			var err error
			if b.live[i], err = hourly.Publish(ctx, ev.ID, ev.Revision, niche.Op{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	check("republished", every, hourly)
	// Writes through another engine: seen at once by the index checking
	// on every search, by the hourly one once its TTL has passed.
	for i, ev := range b.live {
		var err error
		switch {
		case i%12 == 0:
			b.live[i], err = other.Withdraw(ctx, ev.ID, ev.Revision, niche.Op{})
		case i%6 == 2:
			d := b.draft(i)
			d.Title = "Small shop owners booking"
			b.live[i], err = other.Revise(ctx, ev.ID, ev.Revision, niche.Op{}, d)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Create(ctx, niche.Op{ID: "index-other"}, b.draft(61)); err != nil {
		t.Fatal(err)
	}
	check("written elsewhere", every)
	offset.Add(int64(2 * time.Hour))
	check("written elsewhere, after the TTL", every, hourly)
}

// indexCompared is what testNicheSearchIndex compares of a search.
type indexCompared struct {
	IDs       []string
	Relevance []int
	Previews  []niche.Preview
	Truncated bool
}

func indexResult(t *testing.T, e *niche.Engine, o niche.SearchOptions) indexCompared {
	t.Helper()
	res, err := e.Search(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	c := indexCompared{IDs: []string{}, Relevance: res.Relevance, Previews: res.Previews, Truncated: res.Truncated}
	for _, p := range res.Previews {
		c.IDs = append(c.IDs, p.ID)
	}
	for _, ev := range res.Evaluations {
		c.IDs = append(c.IDs, ev.ID)
	}
	return c
}
