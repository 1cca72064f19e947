package nichestore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// TestSQLiteBulkTriggers: the insert triggers of niche_evaluations in a
// migrated SQLite database are the ones whose work CreateEvaluations does
// per batch. When a migration changes one, this fails: bring
// store/nichestore/import_sqlite.go in step (until then bulk imports go
// through the triggers, row by row).
func TestSQLiteBulkTriggers(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{storetest.SQLitePath(t), ":memory:"} {
		db := storetest.Open(t, dsn, nil)
		known, err := nichestore.BulkTriggersKnownT(context.Background(), db)
		if err != nil || !known {
			t.Fatalf("%s: the insert triggers are not the ones the bulk creation knows (%v)", dsn, err)
		}
	}
}

// TestSQLiteBulkCreationAsTriggers: a bulk import into SQLite, between
// evaluations created one by one, leaves what the triggers leave: the
// full-text index matching the published rows (FTS5's integrity check
// against its content table), niche_search a copy of every published row
// and of no other, one change feed entry per published imported
// evaluation in seq order, numbered without holes after the ones before
// it and followed by the ones after it (niche_version.v the last), and
// the schema as it was.
func TestSQLiteBulkCreationAsTriggers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, storetest.SQLitePath(t), nil)
	e := feedEngine(t, nichestore.New(db))
	publishSome(t, e, "before", 3)
	schema := func() string {
		var s string
		if err := db.QueryRow(ctx, `SELECT group_concat(type || ' ' || name || ' ' || coalesce(sql, ''), char(10))
			FROM (SELECT * FROM sqlite_schema ORDER BY type, name)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	was := schema()
	var file strings.Builder
	const n = 60
	for i := range n {
		fmt.Fprintf(&file, `{"type":"draft","operationId":"bulk-%d","draft":{"title":"Bulk evaluation %d for bakers","problem":"Bakers number %d lose hours every week to ordering flour by hand.","buyer":"Bakers","category":"Food %d","solution_hypothesis":"A focused ordering tool for bakers.","pain":3,"frequency":3,"willingness_to_pay":2,"reachable_buyers":4,"feasibility":3,"competition_gap":1,"evaluation_notes":"Notes that are long enough to pass the bound here.","signal_ids":["sig_%032x","sig_%032x","sig_%032x"],"publish":%v}}`+"\n",
			i, i, i, i%4, 7000, 7001, 7002, i%3 != 2)
	}
	rep, err := e.ImportString(ctx, file.String(), nil)
	if err != nil || rep.DraftsCreated != n {
		t.Fatalf("import: %+v %v", rep, err)
	}
	publishSome(t, e, "after", 2)
	if got := schema(); got != was {
		t.Fatalf("the schema after a bulk import differs:\n%s\nbefore:\n%s", got, was)
	}
	// The full-text index: every token instance of the published rows'
	// text and of no other row, as an index of those rows built anew has.
	err = db.InTx(ctx, func(tx *store.Tx) error {
		for _, q := range []string{
			`INSERT INTO niche_fts (niche_fts) VALUES ('integrity-check')`,
			`CREATE VIRTUAL TABLE temp.want_fts USING fts5 (st, sp, sb, sc, tokenize = 'unicode61 remove_diacritics 2')`,
			`INSERT INTO temp.want_fts (rowid, st, sp, sb, sc) SELECT seq, st, sp, sb, sc FROM niche_evaluations WHERE status = 'published'`,
			`CREATE VIRTUAL TABLE temp.want_vocab USING fts5vocab (temp, want_fts, instance)`,
			`CREATE VIRTUAL TABLE temp.got_vocab USING fts5vocab (main, niche_fts, instance)`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		for _, q := range []string{
			`SELECT count(*) FROM (SELECT * FROM temp.want_vocab EXCEPT SELECT * FROM temp.got_vocab)`,
			`SELECT count(*) FROM (SELECT * FROM temp.got_vocab EXCEPT SELECT * FROM temp.want_vocab)`,
		} {
			var c int
			if err := tx.QueryRow(ctx, q).Scan(&c); err != nil || c != 0 {
				return fmt.Errorf("the full-text index differs from the published rows' text in %d token instances (%s): %v", c, q, err)
			}
		}
		var c int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM temp.got_vocab`).Scan(&c); err != nil || c < 1000 {
			return fmt.Errorf("%d token instances indexed: %v", c, err)
		}
		return errors.New("rollback")
	})
	if err == nil || err.Error() != "rollback" {
		t.Fatal(err)
	}
	count := func(q string) int {
		t.Helper()
		var c int
		if err := db.QueryRow(ctx, q).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	const cols = `seq, id, score, updated_at, category_key, st, sp, sb, sc, title, problem, buyer, category, score_version`
	if c := count(`SELECT count(*) FROM (SELECT ` + cols + ` FROM niche_evaluations WHERE status = 'published'
		EXCEPT SELECT ` + cols + ` FROM niche_search)`); c != 0 {
		t.Fatalf("%d published evaluations without their niche_search row", c)
	}
	if c := count(`SELECT count(*) FROM (SELECT ` + cols + ` FROM niche_search
		EXCEPT SELECT ` + cols + ` FROM niche_evaluations WHERE status = 'published')`); c != 0 {
		t.Fatalf("%d niche_search rows that are no published evaluation's", c)
	}
	published := count(`SELECT count(*) FROM niche_evaluations WHERE status = 'published'`)
	if published != 3+2+n-n/3 {
		t.Fatalf("%d published evaluations", published)
	}
	// The feed: numbered 1…v without holes; each published imported
	// evaluation logged once, in seq order, after the ones before and
	// before the ones after.
	if c, v := count(`SELECT count(*) FROM niche_feed`), count(`SELECT v FROM niche_version`); c != v ||
		count(`SELECT max(seq) FROM niche_feed`) != v || count(`SELECT min(seq) FROM niche_feed`) != 1 {
		t.Fatalf("feed of %d entries up to %d", c, v)
	}
	rows, err := db.Query(ctx, `SELECT e.seq, count(*), min(f.seq), max(f.seq) FROM niche_feed f
		JOIN niche_evaluations e ON e.id = f.niche_id GROUP BY e.seq ORDER BY e.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var logged, last int
	for rows.Next() {
		var seq, c, first, final int
		if err := rows.Scan(&seq, &c, &first, &final); err != nil {
			t.Fatal(err)
		}
		if first <= last {
			t.Fatalf("evaluation %d logged at %d, not after the evaluations before it (%d)", seq, first, last)
		}
		if seq > 3 && seq <= 3+n && (c != 1 || first != final) {
			t.Fatalf("imported evaluation %d logged %d times", seq, c)
		}
		logged, last = logged+1, final
	}
	if err := rows.Err(); err != nil || logged != published {
		t.Fatalf("%d evaluations logged of %d published (%v)", logged, published, err)
	}
}

// TestBulkCreationFailsWhole: a batch that fails in its transaction
// leaves nothing of it, on every backend — refused at its operations
// (one already recorded: ErrBulkConflict) or at its evaluation rows (an
// id used twice, after SQLite's batch has dropped the insert triggers) —
// and the next batch is written as usual, with the triggers' rows.
func TestBulkCreationFailsWhole(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := open(t)
			st := nichestore.New(db)
			publishSome(t, feedEngine(t, st), "one", 1) // the signals, and operation one-0
			now := time.Now().UTC().Truncate(time.Microsecond)
			write := func(op, id string) niche.Write {
				return niche.Write{OperationID: op, RequestHash: "h-" + op, Action: niche.ActionCreate, Actor: "test", At: now,
					CheckSignals: true, Record: niche.Record{ID: id, Title: "Invoices for florists " + op,
						Problem: "Florists lose hours every week to invoices.", Buyer: "Florists", Category: "Retail",
						SolutionHypothesis: "A focused invoicing tool.", EvaluationNotes: "Notes on the evidence.",
						SignalIDs: []string{fmt.Sprintf("sig_%032x", 7000)}, Status: niche.StatusPublished, Revision: 1,
						CreatedAt: now, UpdatedAt: now, PublishedAt: now}}
			}
			counts := func() string {
				var s string
				if err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM niche_evaluations) || ' ' ||
					(SELECT count(*) FROM niche_operations) || ' ' || (SELECT count(*) FROM niche_links) || ' ' ||
					(SELECT count(*) FROM niche_revisions) || ' ' || (SELECT v FROM niche_version)`).Scan(&s); err != nil {
					t.Fatal(err)
				}
				return s
			}
			was := counts()
			err := st.CreateEvaluations(ctx, []niche.Write{write("a", ids.New(ids.Niche)), write("one-0", ids.New(ids.Niche))})
			if !errors.Is(err, nichestore.ErrBulkConflict) {
				t.Fatalf("a batch with a recorded operation: %v, want ErrBulkConflict", err)
			}
			twice := ids.New(ids.Niche)
			if err := st.CreateEvaluations(ctx, []niche.Write{write("b", twice), write("c", twice)}); err == nil {
				t.Fatal("a batch creating one id twice was written")
			}
			if got := counts(); got != was {
				t.Fatalf("failed batches left rows (evaluations, operations, links, revisions, version): %s, before %s", got, was)
			}
			if db.Dialect() == store.SQLite {
				if known, err := nichestore.BulkTriggersKnownT(ctx, db); err != nil || !known {
					t.Fatalf("the insert triggers after a failed batch: %v %v", known, err)
				}
			}
			id := ids.New(ids.Niche)
			if err := st.CreateEvaluations(ctx, []niche.Write{write("d", id)}); err != nil {
				t.Fatal(err)
			}
			e := feedEngine(t, st)
			if res, err := e.Search(ctx, niche.SearchOptions{Query: "invoices florists d"}); err != nil || len(res.Previews) != 1 || res.Previews[0].ID != id {
				t.Fatalf("the batch after: %+v %v", res, err)
			}
		})
	}
}
