package claims_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/field"
	"github.com/google/go-cmp/cmp"
)

func defaultRequest(claim string) *claims.Request {
	var r claims.Request
	r.SetDefaults()
	r.Claim = claim
	return &r
}

// domainPattern is the domainname pattern of the domain lists' tags.
const domainPattern = `^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$`

func TestCheck(t *testing.T) {
	e, _ := newEngine(t, claimstest.NewProvider(), nil, nil)
	tests := []struct {
		name   string
		tier   string
		mutate func(*claims.Request)
		msg    string // "" means accepted
		field  string
	}{
		{"defaults", claims.Standard, nil, "", ""},
		{"quick caps maxSources silently", claims.Quick, nil, "", ""},
		{"minimum above tier cap", claims.Quick, func(r *claims.Request) { r.MinimumSources = 4 },
			"The quick tier supports at most 3 cited sources; minimumSources (4) cannot be met", ""},
		// Only quotes verified on captured pages count, so a tier cannot
		// promise more independent sources than it captures pages.
		{"minimum above the pages standard checks", claims.Standard, func(r *claims.Request) { r.MinimumSources = 4 },
			"The standard tier checks quotes on at most 3 captured pages; minimumSources (4) cannot be met; the deep tier checks up to 8", ""},
		{"minimum above the pages deep checks", claims.Deep, func(r *claims.Request) { r.MinimumSources = 9; r.MaxSources = 15 },
			"The deep tier checks quotes on at most 8 captured pages; minimumSources (9) cannot be met; the research tier checks up to 20", ""},
		{"standard checks 3", claims.Standard, func(r *claims.Request) { r.MinimumSources = 3 }, "", ""},
		{"deep checks 8", claims.Deep, func(r *claims.Request) { r.MinimumSources = 8; r.MaxSources = 8 }, "", ""},
		{"research checks 10", claims.Research, func(r *claims.Request) { r.MinimumSources = 10; r.MaxSources = 10 }, "", ""},
		{"minimum above maxSources", claims.Deep, func(r *claims.Request) { r.MinimumSources = 5; r.MaxSources = 4 },
			"minimumSources (5) must not exceed maxSources (4)", ""},
		{"official_only needs allowed", claims.Standard, func(r *claims.Request) { r.SourcePolicy = "official_only" },
			"allowedDomains is required when sourcePolicy is official_only", ""},
		// A domain in both lists is blocked (blocking wins per host), not
		// refused: no JSON Schema could state that refusal.
		{"allowed and blocked", claims.Standard, func(r *claims.Request) {
			r.AllowedDomains = []string{"WHO.int"}
			r.BlockedDomains = []string{"who.int."}
		}, "", ""},
		{"official_only with a domain both allowed and blocked", claims.Standard, func(r *claims.Request) {
			r.SourcePolicy = "official_only"
			r.AllowedDomains = []string{"who.int"}
			r.BlockedDomains = []string{"who.int"}
		}, "", ""},
		{"invalid domain", claims.Standard, func(r *claims.Request) { r.BlockedDomains = []string{"ok.com", "bad domain"} },
			"blockedDomains[1]: String should match pattern '" + domainPattern + "'", "blockedDomains[1]"},
		{"ip domain", claims.Standard, func(r *claims.Request) { r.AllowedDomains = []string{"10.0.0.1"} },
			"allowedDomains[0]: String should match pattern '" + domainPattern + "'", "allowedDomains[0]"},
		{"url instead of a domain", claims.Standard, func(r *claims.Request) { r.AllowedDomains = []string{"https://who.int/path"} },
			"allowedDomains[0]: String should match pattern '" + domainPattern + "'", "allowedDomains[0]"},
		{"domain too long", claims.Standard, func(r *claims.Request) { r.AllowedDomains = []string{strings.Repeat("a.", 127) + "com"} },
			"allowedDomains[0]: String should have at most 253 characters", "allowedDomains[0]"},
		{"punycode and double hyphens are names", claims.Standard, func(r *claims.Request) {
			r.AllowedDomains = []string{"xn--bcher-kva.example", "ab--cd.example", "*.Example.COM."}
		}, "", ""},
		{"too many domains", claims.Standard, func(r *claims.Request) { r.AllowedDomains = make([]string, 101) },
			"allowedDomains: List should have at most 100 items after validation, not 101", "allowedDomains"},
		{"unknown tier", "turbo", nil, `Unknown verification tier "turbo"`, ""},
		{"no claim", claims.Standard, func(r *claims.Request) { r.Claim = "" }, "claim: Field required", "claim"},
		{"short claim", claims.Standard, func(r *claims.Request) { r.Claim = "ab" }, "claim: String should have at least 3 characters", "claim"},
		{"freshness bound", claims.Standard, func(r *claims.Request) { r.FreshnessHours = field.Value(0) },
			"freshnessHours: Input should be greater than or equal to 1", "freshnessHours"},
		{"freshness null is fine", claims.Standard, func(r *claims.Request) { r.FreshnessHours = field.Null[int]() }, "", ""},
		{"bad policy", claims.Standard, func(r *claims.Request) { r.SourcePolicy = "anything" },
			"sourcePolicy: Input should be 'official_only', 'authoritative' or 'open_web'", "sourcePolicy"},
		{"maxSources bound", claims.Standard, func(r *claims.Request) { r.MaxSources = 21 }, "maxSources: Input should be less than or equal to 20", "maxSources"},
		{"minimumSources bound", claims.Standard, func(r *claims.Request) { r.MinimumSources = -1 }, "minimumSources: Input should be greater than or equal to 1", "minimumSources"},
		{"minimumSources unset takes the default", claims.Standard, func(r *claims.Request) { r.MinimumSources = 0 }, "", ""},
		{"language bound", claims.Standard, func(r *claims.Request) { r.Language = "x" }, "language: String should have at least 2 characters", "language"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := defaultRequest("The sky is blue.")
			if tc.mutate != nil {
				tc.mutate(req)
			}
			eff, err := e.Check(tc.tier, req)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var re *claims.RequestError
			if !errors.As(err, &re) || !errors.Is(err, claims.ErrInvalidRequest) {
				t.Fatalf("got %v (%v), want a *RequestError", err, eff)
			}
			if re.Msg != tc.msg || re.Field != tc.field {
				t.Fatalf("got %q (field %q), want %q (field %q)", re.Msg, re.Field, tc.msg, tc.field)
			}
		})
	}
}

func TestEffectiveRequest(t *testing.T) {
	e, _ := newEngine(t, claimstest.NewProvider(), nil, nil)
	a := defaultRequest("Claim text here")
	a.AllowedDomains = []string{"Example.COM", "www.xn--bcher-kva.de", "example.com."}
	a.BlockedDomains = []string{"*.spam.net"}
	ea, err := e.Check(claims.Quick, a)
	if err != nil {
		t.Fatal(err)
	}
	if ea.MaxSources != 3 || !cmp.Equal(ea.AllowedDomains, []string{"example.com", "www.xn--bcher-kva.de"}) ||
		!cmp.Equal(ea.BlockedDomains, []string{"spam.net"}) || ea.FreshnessHours != 168 || ea.SourcePolicy != "authoritative" {
		t.Fatalf("effective %+v", ea)
	}
	// The same effective request, spelled differently, has the same hash.
	b := defaultRequest("Claim text here")
	b.AllowedDomains = []string{"www.XN--BCHER-KVA.DE", "example.com"}
	b.BlockedDomains = []string{"spam.net"}
	b.MaxSources = 3
	eb, _ := e.Check(claims.Quick, b)
	if ea.Hash() != eb.Hash() {
		t.Fatal("equivalent requests hash differently")
	}
	// Anything that changes the work changes the hash.
	for name, m := range map[string]func(*claims.Request){
		"claim":    func(r *claims.Request) { r.Claim += "!" },
		"policy":   func(r *claims.Request) { r.SourcePolicy = "open_web" },
		"min":      func(r *claims.Request) { r.MinimumSources = 1 },
		"fresh":    func(r *claims.Request) { r.FreshnessHours = field.Null[int]() },
		"asOf":     func(r *claims.Request) { r.AsOf = dateOf(2025, 1, 1) },
		"lang":     func(r *claims.Request) { r.Language = "de" },
		"conflict": func(r *claims.Request) { r.IncludeConflicts = new(false) },
	} {
		c := defaultRequest("Claim text here")
		c.AllowedDomains, c.BlockedDomains, c.MaxSources = b.AllowedDomains, b.BlockedDomains, 3
		m(c)
		ec, err := e.Check(claims.Quick, c)
		if err != nil {
			t.Fatal(err)
		}
		if ec.Hash() == ea.Hash() {
			t.Errorf("%s: hash unchanged", name)
		}
	}
	ed, _ := e.Check(claims.Standard, b)
	if ed.Hash() == eb.Hash() {
		t.Error("tier is not part of the hash")
	}
	if ea.Tier.Name != claims.Quick || ed.Tier.Name != claims.Standard {
		t.Fatal(ea.Tier)
	}
}
