package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	evals := make([][]any, 0, len(ws))
	var links, revs, opRows [][]any
	terms := map[string]int{}
	for _, w := range ws {
		r := &w.Record
		sids, err := json.Marshal(r.SignalIDs)
		if err != nil {
			return err
		}
		weights, err := json.Marshal(r.ScoreWeights)
		if err != nil {
			return err
		}
		state, err := json.Marshal(r)
		if err != nil {
			return err
		}
		st, sp, sb, sc := db.searchColumns(r)
		if r.Status == niche.StatusPublished {
			addTerms(terms, 1, st, sp, sb, sc)
		}
		distinct := slices.Compact(slices.Sorted(slices.Values(r.SignalIDs)))
		d := r.Dimensions
		evals = append(evals, []any{r.ID, string(r.Status), int64(r.Revision), r.Title, r.Problem, r.Buyer, r.Category,
			r.CategoryKey(), r.SolutionHypothesis, r.EvaluationNotes, int64(d.Pain), int64(d.Frequency),
			int64(d.WillingnessToPay), int64(d.ReachableBuyers), int64(d.Feasibility), int64(d.CompetitionGap),
			string(sids), int64(r.Score), r.ScoreVersion, string(weights), st, sp, sb, sc, toMicros(r.CreatedAt),
			toMicros(r.UpdatedAt), toMicros(r.PublishedAt), rationaleJSON(r), toMicros(r.ReviewedAt), r.ReviewedBy,
			int64(len(distinct))})
		for _, sid := range distinct {
			links = append(links, []any{sid, r.ID})
		}
		revs = append(revs, []any{r.ID, int64(r.Revision), w.Action, w.Actor, w.Reason, w.OperationID, toMicros(w.At), string(state)})
		opRows = append(opRows, []any{w.OperationID, w.RequestHash, r.ID, int64(r.Revision), toMicros(w.At)})
	}
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

// bulkInsert writes rows into table: COPY where the driver has it, else
// one prepared INSERT per row (in SQLite's transaction, as fast as a
// multi-row statement and without its variable limit).
func (db *DB) bulkInsert(ctx context.Context, tx *Tx, conn *sql.Conn, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if db.drv.CopyFrom != nil {
		return db.drv.CopyFrom(ctx, conn, table, cols, rows)
	}
	q := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES (` + placeholders(len(cols)) + `)`
	stmt, err := conn.PrepareContext(ctx, db.rebind(q))
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, r := range rows {
		if _, err := stmt.ExecContext(ctx, r...); err != nil {
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
