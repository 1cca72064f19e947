package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
)

var update = flag.Bool("update", false, "rewrite golden files")

var testNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// demoClaims are the claims documented in the package docs, with the
// status the demo corpus gives them at the standard tier.
var demoClaims = []struct {
	claim     string
	want      claims.Status
	conflicts bool // at least one conflict is reported
}{
	{"Base mainnet uses chain ID 8453.", claims.StatusConfirmed, true},
	{"Base mainnet uses chain ID 8543.", claims.StatusContradicted, true},
	{"Base Sepolia uses chain ID 84532.", claims.StatusConfirmed, false},
	{"USDC on Base has 6 decimals.", claims.StatusConfirmed, true},
	{"Base mainnet uses chain ID 8453 and USDC on Base has 18 decimals.", claims.StatusPartiallyConfirmed, true},
	{"HTTP status code 402 means Payment Required.", claims.StatusConfirmed, true},
	{"RFC 9110 was published in June 2022.", claims.StatusConfirmed, true},
	{"RFC 9110 was published in 2019.", claims.StatusContradicted, true},
	{"Mount Everest is 8,849 metres tall.", claims.StatusConfirmed, true},
	{"Mount Everest is 8,848 metres tall.", claims.StatusContradicted, true},
	{"Canberra is the capital of Australia.", claims.StatusConfirmed, false},
	{"Sydney is the capital of Australia.", claims.StatusContradicted, true},
	{"The Nile is the longest river in the world.", claims.StatusAmbiguous, true},
	{"Lake Baikal has a maximum depth of 1,642 metres.", claims.StatusConfirmed, true},
	{"The speed of light in vacuum is 299,792,458 metres per second.", claims.StatusConfirmed, false},
	{"The kilogram is defined by the international prototype kept near Paris.", claims.StatusContradicted, true},
	{"Water boils at 100 °C at sea level.", claims.StatusConfirmed, false},
	{"Two doses of the MMR vaccine are about 97% effective against measles.", claims.StatusConfirmed, true},
	{"Adults should do at least 150 minutes of moderate-intensity physical activity per week.", claims.StatusConfirmed, true},
	{"Adults should consume less than 5 grams of salt per day.", claims.StatusConfirmed, false},
	{"The Eiffel Tower is 330 metres tall.", claims.StatusInsufficientEvidence, false},
	{"Bitcoin blocks are mined every 10 minutes.", claims.StatusInsufficientEvidence, false},
}

func demoProvider(t testing.TB) *Provider {
	t.Helper()
	c, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(c, &Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tierQuery is the query the engine sends for a tier with the documented
// request defaults.
func tierQuery(tier, claim string) *claims.ProviderQuery {
	t, _ := claims.TierByName(tier)
	return &claims.ProviderQuery{
		Tier: tier, Claim: claim, Now: testNow, FreshnessHours: 168, SourcePolicy: "authoritative",
		MinimumSources: 2, MaxSources: min(8, t.MaxCitedSources), IncludeConflicts: true, Language: "auto",
		MaxToolActions: t.MaxToolActions, MaxOutputTokens: t.MaxOutputTokens,
	}
}

// checkResponse asserts what must hold for every answer.
func checkResponse(t *testing.T, p *Provider, q *claims.ProviderQuery, r *claims.ProviderResponse) {
	t.Helper()
	if r.Provider != "corpus" || r.Model != "bm25-lexical-v1" || !strings.HasPrefix(r.ResponseID, "corpus_") {
		t.Errorf("provenance = %q %q %q", r.Provider, r.Model, r.ResponseID)
	}
	if !json.Valid(r.Raw) {
		t.Error("Raw is not JSON")
	}
	if len(r.SearchCalls) == 0 || len(r.SearchCalls) > q.MaxToolActions {
		t.Errorf("%d tool actions for a budget of %d", len(r.SearchCalls), q.MaxToolActions)
	}
	if r.SearchCalls[0].Action != claims.ActionSearch || len(r.SearchCalls[0].Queries) == 0 {
		t.Errorf("first action = %+v", r.SearchCalls[0])
	}
	sources := map[string]bool{}
	for _, s := range r.SearchCalls[0].Sources {
		sources[s.URL] = true
	}
	for _, c := range r.SearchCalls[1:] {
		if c.Action != claims.ActionOpenPage || !sources[c.URL] {
			t.Errorf("open action %+v is not of a search result", c)
		}
	}
	if q.MaxSources > 0 && len(r.Analysis.Evidence) > q.MaxSources {
		t.Errorf("%d evidence items for maxSources %d", len(r.Analysis.Evidence), q.MaxSources)
	}
	ids := map[string]bool{}
	for _, e := range r.Analysis.Evidence {
		if ids[e.ID] {
			t.Errorf("duplicate evidence id %s", e.ID)
		}
		ids[e.ID] = true
		if !sources[e.URL] {
			t.Errorf("evidence %s URL %s is not a search source", e.ID, e.URL)
		}
		d := p.c.byKey[strings.TrimPrefix(e.URL, "http://")]
		if d == nil {
			t.Fatalf("evidence URL %s is not a corpus document", e.URL)
		}
		if !slices.Contains(d.Sentences(), e.Excerpt) {
			t.Errorf("excerpt %q is not a sentence of %s", e.Excerpt, e.URL)
		}
		if e.SourceType != d.Kind || e.Title != d.Title || e.Publisher != d.Publisher {
			t.Errorf("evidence metadata %+v does not match the document", e)
		}
	}
	for _, f := range r.Analysis.AtomicFacts {
		for _, id := range f.EvidenceIDs {
			if !ids[id] {
				t.Errorf("fact %q refers to unknown evidence %s", f.Statement, id)
			}
		}
		if f.Confidence < 0 || f.Confidence > 1 {
			t.Errorf("confidence %v", f.Confidence)
		}
		if f.Status == claims.StatusConfirmed && !hasRel(r, f, claims.Supports) {
			t.Errorf("fact %q confirmed without supporting evidence", f.Statement)
		}
		if f.Status == claims.StatusContradicted && !hasRel(r, f, claims.Contradicts) {
			t.Errorf("fact %q contradicted without contradicting evidence", f.Statement)
		}
	}
	for _, c := range r.Analysis.Conflicts {
		for _, id := range c.EvidenceIDs {
			if !ids[id] {
				t.Errorf("conflict refers to unknown evidence %s", id)
			}
		}
	}
	if !slices.ContainsFunc(r.Analysis.Limitations, func(l string) bool { return strings.Contains(l, "not the live web") }) {
		t.Errorf("limitations %q do not say the corpus is not the live web", r.Analysis.Limitations)
	}
}

func hasRel(r *claims.ProviderResponse, f claims.ProviderFact, rel claims.Relationship) bool {
	for _, e := range r.Analysis.Evidence {
		if e.Relationship == rel && slices.Contains(f.EvidenceIDs, e.ID) {
			return true
		}
	}
	return false
}

func TestDemoClaims(t *testing.T) {
	p := demoProvider(t)
	for _, tc := range demoClaims {
		t.Run(tc.claim, func(t *testing.T) {
			q := tierQuery(claims.Standard, tc.claim)
			r, err := p.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			checkResponse(t, p, q, r)
			if r.Analysis.Status != tc.want {
				t.Errorf("status = %s, want %s\nfacts: %+v", r.Analysis.Status, tc.want, r.Analysis.AtomicFacts)
			}
			if got := len(r.Analysis.Conflicts) > 0; got != tc.conflicts {
				t.Errorf("conflicts = %+v, want some: %v", r.Analysis.Conflicts, tc.conflicts)
			}
			if tc.want == claims.StatusInsufficientEvidence {
				for _, e := range r.Analysis.Evidence {
					if e.Relationship != claims.Context {
						t.Errorf("insufficient evidence with a %s item", e.Relationship)
					}
				}
			}
		})
	}
}

// TestEveryTier checks the budget on each tier and that the verdicts do
// not depend on it for the demo claims.
func TestEveryTier(t *testing.T) {
	p := demoProvider(t)
	for _, tier := range claims.Tiers() {
		t.Run(tier.Name, func(t *testing.T) {
			for _, tc := range demoClaims {
				q := tierQuery(tier.Name, tc.claim)
				r, err := p.Search(context.Background(), q)
				if err != nil {
					t.Fatal(err)
				}
				checkResponse(t, p, q, r)
				opened := len(r.SearchCalls) - 1
				results := len(r.SearchCalls[0].Sources)
				if want := min(tier.MaxToolActions-1, results); opened != want {
					t.Errorf("%q: opened %d pages, want %d", tc.claim, opened, want)
				}
				if r.Analysis.Status != tc.want {
					t.Errorf("%q: status = %s, want %s", tc.claim, r.Analysis.Status, tc.want)
				}
			}
		})
	}
}

// TestBudgetLimitsReading shows that a document that was not opened is
// judged on its snippet only.
func TestBudgetLimitsReading(t *testing.T) {
	p := demoProvider(t)
	q := tierQuery(claims.Quick, "Base Sepolia uses chain ID 84532.")
	r, err := p.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.SearchCalls) != 1 {
		t.Fatalf("quick tier made %d actions", len(r.SearchCalls))
	}
	if !slices.ContainsFunc(r.Analysis.Limitations, func(l string) bool { return strings.Contains(l, "allowed opening 0 of") }) {
		t.Errorf("no budget limitation in %q", r.Analysis.Limitations)
	}
	var tr trace
	if err := json.Unmarshal(r.Raw, &tr); err != nil {
		t.Fatal(err)
	}
	for _, h := range tr.Results {
		if h.Opened || h.Read > DefaultSnippetSentences {
			t.Errorf("quick tier read %d sentences of %s (opened %v)", h.Read, h.URL, h.Opened)
		}
	}
	for _, e := range r.Analysis.Evidence {
		if !strings.Contains(e.QualityReason, "search snippet") {
			t.Errorf("evidence %s: %q", e.ID, e.QualityReason)
		}
	}
	deep, _ := p.Search(context.Background(), tierQuery(claims.Deep, "Base Sepolia uses chain ID 84532."))
	if len(deep.SearchCalls) != 7 || deep.SearchCalls[1].Action != claims.ActionOpenPage {
		t.Errorf("deep tier actions = %+v", deep.SearchCalls)
	}
}

func TestDomainFilters(t *testing.T) {
	p := demoProvider(t)
	hosts := func(r *claims.ProviderResponse) []string {
		var out []string
		for _, s := range r.SearchCalls[0].Sources {
			out = append(out, strings.Split(strings.TrimPrefix(s.URL, "http://"), "/")[0])
		}
		for _, e := range r.Analysis.Evidence {
			out = append(out, strings.Split(strings.TrimPrefix(e.URL, "http://"), "/")[0])
		}
		return out
	}

	q := tierQuery(claims.Standard, "Base mainnet uses chain ID 8453.")
	q.AllowedDomains = []string{"Base.example."}
	r, err := p.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	checkResponse(t, p, q, r)
	for _, h := range hosts(r) {
		if h != "base.example" && !strings.HasSuffix(h, ".base.example") {
			t.Errorf("host %s outside the allowed domain", h)
		}
	}
	if r.Analysis.Status != claims.StatusConfirmed || len(r.Analysis.Conflicts) != 0 {
		t.Errorf("allowed base.example: status %s, conflicts %v", r.Analysis.Status, r.Analysis.Conflicts)
	}

	q = tierQuery(claims.Standard, "Base mainnet uses chain ID 8453.")
	q.BlockedDomains = []string{"cryptochat.example"}
	r, _ = p.Search(context.Background(), q)
	for _, h := range hosts(r) {
		if strings.HasSuffix(h, "cryptochat.example") {
			t.Errorf("blocked host %s reported", h)
		}
	}
	if len(r.Analysis.Conflicts) != 0 {
		t.Errorf("the only contradicting source is blocked, yet conflicts = %v", r.Analysis.Conflicts)
	}

	q = tierQuery(claims.Standard, "Base mainnet uses chain ID 8453.")
	q.AllowedDomains = []string{"nowhere.example"}
	r, _ = p.Search(context.Background(), q)
	if r.Analysis.Status != claims.StatusInsufficientEvidence || len(r.SearchCalls[0].Sources) != 0 {
		t.Errorf("no allowed document: status %s, sources %v", r.Analysis.Status, r.SearchCalls[0].Sources)
	}
	if !slices.Contains(r.Analysis.Limitations, "No document of the corpus is on the allowed domains.") {
		t.Errorf("limitations %q", r.Analysis.Limitations)
	}
}

func TestSourcePolicyAndAsOf(t *testing.T) {
	p := demoProvider(t)
	q := tierQuery(claims.Deep, "Sydney is the capital of Australia.")
	q.SourcePolicy = "official_only"
	r, _ := p.Search(context.Background(), q)
	for _, e := range r.Analysis.Evidence {
		if e.SourceType != KindOfficial {
			t.Errorf("official_only returned %s evidence %s", e.SourceType, e.URL)
		}
	}
	if r.Analysis.Status != claims.StatusContradicted || len(r.Analysis.Conflicts) != 0 {
		t.Errorf("official_only: %s %v", r.Analysis.Status, r.Analysis.Conflicts)
	}

	asOf := time.Date(2019, 12, 31, 0, 0, 0, 0, time.UTC)
	q = tierQuery(claims.Deep, "Mount Everest is 8,849 metres tall.")
	q.AsOf = &asOf
	r, _ = p.Search(context.Background(), q)
	for _, e := range r.Analysis.Evidence {
		if e.PublishedAt == nil || *e.PublishedAt > "2019-12-31" {
			t.Errorf("evidence published %v after asOf", e.PublishedAt)
		}
	}
	if r.Analysis.Status != claims.StatusContradicted {
		t.Errorf("as of 2019 only the 1955 figure is in the corpus: status %s", r.Analysis.Status)
	}
	if !slices.ContainsFunc(r.Analysis.Limitations, func(l string) bool { return strings.Contains(l, "after asOf 2019-12-31 were not searched") }) {
		t.Errorf("limitations %q", r.Analysis.Limitations)
	}
}

func TestLimitationsStatePolicies(t *testing.T) {
	p := demoProvider(t)
	q := tierQuery(claims.Standard, "Canberra is the capital of Australia.")
	q.Jurisdiction = "Australia"
	q.Language = "de"
	q.FreshnessHours = 24
	r, _ := p.Search(context.Background(), q)
	for _, want := range []string{"does not distinguish jurisdictions", "writes English only", "older than the 24-hour freshness window"} {
		if !slices.ContainsFunc(r.Analysis.Limitations, func(l string) bool { return strings.Contains(l, want) }) {
			t.Errorf("limitations %q lack %q", r.Analysis.Limitations, want)
		}
	}
	for _, e := range r.Analysis.Evidence {
		if !strings.Contains(e.QualityReason, "outside the 24-hour freshness window") {
			t.Errorf("quality reason %q does not flag staleness", e.QualityReason)
		}
	}
}

func TestMaxSourcesCap(t *testing.T) {
	p := demoProvider(t)
	q := tierQuery(claims.Deep, "Base mainnet uses chain ID 8453 and USDC on Base has 18 decimals.")
	q.MaxSources = 2
	r, err := p.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	checkResponse(t, p, q, r)
	if len(r.Analysis.Evidence) != 2 {
		t.Errorf("evidence = %d items", len(r.Analysis.Evidence))
	}
	// The cap keeps the winning side of each fact first.
	if r.Analysis.Evidence[0].Relationship != claims.Supports || r.Analysis.Evidence[1].Relationship != claims.Contradicts {
		t.Errorf("kept %s and %s", r.Analysis.Evidence[0].Relationship, r.Analysis.Evidence[1].Relationship)
	}
	if r.Analysis.Status != claims.StatusPartiallyConfirmed {
		t.Errorf("status = %s", r.Analysis.Status)
	}
	if !slices.ContainsFunc(r.Analysis.Limitations, func(l string) bool { return strings.Contains(l, "left out by the limit of 2 evidence items") }) {
		t.Errorf("limitations %q", r.Analysis.Limitations)
	}

	// With one item for two facts, the fact without evidence is reported
	// as insufficient evidence rather than with an unsupported verdict.
	q.MaxSources = 1
	r, _ = p.Search(context.Background(), q)
	checkResponse(t, p, q, r)
	if f := r.Analysis.AtomicFacts[1]; f.Status != claims.StatusInsufficientEvidence || len(f.EvidenceIDs) != 0 {
		t.Errorf("second fact = %+v", f)
	}
	if r.Analysis.Status != claims.StatusPartiallyConfirmed {
		t.Errorf("status = %s", r.Analysis.Status)
	}
}

func TestDeterministic(t *testing.T) {
	p := demoProvider(t)
	a, _ := p.Search(context.Background(), tierQuery(claims.Standard, "USDC on Base has 6 decimals."))
	b, _ := p.Search(context.Background(), tierQuery(claims.Standard, "USDC on Base has 6 decimals."))
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("two identical searches differ:\n%s", d)
	}
	c, _ := p.Search(context.Background(), tierQuery(claims.Deep, "USDC on Base has 6 decimals."))
	if c.ResponseID == a.ResponseID {
		t.Error("different queries share a response id")
	}
}

// TestGoldenResponse pins one complete answer (go test -update rewrites it).
func TestGoldenResponse(t *testing.T) {
	p := demoProvider(t)
	r, err := p.Search(context.Background(), tierQuery(claims.Standard, "Base mainnet uses chain ID 8453 and USDC on Base has 18 decimals."))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "compound_standard.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("response differs from %s:\n%s", golden, cmp.Diff(string(want), string(got)))
	}
}

func TestSearchErrors(t *testing.T) {
	p := demoProvider(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Search(ctx, tierQuery(claims.Quick, "Base mainnet uses chain ID 8453.")); !errors.Is(err, claims.ErrProviderFailed) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer dcancel()
	if _, err := p.Search(dctx, tierQuery(claims.Quick, "Base mainnet uses chain ID 8453.")); !errors.Is(err, claims.ErrProviderTimeout) {
		t.Errorf("deadline: %v", err)
	}
	if _, err := p.Search(context.Background(), nil); !errors.Is(err, claims.ErrProviderFailed) {
		t.Errorf("nil query: %v", err)
	}
	if _, err := p.Search(context.Background(), tierQuery(claims.Quick, "  ")); !errors.Is(err, claims.ErrProviderFailed) {
		t.Errorf("empty claim: %v", err)
	}
	if _, err := New(nil, nil); err == nil {
		t.Error("New accepted a nil collection")
	}
	// A query without tier or budgets still gets one search and a verdict.
	r, err := p.Search(context.Background(), &claims.ProviderQuery{Claim: "Canberra is the capital of Australia."})
	if err != nil || len(r.SearchCalls) != 1 || r.Analysis.Status != claims.StatusConfirmed {
		t.Errorf("bare query: %v %+v", err, r)
	}
}

func TestIdentity(t *testing.T) {
	p := demoProvider(t)
	var _ claims.SearchProvider = p
	want := claims.ProviderCapabilities{DomainFilter: true, MaxDomains: 100, BlockedDomainFilter: true, SourceName: "corpus_web_search", Offline: true}
	if d := cmp.Diff(want, p.Capabilities()); d != "" || p.Name() != "corpus" {
		t.Errorf("capabilities %s, name %q", d, p.Name())
	}
}

// TestOpenOrder: results whose snippets take a stance are opened first,
// then context, then the rest, each by rank.
func TestOpenOrder(t *testing.T) {
	mk := func(url, body string) *Document {
		d, err := ParseDocument("x.md", []byte("---\nurl: "+url+"\ntitle: T\n---\n"+body+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	results := []ranked{
		{doc: mk("http://a.example/", "Listings of the Zeta network are updated weekly.")},    // nothing
		{doc: mk("http://b.example/", "The Zeta chain ID registry lists many networks.")},     // context
		{doc: mk("http://c.example/", "The Zeta chain ID is 7000.")},                          // stance
		{doc: mk("http://d.example/", "Some say the Zeta chain ID is 7001, which is wrong.")}, // stance
	}
	for i := range results {
		results[i].read = []int{0}
	}
	facts := []fact{testLex.newFact("Zeta chain ID is 7000.")}
	if d := cmp.Diff([]int{2, 3, 1, 0}, openOrder(testLex, results, facts)); d != "" {
		t.Errorf("open order (-want +got):\n%s", d)
	}
}

func TestManyParts(t *testing.T) {
	p := demoProvider(t)
	// 19 parts, then 12 parts that are checked together: no single clause
	// states both subjects, so the remainder has no stance.
	claim := strings.Repeat("Canberra is the capital of Australia and ", 19) +
		strings.Repeat("Base mainnet uses chain ID 8453 and ", 11) + "Mount Everest is 8,849 metres tall."
	r, err := p.Search(context.Background(), &claims.ProviderQuery{Claim: claim, MaxToolActions: 3, MaxSources: 8})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Analysis.AtomicFacts); n != MaxFacts {
		t.Errorf("%d facts, want %d", n, MaxFacts)
	}
	last := r.Analysis.AtomicFacts[MaxFacts-1]
	if last.Status != claims.StatusInsufficientEvidence || r.Analysis.Status != claims.StatusPartiallyConfirmed {
		t.Errorf("joined remainder %s, overall %s", last.Status, r.Analysis.Status)
	}
	if !slices.ContainsFunc(r.Analysis.Limitations, func(l string) bool {
		return strings.Contains(l, "The claim has 31 parts; parts 20 to 31 were checked together")
	}) {
		t.Errorf("limitations %q", r.Analysis.Limitations)
	}
}
