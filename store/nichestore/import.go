package nichestore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
)

// This file is the bulk creation of evaluations (niche.BulkCreator), the
// store's half of niche.Engine.Import: a batch of creations in one
// transaction, written with COPY on PostgreSQL (Driver.CopyFrom; the
// search vectors built in Go, tsvector.go, rather than by the server) and
// with prepared statements on SQLite, with the invariants of ApplyWrite —
// the linked signals locked and checked at commit, operations recorded,
// links, signal counts (set at insert: every linked signal was just
// checked not rejected), the revision log, niche_terms and the accepted
// pending signals — and the change feed's entries, the full-text index
// and niche_search written by the triggers as for any other write (on
// SQLite by statements doing their work once per batch:
// import_sqlite.go).
//
// The revision log entries of a bulk creation hold no state (an empty
// state column): the state of an evaluation's revision 1 is its row for as
// long as the row is at revision 1, and the first write that changes the
// row writes it into the entry first (keepRevisionState), in the same
// transaction; reads of an entry without state read the row
// (revisionState). The state was a third of what an import wrote
// (a copy of the whole evaluation as JSON, about 2 kB).

var _ niche.BulkCreator = (*Store)(nil)

// ErrBulkConflict is returned by CreateEvaluations when an operation of
// the batch was recorded meanwhile (a concurrent import): nothing of the
// batch is written; the engine then creates its drafts one by one.
var ErrBulkConflict = errors.New("store: an operation of the batch is already recorded")

// Operations implements niche.BulkCreator: the recorded operations among
// ids, with the evaluation each created and its current status.
func (ns *Store) Operations(ctx context.Context, ids []string) (map[string]niche.OperationRef, error) {
	out := make(map[string]niche.OperationRef, len(ids))
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		rows, err := ns.db.Query(ctx, `SELECT o.operation_id, o.request_hash, o.niche_id, coalesce(e.status, '')
			FROM niche_operations o LEFT JOIN niche_evaluations e ON e.id = o.niche_id
			WHERE o.operation_id IN (`+store.Placeholders(len(chunk))+`)`, store.Args(chunk)...)
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
// niche_evaluations (signal_count included); on PostgreSQL pgEvalBulkCols,
// with the search vectors (tsvector.go).
var evalBulkCols = []string{"id", "status", "revision", "title", "problem", "buyer", "category", "category_key",
	"solution_hypothesis", "evaluation_notes", "pain", "frequency", "willingness_to_pay", "reachable_buyers",
	"feasibility", "competition_gap", "signal_ids", "score", "score_version", "score_weights", "st", "sp", "sb", "sc",
	"created_at", "updated_at", "published_at", "rationale", "reviewed_at", "reviewed_by", "signal_count"}

var pgEvalBulkCols = append(slices.Clip(evalBulkCols), "tsv", "tsp")

// CreateEvaluations implements niche.BulkCreator: every write of ws (all
// creations, with CheckSignals) in one transaction, all or none. A linked
// signal unknown or rejected at commit fails the batch with a
// *niche.SignalRefError, an operation already recorded with
// ErrBulkConflict.
func (ns *Store) CreateEvaluations(ctx context.Context, ws []niche.Write) error {
	if len(ws) == 0 {
		return nil
	}
	p, err := ns.PrepareEvaluations(ws)
	if err != nil {
		return err
	}
	return p.Write(ctx)
}

var _ niche.BulkPreparer = (*Store)(nil)

// preparedBatch is a batch's rows built by PrepareEvaluations.
type preparedBatch struct {
	ns                         *Store
	linked                     []string
	evals, links, revs, opRows [][]any
	ws                         []niche.Write
	terms                      map[string]int
}

// PrepareEvaluations implements niche.BulkPreparer: the rows
// CreateEvaluations writes for ws, built on up to four cores.
func (ns *Store) PrepareEvaluations(ws []niche.Write) (niche.PreparedBatch, error) {
	var linked []string
	for _, w := range ws {
		if w.OperationID == "" || w.ExpectedRevision != 0 || w.Record.Revision != 1 {
			return nil, errors.New("store: CreateEvaluations takes creations with an operation id")
		}
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
	// Each core counts the words of its published evaluations
	// (niche_terms), merged below.
	counts := make([]termCounter, workers)
	for k := range workers {
		counts[k].m = map[string]*termCount{}
		wg.Go(func() {
			for i := k; i < len(ws); i += workers {
				if built[i], errs[k] = ns.bulkRowsOf(&ws[i]); errs[k] != nil {
					return
				}
				if b := &built[i]; b.published {
					counts[k].add(b)
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	evals := make([][]any, 0, len(ws))
	var links, revs, opRows [][]any
	for _, b := range built {
		evals, revs, opRows = append(evals, b.eval), append(revs, b.rev), append(opRows, b.op)
		links = append(links, b.links...)
	}
	terms := map[string]int{}
	for _, c := range counts {
		for w, n := range c.m {
			terms[w] += n.n
		}
		terms[""] += int(c.docs) // as store.AddTerms counts
	}
	// Links in key order too (niche_links is keyed by signal).
	slices.SortFunc(links, func(a, b []any) int {
		return cmp.Or(strings.Compare(a[0].(string), b[0].(string)), strings.Compare(a[1].(string), b[1].(string)))
	})
	return &preparedBatch{ns: ns, linked: linked, evals: evals, links: links, revs: revs, opRows: opRows, ws: ws, terms: terms}, nil
}

// Write implements niche.PreparedBatch: the batch in one transaction.
func (p *preparedBatch) Write(ctx context.Context) error {
	ns, linked, evals, links, revs, opRows, ws, terms := p.ns, p.linked, p.evals, p.links, p.revs, p.opRows, p.ws, p.terms
	err := ns.db.InBulkTx(ctx, func(tx *store.Tx) error {
		// Operations first: a concurrent import of the same file waits
		// here for this one (the unique key), then finds them recorded.
		if err := tx.InsertRowsOrRollback(ctx, "niche_operations",
			[]string{"operation_id", "request_hash", "niche_id", "revision", "created_at"}, opRows); err != nil {
			if ns.db.IsUniqueViolation(err) {
				return ErrBulkConflict
			}
			return err
		}
		if err := checkLinkable(ctx, tx, linked); err != nil {
			return err
		}
		var err error
		if ns.db.Dialect() == store.Postgres {
			err = tx.InsertRows(ctx, "niche_evaluations", pgEvalBulkCols, evals)
		} else {
			err = insertEvaluationsSQLite(ctx, tx, evals)
		}
		if err != nil {
			return err
		}
		if err := tx.InsertRowsOrRollback(ctx, "niche_links", []string{"signal_id", "niche_id"}, links); err != nil {
			return err
		}
		if err := tx.InsertRowsOrRollback(ctx, "niche_revisions",
			[]string{"niche_id", "revision", "action", "actor", "reason", "operation_id", "at", "state"}, revs); err != nil {
			return err
		}
		for _, w := range ws {
			if err := acceptSignals(ctx, tx, w, &w.Record); err != nil {
				return err
			}
		}
		return tx.ApplyTerms(ctx, terms)
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrBulkConflict), errors.Is(err, niche.ErrSignalRefs):
		return err
	}
	return fmt.Errorf("store: create evaluations: %w", err)
}

// termCounter counts, for each word, the evaluations having it, as
// store.AddTerms does, with one map look-up per word.
type termCounter struct {
	m    map[string]*termCount
	docs int32
}

type termCount struct {
	n    int
	last int32 // the last evaluation counted (termCounter.docs then)
}

// add counts the distinct words of b's search text.
func (c *termCounter) add(b *bulkRows) {
	c.docs++
	count := func(w string) {
		t := c.m[w]
		if t == nil {
			t = &termCount{}
			c.m[w] = t
		}
		if t.last != c.docs {
			t.last = c.docs
			t.n++
		}
	}
	if b.words != nil {
		for _, w := range b.words {
			count(w)
		}
		return
	}
	for _, f := range b.text {
		for w := range strings.FieldsSeq(f) {
			count(w)
		}
	}
}

// bulkRows are the rows one creation writes.
type bulkRows struct {
	eval, rev, op []any
	links         [][]any
	text          []string // st, sp, sb, sc
	words         []string // their distinct words, when known (else nil)
	published     bool
}

// bulkRowsOf builds the rows of creation w.
func (ns *Store) bulkRowsOf(w *niche.Write) (bulkRows, error) {
	r := &w.Record
	sids, err := json.Marshal(r.SignalIDs)
	if err != nil {
		return bulkRows{}, err
	}
	weights, err := json.Marshal(r.ScoreWeights)
	if err != nil {
		return bulkRows{}, err
	}
	st, sp, sb, sc := ns.db.SearchColumns(r)
	distinct := slices.Compact(slices.Sorted(slices.Values(r.SignalIDs)))
	d := r.Dimensions
	b := bulkRows{text: []string{st, sp, sb, sc}, published: r.Status == niche.StatusPublished}
	b.eval = []any{r.ID, string(r.Status), int64(r.Revision), r.Title, r.Problem, r.Buyer, r.Category,
		r.CategoryKey(), r.SolutionHypothesis, r.EvaluationNotes, int64(d.Pain), int64(d.Frequency),
		int64(d.WillingnessToPay), int64(d.ReachableBuyers), int64(d.Feasibility), int64(d.CompetitionGap),
		string(sids), int64(r.Score), r.ScoreVersion, string(weights), st, sp, sb, sc, store.ToMicros(r.CreatedAt),
		store.ToMicros(r.UpdatedAt), store.ToMicros(r.PublishedAt), rationaleJSON(r), store.ToMicros(r.ReviewedAt), r.ReviewedBy,
		int64(len(distinct))}
	if ns.db.Dialect() == store.Postgres {
		// The search vectors, or NULL for the trigger to compute them.
		var tsv, tsp any
		if v, p, ok := searchVectors(st, sp, sb, sc); ok {
			tsv, tsp = v, p
			b.words = lexemes(v, p)
		}
		b.eval = append(b.eval, tsv, tsp)
	}
	for _, sid := range distinct {
		b.links = append(b.links, []any{sid, r.ID})
	}
	// The log entry holds no state: it is the row's until the row
	// changes (keepRevisionState).
	b.rev = []any{r.ID, int64(r.Revision), w.Action, w.Actor, w.Reason, w.OperationID, store.ToMicros(w.At), ""}
	b.op = []any{w.OperationID, w.RequestHash, r.ID, int64(r.Revision), store.ToMicros(w.At)}
	return b, nil
}
