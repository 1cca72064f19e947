package nichestore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
)

// Search candidates (niche.Store.SearchCandidates).
//
// SQLite answers from niche_fts joined with niche_search, a compact copy
// of what a search reads of each published evaluation (ranking columns,
// normalised text, listing); see migrations 0007 and 0009. Words found in more than
// half of the published evaluations (document frequencies are kept in
// niche_terms) are left out of the MATCH expression and checked on the
// candidates' text instead: intersecting their long doclists was most of
// the cost of a typical query, and the check is exact (see
// prunedFirstPass).
//
// PostgreSQL answers from niche_evaluations with its GIN index.

// SearchCandidates implements niche.Store. On SQLite it first collects up
// to Limit+1 matches in the cheapest order (ascending rowid, which FTS5
// walks fastest; frequent words checked in Go, see prunedFirstPass). Only
// when more than Limit match does it rank: the newest Window matches
// (found by a rowid lower bound, so the cost stays bounded however broad
// the query) are ordered by niche.Relevance computed in SQL
// (relevanceSQL), then the sort, then the id, and the best Limit returned.
// PostgreSQL ranks the same window with the same SQL; see searchPostgres.
// Both therefore return the same candidates for every query.
func (ns *Store) SearchCandidates(ctx context.Context, q niche.CandidateQuery) ([]niche.Candidate, bool, error) {
	if q.Query.Empty() || q.Limit <= 0 {
		return []niche.Candidate{}, false, nil
	}
	if ns.db.Dialect() == store.Postgres {
		return ns.searchPostgres(ctx, q)
	}
	docs, total, err := ns.termDocs(ctx, q.Query.Tokens)
	if err != nil {
		return nil, false, err
	}
	var cands []niche.Candidate
	done, broad := false, false
	if frequent := frequentWords(q.Query.Tokens, docs, total); len(frequent) > 0 {
		if cands, done, err = ns.prunedFirstPass(ctx, q, frequent); err != nil {
			return nil, false, err
		}
		broad = len(cands) > q.Limit
	} else if estimate(q.Query.Tokens, docs, total) > float64(2*q.Limit) && q.CategoryKey == "" {
		// Probably more than Limit match: count them in the index alone
		// before reading any row.
		var n int
		err := ns.db.CachedQueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM niche_fts WHERE niche_fts MATCH ? LIMIT ?)`,
			ftsExpr(q.Query.Tokens, q.Full), q.Limit+1).Scan(&n)
		if err != nil {
			return nil, false, fmt.Errorf("store: search niches: %w", err)
		}
		broad = n > q.Limit
	}
	if !done && !broad {
		if cands, err = ns.candidates(ctx, q, false, 0, q.Limit+1); err != nil {
			return nil, false, err
		}
		broad = len(cands) > q.Limit
	}
	if !broad {
		return cands, false, nil
	}
	window := q.Window
	if window <= 0 {
		window = 2000
	}
	bound, err := ns.windowBound(ctx, q, max(window, q.Limit))
	if err != nil {
		return nil, false, err
	}
	cands, err = ns.candidates(ctx, q, true, bound, q.Ranked())
	if err != nil {
		return nil, false, err
	}
	return cands, true, nil
}

// ftsExpr returns the FTS5 MATCH expression of tokens at a level: every
// token quoted (niche.Query.FTS5, read as AND) under the column filter of
// the level, {st sp} for previews and {st sb sc} for full text.
func ftsExpr(tokens []string, full bool) string {
	cols := "{st sp}"
	if full {
		cols = "{st sb sc}"
	}
	return cols + " : (" + niche.Query{Tokens: tokens}.FTS5() + ")"
}

// tsvColumn is the PostgreSQL tsvector of a level: tsp (title and preview
// text) or tsv (title, problem, buyer, category, solution hypothesis).
func tsvColumn(full bool) string {
	if full {
		return "tsv"
	}
	return "tsp"
}

// matchClause returns the FROM/WHERE part matching q (published rows),
// with its arguments; seq names the row-order column. The candidate
// columns are those of alias e.
func (ns *Store) matchClause(q niche.CandidateQuery) (from string, args []any, seq string) {
	if ns.db.Dialect() == store.SQLite {
		from = ` FROM niche_fts JOIN niche_search e ON e.seq = niche_fts.rowid WHERE niche_fts MATCH ?`
		args = append(args, ftsExpr(q.Query.Tokens, q.Full))
		seq = "niche_fts.rowid"
	} else {
		from = ` FROM niche_evaluations e WHERE e.status = 'published' AND e.` + tsvColumn(q.Full) + ` @@ plainto_tsquery('simple', ?)`
		args = append(args, q.Query.Phrase())
		seq = "e.seq"
	}
	if q.CategoryKey != "" {
		from += ` AND e.category_key = ?`
		args = append(args, q.CategoryKey)
	}
	return from, args, seq
}

// windowBound returns the rowid of the window-th newest match (0 when
// fewer match). SQLite only.
func (ns *Store) windowBound(ctx context.Context, q niche.CandidateQuery, window int) (int64, error) {
	from, args, seq := ns.matchClause(q)
	query := `SELECT ` + seq + from + ` ORDER BY ` + seq + ` DESC LIMIT 1 OFFSET ?`
	if q.CategoryKey == "" {
		// The full-text index alone knows the order: no row is read.
		query, args = `SELECT rowid FROM niche_fts WHERE niche_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?`, []any{ftsExpr(q.Query.Tokens, q.Full)}
	}
	var bound int64
	err := ns.db.CachedQueryRow(ctx, query, append(args, window-1)...).Scan(&bound)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: search niches: %w", err)
	}
	return bound, nil
}

// candidateCols are the columns of a niche.Candidate (scanCandidate's
// order) in the table aliased e (niche_search on SQLite,
// niche_evaluations on PostgreSQL): the text of the query's level as
// Title, Body and Extra.
func candidateCols(full bool) string {
	text := `e.st, e.sp, ''`
	if full {
		text = `e.st, e.sb, e.sc`
	}
	return `e.id, e.score, e.updated_at, ` + text + `, e.title, e.problem, e.buyer, e.category, e.score_version`
}

// relevanceSQL returns niche.Relevance of q as an SQL expression over the
// text columns of alias e at q's level, with its arguments. A whole-word
// test is a search for " word " in " text " (the normalised text has
// single spaces between words), exactly niche.ContainsWord.
func (ns *Store) relevanceSQL(q niche.CandidateQuery) (string, []any) {
	body, extra := "e.sp", ""
	if q.Full {
		body, extra = "e.sb", "e.sc"
	}
	find := "instr"
	if ns.db.Dialect() == store.Postgres {
		find = "strpos"
	}
	var terms []string
	var args []any
	has := func(col string, w string, points int) {
		terms = append(terms, fmt.Sprintf(`CASE WHEN %s(' ' || %s || ' ', ?) > 0 THEN %d ELSE 0 END`, find, col, points))
		args = append(args, " "+w+" ")
	}
	for _, t := range q.Query.Tokens {
		has("e.st", t, 8)
		has(body, t, 3)
		if extra != "" {
			has(extra, t, 1)
		}
	}
	if len(q.Query.Tokens) > 1 {
		p := q.Query.Phrase()
		has("e.st", p, 6)
		has(body, p, 2)
	}
	return "(" + strings.Join(terms, " + ") + ")", args
}

// rankOrder is the ORDER BY clause of a broad query's window: niche.Relevance
// (relevanceSQL), then the sort, then the id in byte order, exactly the
// engine's final ordering; with its arguments.
func (ns *Store) rankOrder(q niche.CandidateQuery) (string, []any) {
	rel, args := ns.relevanceSQL(q)
	id := "e.id"
	if ns.db.Dialect() == store.Postgres {
		id = `e.id COLLATE "C"`
	}
	order := ` ORDER BY ` + rel + ` DESC, `
	if q.Sort != niche.SortRecent {
		order += `e.score DESC, `
	}
	return order + `e.updated_at DESC, ` + id, args
}

func scanCandidate(sc scanner, extra ...any) (niche.Candidate, error) {
	var c niche.Candidate
	var updated int64
	l := &c.Listing
	dest := []any{&c.ID, &c.Score, &updated, &c.Title, &c.Body, &c.Extra, &l.Title, &l.Problem, &l.Buyer, &l.Category,
		&l.ScoreVersion}
	err := sc.Scan(append(dest, extra...)...)
	c.UpdatedAt = store.FromMicros(updated)
	l.ID, l.Score = c.ID, c.Score
	return c, err
}

// candidates returns up to limit matches of q: in the cheapest order when
// not ranked, else (SQLite only) the best of the rows from rowid bound on
// by rankOrder.
func (ns *Store) candidates(ctx context.Context, q niche.CandidateQuery, ranked bool, bound int64, limit int) ([]niche.Candidate, error) {
	from, args, seq := ns.matchClause(q)
	query := `SELECT ` + candidateCols(q.Full) + from
	switch {
	case !ranked && ns.db.Dialect() == store.SQLite:
		// All matches or more than limit: the order does not matter, and
		// FTS5 walks doclists forwards faster than backwards.
		query += ` ORDER BY ` + seq + ` LIMIT ?`
		args = append(args, limit)
	case !ranked:
		query += ` ORDER BY ` + seq + ` DESC LIMIT ?`
		args = append(args, limit)
	default:
		// Rank the window on the seqs alone, then read the rows of the
		// best: SQLite's sorter would otherwise copy every selected
		// column of every row of the window.
		order, oargs := ns.rankOrder(q)
		seqs, err := ns.querySeqs(ctx, `SELECT e.seq`+from+` AND niche_fts.rowid >= ?`+order+` LIMIT ?`,
			append(append(append(args, bound), oargs...), limit)...)
		if err != nil || len(seqs) == 0 {
			return []niche.Candidate{}, err
		}
		query = `SELECT ` + candidateCols(q.Full) + ` FROM niche_search e WHERE e.seq IN (` + store.Placeholders(len(seqs)) + `)`
		args = store.Args(seqs)
	}
	rows, err := ns.db.CachedQuery(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search niches: %w", err)
	}
	defer rows.Close()
	out := []niche.Candidate{}
	for rows.Next() {
		c, err := scanCandidate(rows)
		if err != nil {
			return nil, fmt.Errorf("store: search niches: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// querySeqs runs query, which selects one integer column, and returns
// its values.
func (ns *Store) querySeqs(ctx context.Context, query string, args ...any) ([]int64, error) {
	rows, err := ns.db.CachedQuery(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search niches: %w", err)
	}
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, fmt.Errorf("store: search niches: %w", err)
		}
		seqs = append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search niches: %w", err)
	}
	return seqs, nil
}

// ---- PostgreSQL ----

// searchPostgres is SearchCandidates on PostgreSQL. A query expected to
// match at most Limit evaluations (see estimate) is answered by one query,
// unless more match after all. Otherwise the seqs of the newest Window
// matches are collected first — from the GIN index (then sorted), or by
// walking the seq index newest first when the rarest word is so common
// that the newest Window matches are among the newest few thousand rows
// (rarest² > Window × total) — and then either read (at most Limit) or
// ranked by rankOrder, as on SQLite.
func (ns *Store) searchPostgres(ctx context.Context, q niche.CandidateQuery) ([]niche.Candidate, bool, error) {
	window := q.Window
	if window <= 0 {
		window = 2000
	}
	window = max(window, q.Limit)
	docs, total, err := ns.termDocs(ctx, q.Query.Tokens)
	if err != nil {
		return nil, false, err
	}
	least := rarest(q.Query.Tokens, docs)
	if estimate(q.Query.Tokens, docs, total) <= float64(q.Limit) {
		cands, err := ns.candidates(ctx, q, false, 0, q.Limit+1)
		if err != nil || len(cands) <= q.Limit {
			return cands, false, err
		}
		// The counts were behind: more match after all.
	}
	from, args, _ := ns.matchClause(q)
	order := ` ORDER BY e.seq + 0 DESC` // not the seq index: collect from the GIN index
	if float64(least)*float64(least) > float64(window)*float64(total) {
		order = ` ORDER BY e.seq DESC`
	}
	rows, err := ns.db.Query(ctx, `SELECT e.seq`+from+order+` LIMIT ?`, append(args, window)...)
	if err != nil {
		return nil, false, fmt.Errorf("store: search niches: %w", err)
	}
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			rows.Close()
			return nil, false, fmt.Errorf("store: search niches: %w", err)
		}
		seqs = append(seqs, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: search niches: %w", err)
	}
	query := `SELECT ` + candidateCols(q.Full) + ` FROM niche_evaluations e WHERE e.seq = ANY(?) AND e.status = 'published'`
	args = []any{seqs}
	truncated := len(seqs) > q.Limit
	if truncated {
		order, oargs := ns.rankOrder(q)
		query += order + ` LIMIT ?`
		args = append(append(args, oargs...), q.Ranked())
	}
	rows, err = ns.db.Query(ctx, query, args...)
	if err != nil {
		return nil, false, fmt.Errorf("store: search niches: %w", err)
	}
	defer rows.Close()
	cands := []niche.Candidate{}
	for rows.Next() {
		c, err := scanCandidate(rows)
		if err != nil {
			return nil, false, fmt.Errorf("store: search niches: %w", err)
		}
		cands = append(cands, c)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: search niches: %w", err)
	}
	return cands, truncated, nil
}

// ---- frequent words (SQLite) ----

// asciiWord reports whether w has only ASCII letters and digits. Only such
// words are checked in Go instead of by FTS5: the unicode61 tokenizer
// splits and folds them exactly as the normalised text has them, so a
// whole-word match in the text is a token match.
func asciiWord(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return w != ""
}

// termDocs returns the number of published evaluations having each of
// words (absent: none, or not counted) and the number of published
// evaluations.
func (ns *Store) termDocs(ctx context.Context, words []string) (docs map[string]int64, total int64, err error) {
	rows, err := ns.db.CachedQuery(ctx, `SELECT term, docs FROM niche_terms WHERE term IN (`+store.Placeholders(len(words)+1)+`)`,
		append([]any{""}, store.Args(words)...)...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: search niches: %w", err)
	}
	defer rows.Close()
	docs = map[string]int64{}
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, 0, fmt.Errorf("store: search niches: %w", err)
		}
		docs[t] = n
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: search niches: %w", err)
	}
	return docs, docs[""], nil
}

// rarest returns the smallest count in docs of the tokens (0 for a token
// not counted).
func rarest(tokens []string, docs map[string]int64) int64 {
	n := int64(-1)
	for _, t := range tokens {
		if d := docs[t]; n < 0 || d < n {
			n = d
		}
	}
	return max(n, 0)
}

// estimate is the expected number of evaluations having every token if
// words occurred independently: total × Π docs/total. It only chooses
// between plans; every plan returns the same matches.
func estimate(tokens []string, docs map[string]int64, total int64) float64 {
	if total <= 0 {
		return 0
	}
	e := float64(total)
	for _, t := range tokens {
		e *= float64(docs[t]) / float64(total)
	}
	return e
}

// frequentWords returns the tokens worth checking in Go rather than
// intersecting in FTS5: ASCII words found in more than half of the
// published evaluations (counted over every indexed column: for a
// preview-level query a word may be rarer in the preview text, which only
// costs the first pass more misses). At least one token is always left to
// FTS5: when every token is frequent, the least frequent stays.
func frequentWords(tokens []string, docs map[string]int64, total int64) []string {
	if len(tokens) < 2 {
		return nil
	}
	var frequent []string
	for _, t := range tokens {
		if asciiWord(t) && 2*docs[t] > total {
			frequent = append(frequent, t)
		}
	}
	if len(frequent) == len(tokens) {
		least := slices.MinFunc(frequent, func(a, b string) int { return cmp.Compare(docs[a], docs[b]) })
		frequent = slices.DeleteFunc(frequent, func(t string) bool { return t == least })
	}
	return frequent
}

// hasWord reports whether c's indexed text has w as a whole word.
func hasWord(c *niche.Candidate, w string) bool {
	return niche.ContainsWord(c.Title, w) || niche.ContainsWord(c.Body, w) || niche.ContainsWord(c.Extra, w)
}

// mayHaveToken reports whether unicode61 could see w as a token of c's
// text although w is not a whole word there: w occurs bounded on each side
// by a word edge or a non-ASCII character (which unicode61 may treat as a
// separator where SearchText kept a letter), at least one side being
// non-ASCII.
func mayHaveToken(c *niche.Candidate, w string) bool {
	for _, text := range [...]string{c.Title, c.Body, c.Extra} {
		for from := 0; from <= len(text)-len(w); {
			i := strings.Index(text[from:], w)
			if i < 0 {
				break
			}
			i += from
			end := i + len(w)
			wideBefore, wideAfter := i > 0 && text[i-1] >= 0x80, end < len(text) && text[end] >= 0x80
			before := i == 0 || text[i-1] == ' ' || wideBefore
			after := end == len(text) || text[end] == ' ' || wideAfter
			if before && after && (wideBefore || wideAfter) {
				return true
			}
			from = i + 1
		}
	}
	return false
}

// prunedFirstPass collects up to q.Limit+1 matches of q like the first
// pass of SearchCandidates, but with the frequent words left out of the
// MATCH expression and checked on each row's text. done is false when the
// rows read without a match exceed a bound (a frequent word that rarely
// occurs with the others): the caller then runs the plain first pass.
//
// The check is exact: a row whose text has the word as a whole word
// matches it for FTS5 too (ASCII words only), a row whose text does not
// have it even between non-ASCII characters does not, and the rare rows in
// between (see mayHaveToken) are asked to FTS5 itself.
func (ns *Store) prunedFirstPass(ctx context.Context, q niche.CandidateQuery, frequent []string) (cands []niche.Candidate, done bool, err error) {
	kept := niche.Query{Tokens: slices.DeleteFunc(slices.Clone(q.Query.Tokens), func(t string) bool { return slices.Contains(frequent, t) })}
	kq := q
	kq.Query = kept
	from, args, seq := ns.matchClause(kq)
	rows, err := ns.db.CachedQuery(ctx, `SELECT `+candidateCols(q.Full)+`, `+seq+from+` ORDER BY `+seq, args...)
	if err != nil {
		return nil, false, fmt.Errorf("store: search niches: %w", err)
	}
	defer rows.Close()
	type unsure struct {
		c   niche.Candidate
		seq int64
	}
	var uncertain []unsure
	misses, maxMisses := 0, 3*(q.Limit+1)
	cands = []niche.Candidate{}
	for rows.Next() {
		var rowSeq int64
		c, err := scanCandidate(rows, &rowSeq)
		if err != nil {
			return nil, false, fmt.Errorf("store: search niches: %w", err)
		}
		match, sure := true, true
		for _, w := range frequent {
			switch {
			case hasWord(&c, w):
			case mayHaveToken(&c, w):
				sure = false
			default:
				match = false
			}
			if !match {
				break
			}
		}
		switch {
		case match && sure:
			cands = append(cands, c)
			if len(cands) > q.Limit {
				return cands, true, nil // more than Limit match: enough to know
			}
		default:
			if misses++; misses > maxMisses {
				return nil, false, nil
			}
			if match {
				uncertain = append(uncertain, unsure{c, rowSeq})
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: search niches: %w", err)
	}
	rows.Close()
	if len(uncertain) > 0 {
		expr := ftsExpr(frequent, q.Full)
		for _, u := range uncertain {
			var one int
			err := ns.db.CachedQueryRow(ctx, `SELECT 1 FROM niche_fts WHERE niche_fts MATCH ? AND rowid = ?`, expr, u.seq).Scan(&one)
			switch {
			case err == nil:
				cands = append(cands, u.c)
			case !errors.Is(err, sql.ErrNoRows):
				return nil, false, fmt.Errorf("store: search niches: %w", err)
			}
		}
	}
	return cands, true, nil
}
