package nichemem

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/internal/memstore"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/snapshot"
)

// Store is an in-memory niche.Store: signals, evaluations with their
// revision log and operations, collection runs and quotas in maps under
// one lock, with the SQL store's rules (it passes nichetest.TestStore).
// Times are kept to the microsecond and revision states in their JSON
// form, as a database keeps them.
//
// Search scans every published evaluation: the text of a query's level
// (niche.SearchFields) must have every query word (niche.ContainsWord),
// and the window of a broad query is ranked with niche.Relevance itself.
// That is exact and fast enough for tests and small catalogues; the SQL
// stores answer the same candidates from a full-text index.
//
// The zero value is not usable: call New. Safe for concurrent use;
// it is one process's store.
type Store struct {
	// Language is the word rules of its search (niche.Language; empty
	// means English). Set it before use, to the engine's
	// niche.Options.Language.
	Language niche.Language

	mu          sync.Mutex
	signals     map[string]*niche.Signal
	byExternal  map[[2]string]string // (origin, external id) → signal id
	collections []niche.Collection
	evals       map[string]*memEvaluation
	seq         int64                // creation order of evaluations
	feed        []niche.SearchChange // the change feed (niche.ChangeFeed), after pruned
	feedHead    int64                // the sequence number of its last entry (SearchVersion)
	pruned      int64                // the entries up to this one were pruned
	revisions   map[string][]niche.Revision
	ops         map[string]memOperation
	quota       map[memQuotaKey]int
}

type memEvaluation struct {
	rec    niche.Record
	seq    int64
	fields *memFields // the search text of rec, computed on first search
}

// memFields is the search text of a record and the text it was computed
// from.
type memFields struct {
	src [5]string
	f   niche.SearchFields
}

type memOperation struct {
	hash, id string
	revision int
}

type memQuotaKey struct {
	caller string
	day    int64
}

var _ niche.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{signals: map[string]*niche.Signal{}, byExternal: map[[2]string]string{},
		evals: map[string]*memEvaluation{}, revisions: map[string][]niche.Revision{}, ops: map[string]memOperation{},
		quota: map[memQuotaKey]int{}}
}

// ---- Signals ----

// storedSignal returns s as the store keeps it.
func storedSignal(s niche.Signal) *niche.Signal {
	s.ObservedAt, s.CollectedAt, s.CreatedAt = memstore.Time(s.ObservedAt), memstore.Time(s.CollectedAt), memstore.Time(s.CreatedAt)
	s.ModeratedAt = storedTimePtr(s.ModeratedAt)
	s.Engagement = maps.Clone(s.Engagement)
	if len(s.Engagement) == 0 {
		s.Engagement = nil
	}
	s.Snapshot = nil // captures are recorded by SetSignalSnapshots only
	return &s
}

// storedSnapshot is a capture record as the stores keep it: the
// documented fields, times at microseconds.
func storedSnapshot(s *snapshot.Snapshot) *snapshot.Snapshot {
	if s == nil {
		return nil
	}
	c := s.Clone()
	c.Text, c.Exchange, c.Normalization, c.Charset = "", nil, "", ""
	c.RetrievedAt = memstore.Time(c.RetrievedAt)
	return c
}

// SetSignalSnapshots implements niche.EvidenceStore.
func (m *Store) SetSignalSnapshots(ctx context.Context, snaps map[string]*snapshot.Snapshot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, snap := range snaps {
		if s, ok := m.signals[id]; ok && snap != nil {
			s.Snapshot = storedSnapshot(snap)
		}
	}
	return nil
}

// ReleaseSignalSnapshots implements niche.EvidenceStore.
func (m *Store) ReleaseSignalSnapshots(ctx context.Context, scope []string, limit int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	needed := map[string]bool{}
	for _, ev := range m.evals {
		if ev.rec.Status != niche.StatusWithdrawn {
			for _, id := range ev.rec.SignalIDs {
				needed[id] = true
			}
		}
	}
	ids := slices.Sorted(maps.Keys(m.signals))
	if scope != nil {
		ids = slices.Sorted(slices.Values(scope))
		ids = slices.Compact(ids)
	}
	out := []string{}
	for _, id := range ids {
		s := m.signals[id]
		if len(out) >= limit {
			break
		}
		if s != nil && s.Snapshot != nil && (s.State == niche.StateRejected || !needed[id]) {
			out = append(out, s.Snapshot.ID)
			s.Snapshot = nil
		}
	}
	return out, nil
}

// storedTimePtr returns a copy of t in stored form (nil for nil or zero).
func storedTimePtr(t *time.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	v := memstore.Time(*t)
	return &v
}

// copySignal returns a copy of a stored signal that shares no memory with
// it.
func copySignal(s *niche.Signal) niche.Signal {
	c := *s
	c.Engagement = maps.Clone(s.Engagement)
	c.ModeratedAt = storedTimePtr(s.ModeratedAt)
	c.Snapshot = s.Snapshot.Clone()
	return c
}

// PutSignals implements niche.SignalStore.
func (m *Store) PutSignals(ctx context.Context, signals []niche.Signal) ([]niche.PutResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]niche.PutResult, len(signals))
	staged := map[string]*niche.Signal{}
	stagedExt := map[[2]string]string{}
	conflict := false
	for i, s := range signals {
		ext := [2]string{s.Origin, s.ExternalID}
		id, dup := m.byExternal[ext]
		if !dup {
			id, dup = stagedExt[ext]
		}
		switch {
		case dup:
			stored := m.signals[id]
			if stored == nil {
				stored = staged[id]
			}
			out[i] = niche.PutResult{Signal: copySignal(stored)}
		case m.signals[s.ID] != nil || staged[s.ID] != nil:
			out[i] = niche.PutResult{Signal: s, Conflict: true}
			conflict = true
		default:
			staged[s.ID], stagedExt[ext] = storedSignal(s), s.ID
			out[i] = niche.PutResult{Signal: s, Created: true}
		}
	}
	if conflict {
		for i := range out {
			out[i].Created = false
		}
		return out, nil
	}
	maps.Copy(m.signals, staged)
	maps.Copy(m.byExternal, stagedExt)
	return out, nil
}

// Signals implements niche.SignalStore.
func (m *Store) Signals(ctx context.Context, ids []string) (map[string]niche.Signal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return byID(ids, func(id string) (niche.Signal, bool) {
		s, ok := m.signals[id]
		if !ok {
			return niche.Signal{}, false
		}
		return copySignal(s), true
	}), nil
}

// byID returns, keyed by id, what get finds for each of ids.
func byID[V any](ids []string, get func(id string) (V, bool)) map[string]V {
	out := make(map[string]V, len(ids))
	for _, id := range ids {
		if v, ok := get(id); ok {
			out[id] = v
		}
	}
	return out
}

// ListSignals implements niche.SignalStore.
func (m *Store) ListSignals(ctx context.Context, f niche.SignalFilter) ([]niche.Signal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []niche.Signal{}
	for _, s := range m.signals {
		if (f.State == "" || s.State == f.State) && (f.Origin == "" || s.Origin == f.Origin) {
			out = append(out, copySignal(s))
		}
	}
	slices.SortFunc(out, func(a, b niche.Signal) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	return out[:min(limit, len(out))], nil
}

// ModerateSignal implements niche.SignalStore.
func (m *Store) ModerateSignal(ctx context.Context, id string, mod niche.Moderation) (*niche.Signal, []string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.signals[id]
	if !ok {
		return nil, nil, &niche.NotFoundError{What: "Signal", ID: id}
	}
	s.State, s.ModerationNote, s.ModeratedBy, s.ModeratedAt = mod.State, mod.Note, mod.Actor, storedTimePtr(&mod.At)
	var linked []string
	for nid, e := range m.evals {
		if slices.Contains(e.rec.SignalIDs, id) {
			linked = append(linked, nid)
		}
	}
	slices.Sort(linked)
	m.changed(linked...) // signal counts of search rows
	out := copySignal(s)
	return &out, linked, nil
}

// SignalStats implements niche.SignalStore.
func (m *Store) SignalStats(ctx context.Context) ([]niche.OriginStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	byOrigin := map[string]*niche.OriginStats{}
	for _, s := range m.signals {
		st := byOrigin[s.Origin]
		if st == nil {
			st = &niche.OriginStats{Origin: s.Origin}
			byOrigin[s.Origin] = st
		}
		st.Signals++
		switch s.State {
		case niche.StateAccepted:
			st.Accepted++
		case niche.StatePending:
			st.Pending++
		case niche.StateRejected:
			st.Rejected++
		}
		st.NewestObservedAt = latest(st.NewestObservedAt, s.ObservedAt)
		st.LastCollectedAt = latest(st.LastCollectedAt, s.CollectedAt)
	}
	out := []niche.OriginStats{}
	for _, origin := range slices.Sorted(maps.Keys(byOrigin)) {
		out = append(out, *byOrigin[origin])
	}
	return out, nil
}

// latest returns the later of *cur and t (nil while both are zero).
func latest(cur *time.Time, t time.Time) *time.Time {
	if t.IsZero() || cur != nil && !t.After(*cur) {
		return cur
	}
	return &t
}

// RecordCollection implements niche.SignalStore.
func (m *Store) RecordCollection(ctx context.Context, c niche.Collection) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.StartedAt, c.FinishedAt = memstore.Time(c.StartedAt), memstore.Time(c.FinishedAt)
	m.collections = append(m.collections, c)
	return nil
}

// LastCollections implements niche.SignalStore: per origin the run that
// finished last (of two that finished together, the one that started
// last).
func (m *Store) LastCollections(ctx context.Context) ([]niche.Collection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	last := map[string]niche.Collection{}
	for _, c := range m.collections {
		cur, ok := last[c.Origin]
		if !ok || cmp.Or(c.FinishedAt.Compare(cur.FinishedAt), c.StartedAt.Compare(cur.StartedAt)) > 0 {
			last[c.Origin] = c
		}
	}
	out := []niche.Collection{}
	for _, origin := range slices.Sorted(maps.Keys(last)) {
		out = append(out, last[origin])
	}
	return out, nil
}

// ---- Evaluations ----

// storedRecord returns r as the store keeps it.
func storedRecord(r niche.Record) niche.Record {
	r.SignalIDs = slices.Clone(r.SignalIDs)
	r.CreatedAt, r.UpdatedAt, r.PublishedAt = memstore.Time(r.CreatedAt), memstore.Time(r.UpdatedAt), memstore.Time(r.PublishedAt)
	return r
}

// copyRecord returns a copy of a stored record that shares no memory
// with it.
func copyRecord(r *niche.Record) *niche.Record {
	c := *r
	c.SignalIDs = slices.Clone(r.SignalIDs)
	return &c
}

// ApplyWrite implements niche.CurationStore. Every check runs before the
// first change, under the store's lock, so a refused write changes
// nothing.
func (m *Store) ApplyWrite(ctx context.Context, w niche.Write) (*niche.Record, bool, error) {
	if w.OperationID == "" {
		return nil, false, errors.New("nichemem: ApplyWrite needs an operation id")
	}
	if w.Record.Revision != w.ExpectedRevision+1 {
		return nil, false, fmt.Errorf("nichemem: ApplyWrite: record revision %d does not follow %d", w.Record.Revision, w.ExpectedRevision)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if op, ok := m.ops[w.OperationID]; ok {
		if op.hash != w.RequestHash {
			return nil, false, niche.ErrOperationConflict
		}
		rec, err := m.revisionState(op.id, op.revision)
		return rec, err == nil, err
	}
	if err := m.checkWrite(w); err != nil {
		return nil, false, err
	}
	r := storedRecord(w.Record)
	state, err := memstore.Copy(r)
	if err != nil {
		return nil, false, fmt.Errorf("nichemem: apply niche write: %w", err)
	}
	if e, ok := m.evals[r.ID]; ok {
		e.rec = r
	} else {
		m.seq++
		m.evals[r.ID] = &memEvaluation{rec: r, seq: m.seq}
	}
	m.ops[w.OperationID] = memOperation{hash: w.RequestHash, id: r.ID, revision: r.Revision}
	m.changed(r.ID)
	m.revisions[r.ID] = append(m.revisions[r.ID], niche.Revision{NicheID: r.ID, Revision: r.Revision, Action: w.Action,
		Actor: w.Actor, Reason: w.Reason, OperationID: w.OperationID, At: memstore.Time(w.At), State: state})
	note := "accepted when linked by " + r.ID + " revision " + fmt.Sprint(r.Revision)
	for _, id := range w.Accept {
		if s, ok := m.signals[id]; ok && s.State == niche.StatePending {
			s.State, s.ModerationNote, s.ModeratedBy, s.ModeratedAt = niche.StateAccepted, note, w.Actor, storedTimePtr(&w.At)
		}
	}
	out := w.Record
	return &out, false, nil
}

// checkWrite returns the error a write of w meets: a *SignalRefError when
// it checks signals and links unknown or rejected ones, a revision
// conflict or an unknown evaluation.
func (m *Store) checkWrite(w niche.Write) error {
	r := &w.Record
	if w.CheckSignals {
		var refErr niche.SignalRefError
		for _, id := range r.SignalIDs {
			switch s, ok := m.signals[id]; {
			case !ok:
				refErr.Unknown = append(refErr.Unknown, id)
			case s.State == niche.StateRejected:
				refErr.Rejected = append(refErr.Rejected, id)
			}
		}
		if len(refErr.Unknown)+len(refErr.Rejected) > 0 {
			return &refErr
		}
	}
	cur, exists := m.evals[r.ID]
	switch {
	case w.ExpectedRevision == 0 && exists:
		return &niche.RevisionConflictError{ID: r.ID, Expected: 0, Current: 1}
	case w.ExpectedRevision > 0 && !exists:
		return &niche.NotFoundError{What: "Niche", ID: r.ID}
	case w.ExpectedRevision > 0 && cur.rec.Revision != w.ExpectedRevision:
		return &niche.RevisionConflictError{ID: r.ID, Expected: w.ExpectedRevision, Current: cur.rec.Revision}
	}
	return nil
}

// revisionState returns the evaluation as revision rev of id left it.
func (m *Store) revisionState(id string, rev int) (*niche.Record, error) {
	for _, r := range m.revisions[id] {
		if r.Revision == rev {
			state, err := memstore.Copy(r.State)
			if err != nil {
				return nil, fmt.Errorf("nichemem: revision %s/%d: %w", id, rev, err)
			}
			return &state, nil
		}
	}
	return nil, fmt.Errorf("nichemem: revision %s/%d is not stored", id, rev)
}

// Operation implements niche.CurationStore.
func (m *Store) Operation(ctx context.Context, opID string) (string, *niche.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	op, ok := m.ops[opID]
	if !ok {
		return "", nil, nil
	}
	rec, err := m.revisionState(op.id, op.revision)
	if err != nil {
		return "", nil, err
	}
	return op.hash, rec, nil
}

// Evaluation implements niche.CurationStore.
func (m *Store) Evaluation(ctx context.Context, id string) (*niche.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.evals[id]
	if !ok || !ids.Valid(ids.Niche, id) {
		return nil, &niche.NotFoundError{What: "Niche", ID: id}
	}
	return copyRecord(&e.rec), nil
}

// Revisions implements niche.CurationStore.
func (m *Store) Revisions(ctx context.Context, id string) ([]niche.Revision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []niche.Revision{}
	for _, r := range m.revisions[id] {
		c, err := memstore.Copy(r)
		if err != nil {
			return nil, fmt.Errorf("nichemem: revisions: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// Evaluations implements niche.CurationStore.
func (m *Store) Evaluations(ctx context.Context, afterID string, limit int) ([]*niche.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if limit <= 0 {
		limit = 100
	}
	out := []*niche.Record{}
	for _, id := range slices.Sorted(maps.Keys(m.evals)) {
		if id > afterID && len(out) < limit {
			out = append(out, copyRecord(&m.evals[id].rec))
		}
	}
	return out, nil
}

// ---- Public reads ----

// published returns the stored published evaluation with id, or nil.
func (m *Store) published(id string) *memEvaluation {
	if e, ok := m.evals[id]; ok && e.rec.Status == niche.StatusPublished {
		return e
	}
	return nil
}

// signalCount counts the distinct signals r links that are stored and
// not rejected.
func (m *Store) signalCount(r *niche.Record) int {
	seen := map[string]bool{}
	for _, id := range r.SignalIDs {
		if s, ok := m.signals[id]; ok && s.State != niche.StateRejected {
			seen[id] = true
		}
	}
	return len(seen)
}

// listing returns the listing of r with its signal count.
func (m *Store) listing(r *niche.Record) niche.Listing {
	l := r.Listing()
	l.SignalCount = m.signalCount(r)
	return l
}

// Published implements niche.CatalogueStore.
func (m *Store) Published(ctx context.Context, ids []string) (map[string]*niche.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return byID(ids, func(id string) (*niche.Record, bool) {
		if e := m.published(id); e != nil {
			return copyRecord(&e.rec), true
		}
		return nil, false
	}), nil
}

// Listings implements niche.CatalogueStore.
func (m *Store) Listings(ctx context.Context, ids []string) (map[string]niche.Listing, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return byID(ids, func(id string) (niche.Listing, bool) {
		if e := m.published(id); e != nil {
			return m.listing(&e.rec), true
		}
		return niche.Listing{}, false
	}), nil
}

// SignalCounts implements niche.CatalogueStore.
func (m *Store) SignalCounts(ctx context.Context, ids []string) (map[string]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return byID(ids, func(id string) (int, bool) {
		e, ok := m.evals[id]
		if !ok {
			return 0, false
		}
		n := m.signalCount(&e.rec)
		return n, n > 0
	}), nil
}

// matches returns the published evaluations of category key (any when
// empty) whose text of the level (full or preview) has every word of q,
// in creation order.
func (m *Store) matches(q niche.Query, full bool, categoryKey string) []*memEvaluation {
	var out []*memEvaluation
	for _, e := range m.evals {
		if e.rec.Status != niche.StatusPublished || categoryKey != "" && e.rec.CategoryKey() != categoryKey {
			continue
		}
		c := m.candidate(e, full)
		if slices.IndexFunc(q.Tokens, func(w string) bool { return !hasWord(&c, w) }) < 0 {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *memEvaluation) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

// candidate returns r as a search candidate at a level: its indexed text
// (niche.SearchFields in the store's language, kept with e while its text
// is unchanged) and its listing without the signal count. m.mu is held.
func (m *Store) candidate(e *memEvaluation, full bool) niche.Candidate {
	r := &e.rec
	src := [5]string{r.Title, r.Problem, r.Buyer, r.Category, r.SolutionHypothesis}
	if e.fields == nil || e.fields.src != src {
		e.fields = &memFields{src: src, f: r.SearchFields(m.Language.Or())}
	}
	f := e.fields.f
	c := niche.Candidate{ID: r.ID, Score: r.Score, UpdatedAt: r.UpdatedAt, Title: f.Title, Body: f.Preview, Listing: r.Listing()}
	if full {
		c.Body, c.Extra = f.Body, f.Extra
	}
	c.Listing.SignalCount = 0
	return c
}

// hasWord reports whether c's indexed text has w as a whole word.
func hasWord(c *niche.Candidate, w string) bool {
	return niche.ContainsWord(c.Title, w) || niche.ContainsWord(c.Body, w) || niche.ContainsWord(c.Extra, w)
}

// byListOrder orders evaluations as ListPublished does: by score (or
// recency with SortRecent), then most recently updated, then id.
func byListOrder(sort string) func(a, b *memEvaluation) int {
	return func(a, b *memEvaluation) int {
		c := 0
		if sort != niche.SortRecent {
			c = cmp.Compare(b.rec.Score, a.rec.Score)
		}
		return cmp.Or(c, b.rec.UpdatedAt.Compare(a.rec.UpdatedAt), cmp.Compare(a.rec.ID, b.rec.ID))
	}
}

// SearchLanguage implements niche.LanguageReporter.
func (m *Store) SearchLanguage() niche.Language { return m.Language.Or() }

// ListPublished implements niche.CatalogueStore.
func (m *Store) ListPublished(ctx context.Context, q niche.ListQuery) ([]niche.Listing, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	found := m.matches(q.Query, q.Full, q.CategoryKey)
	slices.SortFunc(found, byListOrder(q.Sort))
	out := []niche.Listing{}
	for _, e := range found[:min(max(q.Limit, 0), len(found))] {
		out = append(out, m.listing(&e.rec))
	}
	return out, nil
}

// HasPublished implements niche.CatalogueStore.
func (m *Store) HasPublished(ctx context.Context) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.evals {
		if e.rec.Status == niche.StatusPublished {
			return true, nil
		}
	}
	return false, nil
}

// ---- Search ----

// SearchCandidates implements niche.Searcher: every match when at most
// q.Limit match; otherwise the newest q.Window matches ranked by
// niche.Relevance, then q.Sort, then id, and the q.Limit best.
func (m *Store) SearchCandidates(ctx context.Context, q niche.CandidateQuery) ([]niche.Candidate, bool, error) {
	if q.Query.Empty() || q.Limit <= 0 {
		return []niche.Candidate{}, false, nil
	}
	m.mu.Lock()
	found := m.matches(q.Query, q.Full, q.CategoryKey)
	cands := make([]niche.Candidate, len(found))
	for i, e := range found {
		cands[i] = m.candidate(e, q.Full)
	}
	m.mu.Unlock()
	if len(cands) <= q.Limit {
		return cands, false, nil
	}
	window := q.Window
	if window <= 0 {
		window = 2000
	}
	window = max(window, q.Limit)
	cands = cands[max(len(cands)-window, 0):] // the newest window matches
	rel := make(map[string]int, len(cands))
	for i := range cands {
		rel[cands[i].ID] = niche.Relevance(q.Query, &cands[i])
	}
	slices.SortFunc(cands, func(a, b niche.Candidate) int {
		c := cmp.Compare(rel[b.ID], rel[a.ID])
		if q.Sort != niche.SortRecent {
			c = cmp.Or(c, cmp.Compare(b.Score, a.Score))
		}
		return cmp.Or(c, b.UpdatedAt.Compare(a.UpdatedAt), cmp.Compare(a.ID, b.ID))
	})
	return cands[:q.Ranked()], true, nil
}

// ---- Quota ----

// ReturnQuota implements niche.QuotaStore.
func (m *Store) ReturnQuota(ctx context.Context, caller string, day int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := memQuotaKey{caller, day}
	if m.quota[key] > 0 {
		m.quota[key]--
	}
	return nil
}

// TakeQuota implements niche.QuotaStore.
func (m *Store) TakeQuota(ctx context.Context, caller string, day int64, limit int) (int, bool, error) {
	if limit <= 0 {
		return 0, false, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := memQuotaKey{caller, day}
	used, ok := m.quota[key]
	if used >= limit {
		return used, false, nil
	}
	m.quota[key] = used + 1
	if !ok {
		// A new caller-day: drop the counts of earlier days.
		for k := range m.quota {
			if k.day < day {
				delete(m.quota, k)
			}
		}
	}
	return used + 1, true, nil
}

// SearchRows implements niche.IndexSource.
func (m *Store) SearchRows(ctx context.Context, ids []string) ([]niche.SearchRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []niche.SearchRow
	add := func(e *memEvaluation) {
		if e == nil || e.rec.Status != niche.StatusPublished {
			return
		}
		prev := m.candidate(e, false)
		r := niche.SearchRow{Candidate: m.candidate(e, true), Preview: prev.Body, Seq: e.seq,
			CategoryKey: e.rec.CategoryKey()}
		r.Listing.SignalCount = m.signalCount(&e.rec)
		out = append(out, r)
	}
	if ids == nil {
		for _, e := range m.evals {
			add(e)
		}
	} else {
		for _, id := range ids {
			add(m.evals[id])
		}
	}
	return out, nil
}

// SearchVersion implements niche.IndexSource: the change feed's last
// sequence number.
func (m *Store) SearchVersion(ctx context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.feedHead, nil
}

// changed logs a change of the search rows of ids (any status: a row that
// is not published is read back as absent); m.mu is held.
func (m *Store) changed(ids ...string) {
	for _, id := range ids {
		m.feedHead++
		m.feed = append(m.feed, niche.SearchChange{Seq: m.feedHead, ID: id})
	}
}

// SearchChanges implements niche.ChangeFeed.
func (m *Store) SearchChanges(ctx context.Context, after int64, limit int) ([]niche.SearchChange, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if after < m.pruned {
		return nil, true, nil
	}
	i := int(after - m.pruned) // m.feed[i] has seq after+1
	if i >= len(m.feed) {
		return nil, false, nil
	}
	return slices.Clone(m.feed[i:min(i+limit, len(m.feed))]), false, nil
}

// PruneNicheFeed deletes the change feed's entries but the last keep (at
// least 1) and returns how many it deleted: an index that has not applied
// them must load anew (a gap).
func (m *Store) PruneNicheFeed(ctx context.Context, keep int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.feed) - int(max(keep, 1))
	if n <= 0 {
		return 0, nil
	}
	m.feed = slices.Clone(m.feed[n:])
	m.pruned += int64(n)
	return int64(n), nil
}
