package claims_test

import (
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/google/go-cmp/cmp"
)

// The verdict table, end to end on recorded fixtures.
func TestVerdictFixtures(t *testing.T) {
	S := func(s ...claims.Status) []claims.Status { return s }
	tests := []struct {
		fixture      string
		mutate       func(*claims.Request)
		want         claims.Status
		facts        []claims.Status
		conflicts    int
		conclusionIn string
	}{
		{"confirmed", nil, claims.StatusConfirmed, S("confirmed", "confirmed"), 0, "confirmed by the city"},
		{"mixed", nil, claims.StatusPartiallyConfirmed, S("confirmed", "contradicted"), 0, "Partially confirmed: 1 of 2"},
		{"contradicted", nil, claims.StatusContradicted, S("contradicted"), 0, "The claim is contradicted"},
		{"conflict", nil, claims.StatusAmbiguous, S("ambiguous"), 1, "Ambiguous: the evidence conflicts on 1 of 1"},
		{"conflict", func(r *claims.Request) { r.IncludeConflicts = new(false) }, claims.StatusAmbiguous, S("ambiguous"), 0, "Ambiguous"},
		{"overclaim", nil, claims.StatusInsufficientEvidence, S("insufficient_evidence"), 0, "Insufficient evidence: the usable evidence comes from 0"},
		{"policy", nil, claims.StatusInsufficientEvidence, S("insufficient_evidence"), 0, "Insufficient evidence"},
		{"policy", func(r *claims.Request) { r.SourcePolicy = "open_web" }, claims.StatusConfirmed, S("confirmed"), 0, "Confirmed"},
		{"confirmed", func(r *claims.Request) { r.MinimumSources = 3 }, claims.StatusPartiallyConfirmed, S("confirmed", "insufficient_evidence"), 0, "Partially confirmed: 1 of 2"},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			r := runFixture(t, tc.fixture, tc.mutate)
			res := r.res
			if res.Status != tc.want {
				t.Fatalf("status %s, want %s (facts %v, limitations %q)", res.Status, tc.want, factStatuses(res), res.Limitations)
			}
			if diff := cmp.Diff(tc.facts, factStatuses(res)); diff != "" {
				t.Fatalf("fact statuses (-want +got):\n%s", diff)
			}
			if len(res.Conflicts) != tc.conflicts {
				t.Fatalf("%d conflicts, want %d: %+v", len(res.Conflicts), tc.conflicts, res.Conflicts)
			}
			if !strings.Contains(res.Conclusion, tc.conclusionIn) {
				t.Fatalf("conclusion %q does not contain %q", res.Conclusion, tc.conclusionIn)
			}
			for _, f := range res.AtomicFacts {
				if f.Confidence < 0 || f.Confidence > 1 {
					t.Fatalf("confidence %v", f.Confidence)
				}
				if f.Status != claims.StatusConfirmed && f.Status != claims.StatusContradicted && f.Confidence > 0.49 {
					t.Fatalf("non-decisive fact with confidence %v", f.Confidence)
				}
			}
			// The conclusion never claims more than the status.
			if res.Status != claims.StatusConfirmed && strings.Contains(strings.ToLower(res.Conclusion), "claim is confirmed") {
				t.Fatalf("conclusion %q claims more than %s", res.Conclusion, res.Status)
			}
		})
	}
}

func TestOverclaimNeverConfirmed(t *testing.T) {
	r := runFixture(t, "overclaim", nil)
	res := r.res
	if res.Provenance.SearchedWeb || len(res.Evidence) != 0 || res.Provenance.WebSearchCallCount != 0 {
		t.Fatalf("provenance %+v evidence %v", res.Provenance, res.Evidence)
	}
	f := res.AtomicFacts[0]
	if len(f.EvidenceIDs) != 0 || f.Confidence > 0.49 || !strings.Contains(f.Explanation, `the provider said "confirmed"`) {
		t.Fatalf("fact %+v", f)
	}
	if !hasLimitation(res, `provider's overall status was "confirmed"`) || !hasLimitation(res, "never listed") {
		t.Fatalf("limitations %q", res.Limitations)
	}
}

func TestMixedConflictDetails(t *testing.T) {
	r := runFixture(t, "conflict", nil)
	c := r.res.Conflicts[0]
	if !strings.HasPrefix(c.Summary, "Sources disagree on: ") || !cmp.Equal(c.EvidenceIDs, []string{"e1", "e2", "e3"}) {
		t.Fatalf("conflict %+v", c)
	}
	// Cited includes conflict references.
	for _, e := range r.res.Evidence {
		if !e.Cited {
			t.Fatalf("evidence %s not cited", e.ID)
		}
	}
}

func TestPolicyClassification(t *testing.T) {
	r := runFixture(t, "policy", nil)
	got := map[string]string{}
	for _, e := range r.res.Evidence {
		got[e.ID] = e.SourceType
		if e.SourceType != "official" && !strings.Contains(e.QualityReason, "does not count under the authoritative policy") {
			t.Errorf("%s quality reason %q", e.ID, e.QualityReason)
		}
	}
	if diff := cmp.Diff(map[string]string{"p1": "official", "p2": "forum", "p3": "other"}, got); diff != "" {
		t.Fatal(diff)
	}
	// official_only: only allowedDomains survive, and they count as official.
	r2 := runFixture(t, "policy", func(req *claims.Request) {
		req.SourcePolicy = "official_only"
		req.AllowedDomains = []string{"exampleton.gov", "wagewatcher.example-blog.net"}
		req.MinimumSources = 2
	})
	if r2.res.Status != claims.StatusConfirmed || len(r2.res.Evidence) != 2 {
		t.Fatalf("official_only: %s %+v", r2.res.Status, r2.res.Evidence)
	}
	for _, e := range r2.res.Evidence {
		if e.SourceType != "official" || !strings.Contains(e.QualityReason, "allowedDomains under official_only") {
			t.Fatalf("official_only evidence %+v", e)
		}
	}
}

const apnewsURL = "https://apnews.com/article/exampleton-minimum-wage-18"

// withoutPage makes a fixture's page u unavailable (its capture fails with
// HTTP 404).
func withoutPage(u string) func(*claimstest.Fixture) {
	return func(f *claimstest.Fixture) { delete(f.Pages, u) }
}

// modelSays sets the model's own status of fact i in a fixture's recorded
// response.
func modelSays(i int, s claims.Status) func(*claimstest.Fixture) {
	return func(f *claimstest.Fixture) { f.Response.Analysis.AtomicFacts[i].Status = s }
}

// Every row of the three verdict tables of the package documentation,
// reached through the engine from a recorded fixture (changed where a row
// needs a different model status).
func TestVerdictTableRowsThroughEngine(t *testing.T) {
	C, P, X, I, A := claims.StatusConfirmed, claims.StatusPartiallyConfirmed, claims.StatusContradicted, claims.StatusInsufficientEvidence, claims.StatusAmbiguous
	S := func(s ...claims.Status) []claims.Status { return s }
	tests := []struct {
		row          string
		fixture      string
		mutate       func(*claims.Request)
		change       func(*claimstest.Fixture)
		want         claims.Status
		facts        []claims.Status
		conclusionIn string
	}{
		// Fact table (S supporting, C contradicting independent sources, m = minimumSources).
		{"fact: S≥1, C≥1 → ambiguous", "conflict", nil, nil, A, S(A), "Ambiguous"},
		{"fact: S≥m, C=0 → confirmed", "confirmed", nil, nil, C, S(C, C), "confirmed by the city"},
		{"fact: S=0, C≥m → contradicted", "contradicted", nil, nil, X, S(X), "contradicted"},
		{"fact: S<m, C=0 → insufficient_evidence", "all_insufficient", nil, nil, I, S(I, I), "Insufficient evidence"},
		{"fact: S=0, C<m → insufficient_evidence", "contradicted_and_insufficient", nil, nil, X, S(X, I), "contradicted"},

		// Model combination table (rule status, model's fact status).
		{"model: confirmed + partially_confirmed → partially_confirmed", "confirmed", nil, modelSays(0, P), P, S(P, C), "Partially confirmed: 2 of 2"},
		{"model: confirmed + insufficient_evidence → insufficient_evidence", "confirmed", nil, modelSays(0, I), P, S(I, C), "Partially confirmed: 1 of 2"},
		{"model: confirmed + contradicted → ambiguous", "confirmed", nil, modelSays(0, X), P, S(A, C), "1 ambiguous"},
		{"model: contradicted + insufficient_evidence → insufficient_evidence", "contradicted", nil, modelSays(0, I), I, S(I), "1 atomic fact lacks sufficient evidence"},
		{"model: contradicted + confirmed → ambiguous", "contradicted", nil, modelSays(0, C), A, S(A), "Ambiguous: the evidence conflicts on 1 of 1"},
		{"model: contradicted + partially_confirmed → ambiguous", "contradicted", nil, modelSays(0, P), A, S(A), "Ambiguous"},
		{"model: insufficient rule + confirmed → rule status", "overclaim", nil, nil, I, S(I), "Insufficient evidence"},
		{"model: confirmed + ambiguous → rule status", "confirmed", nil, modelSays(0, A), C, S(C, C), "confirmed by the city"},

		// Top-level table.
		{"top 1: fewer than m independent sources", "confirmed", func(r *claims.Request) { r.MinimumSources = 3 }, withoutPage(apnewsURL), I, S(I, I),
			"2 independent matched sources; 3 required"},
		{"top 1: zero evidence", "overclaim", nil, nil, I, S(I), "comes from 0 independent matched sources"},
		{"top 2: all confirmed", "confirmed", nil, nil, C, S(C, C), "confirmed by the city"},
		{"top 3: all contradicted", "contradicted", nil, nil, X, S(X), "The claim is contradicted"},
		{"top 4: confirmed and contradicted", "mixed", nil, nil, P, S(C, X), "Partially confirmed: 1 of 2"},
		{"top 5: contradicted and insufficient", "contradicted_and_insufficient", nil, nil, X, S(X, I), "The claim is contradicted"},
		{"top 6: ambiguous and insufficient", "ambiguous_and_insufficient", nil, nil, A, S(A, I), "Ambiguous: the evidence conflicts on 1 of 2"},
		{"top 7: all insufficient with enough sources in all", "all_insufficient", nil, nil, I, S(I, I),
			"the facts together rest on 2 independent matched sources, but 2 atomic facts each lack sufficient evidence"},
	}
	for _, tc := range tests {
		t.Run(tc.row, func(t *testing.T) {
			res := runFixtureWith(t, tc.fixture, tc.mutate, tc.change).res
			if res.Status != tc.want {
				t.Fatalf("status %s, want %s (facts %v, limitations %q)", res.Status, tc.want, factStatuses(res), res.Limitations)
			}
			if diff := cmp.Diff(tc.facts, factStatuses(res)); diff != "" {
				t.Fatalf("fact statuses (-want +got):\n%s", diff)
			}
			if !strings.Contains(res.Conclusion, tc.conclusionIn) {
				t.Fatalf("conclusion %q does not contain %q", res.Conclusion, tc.conclusionIn)
			}
		})
	}
	// Row 6 also adds the conflict (includeConflicts is on by default).
	res := runFixture(t, "ambiguous_and_insufficient", nil).res
	if len(res.Conflicts) != 1 || !cmp.Equal(res.Conflicts[0].EvidenceIDs, []string{"e1", "e2"}) {
		t.Fatalf("conflicts %+v", res.Conflicts)
	}
}
