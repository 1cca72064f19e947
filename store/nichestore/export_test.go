package nichestore

import (
	"context"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
)

// Hooks for the external tests (package nichestore_test).

// TermDocsT is termDocs.
func (ns *Store) TermDocsT(ctx context.Context, words []string) (map[string]int64, int64, error) {
	return ns.termDocs(ctx, words)
}

// PrunedFirstPassT is prunedFirstPass.
func (ns *Store) PrunedFirstPassT(ctx context.Context, q niche.CandidateQuery, frequent []string) ([]niche.Candidate, bool, error) {
	return ns.prunedFirstPass(ctx, q, frequent)
}

// Internal functions under test.
var (
	FrequentWords = frequentWords
	FtsExpr       = ftsExpr
)

// EachScannedSearchRowT is EachSearchRow through database/sql, as on
// SQLite (PostgreSQL's reads pgx's raw values).
func (ns *Store) EachScannedSearchRowT(ctx context.Context, fn func(*niche.SearchRow) error) error {
	table := "niche_evaluations e WHERE e.status = 'published'"
	if ns.db.Dialect() == store.SQLite {
		table = "niche_search e JOIN niche_evaluations n INDEXED BY niche_eval_counts ON n.seq = e.seq AND n.status = 'published'"
	}
	count := "e.signal_count"
	if ns.db.Dialect() == store.SQLite {
		count = "n.signal_count"
	}
	return ns.eachScannedSearchRow(ctx, `SELECT e.id, e.score, e.updated_at, e.st, e.sb, e.sc, e.title, e.problem, e.buyer, e.category,
		e.score_version, e.seq, e.category_key, e.sp, `+count+` FROM `+table+` ORDER BY e.seq`, fn)
}

// BulkTriggersKnownT reports whether db's niche_evaluations insert
// triggers are the ones CreateEvaluations does the work of per batch on
// SQLite (insertEvaluationsSQLite).
func BulkTriggersKnownT(ctx context.Context, db *store.DB) (known bool, err error) {
	err = db.InTx(ctx, func(tx *store.Tx) error {
		_, known, err = bulkTriggerSQL(ctx, tx)
		return err
	})
	return known, err
}
