package nichestore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/storetest"
)

func TestPGWord(t *testing.T) {
	t.Parallel()
	for w, want := range map[string]bool{
		"plumber": true, "2026": true, "007": true, "3d": true, "abc123": true, "1e": true, "12e": true,
		"1ea": true, "1e5": true, "00e1": true, "12e34": true,
		"12e34abc": false, "a1e5": false, // read as one word, but left to the server with the others
		"1e5e5": false, "2e3x4": false, "1e5a": false, "1e2e": false,
		"": false, "straße": false, "٣٤": false, "Plumber": false, "a-b": false, strings.Repeat("a", maxTSWord): false,
	} {
		if got := pgWord(w); got != want {
			t.Errorf("pgWord(%q) = %v, want %v", w, got, want)
		}
	}
}

// vectorsOf is migration 0036's trigger as one SELECT's expressions over
// columns st, sp, sb and sc.
const vectorsOf = `setweight(to_tsvector('simple', st), 'A') || setweight(to_tsvector('simple', sb), 'B') ||
	setweight(to_tsvector('simple', sc), 'C')`
const previewVectorOf = `to_tsvector('simple', st || ' ' || sp)`

// TestSearchVectorsAreTheServers: the vectors searchVectors builds, sent
// in binary with COPY as the bulk import sends them, are equal (lexemes,
// positions, weights) to those PostgreSQL computes from the same text,
// and it builds none for text the server would read otherwise (a word
// it splits, too long, not ASCII, a lexeme with too many positions, too
// many words). Then an import of evaluations with such text stores
// exactly the vectors of the trigger that one-by-one writes go through.
func TestSearchVectorsAreTheServers(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t, storetest.MigratedPostgresURL(t), nil)
	long := strings.Repeat("word ", maxTSPos/2) + strings.Repeat("other ", maxTSPos/2+2)
	type tc struct {
		st, sp, sb, sc string
		ok             bool
	}
	cases := []tc{
		{"plumber invoic", "plumber lose hour", "plumber lose hour everi week to invoic by hand plumber trade", "a focus invoic tool", true},
		{"", "", "", "", true},
		{"", "onli preview", "", "", true},
		{"titl", "", "", "solut solut solut", true},
		{"2026 report 3d print", "007 agent", "1e5 12e34 abc123 1ea 00e1", "x y z x y z", true},
		{"12e34abc", "", "", "", false},
		{"fine", "fine", "1e5e5", "fine", false},
		{"fine", "2e3x4", "", "", false},
		{"straße", "", "", "", false},
		{"fine", "", "", "٣٤", false},
		{strings.Repeat("a", maxTSWord), "", "", "", false},
		{"", "", strings.Repeat("same ", maxTSPositions+1), "", false},
		{"", "", strings.Repeat("same ", maxTSPositions), "", true},
		{"", "", long, "", false},
	}
	// Ordinary text as the store writes it: the search columns of drafts.
	an, err := niche.NewAnalyzer(niche.English)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		r := niche.Record{Title: fmt.Sprintf("Scheduling for %d plumbers' offices", i), Problem: "Owners of small plumbing firms lose 6 hours every week re-keying invoices (by hand!) into QuickBooks.",
			Buyer: "Plumbing firm owners", Category: "Trades & services", SolutionHypothesis: fmt.Sprintf("A v%d tool: e-mail parsing, 2-way sync, 99.9%% uptime.", i)}
		f := an.SearchFields(&r)
		cases = append(cases, tc{f.Title, f.Preview, f.Body, f.Extra, true})
	}
	err = db.InBulkTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE vectors (i INTEGER, tsv tsvector, tsp tsvector, st TEXT, sp TEXT, sb TEXT, sc TEXT) ON COMMIT DROP`); err != nil {
			return err
		}
		var rows [][]any
		for i, c := range cases {
			tsv, tsp, ok := searchVectors(c.st, c.sp, c.sb, c.sc)
			if ok != c.ok {
				t.Errorf("case %d: searchVectors ok = %v, want %v", i, ok, c.ok)
			}
			if ok {
				rows = append(rows, []any{int64(i), tsv, tsp, c.st, c.sp, c.sb, c.sc})
			}
		}
		if err := tx.InsertRows(ctx, "vectors", []string{"i", "tsv", "tsp", "st", "sp", "sb", "sc"}, rows); err != nil {
			return err
		}
		bad, err := tx.Query(ctx, `SELECT i, tsv::text, (`+vectorsOf+`)::text, tsp::text, (`+previewVectorOf+`)::text FROM vectors
			WHERE tsv IS DISTINCT FROM `+vectorsOf+` OR tsp IS DISTINCT FROM `+previewVectorOf+` ORDER BY i`)
		if err != nil {
			return err
		}
		defer bad.Close()
		for bad.Next() {
			var i int
			var tsv, wantTSV, tsp, wantTSP string
			if err := bad.Scan(&i, &tsv, &wantTSV, &tsp, &wantTSP); err != nil {
				return err
			}
			t.Errorf("case %d: built tsv %.200s\nserver's %.200s\nbuilt tsp %.200s\nserver's %.200s", i, tsv, wantTSV, tsp, wantTSP)
		}
		return bad.Err()
	})
	if err != nil {
		t.Fatal(err)
	}

	// Through the import: vectors built for ordinary text, computed by the
	// trigger for the rest, all as one-by-one writes have them.
	e, err := niche.New(New(db), &niche.Options{DisableSearchIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	var file strings.Builder
	fmt.Fprintf(&file, `{"type":"signal","id":"sig_%032x","kind":"complaint","sourceUrl":"https://a.example.org/1","origin":"v","externalId":"1","title":"A signal","excerpt":"text","observedAt":"2026-05-01T00:00:00Z","license":"CC BY 4.0","attribution":"someone","state":"accepted"}`+"\n", 1)
	titles := []string{"Invoicing for plumbers", "Straße cleaning for cafés", "Model 12e34abc printers", "Rooms of 3d printers"}
	for i, title := range titles {
		fmt.Fprintf(&file, `{"type":"draft","operationId":"v-%d","draft":{"title":%q,"problem":"Owners lose hours every week to a chore.","buyer":"Owners","category":"Trades","solution_hypothesis":"A focused tool that does the chore.","pain":3,"frequency":3,"willingness_to_pay":2,"reachable_buyers":4,"feasibility":3,"competition_gap":1,"evaluation_notes":"Notes that are long enough to pass the bound here.","signal_ids":["sig_%032x"],"publish":false}}`+"\n",
			i, title, 1)
	}
	rep, err := e.ImportString(ctx, file.String(), nil)
	if err != nil || rep.DraftsCreated != len(titles) {
		t.Fatalf("import: %+v %v", rep, err)
	}
	var n, differ int
	if err := db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE tsv IS DISTINCT FROM `+vectorsOf+`
		OR tsp IS DISTINCT FROM `+previewVectorOf+`) FROM niche_evaluations`).Scan(&n, &differ); err != nil {
		t.Fatal(err)
	}
	if n != len(titles) || differ != 0 {
		t.Fatalf("%d of %d imported evaluations have vectors other than the trigger's", differ, n)
	}
}

// TestLexemesAreTheDistinctWords: the words the import counts in
// niche_terms from the vectors are those store.AddTerms counts.
func TestLexemesAreTheDistinctWords(t *testing.T) {
	t.Parallel()
	for _, f := range [][4]string{
		{"plumber invoic", "plumber lose hour", "plumber lose hour everi week", "a focus invoic tool"},
		{"", "", "", ""},
		{"a", "", "b a", "c"},
		{"zeta alpha", "alpha", "", "alpha beta zeta 2026"},
	} {
		tsv, tsp, ok := searchVectors(f[0], f[1], f[2], f[3])
		if !ok {
			t.Fatalf("%q: no vectors", f)
		}
		counts := map[string]int{}
		store.AddTerms(counts, 1, f[:]...)
		delete(counts, "")
		want := slices.Sorted(maps.Keys(counts))
		if got := lexemes(tsv, tsp); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("%q: lexemes %q, AddTerms's words %q", f, got, want)
		}
	}
}
