package nichestore

import (
	"context"

	"github.com/assaykit/assay/niche"
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
