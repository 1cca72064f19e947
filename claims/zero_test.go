package claims_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/shapes"
	"github.com/google/go-cmp/cmp"
)

// TestZeroValueRequest checks that a request built in Go with only its
// claim set (the zero value of every other field, no SetDefaults) is the
// JSON request {"claim": …} decoded by shapes: the same effective request
// (the documented defaults: freshnessHours 168, sourcePolicy
// authoritative, minimumSources 2, maxSources 8, includeConflicts true,
// language auto) on every tier, the same hash, and the same verification.
func TestZeroValueRequest(t *testing.T) {
	for _, name := range []string{"confirmed", "conflict", "overclaim", "research", "stale_source"} {
		t.Run(name, func(t *testing.T) {
			f := fixture(t, name)
			var claim struct{ Claim string }
			if err := json.Unmarshal(f.RawRequest, &claim); err != nil {
				t.Fatal(err)
			}
			var fromJSON claims.Request
			if err := shapes.Decode([]byte(`{"claim":`+string(mustJSON(t, claim.Claim))+`}`), &fromJSON); err != nil {
				t.Fatal(err)
			}
			inGo := claims.Request{Claim: claim.Claim}
			e, _ := newEngine(t, f.Provider(), f.Snapshotter(), nil)
			for _, tier := range claims.Tiers() {
				a, errA := e.Check(tier.Name, &fromJSON)
				b, errB := e.Check(tier.Name, &inGo)
				if errA != nil || errB != nil {
					t.Fatalf("%s: %v, %v", tier.Name, errA, errB)
				}
				if diff := cmp.Diff(a, b); diff != "" || a.Hash() != b.Hash() {
					t.Fatalf("%s: effective requests differ (-json +go):\n%s", tier.Name, diff)
				}
				if b.FreshnessHours != 168 || b.SourcePolicy != "authoritative" || b.MinimumSources != 2 ||
					b.MaxSources != min(8, tier.MaxCitedSources) || !b.IncludeConflicts || b.Language != "auto" {
					t.Fatalf("%s: not the documented defaults: %+v", tier.Name, b)
				}
			}
			results := map[string]string{}
			for what, req := range map[string]*claims.Request{"json": &fromJSON, "go": &inGo} {
				p, s := f.Provider(), f.Snapshotter()
				s.Now = clock
				e, _ := newEngine(t, p, s, nil)
				res, err := e.Verify(context.Background(), f.Tier, req, &claims.Call{Scope: "payer:test"})
				if err != nil {
					t.Fatal(err)
				}
				results[what] = randomIDs.ReplaceAllString(string(mustJSON(t, res)), "${1}_…")
			}
			if diff := cmp.Diff(results["json"], results["go"]); diff != "" {
				t.Fatalf("results differ (-json +go):\n%s", diff)
			}
		})
	}
}

// randomIDs matches the random identifiers of a result.
var randomIDs = regexp.MustCompile(`\b(cv|snap)_[0-9a-f]{32}\b`)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
