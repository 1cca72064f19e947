package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/assaykit/assay/niche"
)

// The niche search text. Each niche evaluation row keeps its normalised,
// stemmed text in st, sp, sb and sc (niche.SearchFields in the DB's
// niche.Language, computed in Go), and niche_terms counts the published
// evaluations having each word. The niche store (store/nichestore) writes
// them with every evaluation; they are here, with the DB, because steps
// of opening it write them too: the Go step of migration 0008 (sp) and the
// reindex when the database was indexed in another language.

// searchLanguageMeta is the assay_meta key holding the niche.Language the
// search columns (st, sp, sb, sc) and niche_terms were computed with.
const searchLanguageMeta = "niche.search_language"

// SearchLanguage is the word rules of the niche search index
// (Options.SearchLanguage).
func (db *DB) SearchLanguage() niche.Language { return db.lang }

// reindexNiche recomputes the search columns of every evaluation and
// niche_terms, in one transaction, when the database's index was computed
// with a language other than the store's (or before stemming, when no
// language was recorded), and records the language. Stemming is done in
// Go (niche.Language.SearchText), so this is a Go step rather than SQL;
// the triggers then bring niche_fts, niche_search and the PostgreSQL
// tsvectors in step. A database already in the store's language costs one
// read.
func (db *DB) reindexNiche(ctx context.Context) error {
	if db.stopAfter != "" {
		return nil // a test building an older version
	}
	current := func(get func() (string, error)) (bool, error) {
		v, err := get()
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return err == nil && v == string(db.lang), err
	}
	if ok, err := current(func() (string, error) { return db.Meta(ctx, searchLanguageMeta) }); err != nil || ok {
		return err
	}
	err := db.InTx(ctx, func(tx *Tx) error {
		if db.drv.Dialect == Postgres {
			// Instances starting together reindex one at a time (the
			// migrations' key; this lock ends with the transaction): the
			// later one then finds the language recorded.
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock("+migrationLockKey+")"); err != nil {
				return err
			}
		}
		ok, err := current(func() (string, error) {
			var v string
			err := tx.QueryRow(ctx, `SELECT value FROM assay_meta WHERE key = ?`, searchLanguageMeta).Scan(&v)
			if errors.Is(err, sql.ErrNoRows) {
				return "", ErrNotFound
			}
			return v, err
		})
		if err != nil || ok {
			return err
		}
		terms := map[string]int{}
		var after int64 = -1
		for {
			n, last, err := reindexBatch(ctx, tx, after, terms)
			if err != nil {
				return err
			}
			if n < reindexBatchSize {
				break
			}
			after = last
		}
		if _, err := tx.Exec(ctx, `DELETE FROM niche_terms`); err != nil {
			return err
		}
		if err := tx.ApplyTerms(ctx, terms); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			searchLanguageMeta, string(db.lang), db.NowMicros())
		return err
	})
	if err != nil {
		return fmt.Errorf("store: reindex niche search in %s: %w", db.lang, err)
	}
	return nil
}

const reindexBatchSize = 1000

// reindexBatch recomputes the search columns of up to reindexBatchSize
// evaluations after seq after (updating the rows whose text changed) and
// adds the published ones' words to terms. It returns how many rows it
// read and the last seq.
func reindexBatch(ctx context.Context, tx *Tx, after int64, terms map[string]int) (int, int64, error) {
	type row struct {
		seq            int64
		rec            niche.Record
		st, sp, sb, sc string
		published      bool
	}
	rows, err := tx.Query(ctx, `SELECT seq, status, title, problem, buyer, category, solution_hypothesis, st, sp, sb, sc
		FROM niche_evaluations WHERE seq > ? ORDER BY seq LIMIT ?`, after, reindexBatchSize)
	if err != nil {
		return 0, 0, err
	}
	var batch []row
	for rows.Next() {
		var r row
		var status string
		if err := rows.Scan(&r.seq, &status, &r.rec.Title, &r.rec.Problem, &r.rec.Buyer, &r.rec.Category,
			&r.rec.SolutionHypothesis, &r.st, &r.sp, &r.sb, &r.sc); err != nil {
			rows.Close()
			return 0, 0, err
		}
		r.published = status == string(niche.StatusPublished)
		batch = append(batch, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	for _, r := range batch {
		st, sp, sb, sc := tx.db.SearchColumns(&r.rec)
		if r.published {
			AddTerms(terms, 1, st, sp, sb, sc)
		}
		if st == r.st && sp == r.sp && sb == r.sb && sc == r.sc {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE niche_evaluations SET st = ?, sp = ?, sb = ?, sc = ? WHERE seq = ?`,
			st, sp, sb, sc, r.seq); err != nil {
			return 0, 0, err
		}
	}
	if len(batch) == 0 {
		return 0, after, nil
	}
	return len(batch), batch[len(batch)-1].seq, nil
}

// SearchColumns returns the st, sp, sb and sc columns of r in the DB's
// search language.
func (db *DB) SearchColumns(r *niche.Record) (st, sp, sb, sc string) {
	f := db.an.SearchFields(r)
	return f.Title, f.Preview, f.Body, f.Extra
}

// AddTerms adds d to the count of each distinct word of an evaluation's
// indexed text (st, sp, sb, sc), and to the count of evaluations (key "").
func AddTerms(counts map[string]int, d int, fields ...string) {
	seen := map[string]bool{}
	for _, f := range fields {
		for _, w := range strings.Fields(f) {
			if !seen[w] {
				seen[w] = true
				counts[w] += d
			}
		}
	}
	counts[""] += d
}

// ApplyTerms adds counts (AddTerms) to niche_terms in the transaction
// and removes the words no published evaluation has any more. Rows are written in term order, so
// concurrent writers lock them in the same order.
func (tx *Tx) ApplyTerms(ctx context.Context, counts map[string]int) error {
	terms := make([]string, 0, len(counts))
	var gone []any
	for t, n := range counts {
		if n != 0 {
			terms = append(terms, t)
		}
		if n < 0 {
			gone = append(gone, t)
		}
	}
	slices.Sort(terms)
	const chunk = 400
	for start := 0; start < len(terms); start += chunk {
		part := terms[start:min(start+chunk, len(terms))]
		args := make([]any, 0, 2*len(part))
		for _, t := range part {
			args = append(args, t, counts[t])
		}
		if _, err := tx.Exec(ctx, `INSERT INTO niche_terms (term, docs) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?), ", len(part)), ", ")+
			` ON CONFLICT (term) DO UPDATE SET docs = niche_terms.docs + excluded.docs`, args...); err != nil {
			return fmt.Errorf("store: niche terms: %w", err)
		}
	}
	for start := 0; start < len(gone); start += chunk {
		part := gone[start:min(start+chunk, len(gone))]
		if _, err := tx.Exec(ctx, `DELETE FROM niche_terms WHERE docs <= 0 AND term IN (`+Placeholders(len(part))+`)`, part...); err != nil {
			return fmt.Errorf("store: niche terms: %w", err)
		}
	}
	return nil
}
