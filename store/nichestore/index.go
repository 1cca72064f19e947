package nichestore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
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
// PostgreSQL the rows are read in parallel ranges (eachRawSearchRow).
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

// Parallel reads of the index load on PostgreSQL (eachRawSearchRow):
// the published rows are read in rawLoadParts ranges of seq by
// rawLoadReaders connections at once, each range held whole until the
// ranges before it are passed on (at most rawLoadAhead ranges read
// ahead), so that the server produces the rows on several cores while
// this process copies them into the index. Ranges read at different
// moments are consistent with the change feed as one read is: the
// version was read before any of them, and every change committed after
// it is applied again from the feed.
const (
	rawLoadParts   = 16
	rawLoadReaders = 2
	rawLoadAhead   = 3
)

// rawRow is one search row as read: its values in text format, all in
// one allocation.
type rawRow [15][]byte

// eachRawSearchRow is EachSearchRow through store.DB.EachRawRow
// (PostgreSQL): the values as the driver read them, with no string or
// []byte made per value by database/sql (which was a third of the load's
// CPU), the numbers parsed from their text, read in parallel ranges.
func (ns *Store) eachRawSearchRow(ctx context.Context, cols string, fn func(*niche.SearchRow) error) error {
	var lo, hi sql.NullInt64
	if err := ns.db.QueryRow(ctx, `SELECT min(seq), max(seq) FROM niche_evaluations WHERE status = 'published'`).Scan(&lo, &hi); err != nil {
		return fmt.Errorf("store: search rows: %w", err)
	}
	if !lo.Valid {
		return nil
	}
	span := (hi.Int64-lo.Int64)/rawLoadParts + 1
	query := `SELECT ` + cols + ` FROM niche_evaluations e WHERE e.status = 'published' AND e.seq >= ? AND e.seq < ? ORDER BY e.seq`
	ctx, cancel := context.WithCancel(ctx)
	parts := make([]chan []rawRow, rawLoadParts)
	for i := range parts {
		parts[i] = make(chan []rawRow, 1)
	}
	errs := make(chan error, rawLoadReaders)
	ahead := make(chan struct{}, rawLoadAhead)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range rawLoadReaders {
		wg.Go(func() {
			for {
				select {
				case ahead <- struct{}{}:
				case <-ctx.Done():
					return
				}
				i := next.Add(1) - 1
				if i >= rawLoadParts {
					return
				}
				from := lo.Int64 + i*span
				var rows []rawRow
				err := ns.db.EachRawRow(ctx, query, []any{from, from + span}, func(v [][]byte) error {
					if len(v) != len(rawRow{}) {
						return fmt.Errorf("%d columns", len(v))
					}
					n := 0
					for _, b := range v {
						n += len(b)
					}
					buf := make([]byte, 0, n)
					var r rawRow
					for j, b := range v {
						buf = append(buf, b...)
						r[j] = buf[len(buf)-len(b):]
					}
					rows = append(rows, r)
					return nil
				})
				if err != nil {
					errs <- err
					cancel()
					return
				}
				parts[i] <- rows
			}
		})
	}
	defer func() {
		cancel() // readers still waiting to read ahead stop
		wg.Wait()
	}()
	var r niche.SearchRow
	l := &r.Listing
	for _, part := range parts {
		var rows []rawRow
		select {
		case rows = <-part:
		case err := <-errs:
			return fmt.Errorf("store: search rows: %w", err)
		case <-ctx.Done():
			select {
			case err := <-errs:
				return fmt.Errorf("store: search rows: %w", err)
			default:
			}
			return ctx.Err()
		}
		for k := range rows {
			v := &rows[k]
			var nums [4]int64 // score, updated_at, seq, signal_count
			for i, c := range [4]int{1, 2, 11, 14} {
				n, ok := parseInt(v[c])
				if !ok {
					return fmt.Errorf("store: search rows: column %d: %q is not an integer", c+1, v[c])
				}
				nums[i] = n
			}
			s := func(i int) string { return unsafe.String(unsafe.SliceData(v[i]), len(v[i])) }
			r.ID, r.Score, r.UpdatedAt, r.Seq = s(0), int(nums[0]), store.FromMicros(nums[1]), nums[2]
			r.Title, r.Body, r.Extra = s(3), s(4), s(5)
			l.ID, l.Title, l.Problem, l.Buyer, l.Category, l.ScoreVersion = r.ID, s(6), s(7), s(8), s(9), s(10)
			l.Score, l.SignalCount = r.Score, int(nums[3])
			r.CategoryKey, r.Preview = s(12), s(13)
			if err := fn(&r); err != nil {
				return err
			}
			rows[k] = rawRow{} // the index has its own copy
		}
		<-ahead
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
