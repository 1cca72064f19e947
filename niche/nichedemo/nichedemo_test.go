package nichedemo_test

import (
	"context"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

func TestLoadIsIdempotentAndMeaningful(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/demo.db"
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2027, 3, 15, 9, 30, 0, 0, time.UTC)
	e, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := nichedemo.Load(ctx, e, &nichedemo.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SignalsCreated < 150 || rep.DraftsCreated < 40 || rep.PublishedNiches != rep.DraftsCreated || rep.DraftsFailed != 0 {
		t.Fatalf("first load: %+v", rep)
	}
	// A restart a week later stores nothing new.
	later := now.Add(7 * 24 * time.Hour)
	db2, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	e2, _ := niche.New(nichestore.New(db2), &niche.Options{Sources: nichedemo.Sources(), Now: func() time.Time { return later }})
	rep2, err := nichedemo.Load(ctx, e2, &nichedemo.Options{Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	if rep2.SignalsCreated != 0 || rep2.DraftsCreated != 0 || rep2.SignalsDuplicate != rep.SignalsCreated || rep2.DraftsReplayed != rep.DraftsCreated {
		t.Fatalf("second load: %+v", rep2)
	}
	list, err := e.List(ctx, niche.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Previews) != rep.DraftsCreated {
		t.Fatalf("%d listed, %d created", len(list.Previews), rep.DraftsCreated)
	}
	categories, trends := checkListed(t, e, list.Previews, now)
	if len(categories) < 8 {
		t.Errorf("%d categories", len(categories))
	}
	if trends[niche.TrendRising] < 2 || trends[niche.TrendFalling] < 1 || trends[niche.TrendStable] < 1 {
		t.Errorf("trends %v", trends)
	}
	srcs, err := e.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		if !s.Configured {
			t.Errorf("origin %s is not among the demo sources", s.ID)
		}
	}
	res, err := e.Search(ctx, niche.SearchOptions{Query: "late payment"})
	if err != nil || len(res.Previews) == 0 {
		t.Fatalf("search: %+v %v", res, err)
	}
	t.Logf("%d evaluations, %d signals, %d categories, trends %v", rep.DraftsCreated, rep.SignalsCreated, len(categories), trends)
}

// checkListed checks the evidence of every listed evaluation (within the
// last 90 days, at the floor) and returns the categories and trends seen.
func checkListed(t *testing.T, e *niche.Engine, previews []niche.Preview, now time.Time) (map[string]bool, map[string]int) {
	t.Helper()
	ctx := context.Background()
	categories := map[string]bool{}
	trends := map[string]int{}
	for _, p := range previews {
		categories[niche.CategoryKey(p.Category)] = true
		ev, err := e.Published(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		trends[ev.Trend.Direction]++
		if ev.EvidenceSummary.NewestObservedAt.After(now) || now.Sub(*ev.EvidenceSummary.OldestObservedAt) > 91*24*time.Hour {
			t.Errorf("%s: evidence outside the last 90 days: %v..%v", p.ID, ev.EvidenceSummary.OldestObservedAt, ev.EvidenceSummary.NewestObservedAt)
		}
		if ev.EvidenceSummary.DemandSignalCount < 3 || ev.EvidenceSummary.IndependentSourceCount < 2 {
			t.Errorf("%s below the floor: %+v", p.ID, ev.EvidenceSummary)
		}
	}
	return categories, trends
}

// TestLoadConcurrently: instances starting together on one database each
// load the demo (the load-test cluster does): both succeed, and every
// evaluation ends with its rationale once.
func TestLoadConcurrently(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/demo.db"
	now := time.Date(2027, 3, 15, 9, 30, 0, 0, time.UTC)
	pages, err := nichedemo.ServePages()
	if err != nil {
		t.Fatal(err)
	}
	defer pages.Close()
	var engines []*niche.Engine
	for range 2 {
		db, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		records := snapshotstore.New(db)
		svc, err := snapshot.NewService(records, records, &snapshot.Options{
			HostMap: pages.HostMap(), AllowAddrs: pages.AllowList(), TLSConfig: pages.TLSConfig(),
			Resolver: snapshottest.Resolver(nil), DialControl: (&snapshottest.Tripwire{}).Control,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		e, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources(), Capturer: svc, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		engines = append(engines, e)
	}
	errs := make(chan error, len(engines))
	for _, e := range engines {
		go func() {
			_, err := nichedemo.Load(ctx, e, &nichedemo.Options{Now: func() time.Time { return now }})
			errs <- err
		}()
	}
	for range engines {
		if err := <-errs; err != nil {
			t.Errorf("concurrent load: %v", err)
		}
	}
	list, err := engines[0].List(ctx, niche.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Previews {
		ev, err := engines[0].Evaluation(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Rationale == (niche.Rationale{}) || ev.Revision != 2 {
			t.Errorf("%s: revision %d, rationale %+v", p.ID, ev.Revision, ev.Rationale)
		}
	}
}
