package claims_test

import (
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
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
		{"conflict", func(r *claims.Request) { r.IncludeConflicts = false }, claims.StatusAmbiguous, S("ambiguous"), 0, "Ambiguous"},
		{"overclaim", nil, claims.StatusInsufficientEvidence, S("insufficient_evidence"), 0, "Insufficient evidence: the usable evidence comes from 0"},
		{"policy", nil, claims.StatusInsufficientEvidence, S("insufficient_evidence"), 0, "Insufficient evidence"},
		{"policy", func(r *claims.Request) { r.SourcePolicy = "open_web" }, claims.StatusConfirmed, S("confirmed"), 0, "Confirmed"},
		{"confirmed", func(r *claims.Request) { r.MinimumSources = 4 }, claims.StatusInsufficientEvidence,
			S("insufficient_evidence", "insufficient_evidence"), 0, "3 independent matched sources; 4 required"},
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
		if e.SourceType != "official" && !strings.Contains(e.QualityReason, "not counted under the authoritative policy") {
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
