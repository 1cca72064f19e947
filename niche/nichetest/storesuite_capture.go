package nichetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/snapshot"
)

// captureFixture stores five accepted demand signals on five pages of four
// domains, and a Capturer that captures four of them: the page of
// sigID(105) (the only one of gone.example.io) cannot be captured.
func captureFixture(t *testing.T, st niche.Store, opts *niche.Options) (*niche.Engine, *Capturer, []string) {
	t.Helper()
	in := []niche.SignalInput{
		nicheSignal(101, niche.KindComplaint, "https://forum-a.example.com/t/1", 2),
		nicheSignal(102, niche.KindQuestion, "https://forum-a.example.com/t/2", 5),
		nicheSignal(103, niche.KindReview, "https://reviews.example.org/r/3", 9),
		nicheSignal(104, niche.KindJobPost, "https://jobs.example.net/j/4", 12),
		nicheSignal(105, niche.KindComplaint, "https://gone.example.io/x", 15),
	}
	c := &Capturer{Pages: map[string]string{}, Now: func() time.Time { return nicheEpoch }}
	for _, s := range in[:4] {
		c.Pages[s.SourceURL] = "<html><body><p>" + s.Excerpt + "</p></body></html>"
	}
	o := niche.Options{}
	if opts != nil {
		o = *opts
	}
	o.Capturer = c
	e := nicheEngine(t, st, &o)
	if _, err := e.IngestSignals(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	return e, c, []string{sigID(101), sigID(102), sigID(103), sigID(104), sigID(105)}
}

// evidenceByID indexes an evaluation's evidence.
func evidenceByID(ev *niche.Evaluation) map[string]niche.Evidence {
	m := map[string]niche.Evidence{}
	for _, x := range ev.Evidence {
		m[x.ID] = x
	}
	return m
}

// testNicheEvidenceCapture checks that creating and publishing captures
// every linked page once, that the full evaluation lists each signal with
// its snapshot id, capture time, hashes and status (the failed page
// reported with its reason), that the store keeps the captures, and that
// the floor counts captured signals only unless told otherwise.
func testNicheEvidenceCapture(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, another := open(t)
	e, c, sigs := captureFixture(t, st, &niche.Options{MinDemandSignals: 4, MinIndependentSources: 3})

	// Four pages but only three captured from two domains: below a floor
	// of four pages from three domains.
	d := nicheDraft("Four pages, one of them gone", []string{sigs[0], sigs[2], sigs[3], sigs[4]})
	d.Publish = true
	var ee *niche.EvidenceError
	if _, err := e.Create(ctx, niche.Op{}, d); !errors.As(err, &ee) || !ee.CapturedOnly || ee.DemandSignals != 3 {
		t.Fatalf("publishing with an uncaptured page: %v, want an EvidenceError counting 3 captured pages", err)
	}
	if got, want := c.Fetched(), []string{"https://forum-a.example.com/t/1", "https://reviews.example.org/r/3",
		"https://jobs.example.net/j/4", "https://gone.example.io/x"}; !slices.Equal(got, want) {
		t.Fatalf("fetched %q, want %q", got, want)
	}

	// All five: four captured pages from three domains meet the floor;
	// only the failed page is fetched again.
	d.Title, d.SignalIDs = "Five pages, one of them gone", sigs
	ev, err := e.Create(ctx, niche.Op{}, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Fetched()[4:]; !slices.Equal(got, []string{"https://forum-a.example.com/t/2", "https://gone.example.io/x"}) {
		t.Fatalf("second create fetched %q, want the new page and the failed one only", got)
	}
	s := ev.EvidenceSummary
	if s.CapturedSignalCount != 4 || s.CapturedDemandPageCount != 4 || s.CapturedSourceCount != 3 || s.DemandPageCount != 5 {
		t.Fatalf("summary %+v: want 4 captured signals on 4 pages from 3 domains of 5 pages", s)
	}
	checkCapturedEvidence(t, ev, c, sigs)

	// The captures are stored: another handle reads the same evidence.
	e2 := nicheEngine(t, another(), &niche.Options{Capturer: c, MinDemandSignals: 4, MinIndependentSources: 3})
	again, err := e2.Evaluation(ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ev.Evidence, again.Evidence); diff != "" {
		t.Fatalf("evidence read back (-created +read):\n%s", diff)
	}
	var heldWant []string
	for _, x := range ev.Evidence {
		heldWant = append(heldWant, x.Snapshot.ID)
	}
	slices.Sort(heldWant)
	if got := c.Held(); !slices.Equal(got, heldWant) {
		t.Fatalf("held %q, want the five current captures %q (the replaced failure released)", got, heldWant)
	}

	// A capture that cannot be stored fails the write, which stores
	// nothing.
	c.Err = errors.New("snapshot store unavailable")
	failing := nicheEngine(t, st, &niche.Options{Capturer: c, MinDemandSignals: 4, MinIndependentSources: 3})
	d.Title = "Not stored when captures fail"
	if _, err := failing.Create(ctx, niche.Op{ID: "capture-fails"}, d); !errors.Is(err, c.Err) {
		t.Fatalf("create with a failing capturer: %v, want the capture error", err)
	}
	if h, rec, err := st.Operation(ctx, "capture-fails"); err != nil || h != "" || rec != nil {
		t.Fatalf("a failed capture left operation %q %v (%v)", h, rec, err)
	}
	c.Err = nil

	// Counting uncaptured signals is an option.
	loose := nicheEngine(t, st, &niche.Options{Capturer: c, CountUncaptured: true, MinDemandSignals: 4, MinIndependentSources: 3})
	d.Title, d.SignalIDs = "Four pages counted uncaptured", []string{sigs[0], sigs[2], sigs[3], sigs[4]}
	if _, err := loose.Create(ctx, niche.Op{}, d); err != nil {
		t.Fatalf("CountUncaptured: %v", err)
	}
}

// testNicheEvidenceLifecycle checks that captures are held while an
// evaluation needs them and released once none does: after a withdrawal,
// a revision that unlinks a signal, and a rejection; republishing
// captures again.
func testNicheEvidenceLifecycle(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, _ := open(t)
	e, c, sigs := captureFixture(t, st, nil)
	d := nicheDraft("An evaluation to withdraw", sigs[:4])
	d.Publish = true
	a, err := e.Create(ctx, niche.Op{}, d)
	if err != nil {
		t.Fatal(err)
	}
	dd := nicheDraft("A draft sharing one signal", sigs[3:4])
	b, err := e.Create(ctx, niche.Op{}, dd)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Held()); n != 4 {
		t.Fatalf("%d captures held, want 4", n)
	}
	if n, err := e.ReleaseEvidence(ctx); err != nil || n != 0 {
		t.Fatalf("release with every capture needed: %d %v", n, err)
	}
	// A capture no evaluation needs, left by an earlier failure: the
	// releases after writes look only at the signals they concern, the
	// sweep finds it.
	orphan := &snapshot.Snapshot{ID: ids.New(ids.Snapshot), RequestedURL: "https://gone.example.io/x",
		RetrievedAt: nicheEpoch, Status: snapshot.StatusFailed}
	if err := c.Hold(ctx, []string{orphan.ID}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSignalSnapshots(ctx, map[string]*snapshot.Snapshot{sigs[4]: orphan}); err != nil {
		t.Fatal(err)
	}
	a, err = e.Withdraw(ctx, a.ID, a.Revision, niche.Op{})
	if err != nil {
		t.Fatal(err)
	}
	if held := c.Held(); !slices.Contains(held, orphan.ID) || len(held) != 2 {
		t.Fatalf("after the withdrawal %q are held, want the draft's capture and the orphan", held)
	}
	if n, err := e.ReleaseEvidence(ctx); err != nil || n != 1 {
		t.Fatalf("the sweep released %d (%v), want the orphan", n, err)
	}
	held := c.Held()
	if len(held) != 1 || held[0] != *evidenceByID(b)[sigs[3]].SnapshotID {
		t.Fatalf("after the withdrawal %q are held, want only the capture the draft still links", held)
	}
	cur, err := e.Evaluation(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range cur.Evidence {
		if want := x.ID == sigs[3]; (x.CaptureStatus == "captured") != want || (!want && x.SnapshotID != nil) {
			t.Fatalf("withdrawn evaluation's evidence %s: status %s", x.ID, x.CaptureStatus)
		}
	}
	// Republishing captures the released pages again.
	before := len(c.Fetched())
	if _, err := e.Publish(ctx, a.ID, a.Revision, niche.Op{}); err != nil {
		t.Fatal(err)
	}
	if n := len(c.Fetched()) - before; n != 3 {
		t.Fatalf("republishing fetched %d pages, want the 3 released ones", n)
	}
	// Unlinking by revision releases the page the draft alone linked
	// once no other evaluation links it.
	dd.SignalIDs = sigs[2:3]
	if _, err := e.Revise(ctx, b.ID, b.Revision, niche.Op{}, dd); err != nil {
		t.Fatal(err)
	}
	if n := len(c.Held()); n != 4 {
		t.Fatalf("%d held after the revision, want 4 (the withdrawn one republished links all)", n)
	}
	// Rejecting a signal releases its capture even while it is linked.
	if _, err := e.ModerateSignal(ctx, sigs[2], niche.StateRejected, "spam", "mod"); err != nil {
		t.Fatal(err)
	}
	if n := len(c.Held()); n != 3 {
		t.Fatalf("%d held after a rejection, want 3", n)
	}
	sig, err := e.Signal(ctx, sigs[2])
	if err != nil || sig.Snapshot != nil {
		t.Fatalf("rejected signal keeps its capture: %+v %v", sig, err)
	}
	// A rejection that withdraws the evaluation (two pages left) releases
	// the captures of its other signals too.
	if _, err := e.ModerateSignal(ctx, sigs[3], niche.StateRejected, "spam", "mod"); err != nil {
		t.Fatal(err)
	}
	if cur, err := e.Evaluation(ctx, a.ID); err != nil || cur.Status != niche.StatusWithdrawn {
		t.Fatalf("evaluation after a second rejection: %v %v, want withdrawn", cur.Status, err)
	}
	if held := c.Held(); len(held) != 0 {
		t.Fatalf("%q held after the evaluation was withdrawn, want none", held)
	}
}

// testNicheRationale checks that the per-criterion rationale is stored,
// shown, revised and kept in the revisions, and that the review status
// and date follow curator writes only.
func testNicheRationale(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, _ := open(t)
	e := nicheEngine(t, st, nil)
	floor := ingestFloor(t, e)
	d := nicheDraft("An evaluation with its reasons", floor)
	d.Publish = true
	d.Rationale = &niche.DraftRationale{Pain: "  Owners describe late-night invoicing as the worst part of the week.  ",
		CompetitionGap: "Incumbents are generic field-service suites."}
	ev, err := e.Create(ctx, niche.Op{Actor: "alice"}, d)
	if err != nil {
		t.Fatal(err)
	}
	want := niche.Rationale{Pain: "Owners describe late-night invoicing as the worst part of the week.",
		CompetitionGap: "Incumbents are generic field-service suites."}
	if ev.Rationale != want {
		t.Fatalf("rationale %+v, want %+v", ev.Rationale, want)
	}
	if ev.Review.Status != niche.ReviewCurrent || ev.Review.LastReviewedAt == nil || !ev.Review.LastReviewedAt.Equal(ev.CreatedAt) ||
		ev.Review.LastReviewedBy == nil || *ev.Review.LastReviewedBy != "alice" {
		t.Fatalf("review %+v, want reviewed by alice at creation", ev.Review)
	}
	d.Rationale = &niche.DraftRationale{Pain: "Revised: the pain is weekly rather than daily."}
	rev, err := e.Revise(ctx, ev.ID, ev.Revision, niche.Op{Actor: "bob"}, d)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Rationale != (niche.Rationale{Pain: "Revised: the pain is weekly rather than daily."}) || *rev.Review.LastReviewedBy != "bob" {
		t.Fatalf("revised: rationale %+v, review %+v", rev.Rationale, rev.Review)
	}
	w, err := e.Withdraw(ctx, ev.ID, rev.Revision, niche.Op{Actor: "carol"})
	if err != nil {
		t.Fatal(err)
	}
	if *w.Review.LastReviewedBy != "bob" || !w.Review.LastReviewedAt.Equal(*rev.Review.LastReviewedAt) {
		t.Fatalf("a withdrawal changed the review: %+v", w.Review)
	}
	revs, err := e.Revisions(ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 3 || revs[0].State.Rationale != want || revs[1].State.Rationale.Pain != "Revised: the pain is weekly rather than daily." {
		t.Fatalf("revisions do not keep the rationale of each version: %+v", revs)
	}
	stored, err := st.Evaluation(ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Rationale != rev.Rationale || stored.ReviewedBy != "bob" || !stored.ReviewedAt.Equal(*rev.Review.LastReviewedAt) {
		t.Fatalf("stored record: rationale %+v reviewed %s by %q", stored.Rationale, stored.ReviewedAt, stored.ReviewedBy)
	}
	// A read after the review interval finds the review due.
	later := func() time.Time { return nicheEpoch.Add(time.Hour) }
	due := nicheEngine(t, st, &niche.Options{ReviewInterval: time.Millisecond, Now: later})
	got, err := due.Evaluation(ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Review.Status != niche.ReviewDue || !got.Review.NextReviewDue.Equal(got.Review.LastReviewedAt.Add(time.Millisecond)) {
		t.Fatalf("review %+v, want review_due", got.Review)
	}
}

// checkCapturedEvidence checks that the first four of sigs show their
// capture (id, time, hashes of the page) and the fifth its failure.
func checkCapturedEvidence(t *testing.T, ev *niche.Evaluation, c *Capturer, sigs []string) {
	t.Helper()
	byID := evidenceByID(ev)
	for _, id := range sigs[:4] {
		x := byID[id]
		if x.CaptureStatus != "captured" || x.SnapshotID == nil || x.Snapshot == nil || *x.SnapshotID != x.Snapshot.ID ||
			x.Snapshot.RawSHA256 == nil || x.Snapshot.NormalizedSHA256 == nil || !x.Snapshot.RetrievedAt.Equal(nicheEpoch) ||
			x.Snapshot.RequestedURL != x.SourceURL || x.CaptureReason != nil {
			t.Fatalf("evidence %s: %+v, want a capture with its id, time and hashes", id, x)
		}
		body := []byte(c.Pages[x.SourceURL])
		if *x.Snapshot.RawSHA256 != snapshot.RawSHA256(body) {
			t.Fatalf("evidence %s: raw hash %s is not the page's", id, *x.Snapshot.RawSHA256)
		}
	}
	gone := byID[sigs[4]]
	if gone.CaptureStatus != "failed" || gone.CaptureReason == nil || *gone.CaptureReason != "HTTP 404 Not Found" || gone.SnapshotID == nil {
		t.Fatalf("uncaptured evidence: %+v, want status failed with its reason and snapshot id", gone)
	}

}
