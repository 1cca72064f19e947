package nichestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/store"

	"github.com/assaykit/assay/niche"
)

// This file implements niche.Store; the search itself is in
// search.go. Each evaluation row keeps its normalised text
// (niche.SearchFields) in st (title), sp (preview text: teaser, buyer,
// category), sb (problem, buyer, category) and sc (solution hypothesis).
// Preview-level queries match st and sp only, full-level ones st, sb and
// sc. Full-text search differs per dialect:
//   - SQLite: an external-content FTS5 table (niche_fts) over st/sp/sb/sc
//     of published rows, kept in step by triggers, tokenizer unicode61
//     with remove_diacritics 2; a query's level is an FTS5 column filter
//     ({st sp} or {st sb sc}). niche_search (migrations 0007, 0009) is a
//     compact copy of what a search reads of each published row (ranking
//     columns, normalised text, listing), kept by triggers with
//     niche_fts's rowid.
//   - PostgreSQL: tsvectors (simple configuration), tsv over st/sb/sc and
//     tsp over st/sp, each with a partial GIN index, computed by a trigger
//     on every write that changes the text (migration 0036; generated
//     columns before) except the bulk import's, which sends them built in
//     Go (tsvector.go); matching with plainto_tsquery('simple', …) of the
//     normalised words.
//
// Both index the text the store's niche.Language produced (normalised and
// stemmed in Go; Options.SearchLanguage, English by default, re-indexed at
// Open when it changes: store/niche_text.go), so a query's matches are the
// same on both; the engine does the final ordering, and the window of
// a broad query is ranked by the same formula (niche.Relevance) written
// in SQL. Both keep niche_terms, the number of published evaluations
// having each word, updated in the transactions that write evaluations;
// searches use it to plan (see search.go; the counts are kept by
// store.AddTerms and Tx.ApplyTerms).
//
// niche_links (migration 0008) holds each evaluation's linked signal ids
// as rows: moderation finds the evaluations linking a signal with it, and
// niche_evaluations.signal_count, the number of linked signals that are
// not rejected, is recounted from it in every transaction that changes
// links or a signal's state (countSignals).
//
// Public reads (lists, previews, free searches) read the listing columns
// only (niche.Listing), and the hot read statements are prepared once per
// SQLite connection (store.DB.CachedQuery).

var _ niche.Store = (*Store)(nil)

// signalInsertCols are the columns PutSignals writes; signalCols adds the
// capture (SetSignalSnapshots writes it).
const signalInsertCols = `id, origin, external_id, kind, source_url, source_domain, title, excerpt,
	observed_at, collected_at, license, attribution, engagement, state, moderation_note,
	moderated_by, moderated_at, created_at`

const signalCols = signalInsertCols + `, snapshot`

const evalCols = `id, status, revision, title, problem, buyer, category, solution_hypothesis,
	evaluation_notes, pain, frequency, willingness_to_pay, reachable_buyers, feasibility,
	competition_gap, signal_ids, score, score_version, score_weights, created_at, updated_at,
	published_at, rationale, reviewed_at, reviewed_by`

// listingCols are the columns of a niche.Listing (scanListing's order) of
// the niche_evaluations row aliased e, the signal count included.
const listingCols = `e.id, e.title, e.problem, e.buyer, e.category, e.score, e.score_version, e.signal_count`

// countSignals sets signal_count, the number of linked signals that are
// not rejected, of the evaluations the condition names. Every transaction
// that changes an evaluation's links or a signal's state runs it, so the
// stored count is never stale and lists read it without a join (counting
// at read time made a list page twice as slow).
func countSignals(ctx context.Context, tx *store.Tx, where string, args ...any) error {
	_, err := tx.Exec(ctx, `UPDATE niche_evaluations SET signal_count = (SELECT count(*) FROM niche_links l
		JOIN niche_signals s ON s.id = l.signal_id WHERE l.niche_id = niche_evaluations.id AND s.state <> 'rejected')
		WHERE `+where, args...)
	return err
}

func scanListing(sc scanner) (niche.Listing, error) {
	var l niche.Listing
	err := sc.Scan(&l.ID, &l.Title, &l.Problem, &l.Buyer, &l.Category, &l.Score, &l.ScoreVersion, &l.SignalCount)
	return l, err
}

type scanner interface{ Scan(dest ...any) error }

func scanSignal(sc scanner) (niche.Signal, error) {
	var s niche.Signal
	var kind, state, engagement, snap string
	var observed, collected, moderated, created int64
	err := sc.Scan(&s.ID, &s.Origin, &s.ExternalID, &kind, &s.SourceURL, &s.SourceDomain, &s.Title, &s.Excerpt,
		&observed, &collected, &s.License, &s.Attribution, &engagement, &state, &s.ModerationNote,
		&s.ModeratedBy, &moderated, &created, &snap)
	if err != nil {
		return s, err
	}
	if snap != "" {
		if err := json.Unmarshal([]byte(snap), &s.Snapshot); err != nil {
			return s, fmt.Errorf("store: signal %s snapshot: %w", s.ID, err)
		}
	}
	s.Kind, s.State = niche.SignalKind(kind), niche.SignalState(state)
	s.ObservedAt, s.CollectedAt, s.CreatedAt = store.FromMicros(observed), store.FromMicros(collected), store.FromMicros(created)
	if moderated != 0 {
		t := store.FromMicros(moderated)
		s.ModeratedAt = &t
	}
	if engagement != "" && engagement != "{}" {
		if err := json.Unmarshal([]byte(engagement), &s.Engagement); err != nil {
			return s, fmt.Errorf("store: signal %s engagement: %w", s.ID, err)
		}
	}
	return s, nil
}

func scanRecord(sc scanner) (*niche.Record, error) {
	var r niche.Record
	var status, signalIDs, weights, rationale string
	var created, updated, published, reviewed int64
	d := &r.Dimensions
	err := sc.Scan(&r.ID, &status, &r.Revision, &r.Title, &r.Problem, &r.Buyer, &r.Category, &r.SolutionHypothesis,
		&r.EvaluationNotes, &d.Pain, &d.Frequency, &d.WillingnessToPay, &d.ReachableBuyers, &d.Feasibility,
		&d.CompetitionGap, &signalIDs, &r.Score, &r.ScoreVersion, &weights, &created, &updated, &published,
		&rationale, &reviewed, &r.ReviewedBy)
	if err != nil {
		return nil, err
	}
	r.Status = niche.Status(status)
	r.CreatedAt, r.UpdatedAt, r.PublishedAt = store.FromMicros(created), store.FromMicros(updated), store.FromMicros(published)
	r.ReviewedAt = store.FromMicros(reviewed)
	if err := json.Unmarshal([]byte(rationale), &r.Rationale); err != nil {
		return nil, fmt.Errorf("store: niche %s rationale: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(signalIDs), &r.SignalIDs); err != nil {
		return nil, fmt.Errorf("store: niche %s signal ids: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(weights), &r.ScoreWeights); err != nil {
		return nil, fmt.Errorf("store: niche %s score weights: %w", r.ID, err)
	}
	return &r, nil
}

// ---- Signals ----

type signalConflict struct{}

func (signalConflict) Error() string { return "store: signal id conflict" }

// PutSignals implements niche.Store.
func (ns *Store) PutSignals(ctx context.Context, signals []niche.Signal) ([]niche.PutResult, error) {
	out := make([]niche.PutResult, len(signals))
	err := ns.db.InTx(ctx, func(tx *store.Tx) error {
		conflict := false
		for i, s := range signals {
			engagement := "{}"
			if len(s.Engagement) > 0 {
				b, err := json.Marshal(s.Engagement)
				if err != nil {
					return err
				}
				engagement = string(b)
			}
			var moderatedAt int64
			if s.ModeratedAt != nil {
				moderatedAt = store.ToMicros(*s.ModeratedAt)
			}
			res, err := tx.Exec(ctx, `INSERT INTO niche_signals (`+signalInsertCols+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				s.ID, s.Origin, s.ExternalID, string(s.Kind), s.SourceURL, s.SourceDomain, s.Title, s.Excerpt,
				store.ToMicros(s.ObservedAt), store.ToMicros(s.CollectedAt), s.License, s.Attribution, engagement, string(s.State),
				s.ModerationNote, s.ModeratedBy, moderatedAt, store.ToMicros(s.CreatedAt))
			if err != nil {
				return fmt.Errorf("store: put signal: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				s.Snapshot = nil // not stored here: SetSignalSnapshots records captures
				out[i] = niche.PutResult{Signal: s, Created: true}
				continue
			}
			stored, err := scanSignal(tx.QueryRow(ctx, `SELECT `+signalCols+` FROM niche_signals
				WHERE origin = ? AND external_id = ?`, s.Origin, s.ExternalID))
			switch {
			case errors.Is(err, sql.ErrNoRows):
				out[i] = niche.PutResult{Signal: s, Conflict: true}
				conflict = true
			case err != nil:
				return fmt.Errorf("store: put signal: %w", err)
			default:
				out[i] = niche.PutResult{Signal: stored}
			}
		}
		if conflict {
			return signalConflict{}
		}
		return nil
	})
	if errors.As(err, new(signalConflict)) {
		for i := range out {
			out[i].Created = false
		}
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Signals implements niche.Store.
func (ns *Store) Signals(ctx context.Context, ids []string) (map[string]niche.Signal, error) {
	out := make(map[string]niche.Signal, len(ids))
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		rows, err := ns.db.CachedQuery(ctx, `SELECT `+signalCols+` FROM niche_signals WHERE id IN (`+store.Placeholders(len(chunk))+`)`, store.Args(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("store: signals: %w", err)
		}
		for rows.Next() {
			s, err := scanSignal(rows)
			if err != nil {
				rows.Close()
				return nil, err
			}
			out[s.ID] = s
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("store: signals: %w", err)
		}
	}
	return out, nil
}

// ListSignals implements niche.Store.
func (ns *Store) ListSignals(ctx context.Context, f niche.SignalFilter) ([]niche.Signal, error) {
	q := `SELECT ` + signalCols + ` FROM niche_signals WHERE 1 = 1`
	var args []any
	if f.State != "" {
		q += ` AND state = ?`
		args = append(args, string(f.State))
	}
	if f.Origin != "" {
		q += ` AND origin = ?`
		args = append(args, f.Origin)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q += ` ORDER BY created_at DESC, id LIMIT ?`
	args = append(args, limit)
	rows, err := ns.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list signals: %w", err)
	}
	defer rows.Close()
	out := []niche.Signal{}
	for rows.Next() {
		s, err := scanSignal(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// ModerateSignal implements niche.Store. The signal's row is updated
// first, then the links are read: on PostgreSQL a write that links the
// signal with Write.CheckSignals holds the row's lock until it commits, so
// it is either listed here or sees the new state.
func (ns *Store) ModerateSignal(ctx context.Context, id string, m niche.Moderation) (*niche.Signal, []string, error) {
	var out niche.Signal
	var linked []string
	err := ns.db.InTx(ctx, func(tx *store.Tx) error {
		linked = nil
		res, err := tx.Exec(ctx, `UPDATE niche_signals SET state = ?, moderation_note = ?, moderated_by = ?, moderated_at = ?
			WHERE id = ?`, string(m.State), m.Note, m.Actor, store.ToMicros(m.At), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &niche.NotFoundError{What: "Signal", ID: id}
		}
		if out, err = scanSignal(tx.QueryRow(ctx, `SELECT `+signalCols+` FROM niche_signals WHERE id = ?`, id)); err != nil {
			return err
		}
		if err := countSignals(ctx, tx, `id IN (SELECT niche_id FROM niche_links WHERE signal_id = ?)`, id); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT niche_id FROM niche_links WHERE signal_id = ? ORDER BY niche_id`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var nid string
			if err := rows.Scan(&nid); err != nil {
				return err
			}
			linked = append(linked, nid)
		}
		return rows.Err()
	})
	if err != nil {
		if errors.Is(err, niche.ErrNotFound) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("store: moderate signal: %w", err)
	}
	return &out, linked, nil
}

// SignalStats implements niche.Store.
func (ns *Store) SignalStats(ctx context.Context) ([]niche.OriginStats, error) {
	rows, err := ns.db.Query(ctx, `SELECT origin, COUNT(*),
		SUM(CASE WHEN state = 'accepted' THEN 1 ELSE 0 END),
		SUM(CASE WHEN state = 'pending' THEN 1 ELSE 0 END),
		SUM(CASE WHEN state = 'rejected' THEN 1 ELSE 0 END),
		MAX(observed_at), MAX(collected_at)
		FROM niche_signals GROUP BY origin ORDER BY origin`)
	if err != nil {
		return nil, fmt.Errorf("store: signal stats: %w", err)
	}
	defer rows.Close()
	out := []niche.OriginStats{}
	for rows.Next() {
		var s niche.OriginStats
		var observed, collected int64
		if err := rows.Scan(&s.Origin, &s.Signals, &s.Accepted, &s.Pending, &s.Rejected, &observed, &collected); err != nil {
			return nil, err
		}
		if observed != 0 {
			t := store.FromMicros(observed)
			s.NewestObservedAt = &t
		}
		if collected != 0 {
			t := store.FromMicros(collected)
			s.LastCollectedAt = &t
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// RecordCollection implements niche.Store.
func (ns *Store) RecordCollection(ctx context.Context, c niche.Collection) error {
	_, err := ns.db.Exec(ctx, `INSERT INTO niche_collections (origin, started_at, finished_at, examined, added, duplicates, status)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, c.Origin, store.ToMicros(c.StartedAt), store.ToMicros(c.FinishedAt), c.Examined, c.Added, c.Duplicates, c.Status)
	if err != nil {
		return fmt.Errorf("store: record collection: %w", err)
	}
	return nil
}

// LastCollections implements niche.Store.
func (ns *Store) LastCollections(ctx context.Context) ([]niche.Collection, error) {
	rows, err := ns.db.Query(ctx, `SELECT c.origin, c.started_at, c.finished_at, c.examined, c.added, c.duplicates, c.status
		FROM niche_collections c
		WHERE c.finished_at = (SELECT MAX(finished_at) FROM niche_collections m WHERE m.origin = c.origin)
		ORDER BY c.origin, c.started_at DESC`)
	if err != nil {
		return nil, fmt.Errorf("store: last collections: %w", err)
	}
	defer rows.Close()
	out := []niche.Collection{}
	for rows.Next() {
		var c niche.Collection
		var started, finished int64
		if err := rows.Scan(&c.Origin, &started, &finished, &c.Examined, &c.Added, &c.Duplicates, &c.Status); err != nil {
			return nil, err
		}
		if len(out) > 0 && out[len(out)-1].Origin == c.Origin {
			continue
		}
		c.StartedAt, c.FinishedAt = store.FromMicros(started), store.FromMicros(finished)
		out = append(out, c)
	}
	return out, rows.Err()
}

// ---- Evaluations ----

// checkLinkable locks the signals ids (in id order, against concurrent
// moderation, on PostgreSQL) and returns a *niche.SignalRefError naming
// the unknown and rejected ones.
func checkLinkable(ctx context.Context, tx *store.Tx, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT id, state FROM niche_signals WHERE id IN (`+store.Placeholders(len(ids))+`) ORDER BY id`+
		tx.DB().ForUpdate(), store.Args(ids)...)
	if err != nil {
		return err
	}
	state := map[string]string{}
	for rows.Next() {
		var id, st string
		if err := rows.Scan(&id, &st); err != nil {
			rows.Close()
			return err
		}
		state[id] = st
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var refErr niche.SignalRefError
	for _, id := range ids {
		switch st, ok := state[id]; {
		case !ok:
			refErr.Unknown = append(refErr.Unknown, id)
		case st == string(niche.StateRejected):
			refErr.Rejected = append(refErr.Rejected, id)
		}
	}
	if len(refErr.Unknown)+len(refErr.Rejected) > 0 {
		return &refErr
	}
	return nil
}

// writeLinks replaces the niche_links rows of evaluation id and counts
// them.
func writeLinks(ctx context.Context, tx *store.Tx, id string, signalIDs []string, replace bool) error {
	if replace {
		if _, err := tx.Exec(ctx, `DELETE FROM niche_links WHERE niche_id = ?`, id); err != nil {
			return err
		}
	}
	const chunk = 400
	for start := 0; start < len(signalIDs); start += chunk {
		part := signalIDs[start:min(start+chunk, len(signalIDs))]
		args := make([]any, 0, 2*len(part))
		for _, sid := range part {
			args = append(args, sid, id)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO niche_links (signal_id, niche_id) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?), ", len(part)), ", ")+` ON CONFLICT DO NOTHING`, args...); err != nil {
			return err
		}
	}
	return countSignals(ctx, tx, `id = ?`, id)
}

// ApplyWrite implements niche.Store. The operation row is inserted first,
// so a concurrent write of the same operation waits for this one and then
// replays it; the evaluation row is updated only if its revision is the
// expected one, so concurrent revisions never overwrite each other.
func (ns *Store) ApplyWrite(ctx context.Context, w niche.Write) (*niche.Record, bool, error) {
	if w.OperationID == "" {
		return nil, false, errors.New("store: ApplyWrite needs an operation id")
	}
	if w.Record.Revision != w.ExpectedRevision+1 {
		return nil, false, fmt.Errorf("store: ApplyWrite: record revision %d does not follow %d", w.Record.Revision, w.ExpectedRevision)
	}
	var out *niche.Record
	replayed := false
	err := ns.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = operationState(ctx, tx, w)
		if replayed = out != nil; replayed || err != nil {
			return err
		}
		out, err = writeRevision(ctx, tx, w)
		return err
	})
	if err == nil {
		return out, replayed, nil
	}
	return ns.applyWriteErr(ctx, w, err)
}

// operationState returns the state w's operation left when it was
// recorded before (nil when it was not), or ErrOperationConflict when it
// was recorded with another request hash.
func operationState(ctx context.Context, tx *store.Tx, w niche.Write) (*niche.Record, error) {
	var hash, nid string
	var rev int
	err := tx.QueryRow(ctx, `SELECT request_hash, niche_id, revision FROM niche_operations WHERE operation_id = ?`,
		w.OperationID).Scan(&hash, &nid, &rev)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	case hash != w.RequestHash:
		return nil, niche.ErrOperationConflict
	}
	return revisionState(ctx, tx.QueryRow, nid, rev)
}

// writeRevision writes w in tx: the operation, the evaluation row, its
// links and search terms, the revision log entry and the accepted
// signals.
func writeRevision(ctx context.Context, tx *store.Tx, w niche.Write) (*niche.Record, error) {
	r := w.Record
	if w.CheckSignals {
		// Before the evaluation's row: moderation locks signals first
		// too.
		if err := checkLinkable(ctx, tx, r.SignalIDs); err != nil {
			return nil, err
		}
	}
	terms := map[string]int{}
	if w.ExpectedRevision > 0 {
		if err := removePublishedTerms(ctx, tx, r.ID, terms); err != nil {
			return nil, err
		}
		if err := keepRevisionState(ctx, tx, r.ID, w.ExpectedRevision); err != nil {
			return nil, err
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO niche_operations (operation_id, request_hash, niche_id, revision, created_at)
		VALUES (?, ?, ?, ?, ?)`, w.OperationID, w.RequestHash, r.ID, r.Revision, store.ToMicros(w.At)); err != nil {
		return nil, err
	}
	signalIDs, err := json.Marshal(r.SignalIDs)
	if err != nil {
		return nil, err
	}
	weights, err := json.Marshal(r.ScoreWeights)
	if err != nil {
		return nil, err
	}
	if w.ExpectedRevision == 0 {
		err = insertEvaluation(ctx, tx, &r, string(signalIDs), string(weights))
	} else {
		err = updateEvaluation(ctx, tx, &r, w.ExpectedRevision, string(signalIDs), string(weights))
	}
	if err != nil {
		return nil, err
	}
	if err := writeLinks(ctx, tx, r.ID, r.SignalIDs, w.ExpectedRevision > 0); err != nil {
		return nil, err
	}
	if r.Status == niche.StatusPublished {
		st, sp, sb, sc := tx.DB().SearchColumns(&r)
		store.AddTerms(terms, 1, st, sp, sb, sc)
	}
	if err := tx.ApplyTerms(ctx, terms); err != nil {
		return nil, err
	}
	if err := logRevision(ctx, tx, w, &r); err != nil {
		return nil, err
	}
	return &r, acceptSignals(ctx, tx, w, &r)
}

// removePublishedTerms subtracts from terms the words of evaluation id
// when it is published now (its text is about to change).
func removePublishedTerms(ctx context.Context, tx *store.Tx, id string, terms map[string]int) error {
	var status, st, sp, sb, sc string
	err := tx.QueryRow(ctx, `SELECT status, st, sp, sb, sc FROM niche_evaluations WHERE id = ?`, id).Scan(&status, &st, &sp, &sb, &sc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err == nil && status == string(niche.StatusPublished) {
		store.AddTerms(terms, -1, st, sp, sb, sc)
	}
	return err
}

// updateEvaluation replaces the row of r if its revision is expected, and
// otherwise reports a *niche.RevisionConflictError or a
// *niche.NotFoundError.
func updateEvaluation(ctx context.Context, tx *store.Tx, r *niche.Record, expected int, signalIDs, weights string) error {
	st, sp, sb, sc := tx.DB().SearchColumns(r)
	d := r.Dimensions
	res, err := tx.Exec(ctx, `UPDATE niche_evaluations SET status = ?, revision = ?, title = ?, problem = ?,
		buyer = ?, category = ?, category_key = ?, solution_hypothesis = ?, evaluation_notes = ?, pain = ?,
		frequency = ?, willingness_to_pay = ?, reachable_buyers = ?, feasibility = ?, competition_gap = ?,
		signal_ids = ?, score = ?, score_version = ?, score_weights = ?, st = ?, sp = ?, sb = ?, sc = ?,
		updated_at = ?, published_at = ?, rationale = ?, reviewed_at = ?, reviewed_by = ?
		WHERE id = ? AND revision = ?`,
		string(r.Status), r.Revision, r.Title, r.Problem, r.Buyer, r.Category, r.CategoryKey(),
		r.SolutionHypothesis, r.EvaluationNotes, d.Pain, d.Frequency, d.WillingnessToPay, d.ReachableBuyers,
		d.Feasibility, d.CompetitionGap, signalIDs, r.Score, r.ScoreVersion, weights, st, sp, sb, sc,
		store.ToMicros(r.UpdatedAt), store.ToMicros(r.PublishedAt), rationaleJSON(r), store.ToMicros(r.ReviewedAt), r.ReviewedBy,
		r.ID, expected)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	var cur int
	err = tx.QueryRow(ctx, `SELECT revision FROM niche_evaluations WHERE id = ?`, r.ID).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return &niche.NotFoundError{What: "Niche", ID: r.ID}
	}
	if err != nil {
		return err
	}
	return &niche.RevisionConflictError{ID: r.ID, Expected: expected, Current: cur}
}

// keepRevisionState writes the state of revision rev of evaluation id
// into its log entry when the entry holds none (a bulk creation's, whose
// state is the evaluation's row: see revisionState), before the row
// changes. A row already at another revision is left to the update,
// which reports the conflict.
func keepRevisionState(ctx context.Context, tx *store.Tx, id string, rev int) error {
	var none bool
	err := tx.CachedQueryRow(ctx, `SELECT state = '' FROM niche_revisions WHERE niche_id = ? AND revision = ?`, id, rev).Scan(&none)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !none) {
		return nil
	}
	if err != nil {
		return err
	}
	cur, err := scanRecord(tx.QueryRow(ctx, `SELECT `+evalCols+` FROM niche_evaluations WHERE id = ? AND revision = ?`, id, rev))
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	state, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE niche_revisions SET state = ? WHERE niche_id = ? AND revision = ? AND state = ''`,
		string(state), id, rev)
	return err
}

// logRevision appends the revision w writes (the state r) to the log.
func logRevision(ctx context.Context, tx *store.Tx, w niche.Write, r *niche.Record) error {
	state, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO niche_revisions (niche_id, revision, action, actor, reason, operation_id, at, state)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.Revision, w.Action, w.Actor, w.Reason, w.OperationID,
		store.ToMicros(w.At), string(state))
	return err
}

// acceptSignals moves the pending signals of w.Accept to accepted.
func acceptSignals(ctx context.Context, tx *store.Tx, w niche.Write, r *niche.Record) error {
	if len(w.Accept) == 0 {
		return nil
	}
	args := []any{"accepted when linked by " + r.ID + " revision " + fmt.Sprint(r.Revision), w.Actor, store.ToMicros(w.At)}
	args = append(args, store.Args(w.Accept)...)
	_, err := tx.Exec(ctx, `UPDATE niche_signals SET state = 'accepted', moderation_note = ?, moderated_by = ?,
		moderated_at = ? WHERE state = 'pending' AND id IN (`+store.Placeholders(len(w.Accept))+`)`, args...)
	return err
}

// applyWriteErr returns what ApplyWrite reports for the failure err of
// its transaction. A conflict may be a concurrent writer that completed
// the same operation: that operation is then replayed (same request hash)
// or reported as an operation conflict.
func (ns *Store) applyWriteErr(ctx context.Context, w niche.Write, err error) (*niche.Record, bool, error) {
	unique := ns.db.IsUniqueViolation(err)
	if unique || errors.Is(err, niche.ErrConflict) {
		h, rec, err2 := ns.Operation(ctx, w.OperationID)
		switch {
		case err2 == nil && rec != nil && h == w.RequestHash:
			return rec, true, nil
		case err2 == nil && rec != nil:
			return nil, false, niche.ErrOperationConflict
		case unique:
			return nil, false, &niche.RevisionConflictError{ID: w.Record.ID, Expected: w.ExpectedRevision, Current: w.ExpectedRevision + 1}
		}
	}
	if errors.Is(err, niche.ErrConflict) || errors.Is(err, niche.ErrNotFound) || errors.Is(err, niche.ErrOperationConflict) ||
		errors.Is(err, niche.ErrSignalRefs) {
		return nil, false, err
	}
	return nil, false, fmt.Errorf("store: apply niche write: %w", err)
}

func insertEvaluation(ctx context.Context, tx *store.Tx, r *niche.Record, signalIDs, weights string) error {
	st, sp, sb, sc := tx.DB().SearchColumns(r)
	d := r.Dimensions
	_, err := tx.Exec(ctx, `INSERT INTO niche_evaluations (id, status, revision, title, problem, buyer, category,
		category_key, solution_hypothesis, evaluation_notes, pain, frequency, willingness_to_pay, reachable_buyers,
		feasibility, competition_gap, signal_ids, score, score_version, score_weights, st, sp, sb, sc, created_at,
		updated_at, published_at, rationale, reviewed_at, reviewed_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, string(r.Status), r.Revision, r.Title, r.Problem, r.Buyer, r.Category, r.CategoryKey(),
		r.SolutionHypothesis, r.EvaluationNotes, d.Pain, d.Frequency, d.WillingnessToPay, d.ReachableBuyers,
		d.Feasibility, d.CompetitionGap, signalIDs, r.Score, r.ScoreVersion, weights, st, sp, sb, sc,
		store.ToMicros(r.CreatedAt), store.ToMicros(r.UpdatedAt), store.ToMicros(r.PublishedAt), rationaleJSON(r),
		store.ToMicros(r.ReviewedAt), r.ReviewedBy)
	return err
}

// rationaleJSON is the stored form of r's rationale.
func rationaleJSON(r *niche.Record) string {
	b, _ := json.Marshal(r.Rationale) // a struct of strings always marshals
	return string(b)
}

// BulkLoadNiche stores signals and evaluation records as they are, in
// transactions of batch rows (0 means 2000), each evaluation with a
// revision-1 entry in its log. It applies no rules — no publication floor,
// no operation ids, no revision checks — and is meant for benchmarks and
// migrations from another system; curation goes through niche.Engine.
func (ns *Store) BulkLoadNiche(ctx context.Context, signals []niche.Signal, recs []niche.Record, batch int) error {
	if batch <= 0 {
		batch = 2000
	}
	for start := 0; start < len(signals); start += batch {
		if _, err := ns.PutSignals(ctx, signals[start:min(start+batch, len(signals))]); err != nil {
			return err
		}
	}
	for start := 0; start < len(recs); start += batch {
		chunk := recs[start:min(start+batch, len(recs))]
		err := ns.db.InTx(ctx, func(tx *store.Tx) error {
			terms := map[string]int{}
			for i := range chunk {
				r := &chunk[i]
				if r.Status == niche.StatusPublished {
					st, sp, sb, sc := tx.DB().SearchColumns(r)
					store.AddTerms(terms, 1, st, sp, sb, sc)
				}
				ids, err := json.Marshal(r.SignalIDs)
				if err != nil {
					return err
				}
				weights, err := json.Marshal(r.ScoreWeights)
				if err != nil {
					return err
				}
				if err := insertEvaluation(ctx, tx, r, string(ids), string(weights)); err != nil {
					return err
				}
				if err := writeLinks(ctx, tx, r.ID, r.SignalIDs, false); err != nil {
					return err
				}
				state, err := json.Marshal(r)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `INSERT INTO niche_revisions (niche_id, revision, action, actor, reason, operation_id, at, state)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.Revision, niche.ActionCreate, "bulk load", "", "", store.ToMicros(r.CreatedAt), string(state)); err != nil {
					return err
				}
			}
			return tx.ApplyTerms(ctx, terms)
		})
		if err != nil {
			return fmt.Errorf("store: bulk load niche: %w", err)
		}
	}
	if ns.db.Dialect() == store.Postgres {
		if _, err := ns.db.Exec(ctx, `ANALYZE niche_evaluations`); err != nil {
			return fmt.Errorf("store: bulk load niche: analyze: %w", err)
		}
	}
	return nil
}

// revisionState reads the state revision rev of evaluation id left. A
// log entry that holds none (a bulk creation's) is the evaluation's row,
// which is still at that revision: keepRevisionState writes the state
// into the entry before the row changes, so when the row has moved on
// meanwhile (a read outside the writing transaction), the entry is read
// again.
func revisionState(ctx context.Context, queryRow func(context.Context, string, ...any) *sql.Row, id string, rev int) (*niche.Record, error) {
	for again := false; ; again = true {
		var state string
		if err := queryRow(ctx, `SELECT state FROM niche_revisions WHERE niche_id = ? AND revision = ?`, id, rev).Scan(&state); err != nil {
			return nil, fmt.Errorf("store: revision %s/%d: %w", id, rev, err)
		}
		if state != "" {
			var r niche.Record
			if err := json.Unmarshal([]byte(state), &r); err != nil {
				return nil, fmt.Errorf("store: revision %s/%d: %w", id, rev, err)
			}
			return &r, nil
		}
		r, err := scanRecord(queryRow(ctx, `SELECT `+evalCols+` FROM niche_evaluations WHERE id = ? AND revision = ?`, id, rev))
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, sql.ErrNoRows) || again {
			return nil, fmt.Errorf("store: revision %s/%d: %w", id, rev, err)
		}
	}
}

// Operation implements niche.Store.
func (ns *Store) Operation(ctx context.Context, opID string) (string, *niche.Record, error) {
	var hash, nid string
	var rev int
	err := ns.db.QueryRow(ctx, `SELECT request_hash, niche_id, revision FROM niche_operations WHERE operation_id = ?`, opID).Scan(&hash, &nid, &rev)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("store: operation: %w", err)
	}
	rec, err := revisionState(ctx, ns.db.QueryRow, nid, rev)
	if err != nil {
		return "", nil, err
	}
	return hash, rec, nil
}

// Evaluation implements niche.Store.
func (ns *Store) Evaluation(ctx context.Context, id string) (*niche.Record, error) {
	if !ids.Valid(ids.Niche, id) {
		return nil, &niche.NotFoundError{What: "Niche", ID: id}
	}
	r, err := scanRecord(ns.db.QueryRow(ctx, `SELECT `+evalCols+` FROM niche_evaluations WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &niche.NotFoundError{What: "Niche", ID: id}
	}
	if err != nil {
		return nil, fmt.Errorf("store: evaluation: %w", err)
	}
	return r, nil
}

// Revisions implements niche.Store.
func (ns *Store) Revisions(ctx context.Context, id string) ([]niche.Revision, error) {
	rows, err := ns.db.Query(ctx, `SELECT niche_id, revision, action, actor, reason, operation_id, at, state
		FROM niche_revisions WHERE niche_id = ? ORDER BY revision`, id)
	if err != nil {
		return nil, fmt.Errorf("store: revisions: %w", err)
	}
	defer rows.Close()
	out := []niche.Revision{}
	fromRow := -1 // the entry whose state is the row's, if any
	for rows.Next() {
		var r niche.Revision
		var at int64
		var state string
		if err := rows.Scan(&r.NicheID, &r.Revision, &r.Action, &r.Actor, &r.Reason, &r.OperationID, &at, &state); err != nil {
			return nil, err
		}
		r.At = store.FromMicros(at)
		if state == "" {
			fromRow = len(out)
		} else if err := json.Unmarshal([]byte(state), &r.State); err != nil {
			return nil, fmt.Errorf("store: revision %s/%d: %w", r.NicheID, r.Revision, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if fromRow >= 0 {
		r, err := revisionState(ctx, ns.db.QueryRow, id, out[fromRow].Revision)
		if err != nil {
			return nil, err
		}
		out[fromRow].State = *r
	}
	return out, nil
}

// Published implements niche.Store.
func (ns *Store) Published(ctx context.Context, ids []string) (map[string]*niche.Record, error) {
	out := make(map[string]*niche.Record, len(ids))
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		rows, err := ns.db.CachedQuery(ctx, `SELECT `+evalCols+` FROM niche_evaluations
			WHERE status = 'published' AND id IN (`+store.Placeholders(len(chunk))+`)`, store.Args(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("store: published: %w", err)
		}
		for rows.Next() {
			r, err := scanRecord(rows)
			if err != nil {
				rows.Close()
				return nil, err
			}
			out[r.ID] = r
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("store: published: %w", err)
		}
	}
	return out, nil
}

// Listings implements niche.Store.
func (ns *Store) Listings(ctx context.Context, ids []string) (map[string]niche.Listing, error) {
	out := make(map[string]niche.Listing, len(ids))
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		rows, err := ns.db.CachedQuery(ctx, `SELECT `+listingCols+` FROM niche_evaluations e
			WHERE e.status = 'published' AND e.id IN (`+store.Placeholders(len(chunk))+`)`, store.Args(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("store: listings: %w", err)
		}
		for rows.Next() {
			l, err := scanListing(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: listings: %w", err)
			}
			out[l.ID] = l
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("store: listings: %w", err)
		}
	}
	return out, nil
}

func orderBy(sort, alias string) string {
	if sort == niche.SortRecent {
		return ` ORDER BY ` + alias + `updated_at DESC, ` + alias + `id`
	}
	return ` ORDER BY ` + alias + `score DESC, ` + alias + `updated_at DESC, ` + alias + `id`
}

// ListPublished implements niche.Store. With a text filter on SQLite,
// the matches are ordered in niche_search (small rows) and only the page's
// listings are read from niche_evaluations.
func (ns *Store) ListPublished(ctx context.Context, q niche.ListQuery) ([]niche.Listing, error) {
	var b strings.Builder
	var args []any
	switch {
	case q.Query.Empty():
		b.WriteString(`SELECT ` + listingCols + ` FROM niche_evaluations e WHERE e.status = 'published'`)
		if q.CategoryKey != "" {
			b.WriteString(` AND e.category_key = ?`)
			args = append(args, q.CategoryKey)
		}
		b.WriteString(orderBy(q.Sort, "e."))
		b.WriteString(` LIMIT ?`)
	case ns.db.Dialect() == store.SQLite:
		b.WriteString(`SELECT ` + listingCols + ` FROM (SELECT s.seq, s.id, s.score, s.updated_at
			FROM niche_fts JOIN niche_search s ON s.seq = niche_fts.rowid WHERE niche_fts MATCH ?`)
		args = append(args, ftsExpr(q.Query.Tokens, q.Full))
		if q.CategoryKey != "" {
			b.WriteString(` AND s.category_key = ?`)
			args = append(args, q.CategoryKey)
		}
		b.WriteString(orderBy(q.Sort, "s.") + ` LIMIT ?) t JOIN niche_evaluations e ON e.seq = t.seq` + orderBy(q.Sort, "t."))
	default:
		b.WriteString(`SELECT ` + listingCols + ` FROM niche_evaluations e
			WHERE e.status = 'published' AND e.` + tsvColumn(q.Full) + ` @@ plainto_tsquery('simple', ?)`)
		args = append(args, q.Query.Phrase())
		if q.CategoryKey != "" {
			b.WriteString(` AND e.category_key = ?`)
			args = append(args, q.CategoryKey)
		}
		b.WriteString(orderBy(q.Sort, "e."))
		b.WriteString(` LIMIT ?`)
	}
	args = append(args, q.Limit)
	rows, err := ns.db.CachedQuery(ctx, b.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("store: list niches: %w", err)
	}
	defer rows.Close()
	out := []niche.Listing{}
	for rows.Next() {
		l, err := scanListing(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list niches: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// SignalCounts implements niche.Store.
func (ns *Store) SignalCounts(ctx context.Context, ids []string) (map[string]int, error) {
	out := make(map[string]int, len(ids))
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		rows, err := ns.db.CachedQuery(ctx, `SELECT id, signal_count FROM niche_evaluations
			WHERE id IN (`+store.Placeholders(len(chunk))+`) AND signal_count > 0`, store.Args(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("store: signal counts: %w", err)
		}
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: signal counts: %w", err)
			}
			out[id] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("store: signal counts: %w", err)
		}
	}
	return out, nil
}

// Evaluations implements niche.Store.
func (ns *Store) Evaluations(ctx context.Context, afterID string, limit int) ([]*niche.Record, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := ns.db.Query(ctx, `SELECT `+evalCols+` FROM niche_evaluations WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: evaluations: %w", err)
	}
	defer rows.Close()
	out := []*niche.Record{}
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("store: evaluations: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// HasPublished implements niche.Store.
func (ns *Store) HasPublished(ctx context.Context) (bool, error) {
	var n int
	err := ns.db.CachedQueryRow(ctx, `SELECT 1 FROM niche_evaluations WHERE status = 'published' LIMIT 1`).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: has published: %w", err)
	}
	return true, nil
}

// ReturnQuota implements niche.Store.
func (ns *Store) ReturnQuota(ctx context.Context, caller string, day int64) error {
	if _, err := ns.db.Exec(ctx, `UPDATE niche_quota SET used = used - 1 WHERE caller = ? AND day = ? AND used > 0`, caller, day); err != nil {
		return fmt.Errorf("store: return quota: %w", err)
	}
	return nil
}

// TakeQuota implements niche.Store.
func (ns *Store) TakeQuota(ctx context.Context, caller string, day int64, limit int) (int, bool, error) {
	if limit <= 0 {
		return 0, false, nil
	}
	used, ok := 0, false
	err := ns.db.InTx(ctx, func(tx *store.Tx) error {
		used, ok = 0, false
		err := tx.QueryRow(ctx, `INSERT INTO niche_quota (caller, day, used) VALUES (?, ?, 1)
			ON CONFLICT (caller, day) DO UPDATE SET used = niche_quota.used + 1 WHERE niche_quota.used < ?
			RETURNING used`, caller, day, limit).Scan(&used)
		switch {
		case err == nil:
			ok = true
			if used == 1 {
				// A new caller-day row: drop the rows of earlier days.
				_, err = tx.Exec(ctx, `DELETE FROM niche_quota WHERE day < ?`, day)
			}
			return err
		case errors.Is(err, sql.ErrNoRows):
			return tx.QueryRow(ctx, `SELECT used FROM niche_quota WHERE caller = ? AND day = ?`, caller, day).Scan(&used)
		default:
			return err
		}
	})
	if err != nil {
		return 0, false, fmt.Errorf("store: take quota: %w", err)
	}
	return used, ok, nil
}
