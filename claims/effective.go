package claims

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/assaykit/assay/field"
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
	AsOf             *field.Date
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
// The bounds of the request's validate tags are checked here too
// (Request.Validate: the HTTP decoder checks the same tags first), so that
// callers using the engine directly get the same guarantees and the same
// messages; unset fields take their documented defaults.
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
	if err := req.Validate(); err != nil {
		return nil, err
	}
	eff := effective(t, req)
	if err := eff.checkSources(); err != nil {
		return nil, err
	}
	eff.setDomains(req.AllowedDomains, req.BlockedDomains)
	if err := eff.checkPolicy(); err != nil {
		return nil, err
	}
	return eff, nil
}

// effective is the request with its defaults applied and maxSources
// capped by the tier (domains are set by setDomains).
func effective(t Tier, req *Request) *Effective {
	eff := &Effective{Tier: t, Claim: req.Claim, FreshnessHours: DefaultFreshnessHours,
		SourcePolicy:     cmp.Or(req.SourcePolicy, DefaultSourcePolicy),
		MinimumSources:   cmp.Or(req.MinimumSources, DefaultMinimumSources),
		MaxSources:       cmp.Or(req.MaxSources, DefaultMaxSources),
		IncludeConflicts: DefaultIncludeConflicts, Language: cmp.Or(req.Language, DefaultLanguage)}
	if req.AsOf != nil {
		eff.AsOf = new(*req.AsOf)
	}
	if req.Jurisdiction != nil {
		eff.Jurisdiction = new(*req.Jurisdiction)
	}
	if h, ok := req.FreshnessHours.Get(); ok {
		eff.FreshnessHours = h
	} else if req.FreshnessHours.IsNull() {
		eff.FreshnessHours = 0
	}
	if req.IncludeConflicts != nil {
		eff.IncludeConflicts = *req.IncludeConflicts
	}
	return eff
}

// checkSources applies the rules between minimumSources, maxSources and
// the tier, and caps maxSources by the tier.
func (e *Effective) checkSources() error {
	t := e.Tier
	if e.MinimumSources > e.MaxSources {
		return reqErr("", "minimumSources (%d) must not exceed maxSources (%d)", e.MinimumSources, e.MaxSources)
	}
	e.MaxSources = min(e.MaxSources, t.MaxCitedSources)
	if e.MinimumSources > e.MaxSources {
		return reqErr("", "The %s tier supports at most %d cited sources; minimumSources (%d) cannot be met",
			t.Name, t.MaxCitedSources, e.MinimumSources)
	}
	if n := t.CheckablePages(); e.MinimumSources > n {
		return reqErr("", "The %s tier checks quotes on at most %d captured pages; minimumSources (%d) cannot be met%s",
			t.Name, n, e.MinimumSources, tierThatChecks(e.MinimumSources))
	}
	return nil
}

// setDomains normalises the domain lists and applies the rule between
// the source policy and them. A domain may be in both lists: blocking
// wins for every host within it (domainFilter), so nothing is refused
// that a JSON Schema could not state.
func (e *Effective) setDomains(allowedIn, blockedIn []string) {
	e.AllowedDomains, e.BlockedDomains = normDomains(allowedIn), normDomains(blockedIn)
}

// checkPolicy applies the rule between the source policy and the domain
// lists.
func (e *Effective) checkPolicy() error {
	if e.SourcePolicy == PolicyOfficialOnly && len(e.AllowedDomains) == 0 {
		return reqErr("", "allowedDomains is required when sourcePolicy is official_only")
	}
	return nil
}

// normDomains normalises, deduplicates and sorts a domain list whose
// entries Validate found to be host names (the domainname pattern of the
// request's tags): lower case, without a leading "*." or a final dot.
func normDomains(in []string) []string {
	out := make([]string, 0, len(in))
	for _, d := range in {
		d = strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(d), "*."), ".")
		if d != "" {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
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
