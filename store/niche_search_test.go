package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// Checks of the search tables of migrations 0007 to 0009 (some
// SQLite-specific). The behaviour itself is covered by
// nichetest.TestStore on every store.

// indexTerms returns the document frequency of every word as the
// full-text index itself counts them (fts5vocab on SQLite, ts_stat on
// PostgreSQL), with "" counting the published evaluations.
func indexTerms(t *testing.T, db *store.DB) map[string]int {
	t.Helper()
	ctx := context.Background()
	w, _ := db.SQL()
	q := `SELECT word, ndoc FROM ts_stat('SELECT tsv || tsp FROM niche_evaluations WHERE status = ''published''')
		UNION ALL SELECT '', count(*) FROM niche_evaluations WHERE status = 'published'`
	if db.Dialect() == store.SQLite {
		if _, err := w.ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, niche_fts, row)`); err != nil {
			t.Fatal(err)
		}
		q = `SELECT term, doc FROM temp.v UNION ALL SELECT '', count(*) FROM niche_search`
	}
	out := map[string]int{}
	rows, err := w.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var n int
		if err := rows.Scan(&term, &n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			out[term] = n
		}
	}
	return out
}

func storedTerms(t *testing.T, db *store.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	w, _ := db.SQL()
	rows, err := w.QueryContext(context.Background(), `SELECT term, docs FROM niche_terms`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var n int
		if err := rows.Scan(&term, &n); err != nil {
			t.Fatal(err)
		}
		out[term] = n
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

// TestNicheTermsFollowWrites checks that niche_terms counts what the
// full-text index holds after every kind of write: bulk load, creation of
// drafts and published evaluations, revisions, withdrawals and
// republications (TestNicheSearchMigrations checks it after the
// migrations on an existing catalogue).
func TestNicheTermsFollowWrites(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testNicheTermsFollowWrites(t, storetest.SQLitePath(t)) })
	t.Run("postgres", func(t *testing.T) { testNicheTermsFollowWrites(t, storetest.MigratedPostgresURL(t)) })
}

func testNicheTermsFollowWrites(t *testing.T, dsn string) {
	ctx := context.Background()
	raw := mustOpen(t, dsn)
	db := nichestore.New(raw)
	check := func(step string) {
		t.Helper()
		if diff := cmp.Diff(indexTerms(t, raw), storedTerms(t, raw)); diff != "" {
			t.Fatalf("%s: niche_terms differs from the index (-index +niche_terms):\n%s", step, diff)
		}
	}
	check("empty")
	recs := []niche.Record{
		benchRecord(1, "Café scheduling for plumbers", "Owners of small plumbing firms lose hours.", "A calendar for owners"),
		benchRecord(2, "Straße permits for roofers", "Roofers wait weeks for permits, owners say.", "A permit tracker"),
		benchRecord(3, "日本語 invoices for tutors", "Tutors chase invoices every month; owners hate it.", "Automatic reminders"),
	}
	recs[2].Status = niche.StatusDraft
	if err := db.BulkLoadNiche(ctx, nil, recs, 2); err != nil {
		t.Fatal(err)
	}
	check("bulk load")

	e, err := niche.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sigs []niche.SignalInput
	for i, u := range []string{"https://a.example/1", "https://b.example/2", "https://c.example/3"} {
		sigs = append(sigs, niche.SignalInput{ID: fmt.Sprintf("sig_%032x", 100+i), Kind: niche.KindComplaint, SourceURL: u,
			Origin: "test", Title: "A complaint", Excerpt: "An excerpt", ObservedAt: time.Now().Add(-time.Hour),
			License: "CC BY 4.0", Attribution: "someone", State: niche.StateAccepted})
	}
	if _, err := e.IngestSignals(ctx, sigs); err != nil {
		t.Fatal(err)
	}
	ids := []string{sigs[0].ID, sigs[1].ID, sigs[2].ID}
	draft := func(title string, publish bool) niche.Draft {
		return niche.Draft{Title: title, Problem: "Owners of small bakeries throw away bread every evening.",
			Buyer: "Bakery owners", Category: "Food", SolutionHypothesis: "A waste log that suggests smaller batches.",
			EvaluationNotes: "Notes that are never indexed for search at all.", SignalIDs: ids,
			Pain: new(3), Frequency: new(3), WillingnessToPay: new(2), ReachableBuyers: new(2), Feasibility: new(3), CompetitionGap: new(2), Publish: publish}
	}
	a, err := e.Create(ctx, niche.Op{}, draft("Waste tracking for bakeries", true))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Create(ctx, niche.Op{}, draft("Draft about sourdough bakeries", false))
	if err != nil {
		t.Fatal(err)
	}
	check("create")
	// A bulk import (COPY on PostgreSQL, with vectors built in Go for
	// ASCII text and by the trigger for the rest) counts as creations do.
	var file strings.Builder
	for i, title := range []string{"Imported waste logs for bakeries", "Imported Straße permits for bakeries", "Imported 3d printed bakeries"} {
		d := draft(title, i != 1)
		line, err := json.Marshal(map[string]any{"type": "draft", "operationId": fmt.Sprintf("terms-%d", i), "draft": d})
		if err != nil {
			t.Fatal(err)
		}
		file.Write(append(line, '\n'))
	}
	if rep, err := e.ImportString(ctx, file.String(), nil); err != nil || rep.DraftsCreated != 3 {
		t.Fatalf("import: %+v %v", rep, err)
	}
	check("import")
	if a, err = e.Revise(ctx, a.ID, a.Revision, niche.Op{}, draft("Waste logs for bakeries and cafés", false)); err != nil {
		t.Fatal(err)
	}
	if b, err = e.Revise(ctx, b.ID, b.Revision, niche.Op{}, draft("Sourdough planning for bakeries", false)); err != nil {
		t.Fatal(err)
	}
	check("revise")
	if _, err = e.Publish(ctx, b.ID, b.Revision, niche.Op{}); err != nil {
		t.Fatal(err)
	}
	if a, err = e.Withdraw(ctx, a.ID, a.Revision, niche.Op{}); err != nil {
		t.Fatal(err)
	}
	check("publish and withdraw")
	if _, err = e.Publish(ctx, a.ID, a.Revision, niche.Op{}); err != nil {
		t.Fatal(err)
	}
	check("republish")
}

// TestNicheSearchMigrations builds a catalogue as a database migrated up
// to 0006 held it (before any search table), then lets Open apply 0007 to
// 0009: niche_terms is counted from the index, sp is filled with the
// preview text in Go, niche_links is made from signal_ids, and searches,
// previews, counts and moderation work at both access levels.
func TestNicheSearchMigrations(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testNicheSearchMigrations(t, storetest.SQLitePath(t)) })
	t.Run("postgres", func(t *testing.T) { testNicheSearchMigrations(t, storetest.PostgresURL(t)) })
}

func testNicheSearchMigrations(t *testing.T, dsn string) {
	ctx := context.Background()
	old, err := anydb.Open(ctx, dsn, store.StopAfter("0006_subscriptions.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var sigs []niche.Signal
	for i, host := range []string{"a.example", "b.example", "c.example", "d.example"} {
		state := niche.StateAccepted
		if i == 3 {
			state = niche.StateRejected
		}
		at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		sigs = append(sigs, niche.Signal{ID: fmt.Sprintf("sig_%032x", i+1), Kind: niche.KindComplaint,
			SourceURL: "https://" + host + "/t", SourceDomain: host, Origin: "test", ExternalID: host, Title: "A complaint",
			ObservedAt: at, CollectedAt: at, License: "CC BY 4.0", State: state, CreatedAt: at})
	}
	if _, err := nichestore.New(old).PutSignals(ctx, sigs); err != nil {
		t.Fatal(err)
	}
	recs := []niche.Record{
		benchRecord(1, "Grease trap logs for kitchens", "Kitchens keep grease trap logs on paper taped to a wall, and the logs get wet or lost "+
			"long before anyone asks for them, which nobody notices until a visit comes; when the zanzibar inspector visits, nobody can prove a thing.", "Quokka photo logs"),
		benchRecord(2, "Draft about kitchens", "Kitchens in a draft that is never published anywhere at all.", "Quokka drafts"),
	}
	recs[0].SignalIDs = []string{sigs[0].ID, sigs[1].ID, sigs[2].ID, sigs[3].ID, sigs[0].ID}
	recs[1].Status = niche.StatusDraft
	for _, r := range recs {
		f := r.SearchFields(niche.English)
		ids, _ := json.Marshal(r.SignalIDs)
		d := r.Dimensions
		if _, err := old.Exec(ctx, `INSERT INTO niche_evaluations (id, status, revision, title, problem, buyer, category,
			category_key, solution_hypothesis, evaluation_notes, pain, frequency, willingness_to_pay, reachable_buyers,
			feasibility, competition_gap, signal_ids, score, score_version, score_weights, st, sb, sc, created_at,
			updated_at, published_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, string(r.Status), r.Revision, r.Title, r.Problem, r.Buyer, r.Category, r.CategoryKey(),
			r.SolutionHypothesis, r.EvaluationNotes, d.Pain, d.Frequency, d.WillingnessToPay, d.ReachableBuyers,
			d.Feasibility, d.CompetitionGap, string(ids), r.Score, r.ScoreVersion, `{}`, f.Title, f.Body, f.Extra,
			store.ToMicros(r.CreatedAt), store.ToMicros(r.UpdatedAt), store.ToMicros(r.PublishedAt)); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	raw := mustOpen(t, dsn)
	db := nichestore.New(raw)
	if diff := cmp.Diff(indexTerms(t, raw), storedTerms(t, raw)); diff != "" {
		t.Fatalf("niche_terms differs from the index (-index +niche_terms):\n%s", diff)
	}
	var sp string
	if err := raw.QueryRow(ctx, `SELECT sp FROM niche_evaluations WHERE id = ?`, recs[0].ID).Scan(&sp); err != nil ||
		sp != recs[0].SearchFields(niche.English).Preview || strings.Contains(sp, "zanzibar") {
		t.Fatalf("sp = %q (%v), want %q", sp, err, recs[0].SearchFields(niche.English).Preview)
	}
	e, err := niche.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Preview(ctx, recs[0].ID)
	if err != nil || p.SignalCount != 3 {
		t.Fatalf("preview %+v %v: want 3 signals (4 distinct linked, one rejected)", p, err)
	}
	for _, tc := range []struct {
		query string
		full  bool
		want  int
	}{
		{"grease kitchens", false, 1}, {"grease kitchens", true, 1}, {"paper wall", false, 1},
		{"zanzibar", false, 0}, {"zanzibar", true, 1}, {"quokka", false, 0}, {"quokka", true, 1}, {"draft", true, 0},
	} {
		res, err := e.Search(ctx, niche.SearchOptions{Query: tc.query, Full: tc.full})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(res.Previews) + len(res.Evaluations); n != tc.want {
			t.Errorf("search %q full=%v: %d results, want %d", tc.query, tc.full, n, tc.want)
		}
	}
	_, linked, err := db.ModerateSignal(ctx, sigs[0].ID, niche.Moderation{State: niche.StateAccepted, Actor: "mod", At: time.Now()})
	if want := []string{recs[0].ID, recs[1].ID}; err != nil || !slices.Equal(linked, want) {
		t.Fatalf("linked by %v (%v), want %v (the draft links it too)", linked, err, want)
	}
}
