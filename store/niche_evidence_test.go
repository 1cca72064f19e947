package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// TestNicheEvidenceMigration builds evaluations as a database migrated up
// to 0009 held them, then lets Open apply the rest: the last curator
// review is taken from the revision log (a rescore is not a review, a
// bulk load is none), and the rationale starts empty.
func TestNicheEvidenceMigration(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testNicheEvidenceMigration(t, storetest.SQLitePath(t)) })
	t.Run("postgres", func(t *testing.T) { testNicheEvidenceMigration(t, storetest.PostgresURL(t)) })
}

func testNicheEvidenceMigration(t *testing.T, dsn string) {
	ctx := context.Background()
	old, err := anydb.Open(ctx, dsn, store.StopAfter("0009_niche_access_index.sql"))
	if err != nil {
		t.Fatal(err)
	}
	reviewed := time.Date(2026, 5, 2, 3, 4, 5, 0, time.UTC)
	recs := []niche.Record{
		benchRecord(1, "Reviewed by a curator then rescored", "Kitchens keep grease trap logs on paper taped to a wall.", "Photo logs"),
		benchRecord(2, "Loaded in bulk and never reviewed", "Kitchens keep grease trap logs on paper taped to a wall.", "Photo logs"),
	}
	for _, r := range recs {
		ids, _ := json.Marshal(r.SignalIDs)
		d := r.Dimensions
		if _, err := old.Exec(ctx, `INSERT INTO niche_evaluations (id, status, revision, title, problem, buyer, category,
			category_key, solution_hypothesis, evaluation_notes, pain, frequency, willingness_to_pay, reachable_buyers,
			feasibility, competition_gap, signal_ids, score, score_version, score_weights, st, sb, sc, created_at,
			updated_at, published_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, string(r.Status), r.Revision, r.Title, r.Problem, r.Buyer, r.Category, r.CategoryKey(),
			r.SolutionHypothesis, r.EvaluationNotes, d.Pain, d.Frequency, d.WillingnessToPay, d.ReachableBuyers,
			d.Feasibility, d.CompetitionGap, string(ids), r.Score, r.ScoreVersion, `{}`, "", "", "",
			store.ToMicros(r.CreatedAt), store.ToMicros(r.UpdatedAt), store.ToMicros(r.PublishedAt)); err != nil {
			t.Fatal(err)
		}
	}
	for _, rev := range []struct {
		id, action, actor string
		n                 int
		at                time.Time
	}{
		{recs[0].ID, niche.ActionCreate, "ana", 1, reviewed.Add(-time.Hour)},
		{recs[0].ID, niche.ActionRevise, "ben", 2, reviewed},
		{recs[0].ID, niche.ActionRescore, "ops", 3, reviewed.Add(time.Hour)},
		{recs[1].ID, niche.ActionCreate, "bulk load", 1, reviewed},
	} {
		if _, err := old.Exec(ctx, `INSERT INTO niche_revisions (niche_id, revision, action, actor, reason, operation_id, at, state)
			VALUES (?, ?, ?, ?, '', '', ?, '{}')`, rev.id, rev.n, rev.action, rev.actor, store.ToMicros(rev.at)); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	db := nichestore.New(mustOpen(t, dsn))
	a, err := db.Evaluation(ctx, recs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !a.ReviewedAt.Equal(reviewed) || a.ReviewedBy != "ben" || a.Rationale != (niche.Rationale{}) {
		t.Fatalf("migrated review %s by %q, rationale %+v: want %s by ben, empty", a.ReviewedAt, a.ReviewedBy, a.Rationale, reviewed)
	}
	b, err := db.Evaluation(ctx, recs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !b.ReviewedAt.IsZero() || b.ReviewedBy != "" {
		t.Fatalf("a bulk load counted as a review: %s by %q", b.ReviewedAt, b.ReviewedBy)
	}
}
