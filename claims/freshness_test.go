package claims_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/field"
)

func TestTimeSensitiveCues(t *testing.T) {
	for s, want := range map[string]bool{
		"The current federal funds rate is 4.5%.":                      true,
		"Exampleton's unemployment rate is NOW 4.1%.":                  true,
		"The latest Go release is 1.26.":                               true,
		"What is today's price of gold?":                               true,
		"Ethereum has been proof-of-stake since 2022 and is still so.": true,
		"Base mainnet uses chain ID 8453 this year.":                   true,
		"The CEO is up-to-date with filings.":                          true,
		"As of today, Canberra is the capital.":                        true,
		"RFC 9110 was published in June 2022.":                         false,
		"Base mainnet uses chain ID 8453.":                             false,
		"The speed of light is 299,792,458 m/s.":                       false,
		"Snow is known to be white.":                                   false, // "now" only as a whole word
		"The currency of Japan is the yen.":                            false,
	} {
		if got := claims.TimeSensitive(s); got != want {
			t.Errorf("TimeSensitive(%q) = %v, want %v", s, got, want)
		}
	}
}

// markFacts sets the provider's timeSensitive mark on every fact of a
// fixture's recorded answer.
func markFacts(v bool) func(*claimstest.Fixture) {
	return func(f *claimstest.Fixture) {
		for i := range f.Response.Analysis.AtomicFacts {
			f.Response.Analysis.AtomicFacts[i].TimeSensitive = &v
		}
	}
}

// A fact whose truth changes over time rests only on evidence published
// within the freshness window: with only older evidence it is
// insufficient_evidence, and a limitation names the window by its length.
// Timeless facts keep the stale-only rule (counted, confidence capped).
func TestTimeSensitiveFactNeedsFreshEvidence(t *testing.T) {
	const want = "Atomic fact 1 concerns a state that changes over time and rests only on evidence older than the 168-hour freshness window (s1, s2); it is insufficient_evidence."
	for _, tc := range []struct {
		name   string
		claim  string
		change func(*claimstest.Fixture)
	}{
		{"marked by the provider", "", markFacts(true)},
		{"unmarked, the claim's wording", "Exampleton's current unemployment rate is 4.1%.", nil},
		{"marked timeless, but the statement says current", "", func(f *claimstest.Fixture) {
			markFacts(false)(f)
			f.Response.Analysis.AtomicFacts[0].Statement = "Exampleton's unemployment rate is currently 4.1%."
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mutate := func(r *claims.Request) {
				if tc.claim != "" {
					r.Claim = tc.claim
				}
			}
			res := runFixtureWith(t, "stale_only", mutate, tc.change).res
			if res.Status != claims.StatusInsufficientEvidence || res.AtomicFacts[0].Status != claims.StatusInsufficientEvidence ||
				res.AtomicFacts[0].Confidence > 0.49 || !hasLimitation(res, want) {
				t.Fatalf("status %s facts %+v limitations %q", res.Status, res.AtomicFacts, res.Limitations)
			}
			for _, ev := range res.Evidence {
				if ev.Counted || ev.Quote != claims.QuoteVerified ||
					!strings.HasSuffix(ev.QualityReason, "not counted: older than the freshness window of a fact that changes over time") {
					t.Errorf("%s: %+v", ev.ID, ev)
				}
			}
		})
	}
	// The same answer marked timeless: the stale-only rule of timeless facts.
	res := runFixtureWith(t, "stale_only", nil, markFacts(false)).res
	if res.Status != claims.StatusConfirmed || res.AtomicFacts[0].Confidence != 0.6 || hasLimitation(res, "changes over time") {
		t.Fatalf("timeless: %s %+v %q", res.Status, res.AtomicFacts, res.Limitations)
	}
	// No freshness requirement: dates do not matter.
	res = runFixtureWith(t, "stale_only", func(r *claims.Request) { r.FreshnessHours = field.Null[int]() }, markFacts(true)).res
	if res.Status != claims.StatusConfirmed || res.AtomicFacts[0].Confidence != 0.75 {
		t.Fatalf("freshnessHours null: %s %+v %q", res.Status, res.AtomicFacts, res.Limitations)
	}
}

// With fresh evidence too, a time-sensitive fact rests on the fresh
// evidence only; the older item is named and does not count, even on the
// losing side.
func TestTimeSensitiveFactIgnoresStaleEvidence(t *testing.T) {
	res := runFixtureWith(t, "stale_source", nil, markFacts(true)).res
	if res.Status != claims.StatusConfirmed ||
		!hasLimitation(res, "Atomic fact 1 concerns a state that changes over time; evidence s3, older than the 168-hour freshness window, did not count for it.") {
		t.Fatalf("status %s limitations %q", res.Status, res.Limitations)
	}
	if s3 := evidenceByID(res)["s3"]; s3.Counted {
		t.Fatalf("s3 counted: %+v", s3)
	}
}

// A publication date more than a day in the future is not trusted as
// fresh: with a freshness window the item is treated as older than it.
func TestFutureDateIsNotFresh(t *testing.T) {
	future := func(f *claimstest.Fixture) {
		for i := range f.Response.Analysis.Evidence {
			d := "2027-06-01"
			f.Response.Analysis.Evidence[i].PublishedAt = &d
		}
	}
	// Timeless: counted like stale evidence, confidence capped at 0.60.
	res := runFixtureWith(t, "confirmed", nil, future).res
	if res.Status != claims.StatusConfirmed || res.AtomicFacts[0].Confidence > 0.6 ||
		!hasLimitation(res, "carried a publication date more than a day in the future; the date was not trusted and the evidence was treated as older than the 168-hour freshness window") {
		t.Fatalf("timeless: %s %+v %q", res.Status, res.AtomicFacts, res.Limitations)
	}
	for _, ev := range res.Evidence {
		if !strings.Contains(ev.QualityReason, "publication date in the future, not trusted: treated as older than the freshness window") {
			t.Errorf("%s: %q", ev.ID, ev.QualityReason)
		}
	}
	// Time-sensitive: not fresh, so it does not count.
	res = runFixtureWith(t, "confirmed", nil, func(f *claimstest.Fixture) { future(f); markFacts(true)(f) }).res
	if res.Status != claims.StatusInsufficientEvidence {
		t.Fatalf("time-sensitive: %s %q", res.Status, res.Limitations)
	}
	// Without a freshness window it is undated.
	res = runFixtureWith(t, "confirmed", func(r *claims.Request) { r.FreshnessHours = field.Null[int]() }, future).res
	if res.Status != claims.StatusConfirmed || !hasLimitation(res, "the evidence was treated as undated") {
		t.Fatalf("no window: %s %q", res.Status, res.Limitations)
	}
}

// The typed quote outcome and counted flag survive storage: a result read
// back from the Store gets them from qualityReason.
func TestQuoteOutcomeSurvivesStorage(t *testing.T) {
	r := runFixture(t, "quote_absent", nil)
	stored, err := r.eng.Verification(context.Background(), r.res.VerificationID)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Quote   claims.QuoteCheck
		Counted bool
	}
	var want, got []outcome
	for i := range r.res.Evidence {
		want = append(want, outcome{r.res.Evidence[i].Quote, r.res.Evidence[i].Counted})
		got = append(got, outcome{stored.Result.Evidence[i].Quote, stored.Result.Evidence[i].Counted})
	}
	if d := cmp.Diff(want, got); d != "" || want[0].Quote == "" {
		t.Fatalf("stored outcomes differ (-fresh +stored):\n%s", d)
	}
	if !cmp.Equal(want, []outcome{{claims.QuoteVerified, true}, {claims.QuoteNotFound, false}}) {
		t.Fatalf("outcomes %+v", want)
	}
}
