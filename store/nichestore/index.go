package nichestore

import (
	"context"
	"database/sql"
	"fmt"
	"unsafe"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
)

// SearchRows implements niche.IndexSource: the published evaluations'
// search rows (niche_search on SQLite, the published rows of
// niche_evaluations on PostgreSQL), all when ids is nil.
func (ns *Store) SearchRows(ctx context.Context, ids []string) ([]niche.SearchRow, error) {
	// The count from the covering index niche_eval_counts (migration
	// 0022), never from the evaluation's row.
	table := "niche_search e JOIN niche_evaluations n INDEXED BY niche_eval_counts ON n.seq = e.seq AND n.status = 'published' WHERE 1 = 1"
	count := "n.signal_count"
	if ns.db.Dialect() == store.Postgres {
		table, count = "niche_evaluations e WHERE e.status = 'published'", "e.signal_count"
	}
	var args []any
	if ids != nil {
		if len(ids) == 0 {
			return nil, nil
		}
		if ns.db.Dialect() == store.SQLite {
			// Found by niche_evaluations' index of ids (niche_search has
			// none): a catch-up reads a few rows, never the table.
			table = "niche_evaluations n JOIN niche_search e ON e.seq = n.seq WHERE n.status = 'published' AND n.id IN (" + store.Placeholders(len(ids)) + ")"
		} else {
			table += ` AND e.id IN (` + store.Placeholders(len(ids)) + `)`
		}
		args = store.Args(ids)
	}
	query := `SELECT ` + candidateCols(true) + `, e.seq, e.category_key, e.sp, ` + count + ` FROM ` + table
	rows, err := ns.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search rows: %w", err)
	}
	defer rows.Close()
	var out []niche.SearchRow
	for rows.Next() {
		var r niche.SearchRow
		var count int
		c, err := scanCandidate(rows, &r.Seq, &r.CategoryKey, &r.Preview, &count)
		if err != nil {
			return nil, fmt.Errorf("store: search rows: %w", err)
		}
		r.Candidate = c
		r.Listing.SignalCount = count
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search rows: %w", err)
	}
	return out, nil
}

// SearchVersion implements niche.IndexSource: niche_version.v, the
// sequence number of the change feed's last entry (feed.go), which
// the triggers of migration 0021 raise on every change of a published
// evaluation's search row or signal count.
func (ns *Store) SearchVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := ns.db.CachedQueryRow(ctx, `SELECT v FROM niche_version WHERE id = 1`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: search version: %w", err)
	}
	return v, nil
}

// EachSearchRow implements niche.RowStreamer: the published evaluations'
// search rows in seq order, each read into the same SearchRow whose
// strings alias the driver's buffers (sql.RawBytes on SQLite, pgx's
// raw values on PostgreSQL) and are valid only during fn: a load copies
// them once, into the index, instead of allocating a string per column
// and row (1.4 million at 100,000 evaluations) to copy them again. On
// PostgreSQL they are pgx's raw values (eachRawSearchRow).
func (ns *Store) EachSearchRow(ctx context.Context, fn func(*niche.SearchRow) error) error {
	table := "niche_search e JOIN niche_evaluations n INDEXED BY niche_eval_counts ON n.seq = e.seq AND n.status = 'published'"
	count := "n.signal_count"
	if ns.db.Dialect() == store.Postgres {
		table, count = "niche_evaluations e WHERE e.status = 'published'", "e.signal_count"
	}
	cols := `e.id, e.score, e.updated_at, e.st, e.sb, e.sc, e.title, e.problem, e.buyer, e.category,
		e.score_version, e.seq, e.category_key, e.sp, ` + count
	if ns.db.HasRawRows() && ns.db.Dialect() == store.Postgres {
		return ns.eachRawSearchRow(ctx, cols, fn)
	}
	return ns.eachScannedSearchRow(ctx, `SELECT `+cols+` FROM `+table+` ORDER BY e.seq`, fn)
}

// eachScannedSearchRow is EachSearchRow through database/sql (SQLite).
func (ns *Store) eachScannedSearchRow(ctx context.Context, query string, fn func(*niche.SearchRow) error) error {
	rows, err := ns.db.Query(ctx, query)
	if err != nil {
		return fmt.Errorf("store: search rows: %w", err)
	}
	defer rows.Close()
	var raw [11]sql.RawBytes // id, st, sb, sc, title, problem, buyer, category, score_version, category_key, sp
	var updated int64
	var r niche.SearchRow
	l := &r.Listing
	for rows.Next() {
		if err := rows.Scan(&raw[0], &r.Score, &updated, &raw[1], &raw[2], &raw[3], &raw[4], &raw[5], &raw[6], &raw[7],
			&raw[8], &r.Seq, &raw[9], &raw[10], &l.SignalCount); err != nil {
			return fmt.Errorf("store: search rows: %w", err)
		}
		s := func(i int) string { return unsafe.String(unsafe.SliceData(raw[i]), len(raw[i])) }
		r.ID, r.Title, r.Body, r.Extra = s(0), s(1), s(2), s(3)
		l.ID, l.Title, l.Problem, l.Buyer, l.Category, l.ScoreVersion = r.ID, s(4), s(5), s(6), s(7), s(8)
		l.Score, r.UpdatedAt = r.Score, store.FromMicros(updated)
		r.CategoryKey, r.Preview = s(9), s(10)
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: search rows: %w", err)
	}
	return nil
}

// eachRawSearchRow is EachSearchRow through store.DB.EachRawRow
// (PostgreSQL): the values as pgx read them into its buffer, with no
// string or []byte made per value by database/sql (a third of the load's
// CPU), the numbers parsed from their text. One query streams them: read
// in parallel ranges of seq on two connections (each range held until
// the ranges before it were passed on), the load was slower on this
// 2-core machine under load, the copies costing more than a second
// server process gained.
func (ns *Store) eachRawSearchRow(ctx context.Context, cols string, fn func(*niche.SearchRow) error) error {
	var r niche.SearchRow
	l := &r.Listing
	var fnErr error
	err := ns.db.EachRawRow(ctx, `SELECT `+cols+` FROM niche_evaluations e WHERE e.status = 'published' ORDER BY e.seq`, nil,
		func(v [][]byte) error {
			if len(v) != 15 {
				return fmt.Errorf("%d columns", len(v))
			}
			var nums [4]int64 // score, updated_at, seq, signal_count
			for i, c := range [4]int{1, 2, 11, 14} {
				n, ok := parseInt(v[c])
				if !ok {
					return fmt.Errorf("column %d: %q is not an integer", c+1, v[c])
				}
				nums[i] = n
			}
			s := func(i int) string { return unsafe.String(unsafe.SliceData(v[i]), len(v[i])) }
			r.ID, r.Score, r.UpdatedAt, r.Seq = s(0), int(nums[0]), store.FromMicros(nums[1]), nums[2]
			r.Title, r.Body, r.Extra = s(3), s(4), s(5)
			l.ID, l.Title, l.Problem, l.Buyer, l.Category, l.ScoreVersion = r.ID, s(6), s(7), s(8), s(9), s(10)
			l.Score, l.SignalCount = r.Score, int(nums[3])
			r.CategoryKey, r.Preview = s(12), s(13)
			fnErr = fn(&r)
			return fnErr
		})
	if fnErr != nil {
		return fnErr // as the caller's function returned it
	}
	if err != nil {
		return fmt.Errorf("store: search rows: %w", err)
	}
	return nil
}

// parseInt parses a decimal integer in text format (an optional minus
// sign and at most 18 digits, which every column read here fits).
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
