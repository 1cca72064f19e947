package nichestore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// feedEngine is an engine without a search index (the test reads the feed
// itself) over st.
func feedEngine(t *testing.T, st *nichestore.Store) *niche.Engine {
	t.Helper()
	e, err := niche.New(st, &niche.Options{DisableSearchIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// publishSome ingests the floor's signals (once) and publishes n
// evaluations through e with operation ids prefixed by p.
func publishSome(t *testing.T, e *niche.Engine, p string, n int) {
	t.Helper()
	ctx := context.Background()
	var in []niche.SignalInput
	for i := range 3 {
		in = append(in, niche.SignalInput{ID: fmt.Sprintf("sig_%032x", 7000+i), Kind: niche.KindComplaint,
			SourceURL: fmt.Sprintf("https://site.example%d.com/t/%d", i%2, i), Origin: "test", ExternalID: fmt.Sprintf("f-%d", i),
			Title: "A complaint", Excerpt: "An excerpt", ObservedAt: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC),
			License: "CC BY-SA 4.0", Attribution: "x", State: niche.StateAccepted})
	}
	if _, err := e.IngestSignals(ctx, in); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		d := niche.Draft{Title: fmt.Sprintf("Scheduling for plumbers %s %d", p, i), Problem: "Plumbers lose hours every week to a manual chore.",
			Buyer: "Plumbers", Category: "Operations", SolutionHypothesis: "A focused tool that automates the chore.", EvaluationNotes: "Notes on the evidence behind this evaluation.",
			Pain: new(3), Frequency: new(3), WillingnessToPay: new(3), ReachableBuyers: new(3), Feasibility: new(3), CompetitionGap: new(3),
			SignalIDs: []string{"sig_" + fmt.Sprintf("%032x", 7000), "sig_" + fmt.Sprintf("%032x", 7001), "sig_" + fmt.Sprintf("%032x", 7002)},
			Publish:   true}
		if _, err := e.Create(ctx, niche.Op{ID: fmt.Sprintf("%s-%d", p, i)}, d); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNicheFeedOrderAndNotifications: on every backend, concurrent
// writers through two handles (two instances) log every change (a
// creation is logged with its row and again with its signal count),
// numbered without holes; SearchVersion is the last number; pruning
// reports a gap to a reader behind it. On PostgreSQL a listener is
// notified of a commit made through the other handle.
func TestNicheFeedOrderAndNotifications(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.SharedStores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dba, dbb := open(t)
			a, b := nichestore.New(dba), nichestore.New(dbb)
			var notified chan struct{}
			if dba.Dialect() == store.Postgres {
				notified = make(chan struct{}, 1)
				wctx, cancel := context.WithCancel(ctx)
				done := make(chan error, 1)
				go func() {
					done <- a.WatchSearchChanges(wctx, func() {
						select {
						case notified <- struct{}{}:
						default:
						}
					})
				}()
				t.Cleanup(func() { cancel(); <-done })
				select { // the first: listening
				case <-notified:
				case err := <-done:
					t.Fatalf("watch: %v", err)
				}
			} else if err := a.WatchSearchChanges(ctx, func() {}); !errors.Is(err, store.ErrNoNotifications) {
				t.Fatalf("SQLite watch: %v, want ErrNoNotifications", err)
			}
			ea, eb := feedEngine(t, a), feedEngine(t, b)
			publishSome(t, ea, "seed", 1)
			start, err := a.SearchVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i, e := range []*niche.Engine{ea, eb, ea, eb} {
				wg.Go(func() { publishSome(t, e, fmt.Sprintf("w%d", i), 5) })
			}
			wg.Wait()
			changes, gap, err := b.SearchChanges(ctx, start, 1000)
			if err != nil || gap {
				t.Fatalf("changes: %v %v", gap, err)
			}
			ids := map[string]bool{}
			for _, c := range changes {
				ids[c.ID] = true
			}
			if len(ids) != 20 {
				t.Fatalf("%d evaluations in the feed for 20 published", len(ids))
			}
			for i, c := range changes {
				if c.Seq != start+int64(i)+1 {
					t.Fatalf("entry %d has seq %d after %d: not contiguous", i, c.Seq, start)
				}
			}
			if v, _ := b.SearchVersion(ctx); v != changes[len(changes)-1].Seq {
				t.Fatalf("version %d, last entry %d", v, changes[len(changes)-1].Seq)
			}
			if notified != nil {
				select {
				case <-notified:
				case <-time.After(30 * time.Second):
					t.Fatal("no notification of the other handle's commits")
				}
			}
			if n, err := a.PruneNicheFeed(ctx, 5); err != nil || n == 0 {
				t.Fatalf("prune: %d %v", n, err)
			}
			if _, gap, err := b.SearchChanges(ctx, start, 1000); err != nil || !gap {
				t.Fatalf("reading from before the pruned entries: gap %v %v, want a gap", gap, err)
			}
			last := changes[len(changes)-1].Seq
			if rest, gap, err := b.SearchChanges(ctx, last-5, 1000); err != nil || gap || len(rest) != 5 || rest[0].Seq != last-4 {
				t.Fatalf("the kept entries: %v %v %v", rest, gap, err)
			}
		})
	}
}

// TestNicheIndexFollowsNotifications: two instances on one PostgreSQL
// database; the second keeps its index with StartIndex, polling never (an
// hour): a publication through the first is applied from the
// notification alone, incrementally, and found by the second's search.
func TestNicheIndexFollowsNotifications(t *testing.T) {
	t.Parallel()
	url := storetest.MigratedPostgresURL(t)
	a, b := nichestore.New(storetest.Open(t, url, nil)), nichestore.New(storetest.Open(t, url, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	writer := feedEngine(t, a)
	follower, err := niche.New(b, &niche.Options{IndexPollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	publishSome(t, writer, "before", 2)
	follower.StartIndex(ctx)
	waitFor(t, "the index to load", func() bool { return follower.IndexStatus().Ready })
	before := follower.IndexStatus()
	publishSome(t, writer, "after", 1)
	head, err := a.SearchVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the notification to be applied", func() bool { return follower.IndexStatus().Seq == head })
	st := follower.IndexStatus()
	if st.FullLoads != before.FullLoads || st.Documents != 3 {
		t.Fatalf("after a notified write: %+v (before %+v); want the same full loads and 3 documents", st, before)
	}
	res, err := follower.Search(ctx, niche.SearchOptions{Query: "plumbers after"})
	if err != nil || len(res.Previews) != 1 {
		t.Fatalf("search on the follower: %+v %v", res, err)
	}
}

// waitFor polls cond until it holds, failing after a minute (a bound, not
// a timing the test depends on).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}
