package claims_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
)

const (
	supportText = "The minimum wage in Exampleton is $18.00 per hour"
	contraText  = "The minimum wage in Exampleton is $15.00 per hour"
)

// side is what one scripted answer says about the claim.
type side int

const (
	says18      side = iota // its evidence supports the claim
	says15                  // its evidence contradicts it
	saysNothing             // it found no evidence
)

// answerOf is a scripted provider response whose one fact rests on one
// evidence item per host (all on pages that carry its excerpt).
func answerOf(name string, s side, hosts ...string) *claims.ProviderResponse {
	pub := "2026-11-20"
	r := &claims.ProviderResponse{Provider: name, Model: "m-" + name, ResponseID: "resp_" + name,
		Usage: claims.Usage{InputTokens: 100, OutputTokens: 10}}
	call := claims.SearchCall{ID: "ws_1", Action: claims.ActionSearch, Queries: []string{"exampleton minimum wage"}}
	fact := claims.ProviderFact{Statement: "The minimum wage in Exampleton is $18.00 per hour.", Confidence: 0.9}
	status, rel, text := claims.StatusConfirmed, claims.Supports, supportText
	switch s {
	case says15:
		status, rel, text = claims.StatusContradicted, claims.Contradicts, contraText
	case saysNothing:
		status = claims.StatusInsufficientEvidence
		hosts = nil
	}
	fact.Status = status
	for i, h := range hosts {
		u := "https://" + h + "/wage"
		call.Sources = append(call.Sources, claims.SourceRef{URL: u})
		id := fmt.Sprintf("e%d", i+1)
		r.Analysis.Evidence = append(r.Analysis.Evidence, claims.ProviderEvidence{ID: id, URL: u, Title: "Wage", Publisher: h,
			PublishedAt: &pub, Excerpt: text, Relationship: rel})
		fact.EvidenceIDs = append(fact.EvidenceIDs, id)
	}
	r.SearchCalls = []claims.SearchCall{call}
	r.Analysis.Status, r.Analysis.Conclusion = status, "As the provider saw it."
	r.Analysis.AtomicFacts = []claims.ProviderFact{fact}
	return r
}

// pagesFor serves supportive pages on the sup hosts and contradicting
// ones on the con hosts.
func pagesFor(sup, con []string) *claimstest.Snapshotter {
	s := &claimstest.Snapshotter{Pages: map[string]claimstest.Page{}, Now: clock}
	for _, h := range sup {
		s.Pages["https://"+h+"/wage"] = claimstest.Page{Text: "Official figures. " + supportText + " since November."}
	}
	for _, h := range con {
		s.Pages["https://"+h+"/wage"] = claimstest.Page{Text: "Official figures. " + contraText + " since November."}
	}
	return s
}

func wageRequest() *claims.Request {
	return &claims.Request{Claim: "The minimum wage in Exampleton is $18.00 per hour.", SourcePolicy: claims.PolicyOpenWeb,
		MinimumSources: 1, MaxSources: 8, IncludeConflicts: new(true), Language: "auto"}
}

type usageLog struct {
	mu    sync.Mutex
	calls []claims.ProviderUsage
}

func (u *usageLog) Verified(string, *claims.Result) {}
func (u *usageLog) Failed(string, error)            {}
func (u *usageLog) ProviderUsed(pu claims.ProviderUsage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls = append(u.calls, pu)
}

// corroborate verifies wageRequest on tier with providers a and b.
func corroborate(t *testing.T, tier string, a, b claims.SearchProvider, snaps *claimstest.Snapshotter, obs claims.Observer) (*claims.Result, *claims.Call, error) {
	t.Helper()
	e, _ := newEngine(t, a, snaps, &claims.Options{Providers: []claims.SearchProvider{b}, Observer: obs, Timeout: 30 * time.Second})
	call := &claims.Call{Scope: "payer:test"}
	res, err := e.Verify(context.Background(), tier, wageRequest(), call)
	if err == nil {
		validate(t, res)
	}
	return res, call, err
}

func named(name string, r *claims.ProviderResponse) *claimstest.Provider {
	p := claimstest.Respond(r, 0)
	p.ProviderName = name
	return p
}

// Rule 1: quick and standard ask only the first provider.
func TestCorroborationQuickAndStandardAskTheFirst(t *testing.T) {
	for _, tier := range []string{claims.Quick, claims.Standard} {
		a, b := named("a", answerOf("a", says18, "a1.example")), named("b", answerOf("b", says15, "b1.example"))
		res, _, err := corroborate(t, tier, a, b, pagesFor([]string{"a1.example"}, []string{"b1.example"}), nil)
		if err != nil {
			t.Fatal(err)
		}
		if b.Calls() != 0 || a.Calls() != 1 || res.Provenance.Provider != "a" || res.Status != claims.StatusConfirmed {
			t.Fatalf("%s: calls a=%d b=%d provider %q status %s", tier, a.Calls(), b.Calls(), res.Provenance.Provider, res.Status)
		}
	}
}

// Rule 2: deep and research ask every provider concurrently: a answers
// only once b has been asked, which a sequential engine never does.
func TestCorroborationAsksConcurrently(t *testing.T) {
	bAsked := make(chan struct{})
	a := claimstest.NewProvider(claimstest.Step{Response: answerOf("a", says18, "a1.example"), Gate: bAsked})
	a.ProviderName = "a"
	b := &signalling{Provider: named("b", answerOf("b", says18, "b1.example")), asked: bAsked}
	res, _, err := corroborate(t, claims.Deep, a, b, pagesFor([]string{"a1.example", "b1.example"}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Provenance.Provider != "a+b" {
		t.Fatalf("provider %q", res.Provenance.Provider)
	}
}

// signalling closes asked when it is asked.
type signalling struct {
	*claimstest.Provider
	asked chan struct{}
	once  sync.Once
}

func (s *signalling) Search(ctx context.Context, q *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	s.once.Do(func() { close(s.asked) })
	return s.Provider.Search(ctx, q)
}

// Rule 3: a fact is confirmed when the evidence reached through each
// provider supports the claim; provenance names both.
func TestCorroborationBothConfirm(t *testing.T) {
	a := named("a", answerOf("a", says18, "a1.example", "shared.example"))
	b := named("b", answerOf("b", says18, "b1.example", "shared.example"))
	res, call, err := corroborate(t, claims.Research, a, b, pagesFor([]string{"a1.example", "b1.example", "shared.example"}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != claims.StatusConfirmed || !slices.Equal(factStatuses(res), []claims.Status{claims.StatusConfirmed, claims.StatusConfirmed}) {
		t.Fatalf("status %s, facts %v", res.Status, factStatuses(res))
	}
	p := res.Provenance
	if p.Provider != "a+b" || p.Model != "m-a+m-b" || p.ProviderResponseID != "resp_a+resp_b" || p.InputTokens != 200 || p.WebSearchCallCount != 2 {
		t.Fatalf("provenance %+v", p)
	}
	if call.Usage.Provider != "a+b" || call.Usage.InputTokens != 200 || call.Usage.SearchCalls != 2 {
		t.Fatalf("usage %+v", call.Usage)
	}
	if _, ok := evidenceByID(res)["b:e1"]; !ok {
		t.Fatalf("the second provider's evidence ids are not prefixed: %v", evidenceByID(res))
	}
	var shared *claims.ProviderSource
	for i, s := range res.ProviderSources {
		if strings.Contains(s.URL, "shared.example") {
			shared = &res.ProviderSources[i]
		}
	}
	if shared == nil || !slices.Equal(shared.SearchCallIDs, []string{"ws_1", "b:ws_1"}) || shared.Provider != "a_web_search" {
		t.Fatalf("shared source %+v", shared)
	}
	if len(res.ProviderSources) != 3 || p.ProviderSourceCount != 3 || p.SnapshottedSourceCount != 3 {
		t.Fatalf("sources %d, provenance %+v", len(res.ProviderSources), p)
	}
	if !hasLimitation(res, "Corroboration: a and b were asked") || !strings.HasPrefix(res.Conclusion, "Corroborated by a and b.") {
		t.Fatalf("limitations %q conclusion %q", res.Limitations, res.Conclusion)
	}
}

// Rule 4: evidence reached through one provider only does not confirm (or
// contradict) a fact: confirmed becomes partially_confirmed, contradicted
// becomes insufficient_evidence.
func TestCorroborationOneProviderOnly(t *testing.T) {
	for _, tc := range []struct {
		s          side
		fact, want claims.Status
	}{
		{says18, claims.StatusPartiallyConfirmed, claims.StatusPartiallyConfirmed},
		{says15, claims.StatusInsufficientEvidence, claims.StatusInsufficientEvidence},
	} {
		pages := pagesFor([]string{"a1.example"}, nil)
		if tc.s == says15 {
			pages = pagesFor(nil, []string{"a1.example"})
		}
		a, b := named("a", answerOf("a", tc.s, "a1.example")), named("b", answerOf("b", saysNothing))
		res, _, err := corroborate(t, claims.Deep, a, b, pages, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != tc.want || res.AtomicFacts[0].Status != tc.fact ||
			!strings.Contains(res.AtomicFacts[0].Explanation, "not corroborated by b: insufficient_evidence") {
			t.Fatalf("side %d: status %s, fact %+v", tc.s, res.Status, res.AtomicFacts[0])
		}
	}
}

// Rule 5: providers whose evidence disagrees make the claim ambiguous,
// with a Conflict naming the counting evidence of both.
func TestCorroborationDisagreement(t *testing.T) {
	a := named("a", answerOf("a", says18, "a1.example"))
	rb := answerOf("b", says15, "b1.example")
	rb.Analysis.Limitations = []string{"Only one page was found."}
	b := named("b", rb)
	res, _, err := corroborate(t, claims.Deep, a, b, pagesFor([]string{"a1.example"}, []string{"b1.example"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != claims.StatusAmbiguous || !slices.Equal(factStatuses(res), []claims.Status{claims.StatusAmbiguous, claims.StatusAmbiguous}) {
		t.Fatalf("status %s facts %v", res.Status, factStatuses(res))
	}
	var found bool
	for _, c := range res.Conflicts {
		if strings.HasPrefix(c.Summary, "Providers disagree: the evidence reached through a supports the claim, the evidence reached through b contradicts it.") &&
			slices.Equal(c.EvidenceIDs, []string{"e1", "b:e1"}) {
			found = true
		}
	}
	if !found {
		t.Fatalf("conflicts %+v", res.Conflicts)
	}
	if !slices.Contains(res.Limitations, "b: Only one page was found.") {
		t.Fatalf("a limitation of one answer does not name its provider: %q", res.Limitations)
	}
}

// Rule 6: a provider that fails while another answers is a limitation, not
// an error; its call is still accounted.
func TestCorroborationProviderFails(t *testing.T) {
	a := named("a", answerOf("a", says18, "a1.example"))
	b := claimstest.NewProvider(claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderRateLimited, Err: errors.New("slow down")}})
	b.ProviderName = "b"
	obs := &usageLog{}
	res, call, err := corroborate(t, claims.Deep, a, b, pagesFor([]string{"a1.example"}, nil), obs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != claims.StatusConfirmed || res.Provenance.Provider != "a" ||
		!hasLimitation(res, "Provider b failed (claims: provider rate limited: slow down); the result rests on a alone and is not corroborated.") {
		t.Fatalf("status %s provider %q limitations %q", res.Status, res.Provenance.Provider, res.Limitations)
	}
	if len(obs.calls) != 2 || call.Usage.Provider != "a+b" {
		t.Fatalf("observer %+v usage %+v", obs.calls, call.Usage)
	}
}

// Rule 7: when every provider fails, Verify fails with the first one's
// error.
func TestCorroborationAllFail(t *testing.T) {
	a := claimstest.NewProvider(claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderQuotaExhausted}})
	b := claimstest.NewProvider(claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderRateLimited}})
	_, _, err := corroborate(t, claims.Research, a, b, pagesFor(nil, nil), nil)
	if !errors.Is(err, claims.ErrProviderQuotaExhausted) {
		t.Fatalf("err %v", err)
	}
}

// Rule 6 also holds for a provider that never answers: its call ends
// before the call's deadline and the other's answer stands.
func TestCorroborationProviderHangs(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	a := named("a", answerOf("a", says18, "a1.example"))
	b := claimstest.NewProvider(claimstest.Step{Response: answerOf("b", says18, "b1.example"), Gate: make(chan struct{})})
	b.ProviderName = "b"
	e, _ := newEngine(t, a, pagesFor([]string{"a1.example"}, nil), &claims.Options{Providers: []claims.SearchProvider{b}, Timeout: 2 * time.Second})
	res, err := e.Verify(context.Background(), claims.Deep, wageRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != claims.StatusConfirmed || !hasLimitation(res, "Provider b failed (claims: provider timed out") {
		t.Fatalf("status %s limitations %q", res.Status, res.Limitations)
	}
}
