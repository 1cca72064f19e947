package main

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/sqlite"
)

// TestIndexMatchesStore compares, on the catalogue file named by
// ASSAY_BENCH_NICHE_DB (made with go run ./bench/niche -load-only FILE),
// the results of the bench's queries with the engine's search index and
// without it (the store's SQL answer): both must be the same page in the
// same order. Without the variable it generates a catalogue of 1,500
// evaluations (the bench's generator, seed 1) in a temporary file.
func TestIndexMatchesStore(t *testing.T) {
	path := os.Getenv("ASSAY_BENCH_NICHE_DB")
	generated := path == ""
	if generated {
		path = t.TempDir() + "/catalogue.db"
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if generated {
		signals, recs := generate(1, 1500, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		if err := nichestore.New(db).BulkLoadNiche(ctx, signals, recs, 1000); err != nil {
			t.Fatal(err)
		}
	}
	indexed, err := niche.New(nichestore.New(db), nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := niche.New(nichestore.New(db), &niche.Options{DisableSearchIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	typical, broad := queries(1, 200)
	for _, q := range append(typical, broad...) {
		for _, o := range []niche.SearchOptions{{Query: q, Limit: 20}, {Query: q, Limit: 20, Full: true, Sort: niche.SortRecent},
			{Query: q, Limit: 20, Category: &categories[len(q)%len(categories)]}} {
			a, err := indexed.Search(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			b, err := plain.Search(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if resultIDs(a) == nil && resultIDs(b) == nil {
				continue
			}
			if !slices.Equal(resultIDs(a), resultIDs(b)) || !slices.Equal(a.Relevance, b.Relevance) || a.Truncated != b.Truncated {
				t.Errorf("%+v:\nindex %v %v %v\nstore %v %v %v", o, resultIDs(a), a.Relevance, a.Truncated, resultIDs(b), b.Relevance, b.Truncated)
			}
		}
	}
}

// resultIDs are the ids of a result's previews or evaluations, with their
// signal counts for previews.
func resultIDs(r *niche.SearchResult) []string {
	var out []string
	for _, p := range r.Previews {
		out = append(out, p.ID+"/"+string(rune('0'+p.SignalCount)))
	}
	for _, e := range r.Evaluations {
		out = append(out, e.ID)
	}
	return out
}
