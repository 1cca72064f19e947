package claims_test

import (
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
)

// oneSourceResponse is a provider answer whose single search returned u and
// whose single evidence item, on u, supports the claim.
func oneSourceResponse(u string) *claims.ProviderResponse {
	return &claims.ProviderResponse{
		Provider: "scripted", Model: "m", ResponseID: "resp_cls",
		SearchCalls: []claims.SearchCall{{ID: "ws_1", Action: claims.ActionSearch, Queries: []string{"q"}, Sources: []claims.SourceRef{{URL: u}}}},
		Analysis: claims.Analysis{
			Status: claims.StatusConfirmed,
			Evidence: []claims.ProviderEvidence{{ID: "e1", URL: u, Title: "Page", Excerpt: "The minimum wage is $18.00 per hour.",
				Relationship: claims.Supports, SourceType: "official", QualityReason: "the model's own label, never used"}},
		},
	}
}

// Source classification through the engine: each row is one verification
// whose only evidence item is on the URL. Under the authoritative policy
// with minimumSources 1 an admitted type confirms the claim; forum and
// other do not count.
func TestSourceClassification(t *testing.T) {
	const wage = "Exampleton's minimum wage is $18.00 per hour."
	tests := []struct {
		url, claim string
		wantType   string
		wantReason string
		counts     bool
	}{
		// academic
		{"https://www.ox.ac.uk/news/wage-study", wage, "academic", "academic: academic domain (ac.uk)", true},
		{"https://web.mit.edu/econ/wages", wage, "academic", "academic: .edu domain", true},
		{"https://arxiv.org/abs/2601.00001", wage, "academic", "academic: arxiv.org is a scholarly publisher or repository", true},
		// reference
		{"https://en.wikipedia.org/wiki/Exampleton", wage, "reference", "reference: wikipedia.org is a reference work or standards body", true},
		{"https://www.rfc-editor.org/rfc/rfc9110", wage, "reference", "reference: rfc-editor.org is a reference work or standards body", true},
		// official: government TLDs, intergovernmental domains, government labels in the public suffix
		{"https://www.bls.gov/news/wages", wage, "official", "official: .gov domain", true},
		{"https://www.who.int/news/x", wage, "official", "official: who.int is a government or intergovernmental domain", true},
		{"https://www.gov.uk/national-minimum-wage-rates", wage, "official", "official: government domain (gov.uk)", true},
		{"https://www.mhlw.go.jp/english/wages", wage, "official", "official: government domain (go.jp)", true},
		{"https://www.economie.gouv.fr/salaire-minimum", wage, "official", "official: government domain (gouv.fr)", true},
		{"https://www.gob.mx/stps/salario-minimo", wage, "official", "official: government domain (gob.mx)", true},
		{"https://www.employment.govt.nz/minimum-wage", wage, "official", "official: government domain (govt.nz)", true},
		// news
		{"https://www.reuters.com/world/us/exampleton-wage", wage, "news", "news: reuters.com is a known news publisher", true},
		{"https://www.bbc.co.uk/news/exampleton-wage", wage, "news", "news: bbc.co.uk is a known news publisher", true},
		{"https://www.exampleton-gazette.com/wage", wage, "news", "news: exampleton-gazette.com is a known news publisher", true}, // Options.NewsDomains
		// forum
		{"https://www.reddit.com/r/exampleton/comments/1", wage, "forum", "forum: reddit.com is a forum or social site; not counted: its source type does not count under the authoritative policy", false},
		{"https://forum.exampleton-shop.com/t/wage/1", wage, "forum", "forum: discussion subdomain (forum)", false},
		{"https://www.exampleton-shop.com/forums/wage", wage, "forum", "forum: page under /forum", false},
		// vendor
		{"https://docs.stripe.com/payments/minimum", "Stripe charges a minimum of $0.50 per payment.", "vendor", "vendor: first-party site of 'stripe', which the claim names", true},
		{"https://www.siemens.de/presse/umsatz", "Siemens reported revenue of 78 billion euros.", "vendor", "vendor: first-party site of 'siemens'", true},
		{"https://shop.tesla.co.uk/model-y", "Tesla sells the Model Y in the UK.", "vendor", "vendor: first-party site of 'tesla'", true},
		{"https://docs.base.example/network-information", "Base mainnet uses chain ID 8453.", "vendor", "vendor: first-party site of 'base'", true}, // reserved TLD
		{"https://www.motors-of-exampleton.net/wages", wage, "vendor", "vendor: motors-of-exampleton.net is a configured vendor domain", true},      // Options.VendorDomains
		// a name match where a first-party site is not presumed
		{"https://tesla.fan/news/model-y", "Tesla sells the Model Y in the UK.", "other",
			"other: tesla.fan is named like 'tesla', which the claim names, but .fan is not a top-level domain on which a first-party site is presumed", false},
		{"https://tesla.github.io/model-y", "Tesla sells the Model Y in the UK.", "other",
			"other: tesla.github.io is named like 'tesla', which the claim names, but its suffix github.io is not an ICANN public suffix", false},
		{"https://stripe.xyz/fees", "Stripe charges a minimum of $0.50 per payment.", "other", "list it in Options.VendorDomains to count it as vendor", false},
		{"https://base.notatld/chain", "Base mainnet uses chain ID 8453.", "other", "its suffix notatld is not an ICANN public suffix", false},
		// other
		{"https://wagewatcher.example-blog.net/2026/11/x", wage, "other", "other: no classification rule matched example-blog.net; not counted: its source type does not count under the authoritative policy", false},
	}
	var steps []claimstest.Step
	pages := &claimstest.Snapshotter{Pages: map[string]claimstest.Page{}}
	for _, tc := range tests {
		steps = append(steps, claimstest.Step{Response: oneSourceResponse(tc.url)})
		pages.Pages[tc.url] = claimstest.Page{Text: "Notice. The minimum wage is $18.00 per hour."}
	}
	// Quick tier: the pages are fetched for the quote check, not kept.
	e, _ := newEngine(t, claimstest.NewProvider(steps...), pages, &claims.Options{
		NewsDomains: []string{"exampleton-gazette.com"}, VendorDomains: []string{"motors-of-exampleton.net"},
	})
	for _, tc := range tests {
		req := defaultRequest(tc.claim)
		req.MinimumSources = 1
		res, err := e.Verify(t.Context(), claims.Quick, req, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		validate(t, res)
		if len(res.Evidence) != 1 {
			t.Fatalf("%s: evidence %+v", tc.url, res.Evidence)
		}
		ev := res.Evidence[0]
		if ev.SourceType != tc.wantType || !strings.Contains(ev.QualityReason, tc.wantReason) {
			t.Errorf("%s: %s %q, want %s with %q", tc.url, ev.SourceType, ev.QualityReason, tc.wantType, tc.wantReason)
		}
		want := claims.StatusInsufficientEvidence
		if tc.counts {
			want = claims.StatusConfirmed
		}
		if res.Status != want {
			t.Errorf("%s: status %s, want %s (counts %v)", tc.url, res.Status, want, tc.counts)
		}
	}
}
