package nichedemo_test

import (
	"context"
	"io"
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

// TestEvidenceCaptured loads the demo with the snapshot service capturing
// the demo pages served on loopback, and checks that every full
// evaluation shows each signal captured (snapshot id, time, hashes that
// match the stored content) and a rationale for each criterion, and that
// the captures are held against the snapshot purge.
func TestEvidenceCaptured(t *testing.T) {
	ctx := context.Background()
	pages, err := nichedemo.ServePages()
	if err != nil {
		t.Fatal(err)
	}
	defer pages.Close()
	db, err := sqlite.Open(ctx, t.TempDir()+"/demo.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	records := snapshotstore.New(db)
	svc, err := snapshot.NewService(records, records, &snapshot.Options{
		HostMap: pages.HostMap(), AllowAddrs: pages.AllowList(), TLSConfig: pages.TLSConfig(),
		// Tests only: no DNS, and no dial off loopback.
		Resolver: snapshottest.Resolver(nil), DialControl: (&snapshottest.Tripwire{}).Control,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	e, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources(), Capturer: svc})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := nichedemo.Load(ctx, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.PublishedNiches < 40 {
		t.Fatalf("%+v", rep)
	}
	list, err := e.List(ctx, niche.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	captured := 0
	for i, p := range list.Previews {
		ev, err := e.Published(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkRationale(t, ev)
		if ev.Review.Status != niche.ReviewCurrent || ev.Revision != 2 {
			t.Errorf("%s: review %+v at revision %d, want reviewed at revision 2 (the rationale)", ev.ID, ev.Review, ev.Revision)
		}
		for _, x := range ev.Evidence {
			if x.CaptureStatus != "captured" || x.Snapshot == nil || x.Snapshot.RawSHA256 == nil || x.Snapshot.NormalizedSHA256 == nil {
				t.Fatalf("%s: evidence %s not captured: %+v", ev.ID, x.ID, x)
			}
			captured++
			if i == 0 { // recheck the stored content of one evaluation
				checkStored(t, svc, x)
			}
		}
	}
	// The captures outlive the snapshot retention: a purge of everything
	// older than a year from now removes none of them.
	st, err := svc.Purge(ctx, time.Now().Add(365*24*time.Hour))
	if err != nil || st.Records != 0 {
		t.Fatalf("purge removed %d held records (%v)", st.Records, err)
	}
	t.Logf("%d evaluations, %d evidence items captured from %d demo pages", len(list.Previews), captured, pages.Len())
}

func checkRationale(t *testing.T, ev *niche.Evaluation) {
	t.Helper()
	r := ev.Rationale
	for name, s := range map[string]string{"pain": r.Pain, "frequency": r.Frequency, "willingnessToPay": r.WillingnessToPay,
		"reachableBuyers": r.ReachableBuyers, "feasibility": r.Feasibility, "competitionGap": r.CompetitionGap} {
		if len(s) < 10 {
			t.Errorf("%s: rationale of %s is %q", ev.ID, name, s)
		}
	}
}

func checkStored(t *testing.T, svc *snapshot.Service, x niche.Evidence) {
	t.Helper()
	ctx := context.Background()
	s, err := svc.Recheck(ctx, *x.SnapshotID)
	if err != nil {
		t.Fatalf("recheck %s: %v", *x.SnapshotID, err)
	}
	if *s.RawSHA256 != *x.Snapshot.RawSHA256 || s.RequestedURL != x.SourceURL {
		t.Fatalf("stored snapshot %+v does not match the evidence %+v", s, x.Snapshot)
	}
	_, b, err := svc.Open(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	body, _ := io.ReadAll(b)
	if len(body) == 0 {
		t.Fatal("empty content")
	}
}
