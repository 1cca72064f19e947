package niche

import (
	"cmp"
	"slices"
	"time"

	"github.com/assaykit/assay/internal/urlnorm"
	"github.com/assaykit/assay/snapshot"
)

// Status is an evaluation's publication state.
type Status string

// Publication states: a draft is visible to curators only; published
// evaluations are listed, searched, previewed and sold; withdrawn ones are
// hidden again (and can be published anew).
const (
	StatusDraft     Status = "draft"
	StatusPublished Status = "published"
	StatusWithdrawn Status = "withdrawn"
)

// ScoreType says what the score is: an editorial hypothesis from the six
// criteria, not a market-size estimate.
const ScoreType = "editorial_hypothesis"

// Record is an evaluation as stored: the draft, the computed score and
// the publication state. Stores persist it; Evaluation is what readers get.
type Record struct {
	ID                 string     `json:"id"`
	Title              string     `json:"title"`
	Problem            string     `json:"problem"`
	Buyer              string     `json:"buyer"`
	Category           string     `json:"category"`
	SolutionHypothesis string     `json:"solutionHypothesis"`
	EvaluationNotes    string     `json:"evaluationNotes"`
	Dimensions         Dimensions `json:"dimensions"`
	SignalIDs          []string   `json:"signalIds"`
	Score              int        `json:"score"`
	ScoreVersion       string     `json:"scoreVersion"`
	ScoreWeights       Weights    `json:"scoreWeights"`
	Status             Status     `json:"status"`
	Revision           int        `json:"revision"`
	CreatedAt          time.Time  `json:"createdAt"`
	UpdatedAt          time.Time  `json:"updatedAt"`
	// PublishedAt is when the evaluation was last published (zero if
	// never).
	PublishedAt time.Time `json:"publishedAt,omitzero"`
	// Rationale is the curator's reason for each criterion's value.
	Rationale Rationale `json:"rationale"`
	// ReviewedAt and ReviewedBy are the time and actor of the last
	// curator review: the last create, revise or publish (rescores and
	// withdrawals are not reviews). Zero if never.
	ReviewedAt time.Time `json:"reviewedAt,omitzero"`
	ReviewedBy string    `json:"reviewedBy,omitempty"`
}

// Rationale is a short reason per criterion, in the order and with the
// names of Dimensions; an empty string is a criterion without one.
type Rationale struct {
	Pain             string `json:"pain"`
	Frequency        string `json:"frequency"`
	WillingnessToPay string `json:"willingnessToPay"`
	ReachableBuyers  string `json:"reachableBuyers"`
	Feasibility      string `json:"feasibility"`
	CompetitionGap   string `json:"competitionGap"`
}

// Review states.
const (
	// ReviewCurrent: a curator reviewed the evaluation within
	// Options.ReviewInterval.
	ReviewCurrent = "reviewed"
	// ReviewDue: the last review is older than Options.ReviewInterval.
	ReviewDue = "review_due"
	// ReviewNever: no curator review is recorded (rows older than review
	// tracking, or bulk loads).
	ReviewNever = "unreviewed"
)

// Review says when the evaluation was last reviewed and whether a new
// review is due.
type Review struct {
	// Status is ReviewCurrent, ReviewDue or ReviewNever.
	Status         string     `json:"status"`
	LastReviewedAt *time.Time `json:"lastReviewedAt"`
	LastReviewedBy *string    `json:"lastReviewedBy"`
	// NextReviewDue is LastReviewedAt plus Options.ReviewInterval.
	NextReviewDue *time.Time `json:"nextReviewDue"`
}

// SearchFields is the normalised, stemmed text (Language.SearchText) a store indexes for one
// evaluation, by access level. A preview-level search matches Title and
// Preview only — exactly what a preview shows — so that the words of the
// hidden text (the rest of the problem, the solution hypothesis) can never
// be probed by searching; a full-level search matches Title, Body and
// Extra. Evaluation notes are never indexed.
type SearchFields struct {
	// Title is the title (both levels).
	Title string
	// Preview is the problem teaser at DefaultTeaserLength, the buyer and
	// the category: the rest of what a preview shows (preview level).
	Preview string
	// Body is the whole problem, the buyer and the category (full level).
	Body string
	// Extra is the solution hypothesis (full level).
	Extra string
}

// SearchFields returns the text a store indexing with lang indexes for r.
func (r *Record) SearchFields(lang Language) SearchFields {
	return r.searchFields(lang.SearchText)
}

func (r *Record) searchFields(text func(string) string) SearchFields {
	return SearchFields{
		Title:   text(r.Title),
		Preview: text(Teaser(r.Problem, DefaultTeaserLength) + " " + r.Buyer + " " + r.Category),
		Body:    text(r.Problem + " " + r.Buyer + " " + r.Category),
		Extra:   text(r.SolutionHypothesis),
	}
}

// PreviewSearchText is the text that preview-level searches match besides
// the title: the problem teaser (Teaser at DefaultTeaserLength), the
// buyer and the category, through l.SearchText.
func (l Language) PreviewSearchText(problem, buyer, category string) string {
	return l.SearchText(Teaser(problem, DefaultTeaserLength) + " " + buyer + " " + category)
}

// CategoryKey returns the case-insensitive key of the record's category.
func (r *Record) CategoryKey() string { return CategoryKey(r.Category) }

// Evaluation is the full evaluation: what subscribers and paying callers
// read. Every key is camelCase.
type Evaluation struct {
	ID                 string     `json:"id"`
	Title              string     `json:"title"`
	Problem            string     `json:"problem"`
	Buyer              string     `json:"buyer"`
	Category           string     `json:"category"`
	SolutionHypothesis string     `json:"solutionHypothesis"`
	EvaluationNotes    string     `json:"evaluationNotes"`
	Dimensions         Dimensions `json:"dimensions"`
	// Rationale is the curator's short reason for each criterion.
	Rationale    Rationale `json:"rationale"`
	Score        int       `json:"score"`
	ScoreVersion string    `json:"scoreVersion"`
	ScoreType    string    `json:"scoreType"`
	ScoreWeights Weights   `json:"scoreWeights"`
	// Confidence is "high", "medium" or "low" (see the package
	// documentation for the rule).
	Confidence      string          `json:"confidence"`
	EvidenceSummary EvidenceSummary `json:"evidenceSummary"`
	Trend           Trend           `json:"trend"`
	// SignalIDs are the linked signal ids as the curator ordered them.
	SignalIDs []string `json:"signalIds"`
	// Evidence lists the linked signals that are not rejected, newest
	// observation first.
	Evidence    []Evidence `json:"evidence"`
	Status      Status     `json:"status"`
	Revision    int        `json:"revision"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	PublishedAt *time.Time `json:"publishedAt"`
	// Review is the review status and last-reviewed date.
	Review Review `json:"review"`
}

// Evidence is a linked signal as readers see it.
type Evidence struct {
	ID           string           `json:"id"`
	Kind         SignalKind       `json:"kind"`
	Demand       bool             `json:"demand"`
	SourceURL    string           `json:"sourceUrl"`
	SourceDomain string           `json:"sourceDomain"`
	Origin       string           `json:"origin"`
	Title        string           `json:"title"`
	Excerpt      string           `json:"excerpt"`
	ObservedAt   time.Time        `json:"observedAt"`
	CollectedAt  time.Time        `json:"collectedAt"`
	License      string           `json:"license"`
	Attribution  string           `json:"attribution"`
	Engagement   map[string]int64 `json:"engagement,omitempty"`
	// SnapshotID is the capture of SourceURL (GET
	// /v1/url-snapshots/{snapshotId} serves its record and content); null
	// when the page was never captured.
	SnapshotID *string `json:"snapshotId"`
	// CaptureStatus is the capture's status (a SnapshotStatus: captured,
	// failed, blocked, too_large, unsupported) or "not_captured".
	CaptureStatus string `json:"captureStatus"`
	// CaptureReason says why a capture failed (the record's
	// failureReason); null when captured or never tried.
	CaptureReason *string `json:"captureReason"`
	// Snapshot is the capture record: snapshotId, requestedUrl,
	// retrievedAt (the capture time), status, rawSha256 and
	// normalizedSha256 (the hashes) and the rest of an EvidenceSnapshot.
	Snapshot *snapshot.Snapshot `json:"snapshot"`
}

// EvidenceSummary counts the evidence. Rejected signals are not counted.
type EvidenceSummary struct {
	SignalCount        int `json:"signalCount"`
	DemandSignalCount  int `json:"demandSignalCount"`
	ContextSignalCount int `json:"contextSignalCount"`
	// DemandPageCount is the number of distinct pages among demand
	// signals: their source URLs compared by urlnorm.Key (scheme, host
	// case, "www.", default port, fragment, trailing slash and query
	// order ignored), so the same page collected twice, or by two
	// origins, counts once. The publication floor counts these.
	DemandPageCount int `json:"demandPageCount"`
	// IndependentSourceCount is the number of distinct registrable
	// domains among demand signals.
	IndependentSourceCount int `json:"independentSourceCount"`
	// CapturedSignalCount is the number of signals whose page was
	// captured; CapturedDemandPageCount and CapturedSourceCount are
	// DemandPageCount and IndependentSourceCount over those only (what
	// the publication floor counts when the engine captures pages).
	CapturedSignalCount     int        `json:"capturedSignalCount"`
	CapturedDemandPageCount int        `json:"capturedDemandPageCount"`
	CapturedSourceCount     int        `json:"capturedSourceCount"`
	NewestObservedAt        *time.Time `json:"newestObservedAt"`
	OldestObservedAt        *time.Time `json:"oldestObservedAt"`
}

// Trend directions.
const (
	TrendRising       = "rising"
	TrendStable       = "stable"
	TrendFalling      = "falling"
	TrendInsufficient = "insufficient_history"
)

// Trend compares demand signals observed in the last 30 days with the 30
// days before, as of AsOf.
type Trend struct {
	Direction      string    `json:"direction"`
	Recent30Days   int       `json:"recent30Days"`
	Previous30Days int       `json:"previous30Days"`
	MinimumSignals int       `json:"minimumSignals"`
	AsOf           time.Time `json:"asOf"`
}

// Revision is one entry of an evaluation's history: who changed it, when,
// why, and the state it left.
type Revision struct {
	NicheID     string    `json:"nicheId"`
	Revision    int       `json:"revision"`
	Action      string    `json:"action"`
	Actor       string    `json:"actor"`
	Reason      string    `json:"reason"`
	OperationID string    `json:"operationId"`
	At          time.Time `json:"at"`
	// State is the evaluation as this revision left it.
	State Record `json:"state"`
}

// Revision actions.
const (
	ActionCreate   = "create"
	ActionRevise   = "revise"
	ActionPublish  = "publish"
	ActionWithdraw = "withdraw"
	// ActionRescore is a revision written by Engine.Rescore: the score
	// recomputed with the engine's current Scorer, nothing else changed.
	ActionRescore = "rescore"
)

// SystemActor is the actor of revisions the engine writes on its own:
// withdrawals after a linked signal was rejected.
const SystemActor = "system"

// evidenceStats is what the publication floor and the summary need.
type evidenceStats struct {
	// demand counts demand signals, pages the distinct pages among them
	// (pageKey) and domains their registrable domains.
	demand, pages, context, domains int
	newest, oldest                  time.Time
}

// pageKey is the key by which two demand signals are the same page:
// urlnorm.Key of the source URL (the URL itself if urlnorm refuses it).
func pageKey(sourceURL string) string {
	if k, err := urlnorm.Key(sourceURL); err == nil {
		return k
	}
	return sourceURL
}

// statsOf counts the signals that are not rejected.
func statsOf(signals []Signal) evidenceStats { return statsOfKeyed(signals, pageKey) }

// statsOfKeyed is statsOf with the function that keys a page.
func statsOfKeyed(signals []Signal, key func(string) string) evidenceStats {
	var st evidenceStats
	domains, pages := map[string]bool{}, map[string]bool{}
	for _, s := range signals {
		if s.State == StateRejected {
			continue
		}
		if s.Kind.Demand() {
			st.demand++
			domains[s.SourceDomain] = true
			pages[key(s.SourceURL)] = true
		} else {
			st.context++
		}
		if st.newest.IsZero() || s.ObservedAt.After(st.newest) {
			st.newest = s.ObservedAt
		}
		if st.oldest.IsZero() || s.ObservedAt.Before(st.oldest) {
			st.oldest = s.ObservedAt
		}
	}
	st.domains, st.pages = len(domains), len(pages)
	return st
}

// build assembles the full evaluation of r from its linked signals as of
// now.
func (e *Engine) build(r *Record, signals map[string]Signal, now time.Time) *Evaluation {
	ev := &Evaluation{
		ID: r.ID, Title: r.Title, Problem: r.Problem, Buyer: r.Buyer, Category: r.Category,
		SolutionHypothesis: r.SolutionHypothesis, EvaluationNotes: r.EvaluationNotes,
		Dimensions: r.Dimensions, Rationale: r.Rationale, Score: r.Score, ScoreVersion: r.ScoreVersion, ScoreType: ScoreType,
		ScoreWeights: r.ScoreWeights, Status: r.Status, Revision: r.Revision,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Evidence: []Evidence{}, SignalIDs: slices.Clone(r.SignalIDs),
	}
	if !r.PublishedAt.IsZero() {
		t := r.PublishedAt
		ev.PublishedAt = &t
	}
	linked := make([]Signal, 0, len(r.SignalIDs))
	for _, id := range r.SignalIDs {
		if s, ok := signals[id]; ok && s.State != StateRejected {
			linked = append(linked, s)
		}
	}
	slices.SortFunc(linked, func(a, b Signal) int {
		if c := b.ObservedAt.Compare(a.ObservedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for _, s := range linked {
		ev.Evidence = append(ev.Evidence, evidenceOf(s))
	}
	st := statsOf(linked)
	captured := slices.DeleteFunc(slices.Clone(linked), func(s Signal) bool { return !s.Snapshot.Captured() })
	cst := statsOf(captured)
	ev.EvidenceSummary = EvidenceSummary{
		SignalCount: len(linked), DemandSignalCount: st.demand, ContextSignalCount: st.context,
		DemandPageCount: st.pages, IndependentSourceCount: st.domains,
		CapturedSignalCount: len(captured), CapturedDemandPageCount: cst.pages, CapturedSourceCount: cst.domains,
	}
	ev.Review = e.review(r, now)
	if !st.newest.IsZero() {
		n, o := st.newest, st.oldest
		ev.EvidenceSummary.NewestObservedAt, ev.EvidenceSummary.OldestObservedAt = &n, &o
	}
	ev.Trend = e.trend(linked, now)
	ev.Confidence = e.confidence(st, now)
	return ev
}

// evidenceOf is signal s as readers see it, with its capture.
func evidenceOf(s Signal) Evidence {
	ev := Evidence{
		ID: s.ID, Kind: s.Kind, Demand: s.Kind.Demand(), SourceURL: s.SourceURL, SourceDomain: s.SourceDomain,
		Origin: s.Origin, Title: s.Title, Excerpt: s.Excerpt, ObservedAt: s.ObservedAt, CollectedAt: s.CollectedAt,
		License: s.License, Attribution: s.Attribution, Engagement: s.Engagement, CaptureStatus: NotCaptured,
	}
	if snap := s.Snapshot; snap != nil {
		ev.Snapshot = snap.Clone()
		ev.SnapshotID = &ev.Snapshot.ID
		ev.CaptureStatus = string(snap.Status)
		ev.CaptureReason = ev.Snapshot.FailureReason
	}
	return ev
}

// review is the review status of r as of now.
func (e *Engine) review(r *Record, now time.Time) Review {
	if r.ReviewedAt.IsZero() {
		return Review{Status: ReviewNever}
	}
	at, by, due := r.ReviewedAt, r.ReviewedBy, r.ReviewedAt.Add(e.opts.ReviewInterval)
	rv := Review{Status: ReviewCurrent, LastReviewedAt: &at, LastReviewedBy: &by, NextReviewDue: &due}
	if now.After(due) {
		rv.Status = ReviewDue
	}
	return rv
}

// trend counts demand signals in (now-30d, now] and (now-60d, now-30d].
func (e *Engine) trend(linked []Signal, now time.Time) Trend {
	t := Trend{MinimumSignals: e.opts.TrendMinSignals, AsOf: now}
	day := 24 * time.Hour
	for _, s := range linked {
		if !s.Kind.Demand() {
			continue
		}
		age := now.Sub(s.ObservedAt)
		switch {
		case age < 0:
			t.Recent30Days++ // within the allowed clock skew
		case age < 30*day:
			t.Recent30Days++
		case age < 60*day:
			t.Previous30Days++
		}
	}
	switch {
	case t.Recent30Days+t.Previous30Days < t.MinimumSignals:
		t.Direction = TrendInsufficient
	case 2*t.Recent30Days > 3*t.Previous30Days:
		t.Direction = TrendRising
	case 2*t.Previous30Days > 3*t.Recent30Days:
		t.Direction = TrendFalling
	default:
		t.Direction = TrendStable
	}
	return t
}

// confidence: high with at least twice the floor's demand pages from at
// least one more independent source than the floor requires and an
// observation in the last 90 days; medium when the floor is met; low
// otherwise.
func (e *Engine) confidence(st evidenceStats, now time.Time) string {
	minD, minS := e.opts.MinDemandSignals, e.opts.MinIndependentSources
	switch {
	case st.pages >= 2*minD && st.domains >= minS+1 && now.Sub(st.newest) <= 90*24*time.Hour:
		return "high"
	case st.pages >= minD && st.domains >= minS:
		return "medium"
	}
	return "low"
}
