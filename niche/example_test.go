package niche_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/sqlite"
)

// A curator ingests evidence, writes an evaluation and publishes it; the
// public then reads the free preview, and paying readers the full
// evaluation. The score is computed by the engine from the six criteria,
// never taken from the draft.
func ExampleNew() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	now := func() time.Time { return time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC) }
	eng, err := niche.New(nichestore.New(db), &niche.Options{Now: now})
	if err != nil {
		log.Fatal(err)
	}

	var signals []niche.SignalInput
	for i, u := range []string{
		"https://forum.bakers.example/t/allergen-labels-1",
		"https://forum.bakers.example/t/allergen-labels-2",
		"https://www.reviews.example/tools/label-printer",
	} {
		signals = append(signals, niche.SignalInput{
			Kind: niche.KindComplaint, SourceURL: u, Origin: "manual", Title: fmt.Sprintf("Complaint %d", i+1),
			Excerpt:    "Rewriting allergen labels by hand for every recipe change takes hours each week.",
			ObservedAt: now().AddDate(0, 0, -i-1), License: "quoted under fair use", Attribution: "forum users",
		})
	}
	ingested, err := eng.IngestSignals(ctx, signals)
	if err != nil {
		log.Fatal(err)
	}
	var ids []string
	for _, r := range ingested {
		ids = append(ids, r.ID)
	}

	draft := niche.Draft{
		Title:              "Allergen labels for small bakeries",
		Problem:            "Small bakeries rewrite allergen labels by hand whenever a recipe or supplier changes, and mistakes lead to recalls.",
		Buyer:              "Independent bakeries with 1-20 staff",
		Category:           "Food & Beverage",
		SolutionHypothesis: "A recipe-linked label generator that updates every label when an ingredient changes.",
		Pain:               new(4), Frequency: new(4), WillingnessToPay: new(2), ReachableBuyers: new(3), Feasibility: new(3), CompetitionGap: new(2),
		EvaluationNotes: "Three complaints from two independent sites within a week; willingness to pay is unproven.",
		SignalIDs:       ids,
		Publish:         true,
	}
	ev, err := eng.Create(ctx, niche.Op{ID: "create-allergen-labels", Actor: "editor"}, draft)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev.Status, ev.Score, ev.ScoreVersion, ev.Confidence, ev.EvidenceSummary.IndependentSourceCount)

	p, err := eng.Preview(ctx, ev.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Title, "|", p.Score, "|", p.SignalCount, "signals")

	// The same operation id with the same input replays; other input is
	// refused.
	again, err := eng.Create(ctx, niche.Op{ID: "create-allergen-labels", Actor: "editor"}, draft)
	fmt.Println(again.ID == ev.ID, err)
	draft.Pain = new(5)
	_, err = eng.Create(ctx, niche.Op{ID: "create-allergen-labels", Actor: "editor"}, draft)
	fmt.Println(errors.Is(err, niche.ErrOperationConflict))
	// Output:
	// published 63 editorial-v1 medium 2
	// Allergen labels for small bakeries | 63 | 3 signals
	// true <nil>
	// true
}

// The default score is a published linear formula over the six criteria.
func ExampleDefaultScorer() {
	s := niche.DefaultScorer()
	fmt.Printf("%s %+v\n", s.Version(), s.Weights())
	fmt.Println(s.Score(niche.Dimensions{Pain: 4, Frequency: 4, WillingnessToPay: 2, ReachableBuyers: 3, Feasibility: 3, CompetitionGap: 2}))
	fmt.Println(s.Score(niche.Dimensions{Pain: 5, Frequency: 5, WillingnessToPay: 5, ReachableBuyers: 5, Feasibility: 5, CompetitionGap: 5}))
	// Output:
	// editorial-v1 {Pain:25 Frequency:20 WillingnessToPay:20 ReachableBuyers:15 Feasibility:10 CompetitionGap:10}
	// 63
	// 100
}

// A preview is built from an allow-list of fields: the solution, the notes,
// the criteria and the evidence have no field in it, and the problem is cut
// to a teaser at a word boundary.
func ExamplePreviewOf() {
	r := &niche.Record{
		ID:                 "niche_00000000000000000000000000000001",
		Title:              "Allergen labels for small bakeries",
		Problem:            "Small bakeries rewrite allergen labels by hand whenever a recipe or supplier changes, and mistakes lead to recalls.",
		Buyer:              "Independent bakeries",
		Category:           "Food & Beverage",
		SolutionHypothesis: "A recipe-linked label generator.",
		EvaluationNotes:    "Paying readers only.",
		SignalIDs:          []string{"sig_1", "sig_2", "sig_3"},
		Score:              63,
		ScoreVersion:       "editorial-v1",
	}
	p := niche.PreviewOf(r, 60)
	fmt.Printf("%q\n", p.ProblemTeaser)
	fmt.Println(p.Score, p.ScoreType, p.SignalCount)
	// Output:
	// "Small bakeries rewrite allergen labels by hand whenever a…"
	// 63 editorial_hypothesis 3
}
