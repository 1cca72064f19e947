package niche

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/internal/ids"
)

// Options configure New. A nil *Options means defaults.
type Options struct {
	// Scorer computes scores at write time. Nil means DefaultScorer().
	// Its weights must add up to 100; a score outside 0..100 is clamped
	// (and logged as a warning). Changing the scorer changes the scores
	// of new writes only: run Rescore to recompute the stored ones.
	Scorer Scorer
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Logger receives ingestion and curation messages. Nil discards them.
	Logger *slog.Logger
	// MinDemandSignals is the publication floor's number of demand
	// signals, counted once per page (EvidenceSummary.DemandPageCount).
	// Zero means 3.
	MinDemandSignals int
	// MinIndependentSources is the publication floor's number of distinct
	// registrable domains among demand signals. Zero means 2.
	MinIndependentSources int
	// TrendMinSignals is the number of demand signals in the last 60 days
	// below which the trend is "insufficient_history". Zero means 10.
	TrendMinSignals int
	// SearchCandidates caps the matches ranked here per search. Zero
	// means 300.
	SearchCandidates int
	// SearchWindow is how many of the newest matches of a broad query
	// (more matches than SearchCandidates) the store ranks, with
	// Relevance computed in SQL, to choose the candidates. Zero means
	// 2000.
	SearchWindow int
	// SearchCacheTTL keeps the results of List and Search (previews and
	// full) for this long, keyed by their normalised options, and lets
	// concurrent identical reads share one store call. Every write
	// through this engine clears the cache at once; writes by other
	// engines sharing the database (other instances) show after at most
	// the TTL, and a full result's trend is as of the time it was read.
	// Zero disables the cache.
	SearchCacheTTL time.Duration
	// DisableSearchIndex turns off the in-memory search index (see
	// SearchRow): searches then ask the store for their candidates. The
	// index is on by default when the store is an IndexSource; it checks
	// for other instances' writes at most every SearchCacheTTL (on every
	// search when the TTL is 0).
	DisableSearchIndex bool
	// IndexPollInterval is how often StartIndex's loop polls the store's
	// change feed. Zero means SearchCacheTTL, or one second when that is
	// 0; with a store that notifies its changes (PostgreSQL), at most 10
	// seconds (a safety net: notifications bring changes at once).
	IndexPollInterval time.Duration
	// SearchCacheSize bounds the number of cached results. Zero means
	// 4096.
	SearchCacheSize int
	// TeaserLength is the longest preview teaser, at least 160
	// (DefaultTeaserLength). Zero means 160. Preview-level searches match
	// the words of the first 160 characters (the indexed teaser, see
	// SearchFields), never more than a preview shows: with a longer
	// teaser the words past 160 characters are shown but not matched at
	// that level. Shorter teasers are refused, since they would show
	// less than preview-level searches match.
	TeaserLength int
	// Language is the word rules with which queries are parsed (see
	// Language); empty means English. It must be the language the store
	// indexes with: New refuses a store that reports another
	// (LanguageReporter).
	Language Language
	// MaxSignalBatch bounds one ingestion call. Zero means 1000.
	MaxSignalBatch int
	// Sources are the configured signal sources (GET /v1/sources).
	Sources []Source
	// Capturer captures the source page of every signal an evaluation
	// links, when the evaluation is created, revised or published (see
	// Capturer); *snapshot.Service is one. Nil captures nothing: evidence
	// then shows captureStatus "not_captured" and the floor counts every
	// page.
	Capturer Capturer
	// CountUncaptured makes the publication floor count signals whose
	// page could not be captured. By default, with a Capturer, only
	// captured signals count: a published evaluation's floor is met by
	// pages anyone can check.
	CountUncaptured bool
	// ReviewInterval is how long a curator review stays current before
	// the evaluation's review status is "review_due". Zero means 180 days.
	ReviewInterval time.Duration
}

// Engine is the niche catalogue: ingestion and moderation of signals,
// curation of evaluations, and the public reads (list, search, preview,
// full evaluation). It is safe for concurrent use.
type Engine struct {
	st     Store
	opts   Options
	scorer Scorer
	log    *slog.Logger
	cache  *readCache   // nil when SearchCacheTTL is 0
	index  *searchIndex // nil when off or the store is no IndexSource
}

// New returns an engine over st.
func New(st Store, opts *Options) (*Engine, error) {
	if st == nil {
		return nil, fmt.Errorf("niche: New needs a Store")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Scorer == nil {
		o.Scorer = DefaultScorer()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MinDemandSignals <= 0 {
		o.MinDemandSignals = 3
	}
	if o.MinIndependentSources <= 0 {
		o.MinIndependentSources = 2
	}
	if o.TrendMinSignals <= 0 {
		o.TrendMinSignals = 10
	}
	if o.SearchCandidates <= 0 {
		o.SearchCandidates = 300
	}
	if o.SearchWindow <= 0 {
		o.SearchWindow = 2000
	}
	switch {
	case o.TeaserLength == 0:
		o.TeaserLength = DefaultTeaserLength
	case o.TeaserLength < DefaultTeaserLength:
		return nil, fmt.Errorf("niche: TeaserLength must be at least %d (the teaser length preview-level searches match)", DefaultTeaserLength)
	}
	if o.SearchCacheSize <= 0 {
		o.SearchCacheSize = 4096
	}
	if o.SearchCacheTTL < 0 || o.IndexPollInterval < 0 {
		return nil, fmt.Errorf("niche: SearchCacheTTL and IndexPollInterval must not be negative")
	}
	if o.MaxSignalBatch <= 0 {
		o.MaxSignalBatch = 1000
	}
	if o.ReviewInterval <= 0 {
		o.ReviewInterval = 180 * 24 * time.Hour
	}
	if err := o.Language.Validate(); err != nil {
		return nil, err
	}
	o.Language = o.Language.Or()
	if lr, ok := st.(LanguageReporter); ok && lr.SearchLanguage().Or() != o.Language {
		return nil, fmt.Errorf("%w: the engine parses queries in %q but the store indexes in %q", ErrLanguage, o.Language, lr.SearchLanguage().Or())
	}
	if w := o.Scorer.Weights(); w.Sum() != 100 {
		return nil, fmt.Errorf("niche: scorer %s weights add up to %d, not 100", o.Scorer.Version(), w.Sum())
	}
	seen := map[string]bool{}
	for i, s := range o.Sources {
		if !originPattern.MatchString(s.ID) || seen[s.ID] {
			return nil, fmt.Errorf("niche: source %d: id %q must be a unique origin name", i, s.ID)
		}
		seen[s.ID] = true
	}
	e := &Engine{st: st, opts: o, scorer: o.Scorer, log: o.Logger}
	if o.SearchCacheTTL > 0 {
		e.cache = newReadCache(o.SearchCacheTTL, o.SearchCacheSize, o.Now)
	}
	if src, ok := st.(IndexSource); ok && !o.DisableSearchIndex {
		e.index = newSearchIndex(src, o.SearchCacheTTL, o.Now)
		e.index.log = o.Logger
	}
	return e, nil
}

// StartIndex loads the engine's search index in the background and keeps
// it following the store's change feed until ctx is done: on the store's
// notifications (PostgreSQL LISTEN/NOTIFY) and by polling
// (Options.IndexPollInterval).
// Searches answer from the store until the index is loaded (IndexStatus,
// LoadIndex). Without StartIndex the index loads at the first search and
// polls on the searches. It does nothing when the index is off.
func (e *Engine) StartIndex(ctx context.Context) {
	if e.index == nil {
		return
	}
	poll := e.opts.SearchCacheTTL
	_, notifies := notifier(e.st)
	switch {
	case e.opts.IndexPollInterval > 0:
		poll = e.opts.IndexPollInterval
	case notifies:
		poll = cmp.Or(min(poll, 10*time.Second), 10*time.Second)
	case poll <= 0:
		poll = time.Second
	}
	go e.index.follow(ctx, poll)
}

// LoadIndex loads the search index now if it is not loaded (or brings it
// up to date if it is) and returns when that is done. It does nothing
// when the index is off.
func (e *Engine) LoadIndex(ctx context.Context) error {
	if e.index == nil {
		return nil
	}
	return e.index.ensure(ctx)
}

// IndexStatus describes the search index: whether it is loaded, how many
// evaluations it holds, how many full loads and incremental changes it
// took.
func (e *Engine) IndexStatus() IndexStatus {
	if e.index == nil {
		return IndexStatus{}
	}
	return e.index.status()
}

// Store returns the engine's store.
func (e *Engine) Store() Store { return e.st }

// Scorer returns the engine's scorer.
func (e *Engine) Scorer() Scorer { return e.scorer }

func (e *Engine) now() time.Time { return e.opts.Now().UTC().Truncate(time.Microsecond) }

// ---- Signals ----

// IngestResult is the outcome of ingesting one signal.
type IngestResult struct {
	// ID is the stored signal's id (the existing one for a duplicate).
	ID string `json:"id"`
	// Outcome is "created" or "duplicate".
	Outcome string `json:"outcome"`
	Signal  Signal `json:"signal"`
}

// IngestSignals validates every input (all or nothing: one invalid signal
// refuses the batch with an *InvalidError naming it) and stores them,
// deduplicated by (origin, externalId). It records one collection run per
// origin.
func (e *Engine) IngestSignals(ctx context.Context, in []SignalInput) ([]IngestResult, error) {
	if len(in) == 0 {
		return nil, invalid("signals", "must list at least one signal")
	}
	if len(in) > e.opts.MaxSignalBatch {
		return nil, invalid("signals", "must list at most %d signals", e.opts.MaxSignalBatch)
	}
	now := e.now()
	batch := make([]Signal, len(in))
	for i, s := range in {
		n, err := normalizeSignal(s, fmt.Sprintf("signals[%d]", i), now)
		if err != nil {
			return nil, err
		}
		batch[i] = n
	}
	return e.putSignals(ctx, batch)
}

// putSignals stores normalised signals and records one collection run per
// origin.
func (e *Engine) putSignals(ctx context.Context, batch []Signal) ([]IngestResult, error) {
	started := e.now()
	defer e.cache.invalidate()
	res, err := e.st.PutSignals(ctx, batch)
	if err != nil {
		return nil, err
	}
	var conflicts []string
	for i, r := range res {
		if r.Conflict {
			conflicts = append(conflicts, fmt.Sprintf("signals[%d].id %s is already used by another signal", i, batch[i].ID))
		}
	}
	if len(conflicts) > 0 {
		return nil, &InvalidError{Field: "signals", Reason: strings.Join(conflicts, "; ") + "; nothing was stored"}
	}
	out := make([]IngestResult, len(res))
	runs := map[string]*Collection{}
	for i, r := range res {
		c := runs[batch[i].Origin]
		if c == nil {
			c = &Collection{Origin: batch[i].Origin, StartedAt: started, Status: "ok"}
			runs[batch[i].Origin] = c
		}
		c.Examined++
		if r.Created {
			c.Added++
			out[i] = IngestResult{ID: r.Signal.ID, Outcome: "created", Signal: r.Signal}
		} else {
			c.Duplicates++
			out[i] = IngestResult{ID: r.Signal.ID, Outcome: "duplicate", Signal: r.Signal}
		}
	}
	origins := make([]string, 0, len(runs))
	for o := range runs {
		origins = append(origins, o)
	}
	slices.Sort(origins)
	for _, o := range origins {
		c := runs[o]
		c.FinishedAt = e.now()
		if err := e.st.RecordCollection(ctx, *c); err != nil {
			e.log.WarnContext(ctx, "niche: recording a collection run failed", "origin", o, "err", err)
		}
	}
	return out, nil
}

// Signal returns one signal.
func (e *Engine) Signal(ctx context.Context, id string) (*Signal, error) {
	s, err := lookupOne(ctx, ids.Signal, "Signal", id, e.st.Signals)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// Signals lists signals, newest first.
func (e *Engine) Signals(ctx context.Context, f SignalFilter) ([]Signal, error) {
	if f.State != "" && !f.State.Valid() {
		return nil, invalid("state", "must be pending, accepted or rejected")
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	return e.st.ListSignals(ctx, f)
}

// ModerationRequest is a moderation as a curator sends it (the body of
// POST /v1/admin/niche/signals/{signal_id}/moderation,
// NicheModerationRequest): its validate tags state the bounds once, for
// ModerateSignal and shapes.Decode.
type ModerationRequest struct {
	State SignalState `json:"state" validate:"required,oneof=pending accepted rejected"`
	Note  string      `json:"note" validate:"omitempty,max=1000"`
	Actor string      `json:"actor" validate:"omitempty,max=120"`
}

// ModerateSignal sets a signal's moderation state. A rejected signal can
// no longer be linked; evaluations that already link it stop showing and
// counting it as evidence (evidence summary, preview signal count), and
// every published one whose remaining evidence no longer meets the
// publication floor is withdrawn at once: a revision by SystemActor whose
// reason names the signal, the moderator and the remaining evidence. The
// check is safe against concurrent revisions (optimistic concurrency:
// on a conflict it reads the evaluation again) and is run again whenever a
// rejected signal is moderated as rejected, so repeating the moderation
// completes a check that failed. Accepting a rejected signal again
// republishes nothing (curators republish).
//
// state, note and actor are checked against ModerationRequest's bounds;
// an empty actor is "curator".
func (e *Engine) ModerateSignal(ctx context.Context, id string, state SignalState, note, actor string) (*Signal, error) {
	actor = strings.TrimSpace(actor)
	if err := check(&ModerationRequest{State: state, Note: note, Actor: actor}); err != nil {
		return nil, err
	}
	actor = cmp.Or(actor, "curator")
	if !ids.Valid(ids.Signal, id) {
		return nil, &NotFoundError{What: "Signal", ID: id}
	}
	defer e.cache.invalidate() // full evaluations show accepted evidence only
	sig, linkedBy, err := e.st.ModerateSignal(ctx, id, Moderation{State: state, Note: strings.TrimSpace(note), Actor: actor, At: e.now()})
	if err != nil {
		return nil, err
	}
	if e.index != nil {
		e.index.written(ctx, linkedBy...) // their signal counts
	}
	if sig.State == StateRejected {
		unneeded := []string{sig.ID} // and the signals of evaluations withdrawn now
		for _, nid := range linkedBy {
			if err := e.recheckEvidence(ctx, nid, sig, &unneeded); err != nil {
				return nil, fmt.Errorf("niche: signal %s is rejected, but re-checking the evidence of %s failed (moderate it again to retry): %w", sig.ID, nid, err)
			}
		}
		e.releaseEvidence(ctx, unneeded)
	}
	return sig, nil
}

// recheckAttempts bounds the retries of recheckEvidence on revision
// conflicts.
const recheckAttempts = 20

// recheckEvidence withdraws evaluation id when it is published, links the
// rejected signal sig and no longer meets the publication floor, adding
// the signals of a withdrawn evaluation to withdrawn.
func (e *Engine) recheckEvidence(ctx context.Context, id string, sig *Signal, withdrawn *[]string) error {
	for range recheckAttempts {
		rec, err := e.st.Evaluation(ctx, id)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if rec.Status != StatusPublished || !slices.Contains(rec.SignalIDs, sig.ID) {
			return nil
		}
		signals, err := e.st.Signals(ctx, rec.SignalIDs)
		if err != nil {
			return err
		}
		var ee *EvidenceError
		if err := e.checkFloor(rec.SignalIDs, signals); !errors.As(err, &ee) {
			return nil // still meets the floor
		}
		note := ""
		if n := []rune(sig.ModerationNote); len(n) > 300 {
			note = fmt.Sprintf(" (%s…)", string(n[:300]))
		} else if len(n) > 0 {
			note = fmt.Sprintf(" (%s)", sig.ModerationNote)
		}
		reason := fmt.Sprintf("Withdrawn automatically: linked signal %s was rejected by %s%s; the remaining evidence, %d demand pages from %d independent domains, is below the publication floor of %d from %d.",
			sig.ID, sig.ModeratedBy, note, ee.DemandSignals, ee.IndependentSources, ee.MinDemandSignals, ee.MinIndependentSources)
		op := Op{ID: fmt.Sprintf("auto-withdraw:%s:%s:%d", sig.ID, rec.ID, rec.Revision), Actor: SystemActor, Reason: reason}
		now := e.now()
		next := *rec
		next.Status, next.Revision, next.UpdatedAt = StatusWithdrawn, rec.Revision+1, now
		_, _, err = e.applyWrite(ctx, Write{
			OperationID: op.ID, RequestHash: requestHash(ActionWithdraw, rec.ID, rec.Revision, nil, op),
			ExpectedRevision: rec.Revision, Record: next, Action: ActionWithdraw, Actor: op.Actor, Reason: op.Reason, At: now,
		})
		switch {
		case err == nil:
			e.log.WarnContext(ctx, "niche: evaluation withdrawn after a linked signal was rejected", "niche", rec.ID,
				"revision", next.Revision, "signal", sig.ID, "moderator", sig.ModeratedBy)
			*withdrawn = append(*withdrawn, rec.SignalIDs...)
			return nil
		case errors.Is(err, ErrConflict), errors.Is(err, ErrOperationConflict):
			continue // another write came first: look again
		default:
			return err
		}
	}
	return fmt.Errorf("niche: evaluation %s: still conflicting after %d attempts", id, recheckAttempts)
}

// ---- Curation ----

// Op describes a curation operation. The curator routes' bodies embed it
// (NicheCreateRequest, NicheReviseRequest, NicheTransitionRequest): its
// validate tags state their bounds once, checked by the engine on a Go
// value and by shapes.Decode on a JSON body.
type Op struct {
	// ID makes the operation idempotent: repeating it with the same input
	// returns the stored result; with different input it fails with
	// ErrOperationConflict. Empty means a fresh random id (no replay
	// protection). Characters: A-Z a-z 0-9 . _ : -, starting with a letter
	// or digit.
	ID string `json:"operationId,omitempty" validate:"omitnil,omitempty,min=1,max=128"`
	// Actor names who made the change. Empty means "curator".
	Actor string `json:"actor" validate:"omitempty,max=120"`
	// Reason says why.
	Reason string `json:"reason" validate:"omitempty,max=2000"`
}

var opIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

func (op Op) normalize() (Op, error) {
	op.Actor, op.Reason = strings.TrimSpace(op.Actor), strings.TrimSpace(op.Reason)
	if err := check(&op); err != nil {
		return op, err
	}
	switch {
	case op.ID == "":
		op.ID = ids.New("op_")
	case !opIDPattern.MatchString(op.ID):
		return op, invalid("operationId", "must be 1 to 128 characters of A-Z, a-z, 0-9, '.', '_', ':' or '-'")
	}
	op.Actor = cmp.Or(op.Actor, "curator")
	return op, nil
}

// requestHash digests everything an operation's outcome depends on.
func requestHash(action, id string, expected int, d *Draft, op Op) string {
	b, _ := json.Marshal(struct {
		Action   string `json:"a"`
		ID       string `json:"i"`
		Expected int    `json:"e"`
		Draft    *Draft `json:"d"`
		Actor    string `json:"u"`
		Reason   string `json:"r"`
	}{action, id, expected, d, op.Actor, op.Reason})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// linkedSignals loads d's signals and refuses unknown or rejected ones.
// It returns the signals and the ids of pending ones (to accept).
func (e *Engine) linkedSignals(ctx context.Context, signalIDs []string) (map[string]Signal, []string, error) {
	found, err := e.st.Signals(ctx, signalIDs)
	if err != nil {
		return nil, nil, err
	}
	pending, err := linkable(signalIDs, found)
	if err != nil {
		return nil, nil, err
	}
	return found, pending, nil
}

// linkable returns the pending signals among signalIDs (to accept), or a
// *SignalRefError naming those unknown in found or rejected.
func linkable(signalIDs []string, found map[string]Signal) ([]string, error) {
	var refErr SignalRefError
	var pending []string
	for _, id := range signalIDs {
		s, ok := found[id]
		switch {
		case !ok:
			refErr.Unknown = append(refErr.Unknown, id)
		case s.State == StateRejected:
			refErr.Rejected = append(refErr.Rejected, id)
		case s.State == StatePending:
			pending = append(pending, id)
		}
	}
	if len(refErr.Unknown)+len(refErr.Rejected) > 0 {
		return nil, &refErr
	}
	return pending, nil
}

// checkFloor applies the publication floor to the linked signals,
// counting only those whose page was captured when the engine captures
// pages (Options.Capturer) and does not count uncaptured ones
// (Options.CountUncaptured).
func (e *Engine) checkFloor(signalIDs []string, signals map[string]Signal) error {
	return e.floor(signalIDs, signals, e.capturedOnly())
}

// capturedOnly reports whether the floor counts captured signals only.
func (e *Engine) capturedOnly() bool { return e.opts.Capturer != nil && !e.opts.CountUncaptured }

// floor applies the publication floor to the linked signals; with
// capturedOnly, signals whose page was not captured are not counted.
func (e *Engine) floor(signalIDs []string, signals map[string]Signal, capturedOnly bool) error {
	return e.floorKeyed(signalIDs, signals, capturedOnly, pageKey)
}

// floorKeyed is floor with the function that keys a page (pageKey, or a
// memo of it).
func (e *Engine) floorKeyed(signalIDs []string, signals map[string]Signal, capturedOnly bool, key func(string) string) error {
	linked := make([]Signal, 0, len(signalIDs))
	for _, id := range signalIDs {
		if s, ok := signals[id]; ok && (!capturedOnly || s.Snapshot.Captured()) {
			linked = append(linked, s)
		}
	}
	st := statsOfKeyed(linked, key)
	if st.pages < e.opts.MinDemandSignals || st.domains < e.opts.MinIndependentSources {
		return &EvidenceError{DemandSignals: st.pages, IndependentSources: st.domains,
			MinDemandSignals: e.opts.MinDemandSignals, MinIndependentSources: e.opts.MinIndependentSources,
			CapturedOnly: capturedOnly}
	}
	return nil
}

// applyDraft sets r's content from d, reviewed by actor at now.
func (e *Engine) applyDraft(ctx context.Context, r *Record, d Draft, actor string, now time.Time) {
	r.Title, r.Problem, r.Buyer, r.Category = d.Title, d.Problem, d.Buyer, d.Category
	r.SolutionHypothesis, r.EvaluationNotes = d.SolutionHypothesis, d.EvaluationNotes
	r.Dimensions, r.Rationale = d.Dimensions(), d.RationaleOf()
	r.ReviewedAt, r.ReviewedBy = now, actor
	r.SignalIDs = slices.Clone(d.SignalIDs)
	e.applyScore(ctx, r)
}

// applyScore sets r's score, score version and weights from the engine's
// scorer. A score outside 0..100 is clamped and logged.
func (e *Engine) applyScore(ctx context.Context, r *Record) {
	score := e.scorer.Score(r.Dimensions)
	if score < 0 || score > 100 {
		e.log.WarnContext(ctx, "niche: scorer returned a score outside 0..100; clamped", "scorer", e.scorer.Version(),
			"score", score, "niche", r.ID)
		score = min(max(score, 0), 100)
	}
	r.Score = score
	r.ScoreVersion = e.scorer.Version()
	r.ScoreWeights = e.scorer.Weights()
}

// Create stores a new evaluation from d, published at once when
// d.Publish is set (the publication floor applies). Linked pending
// signals are accepted.
func (e *Engine) Create(ctx context.Context, op Op, d Draft) (*Evaluation, error) {
	ev, _, err := e.create(ctx, op, d)
	return ev, err
}

// create is Create, also saying whether the operation was replayed.
func (e *Engine) create(ctx context.Context, op Op, d Draft) (*Evaluation, bool, error) {
	op, err := op.normalize()
	if err != nil {
		return nil, false, err
	}
	if d, err = d.Normalize(); err != nil {
		return nil, false, err
	}
	hash := requestHash(ActionCreate, "", 0, &d, op)
	if replay, err := e.replay(ctx, op.ID, hash); replay != nil || err != nil {
		return replay, replay != nil, err
	}
	signals, pending, err := e.linkedSignals(ctx, d.SignalIDs)
	if err != nil {
		return nil, false, err
	}
	if err := e.captureLinked(ctx, signals, d.SignalIDs); err != nil {
		return nil, false, err
	}
	now := e.now()
	rec := Record{ID: ids.New(ids.Niche), Status: StatusDraft, Revision: 1, CreatedAt: now, UpdatedAt: now}
	e.applyDraft(ctx, &rec, d, op.Actor, now)
	if d.Publish {
		if err := e.checkFloor(d.SignalIDs, signals); err != nil {
			return nil, false, err
		}
		rec.Status, rec.PublishedAt = StatusPublished, now
	}
	return e.writeReplayed(ctx, Write{
		OperationID: op.ID, RequestHash: hash,
		ExpectedRevision: 0, Record: rec, Action: ActionCreate, Actor: op.Actor, Reason: op.Reason, At: now,
		Accept: pending, CheckSignals: true,
	})
}

// Revise replaces the content of evaluation id, whose current revision
// must be expectedRevision. A published evaluation stays published (and
// must still meet the floor); d.Publish publishes a draft or withdrawn
// one; d.Publish false never withdraws (use Withdraw).
func (e *Engine) Revise(ctx context.Context, id string, expectedRevision int, op Op, d Draft) (*Evaluation, error) {
	op, err := op.normalize()
	if err != nil {
		return nil, err
	}
	if expectedRevision < 1 {
		return nil, invalid("expectedRevision", "must be 1 or more")
	}
	if d, err = d.Normalize(); err != nil {
		return nil, err
	}
	hash := requestHash(ActionRevise, id, expectedRevision, &d, op)
	if replay, err := e.replay(ctx, op.ID, hash); replay != nil || err != nil {
		return replay, err
	}
	cur, err := e.evaluationRecord(ctx, id)
	if err != nil {
		return nil, err
	}
	if cur.Revision != expectedRevision {
		return nil, &RevisionConflictError{ID: id, Expected: expectedRevision, Current: cur.Revision}
	}
	signals, pending, err := e.linkedSignals(ctx, d.SignalIDs)
	if err != nil {
		return nil, err
	}
	if err := e.captureLinked(ctx, signals, d.SignalIDs); err != nil {
		return nil, err
	}
	now := e.now()
	rec := *cur
	e.applyDraft(ctx, &rec, d, op.Actor, now)
	rec.Revision, rec.UpdatedAt = expectedRevision+1, now
	if d.Publish && rec.Status != StatusPublished {
		rec.Status, rec.PublishedAt = StatusPublished, now
	}
	if rec.Status == StatusPublished {
		if err := e.checkFloor(d.SignalIDs, signals); err != nil {
			return nil, err
		}
	}
	ev, err := e.write(ctx, Write{
		OperationID: op.ID, RequestHash: hash,
		ExpectedRevision: expectedRevision, Record: rec, Action: ActionRevise, Actor: op.Actor, Reason: op.Reason,
		At: now, Accept: pending, CheckSignals: true,
	})
	if err == nil {
		e.releaseEvidence(ctx, cur.SignalIDs) // some may have been unlinked
	}
	return ev, err
}

// Publish publishes evaluation id at expectedRevision (the floor applies).
func (e *Engine) Publish(ctx context.Context, id string, expectedRevision int, op Op) (*Evaluation, error) {
	return e.transition(ctx, id, expectedRevision, op, ActionPublish)
}

// Withdraw hides published evaluation id at expectedRevision from every
// public read.
func (e *Engine) Withdraw(ctx context.Context, id string, expectedRevision int, op Op) (*Evaluation, error) {
	return e.transition(ctx, id, expectedRevision, op, ActionWithdraw)
}

func (e *Engine) transition(ctx context.Context, id string, expectedRevision int, op Op, action string) (*Evaluation, error) {
	op, err := op.normalize()
	if err != nil {
		return nil, err
	}
	if expectedRevision < 1 {
		return nil, invalid("expectedRevision", "must be 1 or more")
	}
	hash := requestHash(action, id, expectedRevision, nil, op)
	if replay, err := e.replay(ctx, op.ID, hash); replay != nil || err != nil {
		return replay, err
	}
	cur, err := e.evaluationRecord(ctx, id)
	if err != nil {
		return nil, err
	}
	if cur.Revision != expectedRevision {
		return nil, &RevisionConflictError{ID: id, Expected: expectedRevision, Current: cur.Revision}
	}
	now := e.now()
	rec := *cur
	rec.Revision, rec.UpdatedAt = expectedRevision+1, now
	var pending []string
	switch action {
	case ActionPublish:
		signals, p, err := e.linkedSignals(ctx, rec.SignalIDs)
		if err != nil {
			return nil, err
		}
		if err := e.captureLinked(ctx, signals, rec.SignalIDs); err != nil {
			return nil, err
		}
		if err := e.checkFloor(rec.SignalIDs, signals); err != nil {
			return nil, err
		}
		pending = p
		if rec.Status != StatusPublished {
			rec.Status, rec.PublishedAt = StatusPublished, now
		}
		rec.ReviewedAt, rec.ReviewedBy = now, op.Actor
	case ActionWithdraw:
		if cur.Status != StatusPublished {
			return nil, invalid("status", "only a published evaluation can be withdrawn (this one is %s)", cur.Status)
		}
		rec.Status = StatusWithdrawn
	}
	ev, err := e.write(ctx, Write{
		OperationID: op.ID, RequestHash: hash, ExpectedRevision: expectedRevision, Record: rec,
		Action: action, Actor: op.Actor, Reason: op.Reason, At: now, Accept: pending,
		CheckSignals: action == ActionPublish,
	})
	if err == nil && action == ActionWithdraw {
		e.releaseEvidence(ctx, rec.SignalIDs)
	}
	return ev, err
}

// RescoreReport says what Rescore did.
type RescoreReport struct {
	// ScoreVersion is the version of the engine's scorer.
	ScoreVersion string `json:"scoreVersion"`
	// Examined counts the evaluations read, of every status.
	Examined int `json:"examined"`
	// Rescored lists the evaluations given a new revision.
	Rescored []ScoreChange `json:"rescored"`
}

// ScoreChange is one evaluation rescored by Rescore.
type ScoreChange struct {
	ID          string `json:"id"`
	Revision    int    `json:"revision"`
	FromVersion string `json:"fromVersion"`
	FromScore   int    `json:"fromScore"`
	Score       int    `json:"score"`
}

// Rescore recomputes the stored score of every evaluation (any status)
// with the engine's current Scorer — after a new formula version, for
// example. An evaluation whose score, version and weights are already
// current is left alone, so running it again changes nothing; every other
// one gets a new revision (action "rescore", the given actor and reason;
// empty reason: "rescored with <version>") with the criteria, text,
// evidence and status unchanged. Concurrent revisions are respected
// (optimistic concurrency: the evaluation is read again and rescored
// afresh). Every revision is its own write: a failure leaves the
// evaluations rescored so far rescored, and running Rescore again
// completes the work.
func (e *Engine) Rescore(ctx context.Context, actor, reason string) (*RescoreReport, error) {
	op, err := Op{Actor: actor, Reason: reason}.normalize()
	if err != nil {
		return nil, err
	}
	if op.Reason == "" {
		op.Reason = "rescored with " + e.scorer.Version()
	}
	rep := &RescoreReport{ScoreVersion: e.scorer.Version(), Rescored: []ScoreChange{}}
	defer e.cache.invalidate()
	after := ""
	for {
		page, err := e.st.Evaluations(ctx, after, 200)
		if err != nil {
			return rep, err
		}
		for _, rec := range page {
			rep.Examined++
			ch, err := e.rescoreOne(ctx, rec, op)
			if err != nil {
				return rep, err
			}
			if ch != nil {
				rep.Rescored = append(rep.Rescored, *ch)
			}
		}
		if len(page) < 200 {
			return rep, nil
		}
		after = page[len(page)-1].ID
	}
}

// rescoreOne rescores rec (read again after a conflict); nil when its
// score is current.
func (e *Engine) rescoreOne(ctx context.Context, rec *Record, op Op) (*ScoreChange, error) {
	for range recheckAttempts {
		next := *rec
		e.applyScore(ctx, &next)
		if next.Score == rec.Score && next.ScoreVersion == rec.ScoreVersion && next.ScoreWeights == rec.ScoreWeights {
			return nil, nil
		}
		now := e.now()
		next.Revision, next.UpdatedAt = rec.Revision+1, now
		w := Write{OperationID: ids.New("op_"), ExpectedRevision: rec.Revision, Record: next,
			Action: ActionRescore, Actor: op.Actor, Reason: op.Reason, At: now}
		w.RequestHash = requestHash(ActionRescore, rec.ID, rec.Revision, nil, op)
		_, _, err := e.applyWrite(ctx, w)
		switch {
		case err == nil:
			return &ScoreChange{ID: rec.ID, Revision: next.Revision, FromVersion: rec.ScoreVersion, FromScore: rec.Score, Score: next.Score}, nil
		case errors.Is(err, ErrConflict):
			if rec, err = e.st.Evaluation(ctx, rec.ID); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
	}
	return nil, fmt.Errorf("niche: rescoring %s: still conflicting after %d attempts", rec.ID, recheckAttempts)
}

// replay returns the stored result of a completed operation with the
// same hash (nil when the operation is new), and ErrOperationConflict for
// one with another hash. Checking first lets a repeated operation succeed
// even though the state its rules check has changed since.
func (e *Engine) replay(ctx context.Context, opID, hash string) (*Evaluation, error) {
	h, rec, err := e.st.Operation(ctx, opID)
	if err != nil || rec == nil {
		return nil, err
	}
	if h != hash {
		return nil, ErrOperationConflict
	}
	return e.evaluationOf(ctx, rec)
}

// applyWrite is Store.ApplyWrite, then the search index's update.
func (e *Engine) applyWrite(ctx context.Context, w Write) (*Record, bool, error) {
	rec, replayed, err := e.st.ApplyWrite(ctx, w)
	if err == nil && e.index != nil {
		e.index.written(ctx, w.Record.ID)
	}
	return rec, replayed, err
}

func (e *Engine) write(ctx context.Context, w Write) (*Evaluation, error) {
	ev, _, err := e.writeReplayed(ctx, w)
	return ev, err
}

// writeReplayed is write, also saying whether the operation was replayed
// (recorded by a concurrent write of the same operation).
func (e *Engine) writeReplayed(ctx context.Context, w Write) (*Evaluation, bool, error) {
	defer e.cache.invalidate()
	rec, replayed, err := e.applyWrite(ctx, w)
	if err != nil {
		return nil, false, err
	}
	if !replayed {
		e.log.DebugContext(ctx, "niche: revision written", "niche", rec.ID, "revision", rec.Revision,
			"action", w.Action, "actor", w.Actor, "status", rec.Status, "operation", w.OperationID)
	}
	ev, err := e.evaluationOf(ctx, rec)
	return ev, replayed, err
}

func (e *Engine) evaluationRecord(ctx context.Context, id string) (*Record, error) {
	if !ids.Valid(ids.Niche, id) {
		return nil, &NotFoundError{What: "Niche", ID: id}
	}
	return e.st.Evaluation(ctx, id)
}

// evaluationOf builds the full evaluation of rec.
func (e *Engine) evaluationOf(ctx context.Context, rec *Record) (*Evaluation, error) {
	signals, err := e.st.Signals(ctx, rec.SignalIDs)
	if err != nil {
		return nil, err
	}
	return e.build(rec, signals, e.now()), nil
}

// Evaluation returns evaluation id whatever its status (for curators).
func (e *Engine) Evaluation(ctx context.Context, id string) (*Evaluation, error) {
	rec, err := e.evaluationRecord(ctx, id)
	if err != nil {
		return nil, err
	}
	return e.evaluationOf(ctx, rec)
}

// Revisions returns the history of evaluation id, oldest first.
func (e *Engine) Revisions(ctx context.Context, id string) ([]Revision, error) {
	if _, err := e.evaluationRecord(ctx, id); err != nil {
		return nil, err
	}
	return e.st.Revisions(ctx, id)
}

// ---- Public reads ----

// lookupOne reads one id through a batch read of the store; a malformed
// id (never sent to the store) and an absent one are both *NotFoundError.
func lookupOne[V any](ctx context.Context, prefix, what, id string, read func(context.Context, []string) (map[string]V, error)) (V, error) {
	var zero V
	if !ids.Valid(prefix, id) {
		return zero, &NotFoundError{What: what, ID: id}
	}
	m, err := read(ctx, []string{id})
	if err != nil {
		return zero, err
	}
	v, ok := m[id]
	if !ok {
		return zero, &NotFoundError{What: what, ID: id}
	}
	return v, nil
}

func (e *Engine) publishedListing(ctx context.Context, id string) (*Listing, error) {
	l, err := lookupOne(ctx, ids.Niche, "Niche", id, e.st.Listings)
	if err != nil {
		return nil, err
	}
	return &l, nil
}

func (e *Engine) publishedRecord(ctx context.Context, id string) (*Record, error) {
	return lookupOne(ctx, ids.Niche, "Niche", id, e.st.Published)
}

// Published returns the full evaluation id if it is published; drafts,
// withdrawn and unknown ids are all ErrNotFound.
func (e *Engine) Published(ctx context.Context, id string) (*Evaluation, error) {
	rec, err := e.publishedRecord(ctx, id)
	if err != nil {
		return nil, err
	}
	return e.evaluationOf(ctx, rec)
}

// Exists reports whether id is a published evaluation.
func (e *Engine) Exists(ctx context.Context, id string) (bool, error) {
	_, err := e.publishedListing(ctx, id)
	if err == nil {
		return true, nil
	}
	if isNotFound(err) {
		return false, nil
	}
	return false, err
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// Preview returns the preview of published evaluation id.
func (e *Engine) Preview(ctx context.Context, id string) (*Preview, error) {
	l, err := e.publishedListing(ctx, id)
	if err != nil {
		return nil, err
	}
	p := l.Preview(e.opts.TeaserLength)
	return &p, nil
}

// HasPublished reports whether any evaluation is published (an empty
// catalogue answers paid searches with 503 before charging).
func (e *Engine) HasPublished(ctx context.Context) (bool, error) { return e.st.HasPublished(ctx) }

// ListOptions select a page of the public list. They are the query of
// GET /v1/niches too (NicheListQuery): their validate tags state its
// bounds once, checked by List on a Go value and by shapes.DecodeQuery on
// a query string. The zero value lists the first DefaultLimit previews by
// score.
type ListOptions struct {
	// Query filters by text (every word must match) when it has a letter
	// or digit: the words previews show (title, problem teaser, buyer,
	// category), or with Full the full text.
	Query string `json:"q" query:"q" validate:"max=150"`
	// Full matches Query against the full text (the whole problem and the
	// solution hypothesis too): for callers entitled to full evaluations
	// only, since matches reveal words of the hidden text. The items are
	// previews either way.
	Full bool `json:"-" query:"-"`
	// Category filters by category, case-insensitively, when set and
	// not empty.
	Category *string `json:"category" query:"category" validate:"omitnil,max=80"`
	// Sort is SortScore (default) or SortRecent.
	Sort string `json:"sort" query:"sort" validate:"omitempty,oneof=recent score"`
	// Limit is 1..100; 0 means DefaultLimit.
	Limit int `json:"limit" query:"limit" validate:"omitempty,gte=1,lte=100"`
}

// DefaultLimit is the page size of List and Search when Limit is 0.
const DefaultLimit = 20

// SetDefaults sets the documented defaults (sort score, limit 20), as a
// query without parameters has them; List applies them to unset fields
// itself.
func (o *ListOptions) SetDefaults() { *o = ListOptions{Sort: SortScore, Limit: DefaultLimit} }

// ListResult is a page of the public list.
type ListResult struct {
	Query    Query     `json:"query"`
	Previews []Preview `json:"previews"`
}

// category is the category filter of an option (nil: none).
func category(c *string) string {
	if c == nil {
		return ""
	}
	return CategoryKey(*c)
}

// List returns previews of published evaluations.
func (e *Engine) List(ctx context.Context, o ListOptions) (*ListResult, error) {
	if err := check(&o); err != nil {
		return nil, err
	}
	sort := cmp.Or(o.Sort, SortScore)
	o.Limit = cmp.Or(o.Limit, DefaultLimit)
	q := e.opts.Language.ParseQuery(o.Query)
	res := &ListResult{Query: q, Previews: []Preview{}}
	if strings.TrimSpace(o.Query) != "" && q.Empty() {
		return res, nil // no word to match: nothing matches
	}
	lq := ListQuery{Query: q, Full: o.Full, CategoryKey: category(o.Category), Sort: sort, Limit: o.Limit}
	load := func(ctx context.Context) (any, error) {
		ls, err := e.st.ListPublished(ctx, lq)
		if err != nil {
			return nil, err
		}
		ps := make([]Preview, len(ls))
		for i := range ls {
			ps[i] = ls[i].Preview(e.opts.TeaserLength)
		}
		return ps, nil
	}
	var (
		v   any
		err error
	)
	if e.cache != nil {
		v, err = e.cache.get(ctx, cacheKey("list", q.Phrase(), lq.CategoryKey, sort, strconv.Itoa(o.Limit), strconv.FormatBool(o.Full)), load)
	} else {
		v, err = load(ctx)
	}
	if err != nil {
		return nil, err
	}
	res.Previews = slices.Clone(v.([]Preview)) // callers may set Unlock
	return res, nil
}

// SearchOptions select a search. They are the query of GET /v1/search and
// GET /v1/search/pay-per-call too (NicheSearchQuery): their validate tags
// state its bounds once, checked by Search on a Go value and by
// shapes.DecodeQuery on a query string.
type SearchOptions struct {
	// Query is the text (required, 3 to 150 characters); every word must
	// match (AND). Without Full the words are matched against what
	// previews show (title, problem teaser, buyer, category) and ranked on
	// that text alone, so nothing of the hidden text can be probed; with
	// Full against the full text.
	Query string `json:"q" query:"q" validate:"required,min=3,max=150"`
	// Category filters case-insensitively when set and not empty.
	Category *string `json:"category" query:"category" validate:"omitnil,max=80"`
	// Sort is the tie-break after relevance: SortScore (default) or
	// SortRecent.
	Sort string `json:"sort" query:"sort" validate:"omitempty,oneof=recent score"`
	// Limit is 1..20; 0 means DefaultLimit.
	Limit int `json:"limit" query:"limit" validate:"omitempty,gte=1,lte=20"`
	// Full returns full evaluations instead of previews, matched and
	// ranked on the full text.
	Full bool `json:"-" query:"-"`
}

// SetDefaults sets the documented defaults (sort score, limit 20); Search
// applies them to unset fields itself.
func (o *SearchOptions) SetDefaults() { *o = SearchOptions{Sort: SortScore, Limit: DefaultLimit} }

// SearchResult is a ranked page of search results.
type SearchResult struct {
	Query Query `json:"query"`
	// Previews (when not Full) or Evaluations (when Full), best first.
	Previews    []Preview     `json:"previews,omitempty"`
	Evaluations []*Evaluation `json:"evaluations,omitempty"`
	// Relevance holds each result's relevance, in result order.
	Relevance []int `json:"relevance"`
	// Truncated is true when more evaluations matched than are ranked
	// (SearchCandidates); narrow the query to rank them all.
	Truncated bool `json:"truncated"`
}

// RelevanceVersion names the relevance formula of Relevance.
const RelevanceVersion = "relevance-v1"

// Relevance is the integer relevance of a candidate for q (version
// "relevance-v1"): for every query word, 8 if the title (c.Title)
// contains it, plus 3 if c.Body does, plus 1 if c.Extra does; for queries
// of two words or more, plus 6 when the title contains the words as a
// phrase and plus 2 when c.Body does. Words match whole normalised words
// (SearchText). For a full-level search Body is the problem, buyer and
// category and Extra the solution hypothesis; for a preview-level search
// Body is what the preview shows (SearchFields.Preview) and Extra is
// empty, so a preview's rank never depends on hidden text. Stores compute
// the same formula in SQL to rank the window of a broad query.
func Relevance(q Query, c *Candidate) int {
	rel := 0
	for _, t := range q.Tokens {
		if ContainsWord(c.Title, t) {
			rel += 8
		}
		if ContainsWord(c.Body, t) {
			rel += 3
		}
		if ContainsWord(c.Extra, t) {
			rel++
		}
	}
	if len(q.Tokens) > 1 {
		p := q.Phrase()
		if ContainsWord(c.Title, p) {
			rel += 6
		}
		if ContainsWord(c.Body, p) {
			rel += 2
		}
	}
	return rel
}

// ContainsWord reports whether w occurs in text (words separated by single
// spaces, as SearchText writes them) as whole words: ContainsWord("a b c",
// "b c") is true, ContainsWord("ab c", "b") is false.
func ContainsWord(text, w string) bool {
	for from := 0; from <= len(text)-len(w); {
		i := strings.Index(text[from:], w)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(w)
		if (i == 0 || text[i-1] == ' ') && (end == len(text) || text[end] == ' ') {
			return true
		}
		from = i + 1
	}
	return false
}

// Search ranks published evaluations matching every word of o.Query:
// relevance first (Relevance), then o.Sort (score: score desc then most
// recently updated; recent: most recently updated), then id. The final
// ordering is done here, identically for every store.
func (e *Engine) Search(ctx context.Context, o SearchOptions) (*SearchResult, error) {
	if err := check(&o); err != nil {
		return nil, err
	}
	sort := cmp.Or(o.Sort, SortScore)
	o.Limit = cmp.Or(o.Limit, DefaultLimit)
	q := e.opts.Language.ParseQuery(o.Query)
	if q.Empty() {
		res := &SearchResult{Query: q, Relevance: []int{}}
		if o.Full {
			res.Evaluations = []*Evaluation{}
		} else {
			res.Previews = []Preview{}
		}
		return res, nil
	}
	if e.cache == nil {
		return e.search(ctx, q, category(o.Category), sort, o.Limit, o.Full)
	}
	key := cacheKey("search", q.Phrase(), category(o.Category), sort, strconv.Itoa(o.Limit), strconv.FormatBool(o.Full))
	v, err := e.cache.get(ctx, key, func(ctx context.Context) (any, error) {
		return e.search(ctx, q, category(o.Category), sort, o.Limit, o.Full)
	})
	if err != nil {
		return nil, err
	}
	// A copy: callers may modify the slices (the evaluations themselves
	// are shared and must be treated as read-only).
	res := *v.(*SearchResult)
	res.Query = q
	res.Previews, res.Evaluations, res.Relevance = slices.Clone(res.Previews), slices.Clone(res.Evaluations), slices.Clone(res.Relevance)
	return &res, nil
}

// search runs a search of the store (Search without the cache).
func (e *Engine) search(ctx context.Context, q Query, categoryKey, sort string, limit int, full bool) (*SearchResult, error) {
	res := &SearchResult{Query: q, Relevance: []int{}}
	if full {
		res.Evaluations = []*Evaluation{}
	} else {
		res.Previews = []Preview{}
	}
	cq := CandidateQuery{Query: q, Full: full, CategoryKey: categoryKey,
		Sort: sort, Limit: e.opts.SearchCandidates, Window: e.opts.SearchWindow, Top: limit}
	var cands []Candidate
	var rels []int // the candidates' Relevance when the index computed it
	var truncated bool
	var err error
	if e.index != nil {
		cands, rels, truncated, err = e.index.candidates(ctx, cq)
	}
	if e.index == nil || errors.Is(err, errIndexLoading) {
		rels = nil // the store's own search, until the index is loaded
		cands, truncated, err = e.st.SearchCandidates(ctx, cq)
	}
	if err != nil {
		return nil, err
	}
	res.Truncated = truncated
	type ranked struct {
		c   *Candidate
		rel int
	}
	rs := make([]ranked, len(cands))
	for i := range cands {
		if rels != nil {
			rs[i] = ranked{&cands[i], rels[i]}
		} else {
			rs[i] = ranked{&cands[i], Relevance(q, &cands[i])}
		}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := cmp.Compare(b.rel, a.rel); c != 0 {
			return c
		}
		if sort == SortScore {
			if c := cmp.Compare(b.c.Score, a.c.Score); c != 0 {
				return c
			}
		}
		if c := b.c.UpdatedAt.Compare(a.c.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.c.ID, b.c.ID)
	})
	if len(rs) > limit {
		rs = rs[:limit]
	}
	want := make([]string, len(rs))
	for i, r := range rs {
		want[i] = r.c.ID
	}
	if !full {
		// Previews come from the candidates' listings; only the signal
		// counts of the results are read, unless the index holds them.
		var counts map[string]int
		if rels == nil {
			if counts, err = e.st.SignalCounts(ctx, want); err != nil {
				return nil, err
			}
		}
		for _, r := range rs {
			l := r.c.Listing
			if counts != nil {
				l.SignalCount = counts[l.ID]
			}
			res.Relevance = append(res.Relevance, r.rel)
			res.Previews = append(res.Previews, l.Preview(e.opts.TeaserLength))
		}
		return res, nil
	}
	recs, err := e.st.Published(ctx, want)
	if err != nil {
		return nil, err
	}
	var sigIDs []string
	for _, r := range recs {
		sigIDs = append(sigIDs, r.SignalIDs...)
	}
	slices.Sort(sigIDs)
	signals, err := e.st.Signals(ctx, slices.Compact(sigIDs))
	if err != nil {
		return nil, err
	}
	now := e.now()
	for _, r := range rs {
		rec, ok := recs[r.c.ID]
		if !ok {
			continue // withdrawn meanwhile
		}
		res.Relevance = append(res.Relevance, r.rel)
		res.Evaluations = append(res.Evaluations, e.build(rec, signals, now))
	}
	return res, nil
}

// ---- Quota ----

// QuotaStatus is a caller's use of a daily quota.
type QuotaStatus struct {
	Limit     int       `json:"limit"`
	Used      int       `json:"used"`
	Remaining int       `json:"remaining"`
	ResetsAt  time.Time `json:"resetsAt"`

	caller string // whose use TakeQuota counted (for ReturnQuota)
}

// TakeQuota counts one use by caller against limit uses per UTC day. Past
// the limit it returns a *QuotaError (ErrQuotaExceeded) with the reset
// time. Counts are kept in the store, so instances sharing a database
// share quotas.
func (e *Engine) TakeQuota(ctx context.Context, caller string, limit int) (QuotaStatus, error) {
	now := e.opts.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	reset := day.Add(24 * time.Hour)
	used, ok, err := e.st.TakeQuota(ctx, caller, day.Unix(), limit)
	if err != nil {
		return QuotaStatus{}, err
	}
	st := QuotaStatus{Limit: limit, Used: min(used, limit), Remaining: max(limit-used, 0), ResetsAt: reset, caller: caller}
	if !ok {
		return st, &QuotaError{Limit: limit, ResetAt: reset}
	}
	return st, nil
}

// ReturnQuota gives back the use that TakeQuota counted and returned as
// st, for a search that delivered nothing (no match, or an error): only
// searches that find something use a free search. It is given back on
// st's day, even if the day has turned since, and returns the status
// after. A status not returned by TakeQuota is returned as it is.
func (e *Engine) ReturnQuota(ctx context.Context, st QuotaStatus) (QuotaStatus, error) {
	if st.caller == "" {
		return st, nil
	}
	if err := e.st.ReturnQuota(ctx, st.caller, st.ResetsAt.Add(-24*time.Hour).Unix()); err != nil {
		return st, err
	}
	st.Used = max(st.Used-1, 0)
	st.Remaining = min(st.Remaining+1, st.Limit)
	return st, nil
}
