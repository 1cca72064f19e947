package claims

import (
	"context"
	"encoding/json"

	"fmt"
	"time"
)

// SearchProvider makes one agentic search-and-analyse call for a claim and
// reports what it did. Implementations: claims/openai (OpenAI Responses API
// with web_search), claims/anthropic (Anthropic Messages API with the web
// search tool), claims/corpus (offline, over local documents) and
// claims/claimstest (scripted, for tests).
//
// A provider reports; the engine decides. Nothing a provider returns is
// trusted: the engine re-checks URLs, domains, dates and excerpts.
type SearchProvider interface {
	// Name identifies the provider in provenance, e.g. "openai", "corpus".
	Name() string
	// Capabilities describes what the provider can enforce itself.
	Capabilities() ProviderCapabilities
	// Search runs the call. It returns a *ProviderError for classified
	// failures (rate limit, quota, timeout, bad output, not configured).
	// With an error it may also return the partial response of a call that
	// failed after it cost something (a truncated answer): the engine uses
	// only its provider, model, usage and search calls, for accounting.
	Search(ctx context.Context, q *ProviderQuery) (*ProviderResponse, error)
}

// ProviderCapabilities describes a provider's own filtering.
type ProviderCapabilities struct {
	// DomainFilter is true when the provider restricts searching to
	// allowed domains itself.
	DomainFilter bool
	// MaxDomains is the largest allowed-domain list it accepts (0: none).
	MaxDomains int
	// BlockedDomainFilter is true when it can exclude domains itself.
	BlockedDomainFilter bool
	// SourceName is the ProviderSource.provider value, e.g. "openai_web_search".
	SourceName string
	// Offline is true when the provider searches a local document
	// collection, not the web (claims/corpus). Its search actions are still
	// listed in the providerSources, but they are not web searches:
	// provenance says searchedWeb false and webSearchCallCount 0, no
	// per-call search fee is accounted (ProviderUsage.SearchCalls 0), and a
	// limitation says so.
	Offline bool
}

// ProviderQuery is what the engine asks of a provider: the effective
// request (after tier caps and domain normalisation) and the tier budget.
type ProviderQuery struct {
	Tier             string
	Claim            string
	AsOf             *time.Time // date the claim is to be judged at, or nil for now
	Now              time.Time  // current time, to be stated to the model
	Jurisdiction     string
	FreshnessHours   int // 0: no freshness requirement
	SourcePolicy     string
	MinimumSources   int
	MaxSources       int
	AllowedDomains   []string // normalised hostnames
	BlockedDomains   []string // normalised hostnames
	IncludeConflicts bool
	Language         string
	MaxToolActions   int
	MaxOutputTokens  int

	// OnSearchCall, when set, is how a provider that streams reports each
	// tool action (a web search, an opened page, a find in page) as soon
	// as it has ended, before the final answer, so that the engine can
	// start capturing its sources while the model is still writing. Call
	// it through ReportSearchCall, which does nothing when it is nil.
	//
	// The rules for a provider:
	//   - Optional: a provider that cannot stream never calls it (the
	//     engine then starts captures when Search returns). Callers other
	//     than the engine (tests, embedders) may leave it nil.
	//   - Early reports are hints for captures only. The final
	//     ProviderResponse.SearchCalls must still list every action (the
	//     same IDs); nothing reported only early appears in a result.
	//   - Report an action once, with the sources it reported (SearchCall.URL
	//     counts as a source of open_page and find_in_page).
	//   - It may be called from any goroutine, also concurrently; it never
	//     blocks (the engine only starts captures). Calls after Search has
	//     returned may be ignored.
	OnSearchCall func(SearchCall) `json:"-"`
}

// ReportSearchCall reports one finished tool action early through
// OnSearchCall (see there); it does nothing when OnSearchCall is nil.
func (q *ProviderQuery) ReportSearchCall(c SearchCall) {
	if q != nil && q.OnSearchCall != nil {
		q.OnSearchCall(c)
	}
}

// ProviderResponse is everything a provider call produced.
type ProviderResponse struct {
	Provider    string          // e.g. "openai"
	Model       string          // model identifier
	ResponseID  string          // provider's response id
	SearchCalls []SearchCall    // in order
	Citations   []Citation      // URLs the provider's text cites (may be empty)
	Analysis    Analysis        // the structured analysis
	Usage       Usage           // token usage
	Raw         json.RawMessage // the raw provider payload, for audit
}

// Search action types.
const (
	ActionSearch     = "search"
	ActionOpenPage   = "open_page"
	ActionFindInPage = "find_in_page"
)

// SearchCall is one tool action of the provider.
type SearchCall struct {
	ID      string
	Action  string   // ActionSearch, ActionOpenPage or ActionFindInPage
	Queries []string // for search
	URL     string   // for open_page and find_in_page (may be empty)
	Pattern string   // for find_in_page
	Sources []SourceRef
}

// SourceRef is a source a search call reports.
type SourceRef struct {
	URL   string
	Title string
}

// Citation is a URL the provider's output text cites.
type Citation struct {
	URL   string
	Title string
}

// Analysis is the provider's structured judgement, before reconciliation.
type Analysis struct {
	Status      Status
	Conclusion  string
	AtomicFacts []ProviderFact // EvidenceIDs refer to Analysis.Evidence IDs
	Evidence    []ProviderEvidence
	Conflicts   []Conflict
	Limitations []string
}

// ProviderFact is an atomic fact as the provider wrote it.
type ProviderFact struct {
	Statement   string   `json:"statement"`
	Status      Status   `json:"status"`
	Confidence  float64  `json:"confidence"` // 0..1
	Explanation string   `json:"explanation"`
	EvidenceIDs []string `json:"evidenceIds"`
	// TimeSensitive is the provider's mark for a fact whose truth changes
	// over time ("the current rate is 4%"): only evidence published within
	// the freshness window counts for it. Nil when the provider did not say
	// (an older model, another provider): the engine then reads the
	// wording of the fact and of the claim (see TimeSensitive). A
	// statement whose own wording is time-sensitive is treated so whatever
	// the mark says.
	TimeSensitive *bool `json:"timeSensitive,omitempty"`
}

// ProviderEvidence is an evidence item as the provider wrote it.
type ProviderEvidence struct {
	ID            string
	URL           string
	Title         string
	Publisher     string
	PublishedAt   *string
	Excerpt       string
	Relationship  Relationship
	SourceType    string
	QualityReason string
}

// Usage is the provider's token accounting.
type Usage struct {
	InputTokens       int
	CachedInputTokens int
	OutputTokens      int
}

// ProviderErrorKind classifies provider failures.
type ProviderErrorKind int

// Provider failure kinds.
const (
	ProviderFailed         ProviderErrorKind = iota // anything else (maps to 502)
	ProviderRateLimited                             // retryable later (503 with Retry-After)
	ProviderQuotaExhausted                          // billing exhausted: not retryable (503)
	ProviderTimeout                                 // deadline passed (504)
	ProviderBadOutput                               // unusable output, e.g. truncated JSON (502)
	ProviderNotConfigured                           // no credentials (503)
)

// ProviderError is a classified provider failure.
type ProviderError struct {
	Kind       ProviderErrorKind
	RetryAfter time.Duration // when known
	Err        error
}

func (e *ProviderError) Error() string {
	names := [...]string{"failed", "rate limited", "quota exhausted", "timed out", "bad output", "not configured"}
	name := "failed"
	if int(e.Kind) < len(names) {
		name = names[e.Kind]
	}
	if e.Err == nil {
		return "claims: provider " + name
	}
	return fmt.Sprintf("claims: provider %s: %v", name, e.Err)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrProvider*) match by kind.
func (e *ProviderError) Is(target error) bool {
	t, ok := target.(*ProviderError)
	return ok && t.Err == nil && t.Kind == e.Kind
}

// Sentinels for errors.Is on provider failures.
var (
	ErrProviderFailed         error = &ProviderError{Kind: ProviderFailed}
	ErrProviderRateLimited    error = &ProviderError{Kind: ProviderRateLimited}
	ErrProviderQuotaExhausted error = &ProviderError{Kind: ProviderQuotaExhausted}
	ErrProviderTimeout        error = &ProviderError{Kind: ProviderTimeout}
	ErrProviderBadOutput      error = &ProviderError{Kind: ProviderBadOutput}
	ErrProviderNotConfigured  error = &ProviderError{Kind: ProviderNotConfigured}
)
