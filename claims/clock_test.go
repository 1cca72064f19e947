package claims_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
)

// Two otherwise identical verifications made a second (or an hour) apart
// state the same limitations, conclusion, facts and quality reasons (ids
// aside): the clock shows only in
// the timestamp fields (observedAt, retrievedAt), never in prose. A
// comparison of two results (the transport parity tests) depends on it.
func TestProseDoesNotNameTheClock(t *testing.T) {
	verifyAt := func(t *testing.T, now time.Time, mutate func(*claims.Request)) *claims.Result {
		t.Helper()
		f := fixture(t, "stale_source")
		req, err := f.Request()
		if err != nil {
			t.Fatal(err)
		}
		if mutate != nil {
			mutate(req)
		}
		clock := func() time.Time { return now }
		p, s := f.Provider(), f.Snapshotter()
		s.Now = clock
		e, _ := newEngine(t, p, s, &claims.Options{Now: clock})
		res, err := e.Verify(context.Background(), f.Tier, req, &claims.Call{Scope: "payer:test"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	type prose struct {
		Conclusion  string
		Facts       []string
		Limitations []string
		Reasons     []string
	}
	proseOf := func(r *claims.Result) prose {
		p := prose{Conclusion: r.Conclusion, Limitations: r.Limitations}
		for _, f := range r.AtomicFacts {
			p.Facts = append(p.Facts, f.Statement+"|"+string(f.Status)+"|"+f.Explanation)
		}
		for _, ev := range r.Evidence {
			p.Reasons = append(p.Reasons, idPattern.ReplaceAllString(ev.QualityReason, "ID"))
		}
		return p
	}
	for name, mutate := range map[string]func(*claims.Request){
		"without asOf": nil,
		"with asOf":    func(r *claims.Request) { r.AsOf = dateOf(2026, 11, 20) },
	} {
		t.Run(name, func(t *testing.T) {
			base := verifyAt(t, testNow.Add(-time.Nanosecond), mutate)
			if !slices.ContainsFunc(base.Limitations, func(l string) bool { return strings.Contains(l, "-hour freshness window") }) {
				t.Fatalf("the fixture no longer has stale evidence: %q", base.Limitations)
			}
			for _, d := range []time.Duration{time.Second, time.Hour} {
				later := verifyAt(t, testNow.Add(-time.Nanosecond).Add(d), mutate)
				if later.ObservedAt.Equal(base.ObservedAt) {
					t.Fatal("the clock did not move")
				}
				if diff := cmp.Diff(proseOf(base), proseOf(later)); diff != "" {
					t.Errorf("%v later, the prose differs (-first +later):\n%s", d, diff)
				}
			}
		})
	}
}
