package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/assaykit/assay/niche"
)

// This file is the bulk creation of evaluations (niche.BulkCreator), the
// store's half of niche.Engine.Import: a batch of creations in one
// transaction, written with COPY on PostgreSQL (Driver.CopyFrom) and
// with prepared statements on SQLite, with the invariants of ApplyWrite —
// the linked signals locked and checked at commit, operations recorded,
// links, signal counts (set at insert: every linked signal was just
// checked not rejected), the revision log, niche_terms and the accepted
// pending signals — and the change feed's entries written by its
// triggers as for any other write.

var _ niche.BulkCreator = (*DB)(nil)

// ErrBulkConflict is returned by CreateEvaluations when an operation of
// the batch was recorded meanwhile (a concurrent import): nothing of the
// batch is written; the engine then creates its drafts one by one.
var ErrBulkConflict = errors.New("store: an operation of the batch is already recorded")

// Operations implements niche.BulkCreator: the recorded operations among
// ids, with the evaluation each created and its current status.
func (db *DB) Operations(ctx context.Context, ids []string) (map[string]niche.OperationRef, error) {
	out := make(map[string]niche.OperationRef, len(ids))
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		rows, err := db.query(ctx, `SELECT o.operation_id, o.request_hash, o.niche_id, coalesce(e.status, '')
			FROM niche_operations o LEFT JOIN niche_evaluations e ON e.id = o.niche_id
			WHERE o.operation_id IN (`+placeholders(len(chunk))+`)`, anyArgs(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("store: operations: %w", err)
		}
		for rows.Next() {
			var id, status string
			var ref niche.OperationRef
			if err := rows.Scan(&id, &ref.RequestHash, &ref.NicheID, &status); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: operations: %w", err)
			}
			ref.Status = niche.Status(status)
			out[id] = ref
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("store: operations: %w", err)
		}
	}
	return out, nil
}

// evalBulkCols are the columns CreateEvaluations writes to
// niche_evaluations (signal_count included).
var evalBulkCols = []string{"id", "status", "revision", "title", "problem", "buyer", "category", "category_key",
	"solution_hypothesis", "evaluation_notes", "pain", "frequency", "willingness_to_pay", "reachable_buyers",
	"feasibility", "competition_gap", "signal_ids", "score", "score_version", "score_weights", "st", "sp", "sb", "sc",
	"created_at", "updated_at", "published_at", "rationale", "reviewed_at", "reviewed_by", "signal_count"}

// CreateEvaluations implements niche.BulkCreator: every write of ws (all
// creations, with CheckSignals) in one transaction, all or none. A linked
// signal unknown or rejected at commit fails the batch with a
// *niche.SignalRefError, an operation already recorded with
// ErrBulkConflict.
func (db *DB) CreateEvaluations(ctx context.Context, ws []niche.Write) error {
	if len(ws) == 0 {
		return nil
	}
	ops := make([]string, len(ws))
	var linked []string
	for i, w := range ws {
		if w.OperationID == "" || w.ExpectedRevision != 0 || w.Record.Revision != 1 {
			return errors.New("store: CreateEvaluations takes creations with an operation id")
		}
		ops[i] = w.OperationID
		linked = append(linked, w.Record.SignalIDs...)
	}
	slices.Sort(linked)
	linked = slices.Compact(linked)
	// The writes in id order, so that the rows reach the indexes of ids
	// in order; each one's rows are built on a core of its own.
	ws = slices.Clone(ws)
	slices.SortFunc(ws, func(a, b niche.Write) int { return strings.Compare(a.Record.ID, b.Record.ID) })
	built := make([]bulkRows, len(ws))
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), 4)
	errs := make([]error, workers)
	for k := range workers {
		wg.Go(func() {
			for i := k; i < len(ws); i += workers {
				if built[i], errs[k] = db.bulkRowsOf(&ws[i]); errs[k] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	evals := make([][]any, 0, len(ws))
	var links, revs, opRows [][]any
	terms := map[string]int{}
	for _, b := range built {
		evals, revs, opRows = append(evals, b.eval), append(revs, b.rev), append(opRows, b.op)
		links = append(links, b.links...)
		if b.published {
			addTerms(terms, 1, b.text...)
		}
	}
	// Links in key order too (niche_links is keyed by signal).
	slices.SortFunc(links, func(a, b []any) int {
		return cmp.Or(strings.Compare(a[0].(string), b[0].(string)), strings.Compare(a[1].(string), b[1].(string)))
	})
	err := db.inConnTx(ctx, func(tx *Tx, conn *sql.Conn) error {
		// Operations first: a concurrent import of the same file waits
		// here for this one (the unique key), then finds them recorded.
		if err := db.bulkInsert(ctx, tx, conn, "niche_operations",
			[]string{"operation_id", "request_hash", "niche_id", "revision", "created_at"}, opRows); err != nil {
			if db.isUniqueViolation(err) {
				return ErrBulkConflict
			}
			return err
		}
		if err := checkLinkable(ctx, tx, linked); err != nil {
			return err
		}
		if err := db.bulkInsert(ctx, tx, conn, "niche_evaluations", evalBulkCols, evals); err != nil {
			return err
		}
		if err := db.bulkInsert(ctx, tx, conn, "niche_links", []string{"signal_id", "niche_id"}, links); err != nil {
			return err
		}
		if err := db.bulkInsert(ctx, tx, conn, "niche_revisions",
			[]string{"niche_id", "revision", "action", "actor", "reason", "operation_id", "at", "state"}, revs); err != nil {
			return err
		}
		for _, w := range ws {
			if err := acceptSignals(ctx, tx, w, &w.Record); err != nil {
				return err
			}
		}
		return applyTerms(ctx, tx, terms)
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrBulkConflict), errors.Is(err, niche.ErrSignalRefs):
		return err
	}
	return fmt.Errorf("store: create evaluations: %w", err)
}

// sqliteMaxVars is SQLite's limit of variables in one statement.
const sqliteMaxVars = 32766

// bulkRows are the rows one creation writes.
type bulkRows struct {
	eval, rev, op []any
	links         [][]any
	text          []string // st, sp, sb, sc
	published     bool
}

// bulkRowsOf builds the rows of creation w.
func (db *DB) bulkRowsOf(w *niche.Write) (bulkRows, error) {
	r := &w.Record
	sids, err := json.Marshal(r.SignalIDs)
	if err != nil {
		return bulkRows{}, err
	}
	weights, err := json.Marshal(r.ScoreWeights)
	if err != nil {
		return bulkRows{}, err
	}
	state, err := json.Marshal(r)
	if err != nil {
		return bulkRows{}, err
	}
	st, sp, sb, sc := db.searchColumns(r)
	distinct := slices.Compact(slices.Sorted(slices.Values(r.SignalIDs)))
	d := r.Dimensions
	b := bulkRows{text: []string{st, sp, sb, sc}, published: r.Status == niche.StatusPublished}
	b.eval = []any{r.ID, string(r.Status), int64(r.Revision), r.Title, r.Problem, r.Buyer, r.Category,
		r.CategoryKey(), r.SolutionHypothesis, r.EvaluationNotes, int64(d.Pain), int64(d.Frequency),
		int64(d.WillingnessToPay), int64(d.ReachableBuyers), int64(d.Feasibility), int64(d.CompetitionGap),
		string(sids), int64(r.Score), r.ScoreVersion, string(weights), st, sp, sb, sc, toMicros(r.CreatedAt),
		toMicros(r.UpdatedAt), toMicros(r.PublishedAt), rationaleJSON(r), toMicros(r.ReviewedAt), r.ReviewedBy,
		int64(len(distinct))}
	for _, sid := range distinct {
		b.links = append(b.links, []any{sid, r.ID})
	}
	b.rev = []any{r.ID, int64(r.Revision), w.Action, w.Actor, w.Reason, w.OperationID, toMicros(w.At), string(state)}
	b.op = []any{w.OperationID, w.RequestHash, r.ID, int64(r.Revision), toMicros(w.At)}
	return b, nil
}

// bulkInsert writes rows into table: COPY where the driver has it, else
// multi-row INSERTs of as many rows as SQLite's variable limit allows.
// One statement per thousand rows, rather than one per row, matters for
// the full-text index: FTS5 writes its pending terms to disk at every
// statement's savepoint, so row by row it wrote one tiny segment per
// evaluation and spent its time merging them.
func (db *DB) bulkInsert(ctx context.Context, tx *Tx, conn *sql.Conn, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if db.drv.CopyFrom != nil {
		return db.drv.CopyFrom(ctx, conn, table, cols, rows)
	}
	per := max(sqliteMaxVars/len(cols), 1)
	row := "(" + placeholders(len(cols)) + ")"
	for start := 0; start < len(rows); start += per {
		part := rows[start:min(start+per, len(rows))]
		args := make([]any, 0, len(part)*len(cols))
		for _, r := range part {
			args = append(args, r...)
		}
		q := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(row+", ", len(part)), ", ")
		if _, err := tx.exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// inConnTx runs fn in a write transaction on one connection of the writer
// pool, begun and ended with statements (so that a driver-level COPY on
// the connection is part of it), and commits it if fn returns nil.
func (db *DB) inConnTx(ctx context.Context, fn func(tx *Tx, conn *sql.Conn) error) (err error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: connection: %w", err)
	}
	defer conn.Close()
	begin := "BEGIN"
	if db.drv.Dialect == SQLite {
		begin = "BEGIN IMMEDIATE"
		// A batch writes tens of megabytes: a page cache that holds them
		// keeps SQLite from spilling pages to the WAL in mid-transaction
		// (and writing them again at the commit), and checkpoints every
		// 400 MB of WAL rather than every 4 MB copy each hot page of the
		// indexes into the database file less often (a sixth less CPU
		// for a 30,000-draft import).
		var size, auto int64
		if err := conn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&size); err == nil {
			if _, err := conn.ExecContext(ctx, "PRAGMA cache_size = -262144"); err == nil {
				defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA cache_size = %d", size)) //nolint:errcheck // best effort
			}
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err == nil {
			if _, err := conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 100000"); err == nil {
				defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", auto)) //nolint:errcheck // best effort
			}
		}
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if err = fn(&Tx{db: db, tx: conn}, conn); err != nil {
		return err
	}
	if _, err = conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}
