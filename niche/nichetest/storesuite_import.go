package nichetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichemem"
)

// importFile returns a bulk import file of n drafts (operation ids
// prefix-0 …) linking the floor's signals, every third one a draft, the
// others published, plus a pending signal that the first draft links.
func importFile(prefix string, from, n int, floor []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"signal","id":%q,"kind":"complaint","sourceUrl":"https://pending.example.org/p","origin":"imp","externalId":"pending","title":"A pending signal","excerpt":"text","observedAt":"2026-05-01T00:00:00Z","license":"CC BY 4.0","attribution":"someone","state":"pending"}`+"\n", sigID(8800))
	for i := from; i < from+n; i++ {
		sigs := append([]string{}, floor...)
		if i == 0 {
			sigs = append(sigs, sigID(8800))
		}
		q := make([]string, len(sigs))
		for k, s := range sigs {
			q[k] = fmt.Sprintf("%q", s)
		}
		fmt.Fprintf(&b, `{"type":"draft","operationId":"%s-%d","draft":{"title":"Bulk evaluation %d for plumbers","problem":"Plumbers number %d lose hours every week to invoicing by hand.","buyer":"Plumbers","category":"Trades %d","solution_hypothesis":"A focused invoicing tool for plumbers.","pain":%d,"frequency":3,"willingness_to_pay":2,"reachable_buyers":4,"feasibility":3,"competition_gap":1,"evaluation_notes":"Notes that are long enough to pass the bound here.","signal_ids":[%s],"publish":%v}}`+"\n",
			prefix, i, i, i, i%3, i%6, strings.Join(q, ","), i%3 != 2)
	}
	return b.String()
}

// testNicheImportBulk imports more drafts than one batch of a bulk store
// (niche.BulkCreator, 2000 per transaction) and checks that the result is
// what drafts created one by one give: every evaluation as Create would
// write it (score, status, links, signal counts, revision log), a pending
// signal accepted, the search finding them; that the same file imports
// nothing twice, also after an import that stopped half-way (resumable)
// and when two imports of it run at once; and that a line whose operation
// id was used for other content is reported, with its line number.
func testNicheImportBulk(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, another := open(t)
	e := nicheEngine(t, st, nil)
	floor := ingestFloor(t, e)
	const n = 2100
	// A first import stops after 700 drafts (its file was cut there).
	rep, err := e.ImportString(ctx, importFile("bulk", 0, 700, floor), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.DraftsCreated != 700 || rep.DraftsFailed != 0 {
		t.Fatalf("first part: %+v", rep)
	}
	// The whole file, twice at once on two instances: each draft is
	// created exactly once.
	file := importFile("bulk", 0, n, floor)
	reps := make([]*niche.ImportReport, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, eng := range []*niche.Engine{e, nicheEngine(t, another(), nil)} {
		wg.Go(func() { reps[i], errs[i] = eng.ImportString(ctx, file, nil) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("import %d: %v", i, err)
		}
	}
	if created, failed := reps[0].DraftsCreated+reps[1].DraftsCreated, reps[0].DraftsFailed+reps[1].DraftsFailed; created != n-700 || failed != 0 {
		t.Fatalf("two concurrent imports created %d (want %d) and failed %d: %+v / %+v", created, n-700, failed, reps[0], reps[1])
	}
	for i, r := range reps {
		if r.DraftsCreated+r.DraftsReplayed != n || r.PublishedNiches != n-n/3 || r.UnpublishedNiches != n/3 {
			t.Fatalf("import %d: %+v", i, r)
		}
	}
	// Each evaluation is what Create makes of the same draft.
	sig, err := e.Signal(ctx, sigID(8800))
	if err != nil || sig.State != niche.StateAccepted {
		t.Fatalf("the pending signal linked by a draft: %+v %v", sig, err)
	}
	lines := map[int]niche.ImportLine{}
	for _, r := range reps {
		for _, l := range r.Lines {
			if l.Type == "draft" && l.Outcome == "created" {
				lines[l.Line] = l
			}
		}
	}
	for _, l := range rep.Lines {
		if l.Type == "draft" {
			lines[l.Line] = l
		}
	}
	if len(lines) != n {
		t.Fatalf("%d drafts created in all, want %d", len(lines), n)
	}
	ref := nicheEngine(t, nichemem.New(), nil)
	refFloor := ingestFloor(t, ref)
	refRep, err := ref.ImportString(ctx, importFile("bulk", 0, 5, refFloor), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		got, err := e.Evaluation(ctx, lines[i+2].ID)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.Evaluation(ctx, refRep.Lines[i+1].ID)
		if err != nil {
			t.Fatal(err)
		}
		// Everything but the id and the times, which differ.
		proj := func(ev *niche.Evaluation) niche.Evaluation {
			return niche.Evaluation{Title: ev.Title, Problem: ev.Problem, Buyer: ev.Buyer, Category: ev.Category,
				SolutionHypothesis: ev.SolutionHypothesis, EvaluationNotes: ev.EvaluationNotes, Dimensions: ev.Dimensions,
				Score: ev.Score, ScoreVersion: ev.ScoreVersion, Status: ev.Status, Revision: ev.Revision,
				EvidenceSummary: ev.EvidenceSummary}
		}
		if diff := cmp.Diff(proj(want), proj(got)); diff != "" {
			t.Fatalf("draft %d imported in bulk differs from one created one by one (-one by one +bulk):\n%s", i, diff)
		}
		if len(got.Evidence) != len(want.Evidence) || len(got.Evidence) < 4 {
			t.Fatalf("draft %d evidence: %+v", i, got.EvidenceSummary)
		}
		revs, err := e.Revisions(ctx, got.ID)
		if err != nil || len(revs) != 1 || revs[0].Action != niche.ActionCreate || revs[0].OperationID != fmt.Sprintf("bulk-%d", i) {
			t.Fatalf("draft %d revision log: %+v %v", i, revs, err)
		}
	}
	res, err := e.Search(ctx, niche.SearchOptions{Query: "bulk evaluation 1999 plumbers"})
	if err != nil || len(res.Previews) != 1 || res.Previews[0].SignalCount != 4 {
		t.Fatalf("search for an imported evaluation: %+v %v", res, err)
	}
	// The same operation id with other content is refused in its line.
	changed := strings.Replace(importFile("bulk", 5, 1, floor), "Bulk evaluation 5 for", "Other evaluation 5 for", 1)
	rep, err = e.ImportString(ctx, changed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.DraftsFailed != 1 || rep.Lines[1].Line != 2 || !strings.Contains(rep.Lines[1].Reason, niche.ErrOperationConflict.Error()) {
		t.Fatalf("operation id reused for other content: %+v", rep)
	}
}

// testNicheImportRevisionLog checks the revision log of imported
// evaluations through the writes that follow: the state of revision 1
// read from the log (Revisions, and the store's Operation, which replays
// read) is the evaluation as imported, before and after a revision, a
// publication and a withdrawal change it, and each later revision's state
// is what that write left. (A bulk store may keep the state of a created
// revision in the evaluation's row until the row changes.)
func testNicheImportRevisionLog(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, _ := open(t)
	e := nicheEngine(t, st, nil)
	floor := ingestFloor(t, e)
	rep, err := e.ImportString(ctx, importFile("log", 0, 3, floor), nil)
	if err != nil || rep.DraftsCreated != 3 {
		t.Fatalf("import: %+v %v", rep, err)
	}
	id := rep.Lines[1].ID // the first draft, published
	imported, err := e.Evaluation(ctx, id)
	if err != nil || imported.Status != niche.StatusPublished {
		t.Fatalf("imported: %+v %v", imported, err)
	}
	// The fields of a revision's state that an evaluation shows.
	type stateView struct {
		ID, Title, Problem, Buyer, Category, Hypothesis, Notes string
		Dimensions                                             niche.Dimensions
		SignalIDs                                              []string
		Score, Revision                                        int
		Status                                                 niche.Status
		Created, Updated, Published                            time.Time
	}
	ofEvaluation := func(ev *niche.Evaluation) stateView {
		var published time.Time
		if ev.PublishedAt != nil {
			published = *ev.PublishedAt
		}
		return stateView{ev.ID, ev.Title, ev.Problem, ev.Buyer, ev.Category, ev.SolutionHypothesis, ev.EvaluationNotes,
			ev.Dimensions, ev.SignalIDs, ev.Score, ev.Revision, ev.Status, ev.CreatedAt, ev.UpdatedAt, published}
	}
	ofRecord := func(r *niche.Record) stateView {
		return stateView{r.ID, r.Title, r.Problem, r.Buyer, r.Category, r.SolutionHypothesis, r.EvaluationNotes,
			r.Dimensions, r.SignalIDs, r.Score, r.Revision, r.Status, r.CreatedAt, r.UpdatedAt, r.PublishedAt}
	}
	want := []stateView{ofEvaluation(imported)}
	check := func(step string) {
		t.Helper()
		revs, err := e.Revisions(ctx, id)
		if err != nil || len(revs) != len(want) {
			t.Fatalf("%s: revisions %+v %v", step, revs, err)
		}
		for i, r := range revs {
			if diff := cmp.Diff(want[i], ofRecord(&r.State)); diff != "" {
				t.Fatalf("%s: the state of revision %d (-want +got):\n%s", step, i+1, diff)
			}
		}
		_, rec, err := st.Operation(ctx, "log-0")
		if err != nil || rec == nil {
			t.Fatalf("%s: operation log-0: %+v %v", step, rec, err)
		}
		if diff := cmp.Diff(want[0], ofRecord(rec)); diff != "" {
			t.Fatalf("%s: the state operation log-0 left (-want +got):\n%s", step, diff)
		}
	}
	check("imported")
	pain, one := 5, 1
	d := niche.Draft{Title: "Revised bulk evaluation for plumbers", Problem: imported.Problem, Buyer: imported.Buyer,
		Category: imported.Category, SolutionHypothesis: imported.SolutionHypothesis, EvaluationNotes: imported.EvaluationNotes,
		Pain: &pain, Frequency: &one, WillingnessToPay: &one, ReachableBuyers: &one, Feasibility: &one, CompetitionGap: &one,
		SignalIDs: imported.SignalIDs}
	revised, err := e.Revise(ctx, id, 1, niche.Op{ID: "log-revise", Actor: "ana"}, d)
	if err != nil || revised.Revision != 2 || revised.Title == imported.Title {
		t.Fatalf("revise: %+v %v", revised, err)
	}
	want = append(want, ofEvaluation(revised))
	check("revised")
	withdrawn, err := e.Withdraw(ctx, id, 2, niche.Op{ID: "log-withdraw", Actor: "ana"})
	if err != nil || withdrawn.Revision != 3 {
		t.Fatalf("withdraw: %+v %v", withdrawn, err)
	}
	want = append(want, ofEvaluation(withdrawn))
	check("withdrawn")
	// An unpublished imported draft, published.
	id = rep.Lines[3].ID
	draft, err := e.Evaluation(ctx, id)
	if err != nil || draft.Status != niche.StatusDraft {
		t.Fatalf("imported draft: %+v %v", draft, err)
	}
	published, err := e.Publish(ctx, id, 1, niche.Op{ID: "log-publish", Actor: "ana"})
	if err != nil || published.Revision != 2 {
		t.Fatalf("publish: %+v %v", published, err)
	}
	revs, err := e.Revisions(ctx, id)
	if err != nil || len(revs) != 2 {
		t.Fatalf("published draft's revisions: %+v %v", revs, err)
	}
	for i, w := range []*niche.Evaluation{draft, published} {
		if diff := cmp.Diff(ofEvaluation(w), ofRecord(&revs[i].State)); diff != "" {
			t.Fatalf("published draft: the state of revision %d (-want +got):\n%s", i+1, diff)
		}
	}
}
