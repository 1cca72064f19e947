package claims

import (
	"time"

	"github.com/assaykit/assay/field"
	"github.com/assaykit/assay/internal/valid"
	"github.com/assaykit/assay/snapshot"
)

// Request is the interface document's ClaimVerificationRequest, the body of
// every verification tier (no extra properties).
//
// Its zero value works: a field left unset takes the documented default
// when the engine reads the request (Check, Verify), as the same field
// left out of a JSON body does, so Request{Claim: "…"} is verified exactly
// as the body {"claim": "…"} (freshnessHours 168, sourcePolicy
// authoritative, minimumSources 2, maxSources 8, no domain lists,
// includeConflicts true, language auto). SetDefaults writes the defaults
// into the fields; no caller needs it for correctness.
//
// Unset is the zero value. Where a zero value is itself an explicit
// choice, the field says so by its type: IncludeConflicts is a pointer
// (nil: the default, true; new(false): no conflicts), FreshnessHours a
// field.Nullable (unset: the default, 168 hours; field.Null[int](): no
// freshness requirement, the document's null; field.Value(24): 24 hours).
// An explicit zero elsewhere (minimumSources 0, language "") is outside
// the document's bounds, so zero can only mean unset.
//
// The validate tags state each bound once: Validate checks them on a Go
// value (validator/v10) and shapes.Decode on a JSON body, with Pydantic's
// errors, from the same tags.
type Request struct {
	Claim        string      `json:"claim" validate:"required,min=3,max=4000"`
	AsOf         *field.Date `json:"asOf" validate:"omitnil"`                 // date or null, default null
	Jurisdiction *string     `json:"jurisdiction" validate:"omitnil,max=100"` // default null
	// FreshnessHours: unset means DefaultFreshnessHours, null no
	// freshness requirement.
	FreshnessHours field.Nullable[int] `json:"freshnessHours" validate:"omitnil,gte=1,lte=8760"`
	SourcePolicy   string              `json:"sourcePolicy" validate:"omitempty,oneof=official_only authoritative open_web"`
	MinimumSources int                 `json:"minimumSources" validate:"omitempty,gte=1,lte=10"`
	MaxSources     int                 `json:"maxSources" validate:"omitempty,gte=1,lte=20"`
	// AllowedDomains and BlockedDomains hold host names (the domainname
	// pattern of internal/valid: "example.com", "*.example.com",
	// "xn--bcher-kva.example"); a host within a blocked domain never
	// counts, also when it is within an allowed one too.
	AllowedDomains []string `json:"allowedDomains" validate:"max=100,dive,max=253,domainname"`
	BlockedDomains []string `json:"blockedDomains" validate:"max=100,dive,max=253,domainname"`
	// IncludeConflicts: nil means DefaultIncludeConflicts.
	IncludeConflicts *bool  `json:"includeConflicts"`
	Language         string `json:"language" validate:"omitempty,min=2,max=35"`
}

// The documented defaults of a Request's fields (the asOf, jurisdiction
// and domain lists default to none).
const (
	DefaultFreshnessHours   = 168
	DefaultSourcePolicy     = PolicyAuthoritative
	DefaultMinimumSources   = 2
	DefaultMaxSources       = 8
	DefaultIncludeConflicts = true
	DefaultLanguage         = "auto"
)

// SetDefaults sets every field to its documented default, as a JSON body
// holding only a claim would; shapes.Decode calls it before reading a body
// (and its JSON Schema shows these defaults). The engine applies the same
// defaults to unset fields itself.
func (r *Request) SetDefaults() {
	*r = Request{
		FreshnessHours:   field.Value(DefaultFreshnessHours),
		SourcePolicy:     DefaultSourcePolicy,
		MinimumSources:   DefaultMinimumSources,
		MaxSources:       DefaultMaxSources,
		AllowedDomains:   []string{},
		BlockedDomains:   []string{},
		IncludeConflicts: new(DefaultIncludeConflicts),
		Language:         DefaultLanguage,
	}
}

// Validate checks the bounds of the validate tags and returns a
// *RequestError for the first field that breaks one, with Pydantic's
// message prefixed by the field ("claim: String should have at least 3
// characters"): the message a JSON body with the same value gets. Unset
// fields pass (they take their defaults). Check and Verify call it.
func (r *Request) Validate() error {
	if es := valid.Struct(r); len(es) > 0 {
		return &RequestError{Field: es[0].Path(), Msg: es[0].Error()}
	}
	return nil
}

// Status is the interface document's VerificationStatus.
type Status string

// Verification statuses.
const (
	StatusConfirmed            Status = "confirmed"
	StatusPartiallyConfirmed   Status = "partially_confirmed"
	StatusContradicted         Status = "contradicted"
	StatusInsufficientEvidence Status = "insufficient_evidence"
	StatusAmbiguous            Status = "ambiguous"
)

// Relationship is the interface document's EvidenceRelationship.
type Relationship string

// Evidence relationships.
const (
	Supports    Relationship = "supports"
	Contradicts Relationship = "contradicts"
	Context     Relationship = "context"
)

// Result is the interface document's ClaimVerificationResult. Slices are
// never nil in a result the engine returns, so they serialise as [].
type Result struct {
	VerificationID  string              `json:"verificationId"`
	Claim           string              `json:"claim"`
	Status          Status              `json:"status"`
	ObservedAt      time.Time           `json:"observedAt"`
	Conclusion      string              `json:"conclusion"`
	AtomicFacts     []AtomicFact        `json:"atomicFacts"`
	ProviderSources []ProviderSource    `json:"providerSources"`
	Evidence        []Evidence          `json:"evidence"`
	Snapshots       []snapshot.Snapshot `json:"snapshots"`
	Conflicts       []Conflict          `json:"conflicts"`
	Limitations     []string            `json:"limitations"`
	Provenance      Provenance          `json:"provenance"`
}

// AtomicFact is one checkable part of the claim.
type AtomicFact struct {
	Statement   string   `json:"statement"`
	Status      Status   `json:"status"`
	Confidence  float64  `json:"confidence"` // 0..1
	Explanation string   `json:"explanation"`
	EvidenceIDs []string `json:"evidenceIds"`
}

// Evidence is one source passage the verdict rests on.
type Evidence struct {
	ID                    string       `json:"id"`
	URL                   string       `json:"url"`
	Title                 string       `json:"title"`
	Publisher             string       `json:"publisher"`
	PublishedAt           *string      `json:"publishedAt"`
	RetrievedAt           time.Time    `json:"retrievedAt"`
	Excerpt               string       `json:"excerpt"`
	Relationship          Relationship `json:"relationship"`
	SourceType            string       `json:"sourceType"`
	QualityReason         string       `json:"qualityReason"`
	ProviderSourceMatched bool         `json:"providerSourceMatched"`
	Cited                 bool         `json:"cited"`
	SnapshotID            *string      `json:"snapshotId"`
	Consulted             bool         `json:"consulted"`
	Snapshotted           bool         `json:"snapshotted"`

	// Quote is the outcome of comparing Excerpt with the item's page, and
	// Counted whether the item counted toward the verdict of an atomic
	// fact. They are not serialised (the interface document's Evidence
	// allows no extra properties): the first clause of QualityReason
	// states Quote and its last clause Counted, and a result read back from
	// a Store gets both from there.
	Quote   QuoteCheck `json:"-"`
	Counted bool       `json:"-"`
}

// QuoteCheck is the outcome of checking an evidence excerpt against its
// page (see Snapshots in the package documentation).
type QuoteCheck string

// Quote check outcomes. Only QuoteVerified evidence counts toward a
// verdict.
const (
	// QuoteVerified: the excerpt occurs on the page, captured in a
	// snapshot (standard, deep, research) or fetched for this check and not
	// kept (quick).
	QuoteVerified QuoteCheck = "verified"
	// QuoteNotFound: the page was fetched and has text, and the excerpt is
	// not in it.
	QuoteNotFound QuoteCheck = "not_found"
	// QuoteNotChecked: there was no page text to compare with (the page
	// failed, was refused by the capture guard, was too large, of an
	// unsupported type or without extractable text, was not among the
	// pages the tier captures, or the item has no excerpt); QualityReason
	// says why.
	QuoteNotChecked QuoteCheck = "not_checked"
)

// ProviderSource is a source the search provider reports having consulted.
type ProviderSource struct {
	SourceID      string   `json:"sourceId"`
	URL           string   `json:"url"`
	Title         *string  `json:"title"`
	Provider      string   `json:"provider"` // <vendor>_web_search
	SearchCallIDs []string `json:"searchCallIds"`
	Actions       []string `json:"actions"`
	Queries       []string `json:"queries"`
	EvidenceIDs   []string `json:"evidenceIds"`
	Cited         bool     `json:"cited"`
	SnapshotID    *string  `json:"snapshotId"`
}

// Conflict records evidence that disagrees.
type Conflict struct {
	Summary     string   `json:"summary"`
	EvidenceIDs []string `json:"evidenceIds"`
}

// Provenance counts what was done to produce a result. Every counter is
// computed from the result's own data, not copied from the provider.
type Provenance struct {
	Provider               string `json:"provider"`
	Model                  string `json:"model"`
	ProviderResponseID     string `json:"providerResponseId"`
	SearchedWeb            bool   `json:"searchedWeb"`
	ConsultedSourceCount   int    `json:"consultedSourceCount"`
	CitedSourceCount       int    `json:"citedSourceCount"`
	ProviderSourceCount    int    `json:"providerSourceCount"`
	MatchedEvidenceCount   int    `json:"matchedEvidenceCount"`
	SnapshottedSourceCount int    `json:"snapshottedSourceCount"`
	WebSearchCallCount     int    `json:"webSearchCallCount"`
	InputTokens            int    `json:"inputTokens"`
	CachedInputTokens      int    `json:"cachedInputTokens"`
	OutputTokens           int    `json:"outputTokens"`
	CacheHit               bool   `json:"cacheHit"`
}
