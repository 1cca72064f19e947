package niche

import (
	"context"
	"time"

	"github.com/assaykit/assay/snapshot"
)

// Store persists the catalogue. It is the union of six narrower stores,
// one per concern, so that each can be read, faked or replaced on its own:
// SignalStore (evidence), CurationStore (evaluations and their revisions),
// CatalogueStore (public reads), Searcher (search candidates, the one part
// that reproduces the relevance formula), QuotaStore (free-use quotas) and
// EvidenceStore (captures of evidence pages).
// store/nichestore implements it on SQLite and PostgreSQL, nichemem.Store
// in memory; nichetest.TestStore is the conformance suite every
// implementation must pass.
//
// The engine applies the rules (validation, score, publication floor);
// the store guarantees atomicity: a revision is written only if the
// expected revision is current, an operation id is recorded with its
// request hash in the same transaction, and only published evaluations
// are returned by the public read methods.
type Store interface {
	SignalStore
	CurationStore
	CatalogueStore
	Searcher
	QuotaStore
	EvidenceStore
}

// EvidenceStore keeps the capture of each signal's page (Signal.Snapshot,
// returned by every read of signals) and finds the captures no evaluation
// needs any more.
type EvidenceStore interface {
	// SetSignalSnapshots records the capture of each signal keyed by
	// signal id, replacing any earlier one. Unknown ids are ignored.
	SetSignalSnapshots(ctx context.Context, snaps map[string]*snapshot.Snapshot) error
	// ReleaseSignalSnapshots clears, for up to limit signals whose
	// capture no evaluation needs — the signal is rejected, or no draft
	// or published evaluation links it — the recorded capture, in one
	// transaction, and returns the snapshot ids it cleared. Only the
	// signals among scope are considered; a nil scope means all.
	ReleaseSignalSnapshots(ctx context.Context, scope []string, limit int) ([]string, error)
}

// SignalStore keeps signals (the evidence evaluations link) and the runs
// of the collectors that ingest them.
type SignalStore interface {
	// PutSignals stores signals in one transaction. A signal whose
	// (Origin, ExternalID) is already stored is a duplicate: the stored
	// signal is returned with Created false. A signal whose ID is taken by
	// a signal with another (Origin, ExternalID) is reported with
	// Conflict true, and then nothing of the batch is stored.
	PutSignals(ctx context.Context, signals []Signal) ([]PutResult, error)
	// Signals returns the stored signals among ids, keyed by id (unknown
	// ids are absent).
	Signals(ctx context.Context, ids []string) (map[string]Signal, error)
	// ListSignals returns signals matching f, newest first.
	ListSignals(ctx context.Context, f SignalFilter) ([]Signal, error)
	// ModerateSignal sets a signal's state, or returns an error matching
	// ErrNotFound. It also returns the ids of the evaluations (any
	// status) linking the signal, read in the same transaction after the
	// change: a write that links the signal concurrently either commits
	// first (and is listed) or, with Write.CheckSignals, sees the new
	// state.
	ModerateSignal(ctx context.Context, id string, m Moderation) (sig *Signal, linkedBy []string, err error)
	// SignalStats counts stored signals per origin.
	SignalStats(ctx context.Context) ([]OriginStats, error)
	// RecordCollection stores one collection run.
	RecordCollection(ctx context.Context, c Collection) error
	// LastCollections returns the latest collection run of each origin.
	LastCollections(ctx context.Context) ([]Collection, error)
}

// CurationStore keeps evaluations of every status with their revision
// log and the operations that wrote them.
type CurationStore interface {
	// ApplyWrite writes one revision atomically (see Write). When w's
	// operation id was already recorded with the same request hash it
	// writes nothing and returns the state that operation left, with
	// replayed true; with another hash it returns ErrOperationConflict.
	ApplyWrite(ctx context.Context, w Write) (rec *Record, replayed bool, err error)
	// Operation returns the request hash of operation opID and the state
	// it left, or "" and nil when no such operation was recorded.
	Operation(ctx context.Context, opID string) (hash string, rec *Record, err error)
	// Evaluation returns the evaluation whatever its status, or an error
	// matching ErrNotFound.
	Evaluation(ctx context.Context, id string) (*Record, error)
	// Revisions returns an evaluation's revisions, oldest first.
	Revisions(ctx context.Context, id string) ([]Revision, error)
	// Evaluations returns up to limit evaluations of any status whose id
	// is greater than afterID, in id order (for maintenance such as
	// Engine.Rescore).
	Evaluations(ctx context.Context, afterID string, limit int) ([]*Record, error)
}

// CatalogueStore answers the public reads: published evaluations only.
type CatalogueStore interface {
	// Published returns the published evaluations among ids, keyed by id.
	Published(ctx context.Context, ids []string) (map[string]*Record, error)
	// Listings returns the listings of the published evaluations among
	// ids, keyed by id, reading only the listing's columns.
	Listings(ctx context.Context, ids []string) (map[string]Listing, error)
	// SignalCounts returns, for the evaluations among ids, the number of
	// linked signals that are not rejected (absent ids count 0).
	SignalCounts(ctx context.Context, ids []string) (map[string]int, error)
	// ListPublished returns the listings of published evaluations ordered
	// by q.Sort (score: score desc, updatedAt desc, id; recent: updatedAt
	// desc, id), filtered by category key and, when q.Query has tokens, by
	// full text: every token in the text of q's level (see SearchFields).
	ListPublished(ctx context.Context, q ListQuery) ([]Listing, error)
	// HasPublished reports whether any evaluation is published.
	HasPublished(ctx context.Context) (bool, error)
}

// LanguageReporter is implemented by stores that say which Language
// their index uses (SearchFields), so that New can refuse an engine
// parsing queries in another.
type LanguageReporter interface {
	SearchLanguage() Language
}

// Searcher finds the candidates of a search. It is the only part of Store
// that must reproduce the engine's relevance formula (for the window of a
// broad query), so that every store returns the same candidates.
type Searcher interface {
	// SearchCandidates returns published evaluations whose text of q's
	// level (SearchFields: Title and Preview, or with q.Full Title, Body
	// and Extra) has every token of q.Query (and q.CategoryKey when set),
	// with that text and their listing. When at most q.Limit match, all
	// are returned and truncated is false. Otherwise the newest q.Window
	// matches (by creation order) are ranked by Relevance, then q.Sort,
	// then id — computed by the database with exactly Relevance's formula
	// — and the q.Ranked() best are returned with truncated true.
	SearchCandidates(ctx context.Context, q CandidateQuery) (cands []Candidate, truncated bool, err error)
}

// QuotaStore counts the free uses of callers per day.
type QuotaStore interface {
	// TakeQuota counts one use by caller on the UTC day starting at day
	// (unix seconds) if fewer than limit were counted, returning the
	// count after the call and whether the use was allowed. Rows of days
	// before day are removed from time to time.
	TakeQuota(ctx context.Context, caller string, day int64, limit int) (used int, ok bool, err error)
	// ReturnQuota gives back one use counted by TakeQuota for caller on
	// day (a search that found nothing), never taking the count below
	// zero.
	ReturnQuota(ctx context.Context, caller string, day int64) error
}

// PutResult is the outcome of storing one signal.
type PutResult struct {
	Signal   Signal
	Created  bool
	Conflict bool
}

// SignalFilter selects signals.
type SignalFilter struct {
	State  SignalState // "" means any
	Origin string      // "" means any
	Limit  int         // ≤ 0 means 100
}

// Moderation is a moderation decision.
type Moderation struct {
	State SignalState
	Note  string
	Actor string
	At    time.Time
}

// OriginStats counts the signals of one origin.
type OriginStats struct {
	Origin           string     `json:"origin"`
	Signals          int        `json:"signals"`
	Accepted         int        `json:"accepted"`
	Pending          int        `json:"pending"`
	Rejected         int        `json:"rejected"`
	NewestObservedAt *time.Time `json:"newestObservedAt"`
	LastCollectedAt  *time.Time `json:"lastCollectedAt"`
}

// Collection is one run of a collector (an ingestion call) for one origin.
type Collection struct {
	Origin     string    `json:"origin"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`
	Examined   int       `json:"examined"`
	Added      int       `json:"added"`
	Duplicates int       `json:"duplicates"`
	Status     string    `json:"status"`
}

// Write is one revision to apply atomically.
type Write struct {
	// OperationID identifies the operation for idempotency (required).
	OperationID string
	// RequestHash is a digest of the operation's input.
	RequestHash string
	// ExpectedRevision is the revision the write replaces; 0 creates
	// Record (whose ID must be new).
	ExpectedRevision int
	// Record is the new state; Record.Revision is ExpectedRevision+1.
	Record Record
	// Action, Actor, Reason and At describe the revision.
	Action string
	Actor  string
	Reason string
	At     time.Time
	// Accept lists linked signals to move from pending to accepted in
	// the same transaction.
	Accept []string
	// CheckSignals makes the store refuse the write with a
	// *SignalRefError when a linked signal is unknown or rejected at
	// commit time; the linked signals are locked against concurrent
	// moderation until then. The engine sets it on writes that link
	// signals (create, revise, publish).
	CheckSignals bool
}

// ListQuery selects published evaluations for ListPublished.
type ListQuery struct {
	Query Query
	// Full matches the query against the full text (SearchFields' Title,
	// Body and Extra) instead of what previews show (Title and Preview).
	Full        bool
	CategoryKey string
	// Sort is SortScore or SortRecent.
	Sort  string
	Limit int
}

// Sort orders.
const (
	SortScore  = "score"
	SortRecent = "recent"
)

// CandidateQuery selects search candidates.
type CandidateQuery struct {
	Query Query
	// Full matches the query against the full text (SearchFields' Title,
	// Body and Extra) instead of what previews show (Title and Preview).
	Full        bool
	CategoryKey string
	// Sort (SortScore or SortRecent; "" means SortScore) breaks ties of
	// relevance when a broad query's window is ranked.
	Sort string
	// Limit is the most candidates returned.
	Limit int
	// Window is how many of the newest matches a broad query ranks; 0
	// means 2000.
	Window int
	// Top, when positive and below Limit, is how many of a broad query's
	// ranked candidates the caller needs (the page size): the store may
	// return only the best Top, in any order, saving the reading of rows
	// no page shows.
	Top int
}

// Ranked is how many candidates a store returns for a broad query: Top
// when positive and below Limit, else Limit.
func (q CandidateQuery) Ranked() int {
	if q.Top > 0 && q.Top < q.Limit {
		return q.Top
	}
	return q.Limit
}

// Candidate is a published evaluation matching a search, with what the
// engine ranks by and what a preview shows.
type Candidate struct {
	ID        string
	Score     int
	UpdatedAt time.Time
	// Title, Body and Extra are the indexed text the query was matched
	// against (Record.SearchFields): Title, Preview and "" for a
	// preview-level query; Title, Body and Extra for a full one.
	Title, Body, Extra string
	// Listing is the evaluation's listing, read with the candidate so
	// that a search answered with previews needs no second read. Its
	// SignalCount is not filled by SearchCandidates (the engine reads the
	// counts of the results it returns with SignalCounts); it is in the
	// rows of IndexSource.SearchRows.
	Listing Listing
}

// BulkCreator is implemented by stores that create many evaluations in
// one transaction (store/nichestore: COPY on PostgreSQL); Engine.Import uses it,
// and creates drafts one by one through ApplyWrite otherwise.
type BulkCreator interface {
	// Operations returns the recorded operations among ids.
	Operations(ctx context.Context, ids []string) (map[string]OperationRef, error)
	// CreateEvaluations applies creations (ExpectedRevision 0,
	// CheckSignals) in one transaction, all or none, with ApplyWrite's
	// guarantees: an operation recorded meanwhile, or a linked signal
	// unknown or rejected at commit (*SignalRefError), fails the batch.
	CreateEvaluations(ctx context.Context, ws []Write) error
}

// BulkPreparer is implemented by BulkCreators that build a batch's rows
// apart from writing them (store/nichestore), so that Import builds the
// next batch's rows while the store writes one.
type BulkPreparer interface {
	// PrepareEvaluations builds the rows of ws, the creations
	// CreateEvaluations would write; nothing is written.
	PrepareEvaluations(ws []Write) (PreparedBatch, error)
}

// PreparedBatch is a batch of creations built by a BulkPreparer.
type PreparedBatch interface {
	// Write writes the batch as CreateEvaluations would.
	Write(ctx context.Context) error
}

// OperationRef is a recorded operation: its request hash, the evaluation
// it wrote and that evaluation's current status.
type OperationRef struct {
	RequestHash string
	NicheID     string
	Status      Status
}
