package niche_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// emptyDB is an empty, migrated database, copied for each test that
// opens it (migrating each anew cost about 10 ms).
var emptyDB storetest.Template

// engineOn returns an engine over a fresh in-memory store, with demand
// signals sig_…01 to sig_…06 ingested: pages on a.example (2 pages),
// b.example, c.example, d.example and e.example.
func engineOn(t *testing.T, opts *niche.Options) *niche.Engine {
	t.Helper()
	ctx := context.Background()
	db := emptyDB.Open(t, nil)
	e, err := niche.New(nichestore.New(db), opts)
	if err != nil {
		t.Fatal(err)
	}
	var in []niche.SignalInput
	for i, u := range []string{"https://a.example/1", "https://www.a.example/2", "https://b.example/3",
		"https://c.example/4", "https://d.example/5", "https://e.example/6"} {
		in = append(in, niche.SignalInput{ID: fmt.Sprintf("sig_%032x", i+1), Kind: niche.KindComplaint, SourceURL: u,
			Origin: "test", Title: "A complaint", ObservedAt: time.Now().Add(-time.Hour), License: "CC BY 4.0",
			State: niche.StateAccepted})
	}
	if _, err := e.IngestSignals(ctx, in); err != nil {
		t.Fatal(err)
	}
	return e
}

func sigs(ns ...int) []string {
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("sig_%032x", n))
	}
	return out
}

func testDraft(signals []string) niche.Draft {
	return niche.Draft{Title: "Evidence floor test draft", Problem: "A problem statement long enough for the bounds.",
		Buyer: "Buyers", Category: "Tests", SolutionHypothesis: "A hypothesis long enough.",
		EvaluationNotes: "Notes long enough to pass the lower bound.", SignalIDs: signals,
		Pain: new(4), Frequency: new(4), WillingnessToPay: new(2), ReachableBuyers: new(3), Feasibility: new(3), CompetitionGap: new(2), Publish: true}
}

// TestEvidenceFloorOptions checks the publication floor with other values
// than the default 3 pages from 2 domains.
func TestEvidenceFloorOptions(t *testing.T) {
	tests := []struct {
		name             string
		demand, domains  int
		signals          []string
		ok               bool
		gotPages, gotDom int
	}{
		{"5/3 met", 5, 3, sigs(1, 2, 3, 4, 5), true, 5, 4},
		{"5/3 four pages", 5, 3, sigs(1, 2, 3, 4), false, 4, 3},
		{"5/3 three pages", 5, 3, sigs(1, 2, 3), false, 3, 2},
		{"1/1 met by one", 1, 1, sigs(3), true, 1, 1},
		{"1/1 met by two pages of one domain", 1, 1, sigs(1, 2), true, 2, 1},
		{"default 3/2 two pages", 0, 0, sigs(1, 3), false, 2, 2},
		{"default 3/2 met", 0, 0, sigs(1, 2, 3), true, 3, 2},
		{"4/1 three pages", 4, 1, sigs(1, 2, 3), false, 3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := engineOn(t, &niche.Options{MinDemandSignals: tc.demand, MinIndependentSources: tc.domains})
			ev, err := e.Create(context.Background(), niche.Op{}, testDraft(tc.signals))
			if tc.ok {
				if err != nil || ev.Status != niche.StatusPublished {
					t.Fatalf("refused: %v", err)
				}
				if ev.EvidenceSummary.DemandPageCount != tc.gotPages || ev.EvidenceSummary.IndependentSourceCount != tc.gotDom {
					t.Fatalf("summary %+v", ev.EvidenceSummary)
				}
				return
			}
			var ee *niche.EvidenceError
			if !errors.As(err, &ee) {
				t.Fatalf("accepted or wrong error: %v", err)
			}
			wantD, wantS := tc.demand, tc.domains
			if wantD == 0 {
				wantD, wantS = 3, 2
			}
			if ee.DemandSignals != tc.gotPages || ee.IndependentSources != tc.gotDom || ee.MinDemandSignals != wantD || ee.MinIndependentSources != wantS {
				t.Fatalf("evidence error %+v", ee)
			}
		})
	}
}

// constScorer is a custom Scorer returning a fixed value.
type constScorer struct{ score int }

func (s constScorer) Version() string { return fmt.Sprintf("const-%d", s.score) }
func (s constScorer) Weights() niche.Weights {
	return niche.Weights{Pain: 50, Frequency: 50}
}
func (s constScorer) Score(niche.Dimensions) int { return s.score }

// TestCustomScorer plugs in scorers of its own: their version and weights
// are stored, scores outside 0..100 are clamped (and logged), and weights
// that do not add up to 100 are refused.
func TestCustomScorer(t *testing.T) {
	for _, tc := range []struct {
		score, want int
		warned      bool
	}{{42, 42, false}, {0, 0, false}, {100, 100, false}, {250, 100, true}, {-7, 0, true}} {
		var logs bytes.Buffer
		e := engineOn(t, &niche.Options{Scorer: constScorer{tc.score}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		ev, err := e.Create(context.Background(), niche.Op{}, testDraft(sigs(1, 3, 4)))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Score != tc.want || ev.ScoreVersion != (constScorer{tc.score}).Version() || ev.ScoreWeights.Pain != 50 {
			t.Errorf("score %d: stored %d %s %+v, want %d", tc.score, ev.Score, ev.ScoreVersion, ev.ScoreWeights, tc.want)
		}
		if warned := strings.Contains(logs.String(), "outside 0..100"); warned != tc.warned {
			t.Errorf("score %d: warning logged %v, want %v (%s)", tc.score, warned, tc.warned, logs.String())
		}
	}
	// Another linear formula through WeightedScorer.
	e := engineOn(t, &niche.Options{Scorer: niche.WeightedScorer{Name: "gap-heavy-v1", W: niche.Weights{Pain: 50, CompetitionGap: 50}}})
	ev, err := e.Create(context.Background(), niche.Op{}, testDraft(sigs(1, 3, 4)))
	if err != nil || ev.Score != 60 || ev.ScoreVersion != "gap-heavy-v1" { // (50·4 + 50·2) / 5
		t.Fatalf("weighted scorer: %+v %v", ev, err)
	}
	db := emptyDB.Open(t, nil)
	if _, err := niche.New(nichestore.New(db), &niche.Options{Scorer: niche.WeightedScorer{Name: "bad", W: niche.Weights{Pain: 60}}}); err == nil {
		t.Fatal("weights adding up to 60 accepted")
	}
	if _, err := niche.New(nichestore.New(db), &niche.Options{TeaserLength: 80}); err == nil {
		t.Fatal("a teaser shorter than the indexed one accepted")
	}
	if _, err := niche.New(nichestore.New(db), &niche.Options{TeaserLength: 400}); err != nil {
		t.Fatalf("a longer teaser refused: %v", err)
	}
}
