package nichetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/niche"
)

// testNicheDuplicatePages checks that the publication floor counts demand
// signals once per page: the same URL spelt differently, or collected by
// two origins, is one page.
func testNicheDuplicatePages(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, _ := open(t)
	e := nicheEngine(t, st, nil)
	in := []niche.SignalInput{
		nicheSignal(1, niche.KindComplaint, "https://www.example.com/thread/7", 2),
		nicheSignal(2, niche.KindQuestion, "http://Example.COM:80/thread/7/#reply-3", 3),
		nicheSignal(3, niche.KindReview, "https://example.com:443/thread/7?utm_source=feed", 4),
		nicheSignal(4, niche.KindComplaint, "https://other.example.org/b", 5),
		nicheSignal(5, niche.KindComplaint, "https://third.example.net/c", 6),
	}
	in[1].Origin = "another-collector"
	if _, err := e.IngestSignals(ctx, in); err != nil {
		t.Fatal(err)
	}
	d := nicheDraft("Four signals on two pages only", []string{sigID(1), sigID(2), sigID(3), sigID(4)})
	d.Publish = true
	var ee *niche.EvidenceError
	if _, err := e.Create(ctx, niche.Op{}, d); !errors.As(err, &ee) || ee.DemandSignals != 2 || ee.IndependentSources != 2 {
		t.Fatalf("four signals on two pages: %v, want an EvidenceError with 2 pages from 2 domains", err)
	}
	d.Title = "Five signals on three pages"
	d.SignalIDs = append(d.SignalIDs, sigID(5))
	ev, err := e.Create(ctx, niche.Op{}, d)
	if err != nil {
		t.Fatal(err)
	}
	want := niche.EvidenceSummary{SignalCount: 5, DemandSignalCount: 5, DemandPageCount: 3, IndependentSourceCount: 3}
	got := ev.EvidenceSummary
	got.NewestObservedAt, got.OldestObservedAt = nil, nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("evidence summary (-want +got):\n%s", diff)
	}
}

// testNicheRejectedSignal rejects a signal linked by a published
// evaluation that then falls below the floor (withdrawn automatically,
// with a revision naming the signal), by one that keeps enough evidence
// (stays published, counts drop) and by a draft (counts drop).
func testNicheRejectedSignal(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, _ := open(t)
	e := nicheEngine(t, st, nil)
	floor := ingestFloor(t, e) // 4 demand signals on 4 pages from 3 domains
	if _, err := e.IngestSignals(ctx, []niche.SignalInput{nicheSignal(60, niche.KindComplaint, "https://spare.example.io/s", 1)}); err != nil {
		t.Fatal(err)
	}
	// floor[2] is the only signal of reviews.example.org.
	tight := nicheDraft("Exactly at the floor once rejected", []string{floor[0], floor[2], floor[3]})
	tight.Publish = true
	a, err := e.Create(ctx, niche.Op{ID: "tight"}, tight)
	if err != nil {
		t.Fatal(err)
	}
	spare := nicheDraft("Enough evidence to spare", []string{floor[0], floor[1], floor[2], floor[3], sigID(60)})
	spare.Publish = true
	b, err := e.Create(ctx, niche.Op{ID: "spare"}, spare)
	if err != nil {
		t.Fatal(err)
	}
	draft := nicheDraft("A draft linking the signal", []string{floor[2]})
	c, err := e.Create(ctx, niche.Op{ID: "draft"}, draft)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := e.Preview(ctx, b.ID); err != nil || p.SignalCount != 5 {
		t.Fatalf("preview before: %+v %v", p, err)
	}
	// Searches before the rejection, so that engines keeping a search
	// index (with the signal counts) have loaded it: this engine's and
	// another instance's.
	other := nicheEngine(t, st, nil)
	for _, eng := range []*niche.Engine{e, other} {
		res, err := eng.Search(ctx, niche.SearchOptions{Query: "spare"})
		if err != nil || len(res.Previews) != 1 || res.Previews[0].SignalCount != 5 {
			t.Fatalf("search before: %+v %v", res, err)
		}
	}
	rejectWithdraws(t, e, a.ID, floor[2])
	rejectKeepsSpare(t, e, b.ID)
	rejectKeepsSpare(t, other, b.ID)
	rejectedInDraft(t, e, st, a.ID, b.ID, c.ID, floor[2])
	rejectAgainAndAccept(t, e, a.ID, b.ID, floor[2], other)
}

// rejectWithdraws rejects sig, the signal evaluation a (exactly at the
// floor) cannot do without: a is withdrawn by the system, with a revision
// naming the signal, the moderator and the note.
func rejectWithdraws(t *testing.T, e *niche.Engine, a, sig string) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.ModerateSignal(ctx, sig, niche.StateRejected, "the review was fake", "mod-ann"); err != nil {
		t.Fatal(err)
	}
	// a: 2 pages from 2 domains left, below 3: withdrawn by the system.
	if _, err := e.Published(ctx, a); !errors.Is(err, niche.ErrNotFound) {
		t.Fatalf("evaluation below the floor still published: %v", err)
	}
	revs, err := e.Revisions(ctx, a)
	if err != nil || len(revs) != 2 {
		t.Fatalf("revisions of a: %+v %v", revs, err)
	}
	last := revs[1]
	if last.Action != niche.ActionWithdraw || last.Actor != niche.SystemActor || last.State.Status != niche.StatusWithdrawn ||
		!strings.Contains(last.Reason, sig) || !strings.Contains(last.Reason, "mod-ann") || !strings.Contains(last.Reason, "the review was fake") {
		t.Fatalf("withdrawal revision %+v", last)
	}
}

// rejectKeepsSpare: b still has 4 pages from 3 domains: it stays
// published, and every read counts its signals without the rejected one.
func rejectKeepsSpare(t *testing.T, e *niche.Engine, b string) {
	t.Helper()
	ctx := context.Background()
	full, err := e.Published(ctx, b)
	if err != nil || full.EvidenceSummary.SignalCount != 4 || full.Revision != 1 || len(full.Evidence) != 4 {
		t.Fatalf("evaluation with spare evidence: %+v %v", full, err)
	}
	p, err := e.Preview(ctx, b)
	if err != nil || p.SignalCount != 4 {
		t.Fatalf("preview after: %+v %v", p, err)
	}
	list, err := e.List(ctx, niche.ListOptions{})
	if err != nil || len(list.Previews) != 1 || list.Previews[0].SignalCount != 4 {
		t.Fatalf("list after: %+v %v", list, err)
	}
	res, err := e.Search(ctx, niche.SearchOptions{Query: "spare"})
	if err != nil || len(res.Previews) != 1 || res.Previews[0].SignalCount != 4 {
		t.Fatalf("search after: %+v %v", res, err)
	}
}

// rejectedInDraft: the draft c is untouched but counts 0, and the store
// itself refuses a write linking the rejected signal sig.
func rejectedInDraft(t *testing.T, e *niche.Engine, st niche.Store, a, b, c, sig string) {
	t.Helper()
	ctx := context.Background()
	// c: a draft, untouched but counting 0.
	if ev, err := e.Evaluation(ctx, c); err != nil || ev.Status != niche.StatusDraft || ev.Revision != 1 || ev.EvidenceSummary.SignalCount != 0 {
		t.Fatalf("draft: %+v %v", ev, err)
	}
	// The store itself refuses a write that links the rejected signal
	// with CheckSignals (the engine checks first; this closes the race).
	cur, err := st.Evaluation(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	next := *cur
	next.Revision++
	var re *niche.SignalRefError
	_, _, err = st.ApplyWrite(ctx, niche.Write{OperationID: "check-signals", RequestHash: "h", ExpectedRevision: cur.Revision,
		Record: next, Action: niche.ActionRevise, Actor: "test", At: cur.UpdatedAt, CheckSignals: true})
	if !errors.As(err, &re) || !slices.Equal(re.Rejected, []string{sig}) {
		t.Fatalf("store write linking a rejected signal with CheckSignals: %v", err)
	}
	counts, err := st.SignalCounts(ctx, []string{a, b, c})
	if diff := cmp.Diff(map[string]int{a: 2, b: 4}, counts); err != nil || diff != "" {
		t.Fatalf("signal counts (-want +got):\n%s %v", diff, err)
	}
}

// rejectAgainAndAccept: moderating sig again changes nothing more;
// accepting it again restores the counts but republishes nothing.
func rejectAgainAndAccept(t *testing.T, e *niche.Engine, a, b, sig string, others ...*niche.Engine) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.ModerateSignal(ctx, sig, niche.StateRejected, "still fake", "mod-bob"); err != nil {
		t.Fatal(err)
	}
	if revs, _ := e.Revisions(ctx, a); len(revs) != 2 {
		t.Fatalf("a second rejection wrote %d revisions", len(revs))
	}
	if _, err := e.ModerateSignal(ctx, sig, niche.StateAccepted, "it was real after all", "mod-ann"); err != nil {
		t.Fatal(err)
	}
	if p, err := e.Preview(ctx, b); err != nil || p.SignalCount != 5 {
		t.Fatalf("preview after re-acceptance: %+v %v", p, err)
	}
	// Only b's signal count changed: searches of e and of the other
	// instances show it.
	for _, eng := range append([]*niche.Engine{e}, others...) {
		res, err := eng.Search(ctx, niche.SearchOptions{Query: "spare"})
		if err != nil || len(res.Previews) != 1 || res.Previews[0].SignalCount != 5 {
			t.Fatalf("search after re-acceptance: %+v %v", res, err)
		}
	}
	if _, err := e.Published(ctx, a); !errors.Is(err, niche.ErrNotFound) {
		t.Fatalf("re-acceptance republished: %v", err)
	}
	if _, err := e.Publish(ctx, a, 2, niche.Op{ID: "republish"}); err != nil {
		t.Fatalf("curator republishes: %v", err)
	}
}

// testNicheRejectionRace rejects a signal while writers, on two handles,
// revise a published evaluation to link it (a set whose floor depends on
// it). Whatever the interleaving — a revision committed just before the
// rejection (then re-checked and withdrawn), or checked by the engine
// before it and committed after (then refused by the store) — the
// evaluation must never end published while linking the rejected signal.
func testNicheRejectionRace(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, another := open(t)
	st2 := another()
	e1 := nicheEngine(t, st, &niche.Options{Now: time.Now})
	e2 := nicheEngine(t, st2, &niche.Options{Now: time.Now})
	if _, err := e1.IngestSignals(ctx, []niche.SignalInput{
		nicheSignal(1, niche.KindComplaint, "https://a.example.com/1", 1),
		nicheSignal(2, niche.KindComplaint, "https://b.example.org/2", 1),
		nicheSignal(3, niche.KindComplaint, "https://c.example.net/3", 1),
		nicheSignal(4, niche.KindComplaint, "https://d.example.io/4", 1),
	}); err != nil {
		t.Fatal(err)
	}
	withC := []string{sigID(1), sigID(2), sigID(3)} // 2 pages without sig 3
	withoutC := []string{sigID(1), sigID(2), sigID(4)}
	for round := range 12 {
		if _, err := e1.ModerateSignal(ctx, sigID(3), niche.StateAccepted, "", "mod"); err != nil {
			t.Fatal(err)
		}
		d := nicheDraft(fmt.Sprintf("Race round %d evaluation", round), withoutC)
		d.Publish = true
		ev, err := e1.Create(ctx, niche.Op{}, d)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := range 4 {
			wg.Go(func() {
				e := e1
				if w%2 == 1 {
					e = e2
				}
				for range 20 {
					cur, err := e.Evaluation(ctx, ev.ID)
					if err != nil {
						errs <- err
						return
					}
					_, err = e.Revise(ctx, ev.ID, cur.Revision, niche.Op{}, nicheDraft(d.Title, withC))
					switch {
					case err == nil, errors.Is(err, niche.ErrSignalRefs):
						return
					case errors.Is(err, niche.ErrConflict):
					default:
						errs <- fmt.Errorf("writer %d: %w", w, err)
						return
					}
				}
			})
		}
		wg.Go(func() {
			if _, err := e2.ModerateSignal(ctx, sigID(3), niche.StateRejected, "spam", "mod"); err != nil {
				errs <- err
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		final, err := e1.Evaluation(ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if final.Status == niche.StatusPublished && slices.Contains(final.SignalIDs, sigID(3)) {
			t.Fatalf("round %d: published at revision %d linking the rejected signal (evidence %+v)", round, final.Revision, final.EvidenceSummary)
		}
	}
}

// testNicheAccessLevels checks that words only in the hidden text (the
// problem past the teaser, the solution hypothesis) are matched by
// full-level reads only, and notes by none.
func testNicheAccessLevels(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, _ := open(t)
	e := nicheEngine(t, st, nil)
	floor := ingestFloor(t, e)
	d := nicheDraft("Visible title about greenhouses", floor)
	d.Problem = "Greenhouse growers lose seedlings to sudden frost because their sensors alarm nobody at night, " +
		"and the visible part of the problem ends about here. The rest mentions a marmalade supplier " +
		"that only paying readers may see."
	d.SolutionHypothesis = "A quokka alarm service with text messages."
	d.EvaluationNotes = "Notes that mention the word platypus, never indexed at all."
	d.Publish = true
	ev, err := e.Create(ctx, niche.Op{}, d)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := e.Preview(ctx, ev.ID); strings.Contains(p.ProblemTeaser, "marmalade") {
		t.Fatalf("test setup: the teaser shows the hidden word: %q", p.ProblemTeaser)
	}
	for _, tc := range []struct {
		query         string
		preview, full bool
	}{
		{"greenhouses", true, true}, {"seedlings frost", true, true}, {"small business owners", true, true},
		{"marmalade", false, true}, {"quokka", false, true}, {"quokka greenhouses", false, true},
		{"platypus", false, false},
	} {
		for _, full := range []bool{false, true} {
			want := tc.preview
			if full {
				want = tc.full
			}
			res, err := e.Search(ctx, niche.SearchOptions{Query: tc.query, Full: full})
			if err != nil {
				t.Fatal(err)
			}
			list, err := e.List(ctx, niche.ListOptions{Query: tc.query, Full: full})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Previews)+len(res.Evaluations) == 1; got != want {
				t.Errorf("search %q full=%v: found=%v, want %v", tc.query, full, got, want)
			}
			if got := len(list.Previews) == 1; got != want {
				t.Errorf("list %q full=%v: found=%v, want %v", tc.query, full, got, want)
			}
		}
	}
	// A preview's relevance depends on the preview's text only: the
	// title and the teaser (its Greenhouse has greenhouses' stem), not
	// the hidden marmalade.
	res, err := e.Search(ctx, niche.SearchOptions{Query: "greenhouses marmalade", Full: true})
	if err != nil || len(res.Relevance) != 1 || res.Relevance[0] != 14 {
		t.Fatalf("full relevance %v %v, want [14] (title and body, body)", res.Relevance, err)
	}
	res, err = e.Search(ctx, niche.SearchOptions{Query: "greenhouses"})
	if err != nil || len(res.Relevance) != 1 || res.Relevance[0] != 11 {
		t.Fatalf("preview relevance %v %v, want [11] (title and teaser)", res.Relevance, err)
	}
}

// testNicheRescore writes evaluations with one scorer and rescores them
// with another, through the store's id-ordered paging.
func testNicheRescore(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, _ := open(t)
	e := nicheEngine(t, st, nil)
	floor := ingestFloor(t, e)
	var made []string
	for i := range 5 {
		d := nicheDraft(fmt.Sprintf("Rescore candidate number %d", i), floor)
		d.Publish = i%2 == 0
		d.Pain = new(i)
		ev, err := e.Create(ctx, niche.Op{}, d)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, ev.ID)
	}
	slices.Sort(made)
	var paged []string
	for after := ""; ; {
		page, err := st.Evaluations(ctx, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			paged = append(paged, r.ID)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].ID
	}
	if diff := cmp.Diff(made, paged); diff != "" {
		t.Fatalf("Evaluations paging (-want +got):\n%s", diff)
	}
	painOnly := niche.WeightedScorer{Name: "pain-only-v1", W: niche.Weights{Pain: 100}}
	e2 := nicheEngine(t, st, &niche.Options{Scorer: painOnly})
	rep, err := e2.Rescore(ctx, "ops", "")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Examined != 5 || len(rep.Rescored) != 5 || rep.ScoreVersion != "pain-only-v1" {
		t.Fatalf("rescore report %+v", rep)
	}
	for i, id := range made {
		ev, err := e2.Evaluation(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if ev.ScoreVersion != "pain-only-v1" || ev.Score != ev.Dimensions.Pain*20 || ev.Revision != 2 || ev.ScoreWeights.Pain != 100 {
			t.Errorf("evaluation %d after rescore: %+v", i, ev)
		}
		revs, _ := e2.Revisions(ctx, id)
		if r := revs[len(revs)-1]; r.Action != niche.ActionRescore || r.Actor != "ops" || r.Reason != "rescored with pain-only-v1" {
			t.Errorf("rescore revision %+v", r)
		}
		if ev.Status != revs[0].State.Status {
			t.Errorf("rescore changed the status of %s", id)
		}
	}
	if rep, err := e2.Rescore(ctx, "ops", ""); err != nil || len(rep.Rescored) != 0 || rep.Examined != 5 {
		t.Fatalf("second rescore: %+v %v", rep, err)
	}
	// The public reads order by the new scores.
	list, err := e2.List(ctx, niche.ListOptions{})
	if err != nil || len(list.Previews) != 3 || list.Previews[0].Score != 80 || list.Previews[0].ScoreVersion != "pain-only-v1" {
		t.Fatalf("list after rescore: %+v %v", list, err)
	}
}
