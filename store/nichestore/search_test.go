package nichestore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// TestNicheSearchFrequentWords checks the SQLite search paths that check
// frequent words in Go against the full-text index's own answer: rows
// whose frequent word is glued to a non-ASCII character (asked to FTS5,
// whose tokenizer may or may not split there), and
// a frequent word that almost never occurs with the others (the first
// pass gives up and runs the plain one).
func TestNicheSearchFrequentWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := storetest.Open(t, storetest.SQLitePath(t), nil)
	db := nichestore.New(raw)
	var recs []niche.Record
	for i := range 120 {
		title := fmt.Sprintf("Gamma tool number %d for owners", i)
		body := "Owners struggle every week with paperwork."
		extra := "A simple tool."
		switch {
		case i%10 == 0:
			// U+19B0 is a letter for Go but a separator for unicode61:
			// FTS5 sees the token "owners" here, SearchText one word.
			title = fmt.Sprintf("Gamma tool number %d", i)
			body = "Ownersᦰ struggle with alpha paperwork."
			if i%20 == 0 {
				body = "Ownersꟊ struggle with alpha paperwork." // a letter for both
			}
		case i%10 == 1:
			body = "Owners struggle with alpha paperwork."
		case i < 50:
			extra = "A zeta tool."
		}
		recs = append(recs, benchRecord(i, title, body, extra))
	}
	for i := range 30 {
		recs = append(recs, benchRecord(1000+i, "Beta helper for owners", "Owners like beta helpers a lot.", "A simple tool."))
	}
	// gamma, in most rows, occurs with beta once, in the newest row.
	recs = append(recs, benchRecord(999, "Beta zeta gamma tool for owners", "Owners use beta daily every week.", "A zeta tool."))
	if err := db.BulkLoadNiche(ctx, nil, recs, 50); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query    string
		frequent []string
		limit    int
	}{
		{"alpha owners", []string{"owner"}, 300}, // rows with "ownersꟊ" are asked to FTS5
		{"alpha tool owners", []string{"tool", "owner"}, 300},
		{"beta zeta", []string{}, 300}, // zeta is in less than half
		{"beta owners", []string{"owner"}, 300},
		{"beta owners", []string{"owner"}, 5}, // more than the limit: truncated
		{"beta tool", []string{"tool"}, 2},    // few misses allowed
		{"zeta owners", []string{"owner"}, 300},
	} {
		q := niche.ParseQuery(tc.query)
		docs, total, err := db.TermDocsT(ctx, q.Tokens)
		if err != nil {
			t.Fatal(err)
		}
		frequent := nichestore.FrequentWords(q.Tokens, docs, total)
		if diff := cmp.Diff(tc.frequent, frequent, cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); diff != "" && len(tc.frequent)+len(frequent) > 0 {
			t.Errorf("%q: frequent words (-want +got):\n%s", tc.query, diff)
		}
		if tc.query == "beta gamma" {
			_, done, err := db.PrunedFirstPassT(ctx, niche.CandidateQuery{Query: q, Limit: tc.limit, Full: true}, frequent)
			if err != nil || done != (tc.limit > 10) {
				t.Errorf("%q limit %d: pruned first pass done=%v %v", tc.query, tc.limit, done, err)
			}
		}
		for _, full := range []bool{false, true} {
			checkCandidates(t, db, raw, tc.query, tc.limit, full)
		}
	}
}

// checkCandidates compares SearchCandidates of query at a level with the
// full-text index's own answer (read from raw, db's database).
func checkCandidates(t *testing.T, db *nichestore.Store, raw *store.DB, query string, limit int, full bool) {
	t.Helper()
	q := niche.ParseQuery(query)
	cands, truncated, err := db.SearchCandidates(context.Background(), niche.CandidateQuery{Query: q, Limit: limit, Full: full})
	if err != nil {
		t.Fatal(err)
	}
	want := ftsIDs(t, raw, nichestore.FtsExpr(q.Tokens, full))
	if len(want) > limit {
		if !truncated || len(cands) != limit {
			t.Errorf("%q full=%v limit %d: %d matches, got truncated=%v with %d", query, full, limit, len(want), truncated, len(cands))
		}
		return
	}
	got := []string{}
	for _, c := range cands {
		got = append(got, c.ID)
		if c.Listing.ID != c.ID || c.Listing.Title == "" || !strings.HasPrefix(c.Listing.Title, "Gamma") && !strings.HasPrefix(c.Listing.Title, "Beta") {
			t.Errorf("%q: candidate listing %+v", query, c.Listing)
		}
		if !full && c.Extra != "" {
			t.Errorf("%q: a preview-level candidate carries hidden text %q", query, c.Extra)
		}
	}
	slices.Sort(got)
	if truncated || !slices.Equal(want, got) {
		t.Errorf("%q full=%v limit %d: truncated=%v, ids differ from the index's (-index +got):\n%s", query, full, limit, truncated, cmp.Diff(want, got))
	}
}

// ftsIDs returns the ids FTS5 itself matches with expr, in id order.
func ftsIDs(t *testing.T, db *store.DB, expr string) []string {
	t.Helper()
	_, r := db.SQL()
	rows, err := r.QueryContext(context.Background(), `SELECT e.id FROM niche_fts JOIN niche_search e ON e.seq = niche_fts.rowid
		WHERE niche_fts MATCH ? ORDER BY e.id`, expr)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// benchRecord is a published record whose text is made of words.
func benchRecord(i int, title, body, extra string) niche.Record {
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	return niche.Record{
		ID: fmt.Sprintf("niche_%032x", i), Title: title, Problem: body, Buyer: "Buyers", Category: "Tests",
		SolutionHypothesis: extra, EvaluationNotes: "notes", SignalIDs: []string{fmt.Sprintf("sig_%032x", 1)},
		Score: i % 100, ScoreVersion: "editorial-v1", Status: niche.StatusPublished, Revision: 1,
		CreatedAt: now, UpdatedAt: now, PublishedAt: now,
	}
}
