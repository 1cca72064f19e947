package niche_test

import (
	"testing"

	"github.com/assaykit/assay/niche"
)

// The analyzer's memo changes nothing: its text is the Language's, for
// every language, on first and repeated use.
func TestAnalyzerIsTheLanguage(t *testing.T) {
	texts := []string{"Landlords chase tenants' invoices", "Plumbers and plumbing; Café owners", "", "ÉTÉ été 2026 — x", "landlord's landlords"}
	for _, l := range []niche.Language{"", niche.English, niche.NoStemming, niche.French, niche.Russian} {
		a, err := niche.NewAnalyzer(l)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			for _, s := range texts {
				if got, want := a.SearchText(s), l.SearchText(s); got != want {
					t.Errorf("%q: %q, want %q", l, got, want)
				}
			}
		}
		r := &niche.Record{Title: texts[0], Problem: texts[1], Buyer: texts[4], Category: texts[3], SolutionHypothesis: texts[0]}
		if got, want := a.SearchFields(r), r.SearchFields(l); got != want {
			t.Errorf("%q fields: %+v, want %+v", l, got, want)
		}
	}
	if _, err := niche.NewAnalyzer("klingon"); err == nil {
		t.Error("an unknown language was accepted")
	}
}
