package claimstest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/assaykit/assay/claims"
)

// LoopbackPageText is the text every page of a slow site serves; the
// excerpts of LoopbackResponse occur in it.
const LoopbackPageText = "Exampleton statistics office. The minimum wage in Exampleton is $18.00 per hour. " +
	"It took effect on 1 November 2026 for all employers."

// NewSlowSite starts a loopback HTTP server whose every page answers after
// delay with LoopbackPageText (for benchmarks of the whole pipeline). Close
// it when done.
func NewSlowSite(delay time.Duration) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(LoopbackPageText))
	}))
}

// LoopbackResponse is a provider response whose three evidence items and
// further sources all live on base (a NewSlowSite URL): sources pages in
// all, so a research-tier call snapshots min(sources, 20) pages.
func LoopbackResponse(base string, sources int) *claims.ProviderResponse {
	var urls []string
	for i := range max(sources, 3) {
		urls = append(urls, fmt.Sprintf("%s/page/%d", base, i))
	}
	return ResponseForURLs(urls)
}

// ResponseForURLs is LoopbackResponse with the consulted sources given: at
// least three URLs whose pages show LoopbackPageText (the first three are
// quoted as evidence).
func ResponseForURLs(urls []string) *claims.ProviderResponse {
	var refs []claims.SourceRef
	for _, u := range urls {
		refs = append(refs, claims.SourceRef{URL: u})
	}
	pub := time.Now().UTC().Format(time.DateOnly)
	ev := func(id string, i int, excerpt string) claims.ProviderEvidence {
		return claims.ProviderEvidence{ID: id, URL: refs[i].URL, Title: "Page", Publisher: "Exampleton", PublishedAt: &pub,
			Excerpt: excerpt, Relationship: claims.Supports}
	}
	return &claims.ProviderResponse{
		Provider: "scripted", Model: "bench", ResponseID: "resp_bench",
		SearchCalls: []claims.SearchCall{{ID: "ws_1", Action: claims.ActionSearch, Queries: []string{"exampleton minimum wage"}, Sources: refs}},
		Analysis: claims.Analysis{
			Status: claims.StatusConfirmed, Conclusion: "Confirmed.",
			AtomicFacts: []claims.ProviderFact{{Statement: "The minimum wage is $18.00.", Status: claims.StatusConfirmed, Confidence: 0.9,
				EvidenceIDs: []string{"e1", "e2", "e3"}}},
			Evidence: []claims.ProviderEvidence{
				ev("e1", 0, "The minimum wage in Exampleton is $18.00 per hour"),
				ev("e2", 1, "It took effect on 1 November 2026"),
				ev("e3", 2, "for all employers"),
			},
		},
		Usage: claims.Usage{InputTokens: 1000, OutputTokens: 100},
	}
}
