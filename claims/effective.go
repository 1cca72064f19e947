package claims

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/assaykit/assay/internal/urlnorm"
	"github.com/assaykit/assay/shapes"
)

// Source policies.
const (
	PolicyOfficialOnly  = "official_only"
	PolicyAuthoritative = "authoritative"
	PolicyOpenWeb       = "open_web"
)

// Effective is a request after the tier rules: what the engine actually
// runs, and what idempotency and caching compare. Domains are normalised,
// deduplicated and sorted; MaxSources is capped by the tier.
type Effective struct {
	Tier             Tier
	Claim            string
	AsOf             *shapes.Date
	Jurisdiction     *string
	FreshnessHours   int // 0: no freshness requirement (freshnessHours null)
	SourcePolicy     string
	MinimumSources   int
	MaxSources       int // min(request maxSources, tier cap)
	AllowedDomains   []string
	BlockedDomains   []string
	IncludeConflicts bool
	Language         string
}

// hashForm is the serialisation hashed by Hash: every field with defaults
// applied, in a fixed order.
type hashForm struct {
	V                int      `json:"v"`
	Tier             string   `json:"tier"`
	Claim            string   `json:"claim"`
	AsOf             *string  `json:"asOf"`
	Jurisdiction     *string  `json:"jurisdiction"`
	FreshnessHours   int      `json:"freshnessHours"`
	SourcePolicy     string   `json:"sourcePolicy"`
	MinimumSources   int      `json:"minimumSources"`
	MaxSources       int      `json:"maxSources"`
	AllowedDomains   []string `json:"allowedDomains"`
	BlockedDomains   []string `json:"blockedDomains"`
	IncludeConflicts bool     `json:"includeConflicts"`
	Language         string   `json:"language"`
}

// Hash is the SHA-256 (hex) of the effective request serialised with every
// default applied. Two requests with the same hash on the same tier are the
// same request for idempotency and caching.
func (e *Effective) Hash() string {
	f := hashForm{V: 1, Tier: e.Tier.Name, Claim: e.Claim, Jurisdiction: e.Jurisdiction,
		FreshnessHours: e.FreshnessHours, SourcePolicy: e.SourcePolicy, MinimumSources: e.MinimumSources,
		MaxSources: e.MaxSources, AllowedDomains: e.AllowedDomains, BlockedDomains: e.BlockedDomains,
		IncludeConflicts: e.IncludeConflicts, Language: e.Language}
	if e.AsOf != nil {
		s := e.AsOf.String()
		f.AsOf = &s
	}
	b, _ := json.Marshal(f) // plain data: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func reqErr(field, format string, args ...any) *RequestError {
	return &RequestError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Check applies the tier rules to req and returns the effective request,
// or a *RequestError. It does no I/O: the HTTP layer calls it before asking
// for payment, so nothing it refuses is ever charged.
//
// The document's bounds are checked again here (the HTTP decoder checks
// them first) so that callers using the engine directly get the same
// guarantees.
func (e *Engine) Check(tier string, req *Request) (*Effective, error) {
	return check(tier, req)
}

func check(tier string, req *Request) (*Effective, error) {
	t, ok := TierByName(tier)
	if !ok {
		return nil, reqErr("", "Unknown verification tier %q", tier)
	}
	if req == nil {
		return nil, reqErr("", "The request is empty")
	}
	if n := utf8.RuneCountInString(req.Claim); n < 3 || n > 4000 {
		return nil, reqErr("claim", "claim must be 3 to 4000 characters long (got %d)", n)
	}
	if req.Jurisdiction != nil && utf8.RuneCountInString(*req.Jurisdiction) > 100 {
		return nil, reqErr("jurisdiction", "jurisdiction must be at most 100 characters long")
	}
	fresh := 0
	if req.FreshnessHours != nil {
		fresh = *req.FreshnessHours
		if fresh < 1 || fresh > 8760 {
			return nil, reqErr("freshnessHours", "freshnessHours must be between 1 and 8760 (got %d)", fresh)
		}
	}
	policy := req.SourcePolicy
	if policy == "" {
		policy = PolicyAuthoritative
	}
	if policy != PolicyOfficialOnly && policy != PolicyAuthoritative && policy != PolicyOpenWeb {
		return nil, reqErr("sourcePolicy", "sourcePolicy must be 'official_only', 'authoritative' or 'open_web'")
	}
	if req.MinimumSources < 1 || req.MinimumSources > 10 {
		return nil, reqErr("minimumSources", "minimumSources must be between 1 and 10 (got %d)", req.MinimumSources)
	}
	if req.MaxSources < 1 || req.MaxSources > 20 {
		return nil, reqErr("maxSources", "maxSources must be between 1 and 20 (got %d)", req.MaxSources)
	}
	lang := req.Language
	if lang == "" {
		lang = "auto"
	}
	if n := utf8.RuneCountInString(lang); n < 2 || n > 35 {
		return nil, reqErr("language", "language must be 2 to 35 characters long")
	}
	if req.MinimumSources > req.MaxSources {
		return nil, reqErr("", "minimumSources (%d) must not exceed maxSources (%d)", req.MinimumSources, req.MaxSources)
	}
	maxSources := min(req.MaxSources, t.MaxCitedSources)
	if req.MinimumSources > maxSources {
		return nil, reqErr("", "The %s tier supports at most %d cited sources; minimumSources (%d) cannot be met",
			t.Name, t.MaxCitedSources, req.MinimumSources)
	}
	if n := t.CheckablePages(); req.MinimumSources > n {
		return nil, reqErr("", "The %s tier checks quotes on at most %d captured pages; minimumSources (%d) cannot be met%s",
			t.Name, n, req.MinimumSources, tierThatChecks(req.MinimumSources))
	}
	allowed, err := normDomains("allowedDomains", req.AllowedDomains)
	if err != nil {
		return nil, err
	}
	blocked, err := normDomains("blockedDomains", req.BlockedDomains)
	if err != nil {
		return nil, err
	}
	for _, d := range allowed {
		if _, found := slices.BinarySearch(blocked, d); found {
			return nil, reqErr("", "Domain %q is both allowed and blocked", d)
		}
	}
	if policy == PolicyOfficialOnly && len(allowed) == 0 {
		return nil, reqErr("", "allowedDomains is required when sourcePolicy is official_only")
	}
	var asOf *shapes.Date
	if req.AsOf != nil {
		d := *req.AsOf
		asOf = &d
	}
	var jur *string
	if req.Jurisdiction != nil {
		j := *req.Jurisdiction
		jur = &j
	}
	return &Effective{
		Tier: t, Claim: req.Claim, AsOf: asOf, Jurisdiction: jur, FreshnessHours: fresh,
		SourcePolicy: policy, MinimumSources: req.MinimumSources, MaxSources: maxSources,
		AllowedDomains: allowed, BlockedDomains: blocked, IncludeConflicts: req.IncludeConflicts,
		Language: lang,
	}, nil
}

// normDomains normalises, deduplicates and sorts a domain list.
func normDomains(field string, in []string) ([]string, error) {
	if len(in) > 100 {
		return nil, reqErr(field, "%s must have at most 100 items (got %d)", field, len(in))
	}
	out := make([]string, 0, len(in))
	for i, d := range in {
		n, err := urlnorm.Domain(d)
		if err != nil {
			msg := err.Error()
			if ue, ok := err.(*urlnorm.Error); ok {
				msg = ue.Msg
			}
			return nil, reqErr(field, "%s[%d]: %s", field, i, msg)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// tierThatChecks names the cheapest tier that checks quotes on n pages, for
// the message refusing a minimumSources a tier cannot check.
func tierThatChecks(n int) string {
	for _, t := range Tiers() {
		if t.CheckablePages() >= n && t.MaxCitedSources >= n {
			return fmt.Sprintf("; the %s tier checks up to %d", t.Name, t.CheckablePages())
		}
	}
	return ""
}
