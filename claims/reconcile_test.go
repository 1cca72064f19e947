package claims_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/field"
	"github.com/assaykit/assay/internal/urlnorm"
	"github.com/google/go-cmp/cmp"
)

// Every fixture produces a result that matches the document's schema.
func TestFixturesMatchSchema(t *testing.T) {
	names := claimstest.FixtureNames()
	if len(names) < 10 {
		t.Fatalf("only %d fixtures", len(names))
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) { runFixture(t, name, nil) })
	}
}

func TestConfirmed(t *testing.T) {
	r := runFixture(t, "confirmed", nil)
	res := r.res
	golden(t, "confirmed", res)
	if res.Status != claims.StatusConfirmed {
		t.Fatalf("status %s, want confirmed; limitations %q", res.Status, res.Limitations)
	}
	if diff := cmp.Diff([]claims.Status{claims.StatusConfirmed, claims.StatusConfirmed}, factStatuses(res)); diff != "" {
		t.Fatal(diff)
	}
	if res.Conclusion != "The claim is confirmed by the city and by Reuters." {
		t.Fatalf("the model's conclusion should be kept when the status agrees: %q", res.Conclusion)
	}
	types := map[string]string{}
	for _, e := range res.Evidence {
		if !e.ProviderSourceMatched || !e.Consulted || !e.Cited || !e.Snapshotted || e.SnapshotID == nil {
			t.Errorf("evidence %s flags: %+v", e.ID, e)
		}
		if !strings.HasPrefix(e.QualityReason, "quote verified on snapshot "+*e.SnapshotID) || !e.Counted || e.Quote != claims.QuoteVerified {
			t.Errorf("evidence %s quality reason %q", e.ID, e.QualityReason)
		}
		if !e.RetrievedAt.Equal(testNow) {
			t.Errorf("evidence %s retrievedAt %v, want the snapshot time", e.ID, e.RetrievedAt)
		}
		types[e.ID] = e.SourceType
	}
	if diff := cmp.Diff(map[string]string{"e1": "official", "e2": "news", "e3": "news"}, types); diff != "" {
		t.Fatalf("source types: %s", diff)
	}
	// Sources: the gov URL appears with tracking parameters, plainly and in
	// an open_page action; the AP URL with a fragment. Three pages in all.
	if len(res.ProviderSources) != 3 {
		t.Fatalf("%d provider sources, want 3: %+v", len(res.ProviderSources), res.ProviderSources)
	}
	gov := res.ProviderSources[0]
	if gov.URL != "https://www.exampleton.gov/news/minimum-wage-2026" || !cmp.Equal(gov.Actions, []string{"search", "open_page"}) ||
		!cmp.Equal(gov.SearchCallIDs, []string{"ws_1", "ws_2"}) || !gov.Cited || gov.SnapshotID == nil ||
		gov.Provider != "openai_web_search" || !strings.HasPrefix(gov.SourceID, "src_") || len(gov.SourceID) != 24 {
		t.Fatalf("gov source: %+v", gov)
	}
	want := claims.Provenance{Provider: "openai", Model: "gpt-5.2-mini", ProviderResponseID: "resp_0001", SearchedWeb: true,
		ConsultedSourceCount: 3, CitedSourceCount: 3, ProviderSourceCount: 3, MatchedEvidenceCount: 3,
		SnapshottedSourceCount: 3, WebSearchCallCount: 2, InputTokens: 21000, CachedInputTokens: 1200, OutputTokens: 1800}
	if diff := cmp.Diff(want, res.Provenance); diff != "" {
		t.Fatalf("provenance (-want +got):\n%s", diff)
	}
	q := r.prov.Queries()[0]
	if q.Tier != "standard" || q.MaxToolActions != 3 || q.MaxOutputTokens != 3000 || q.MaxSources != 8 || !q.Now.Equal(testNow) {
		t.Fatalf("provider query: %+v", q)
	}
}

// An evidence URL that no search call returned does not count.
func TestInventedURL(t *testing.T) {
	r := runFixture(t, "invented_url", nil)
	ev := evidenceByID(r.res)["e2"]
	if ev.ProviderSourceMatched || ev.Consulted || !strings.Contains(ev.QualityReason, "not matched") {
		t.Fatalf("invented evidence: %+v", ev)
	}
	if r.res.Status != claims.StatusInsufficientEvidence {
		t.Fatalf("status %s, want insufficient_evidence", r.res.Status)
	}
	if strings.Contains(strings.ToLower(r.res.Conclusion), "is confirmed") || !hasLimitation(r.res, `provider's overall status was "confirmed"`) {
		t.Fatalf("conclusion %q / limitations %q: the override must be stated", r.res.Conclusion, r.res.Limitations)
	}
	for _, u := range r.snaps.Requests()[0] {
		if strings.Contains(u, "record-high") {
			t.Fatalf("invented URL was fetched: %v", r.snaps.Requests())
		}
	}
	// Control: the same fixture with the real URL is confirmed.
	if c := runFixture(t, "confirmed", nil); c.res.Status != claims.StatusConfirmed {
		t.Fatal("control is not confirmed")
	}
}

// A quote absent from its captured page does not count.
func TestQuoteAbsent(t *testing.T) {
	r := runFixture(t, "quote_absent", nil)
	ev := evidenceByID(r.res)["e2"]
	if !ev.Snapshotted || !ev.ProviderSourceMatched || !strings.HasPrefix(ev.QualityReason, "quote not found on the captured page (snapshot snap_") ||
		ev.Quote != claims.QuoteNotFound || ev.Counted || !strings.HasSuffix(ev.QualityReason, "not counted: its quote was not verified") {
		t.Fatalf("evidence e2: %+v", ev)
	}
	if r.res.Status != claims.StatusInsufficientEvidence || !hasLimitation(r.res, "The quote of evidence e2 was not found on its page; it was not counted.") {
		t.Fatalf("status %s, limitations %q", r.res.Status, r.res.Limitations)
	}
	// The quick tier keeps no snapshots, but it fetches the cited pages
	// for the check: the absent quote does not count there either.
	f := fixture(t, "quote_absent")
	req, _ := f.Request()
	req.MaxSources = 3
	s := f.Snapshotter()
	e, _ := newEngine(t, f.Provider(), s, nil)
	res, err := e.Verify(t.Context(), claims.Quick, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, res)
	if res.Status != claims.StatusInsufficientEvidence || len(res.Snapshots) != 0 || len(s.Requests()) != 0 || len(s.Fetches()) != 1 {
		t.Fatalf("quick tier: status %s, %d snapshots, captures %v, fetches %v", res.Status, len(res.Snapshots), s.Requests(), s.Fetches())
	}
	e2 := evidenceByID(res)["e2"]
	if e2.SnapshotID != nil || e2.Snapshotted || e2.Quote != claims.QuoteNotFound ||
		!strings.HasPrefix(e2.QualityReason, "quote not found on the page fetched for this check (not listed") {
		t.Fatalf("quick tier e2: %+v", e2)
	}
	if e1 := evidenceByID(res)["e1"]; e1.Quote != claims.QuoteVerified || !e1.Counted ||
		!strings.HasPrefix(e1.QualityReason, "quote verified on the page fetched for this check (not listed: the quick tier lists no snapshots; kept for the evidence bundle)") {
		t.Fatalf("quick tier e1: %+v", e1)
	}
}

// Blocked domains are removed everywhere, whatever the provider did.
func TestBlockedDomain(t *testing.T) {
	r := runFixture(t, "blocked_domain", nil)
	for _, e := range r.res.Evidence {
		if urlnorm.HostMatches(urlnorm.Host(e.URL), "reuters.com") {
			t.Fatalf("blocked evidence kept: %+v", e)
		}
	}
	for _, s := range r.res.ProviderSources {
		if urlnorm.HostMatches(urlnorm.Host(s.URL), "reuters.com") {
			t.Fatalf("blocked source kept: %+v", s)
		}
	}
	if got := r.prov.Queries()[0].BlockedDomains; !cmp.Equal(got, []string{"reuters.com"}) {
		t.Fatalf("blocked domains sent: %v", got)
	}
	if r.res.Status != claims.StatusPartiallyConfirmed ||
		!cmp.Equal(factStatuses(r.res), []claims.Status{claims.StatusConfirmed, claims.StatusInsufficientEvidence}) {
		t.Fatalf("status %s facts %v", r.res.Status, factStatuses(r.res))
	}
	if !hasLimitation(r.res, "on blocked domains were removed") {
		t.Fatalf("limitations %q", r.res.Limitations)
	}
	// allowedDomains is enforced locally too.
	r2 := runFixture(t, "confirmed", func(req *claims.Request) { req.AllowedDomains = []string{"exampleton.gov", "apnews.com"} })
	for _, e := range r2.res.Evidence {
		if urlnorm.HostMatches(urlnorm.Host(e.URL), "reuters.com") {
			t.Fatalf("evidence outside allowedDomains kept: %+v", e)
		}
	}
	if len(r2.res.ProviderSources) != 2 || !hasLimitation(r2.res, "outside allowedDomains were removed") {
		t.Fatalf("sources %+v limitations %q", r2.res.ProviderSources, r2.res.Limitations)
	}
}

// A stale source is superseded by fresh ones; with no freshness
// requirement it counts.
func TestStaleSource(t *testing.T) {
	r := runFixture(t, "stale_source", nil)
	if r.res.Status != claims.StatusConfirmed || !hasLimitation(r.res, "Evidence s3 (published 2024-01-10) is older than the 168-hour") {
		t.Fatalf("status %s limitations %q", r.res.Status, r.res.Limitations)
	}
	if ev := evidenceByID(r.res)["s3"]; !strings.Contains(ev.QualityReason, "stale") {
		t.Fatalf("s3: %+v", ev)
	}
	if !hasLimitation(r.res, "Evidence s3 is older than the freshness window and is superseded by fresher evidence") {
		t.Fatalf("the superseded stale source is not reported: %q", r.res.Limitations)
	}
	r2 := runFixture(t, "stale_source", func(req *claims.Request) { req.FreshnessHours = field.Null[int]() })
	if r2.res.Status != claims.StatusAmbiguous || len(r2.res.Conflicts) == 0 {
		t.Fatalf("without freshness: status %s conflicts %+v", r2.res.Status, r2.res.Conflicts)
	}
	// Only stale evidence: it counts, with capped confidence.
	r3 := runFixture(t, "stale_only", nil)
	if r3.res.Status != claims.StatusConfirmed || r3.res.AtomicFacts[0].Confidence > 0.6 || !hasLimitation(r3.res, "rests only on evidence older") {
		t.Fatalf("stale only: %s %+v %q", r3.res.Status, r3.res.AtomicFacts, r3.res.Limitations)
	}
	if hasLimitation(r3.res, "superseded") {
		t.Fatalf("stale-only evidence reported as superseded: %q", r3.res.Limitations)
	}
	// asOf moves the window: as of 2024-01-12 the 2024 article is fresh
	// and the 2026 sources were published after asOf.
	r4 := runFixture(t, "stale_source", func(req *claims.Request) {
		req.AsOf = dateOf(2024, 1, 12)
	})
	if r4.res.Status != claims.StatusAmbiguous || !hasLimitation(r4.res, "published after asOf (2024-01-12)") {
		t.Fatalf("asOf: %s %q", r4.res.Status, r4.res.Limitations)
	}
}

// Duplicates are removed before the maxSources cap.
func TestDuplicates(t *testing.T) {
	r := runFixture(t, "duplicates", nil)
	var ids []string
	for _, e := range r.res.Evidence {
		ids = append(ids, e.ID)
	}
	if diff := cmp.Diff([]string{"e1", "e2"}, ids); diff != "" {
		t.Fatalf("evidence ids (-want +got):\n%s", diff)
	}
	for i, f := range r.res.AtomicFacts {
		if !cmp.Equal(f.EvidenceIDs, []string{"e1", "e2"}) {
			t.Fatalf("fact %d ids %v", i, f.EvidenceIDs)
		}
	}
	if r.res.Status != claims.StatusConfirmed || len(r.res.Conflicts) != 0 {
		t.Fatalf("status %s conflicts %+v", r.res.Status, r.res.Conflicts)
	}
	for _, l := range []string{"reused 2 evidence ids", "were merged", "beyond the 2-source limit", "never listed were removed"} {
		if !hasLimitation(r.res, l) {
			t.Errorf("missing limitation %q in %q", l, r.res.Limitations)
		}
	}
}

// Private-use characters and cite markup never reach the caller.
func TestPrivateUseStripped(t *testing.T) {
	r := runFixture(t, "private_use", nil)
	b, _ := json.Marshal(r.res)
	s := string(b)
	for _, c := range s {
		if c >= 0xE000 && c <= 0xF8FF {
			t.Fatalf("private-use character U+%04X in result", c)
		}
	}
	for _, bad := range []string{"citeturn", "【", "†", `\ue2`} {
		if strings.Contains(s, bad) {
			t.Fatalf("%q left in result: %s", bad, s)
		}
	}
	if r.res.Conclusion != "The claim is confirmed by the city and Reuters." {
		t.Fatalf("conclusion %q", r.res.Conclusion)
	}
	if ev := evidenceByID(r.res)["e1"]; !strings.HasPrefix(ev.QualityReason, "quote verified on snapshot snap_") {
		t.Fatalf("cleaned excerpt should verify: %+v", ev)
	}
	if q := r.res.ProviderSources[0].Queries; !cmp.Equal(q, []string{"exampleton minimum wage"}) {
		t.Fatalf("queries %q", q)
	}
}

// Research snapshots cited pages first, then other sources, up to 20.
func TestResearchSnapshots(t *testing.T) {
	r := runFixture(t, "research", nil)
	req := r.snaps.Requests()
	if len(req) != 1 || len(req[0]) != 20 {
		t.Fatalf("snapshot requests %v", req)
	}
	if !strings.Contains(req[0][0], "exampleton.gov/news") || !strings.Contains(req[0][1], "reuters") || !strings.Contains(req[0][2], "apnews") {
		t.Fatalf("cited pages must come first: %v", req[0][:3])
	}
	p := r.res.Provenance
	if p.ProviderSourceCount != 27 || p.ConsultedSourceCount != 3 || p.SnapshottedSourceCount != 20 || p.WebSearchCallCount != 4 || len(r.res.Snapshots) != 20 {
		t.Fatalf("provenance %+v snapshots %d", p, len(r.res.Snapshots))
	}
	var withSnap int
	for _, s := range r.res.ProviderSources {
		if s.SnapshotID != nil {
			withSnap++
		}
	}
	if withSnap != 20 {
		t.Fatalf("%d provider sources carry a snapshot id", withSnap)
	}
	// Quick snapshots nothing.
	r2 := runFixture(t, "overclaim", nil)
	if len(r2.snaps.Requests()) != 0 || len(r2.res.Snapshots) != 0 {
		t.Fatal("quick tier took snapshots")
	}
}

// Failed captures are kept as records and reported.
func TestFailedSnapshots(t *testing.T) {
	f := fixture(t, "confirmed")
	req, _ := f.Request()
	s := f.Snapshotter()
	delete(s.Pages, "https://apnews.com/article/exampleton-minimum-wage-18")
	e, _ := newEngine(t, f.Provider(), s, nil)
	res, err := e.Verify(t.Context(), claims.Standard, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, res)
	if len(res.Snapshots) != 3 || res.Provenance.SnapshottedSourceCount != 2 ||
		!hasLimitation(res, "1 requested source snapshot could not be captured") {
		t.Fatalf("snapshots %+v prov %+v lim %q", res.Snapshots, res.Provenance, res.Limitations)
	}
	ev := evidenceByID(res)["e3"]
	if ev.Snapshotted || ev.SnapshotID == nil || !ev.RetrievedAt.Equal(testNow) {
		t.Fatalf("e3: %+v", ev)
	}
	// Without a snapshotter results say so.
	e2, _ := newEngine(t, f.Provider(), nil, nil)
	res2, err := e2.Verify(t.Context(), claims.Standard, req, nil)
	if err != nil || !hasLimitation(res2, "Snapshots are not configured") {
		t.Fatalf("%v %q", err, res2.Limitations)
	}
}

// A captured page without extractable text (a PDF) leaves its excerpt
// unchecked: the item does not count, is not reported as a quote absent
// from its page, and the limitation says why.
func TestPDFPageExcerptNotChecked(t *testing.T) {
	r := runFixture(t, "pdf_page", nil)
	res := r.res
	if res.Status != claims.StatusInsufficientEvidence {
		t.Fatalf("status %s, want insufficient_evidence (the PDF quote is not checked); limitations %q", res.Status, res.Limitations)
	}
	for i := range res.Snapshots {
		s := res.Snapshots[i]
		if strings.HasSuffix(s.RequestedURL, ".pdf") {
			if s.Status != "captured" || s.NormalizedSHA256 != nil || s.RawSHA256 == nil || s.ContentType == nil || *s.ContentType != "application/pdf" {
				t.Fatalf("PDF snapshot record: %+v", s)
			}
		}
	}
	pdf := evidenceByID(res)["e2"]
	if !pdf.Snapshotted || pdf.SnapshotID == nil || !pdf.ProviderSourceMatched || pdf.Quote != claims.QuoteNotChecked || pdf.Counted {
		t.Fatalf("PDF evidence flags: %+v", pdf)
	}
	want := "not checked, because snapshot " + *pdf.SnapshotID + " has no text to compare with: text not extractable (PDF)"
	if !strings.HasPrefix(pdf.QualityReason, want) || strings.Contains(pdf.QualityReason, "not found") {
		t.Fatalf("PDF evidence quality reason %q", pdf.QualityReason)
	}
	if !hasLimitation(res, "The quote of evidence e2 was not checked, because snapshot "+*pdf.SnapshotID+" has no text to compare with: text not extractable (PDF); it was not counted.") {
		t.Fatalf("limitations %q", res.Limitations)
	}
	if hasLimitation(res, "was not found on its page") {
		t.Fatalf("the PDF excerpt is reported as absent: %q", res.Limitations)
	}
	if e1 := evidenceByID(res)["e1"]; !strings.HasPrefix(e1.QualityReason, "quote verified on snapshot") || !e1.Counted {
		t.Fatalf("e1: %+v", e1)
	}
	// With minimumSources 1 the verified page alone confirms the claim:
	// 0.55 + 0.1 × 1 independent source.
	r1 := runFixture(t, "pdf_page", func(req *claims.Request) { req.MinimumSources = 1 })
	if r1.res.Status != claims.StatusConfirmed || r1.res.AtomicFacts[0].Confidence != 0.65 {
		t.Fatalf("minimumSources 1: %s %+v", r1.res.Status, r1.res.AtomicFacts)
	}
	// Control: the same page served as HTML without the quote is a quote
	// absent from its page.
	r2 := runFixtureWith(t, "pdf_page", nil, func(f *claimstest.Fixture) { delete(f.ContentTypes, pdfURL) })
	if r2.res.Status != claims.StatusInsufficientEvidence || !hasLimitation(r2.res, "The quote of evidence e2 was not found on its page") {
		t.Fatalf("HTML control: %s %q", r2.res.Status, r2.res.Limitations)
	}
}

const pdfURL = "https://www.dol.gov/agencies/whd/state/exampleton/minimum-wage-order-2026.pdf"

// Two pages of one registrable domain are one independent source.
func TestSameRegistrableDomainIsOneSource(t *testing.T) {
	r := runFixture(t, "same_domain", nil)
	res := r.res
	if res.Status != claims.StatusInsufficientEvidence || res.AtomicFacts[0].Status != claims.StatusInsufficientEvidence {
		t.Fatalf("status %s / %s, want insufficient_evidence; limitations %q", res.Status, res.AtomicFacts[0].Status, res.Limitations)
	}
	for _, e := range res.Evidence {
		if !e.ProviderSourceMatched || !strings.HasPrefix(e.QualityReason, "quote verified on snapshot") || e.SourceType != "official" {
			t.Fatalf("evidence %s should count on its own: %+v", e.ID, e)
		}
	}
	if !strings.Contains(res.Conclusion, "comes from 1 independent matched source; 2 required") ||
		!strings.Contains(res.AtomicFacts[0].Explanation, "1 source independent supporting") {
		t.Fatalf("conclusion %q, explanation %q", res.Conclusion, res.AtomicFacts[0].Explanation)
	}
	r1 := runFixture(t, "same_domain", func(req *claims.Request) { req.MinimumSources = 1 })
	if r1.res.Status != claims.StatusConfirmed {
		t.Fatalf("minimumSources 1: %s", r1.res.Status)
	}
}

// manyPagesFixture is a fixture-like answer with n supporting items on n
// pages of n registrable domains, all returned by the search and
// referenced by one fact, and the pages that contain their excerpts.
func manyPagesFixture(n int) (*claims.ProviderResponse, *claimstest.Snapshotter) {
	resp := &claims.ProviderResponse{Provider: "scripted", Model: "m", ResponseID: "resp_many"}
	call := claims.SearchCall{ID: "ws_1", Action: claims.ActionSearch, Queries: []string{"exampleton minimum wage"}}
	snaps := &claimstest.Snapshotter{Now: clock, Pages: map[string]claimstest.Page{}}
	fact := claims.ProviderFact{Statement: "Exampleton's minimum wage is $18.00 per hour.", Status: claims.StatusConfirmed, Confidence: 0.9}
	for i := range n {
		u := fmt.Sprintf("https://www.city%02d.gov/wage", i+1)
		id := fmt.Sprintf("e%d", i+1)
		call.Sources = append(call.Sources, claims.SourceRef{URL: u})
		resp.Analysis.Evidence = append(resp.Analysis.Evidence, claims.ProviderEvidence{ID: id, URL: u, Title: "Wage",
			Excerpt: "The minimum wage is $18.00 per hour.", Relationship: claims.Supports})
		fact.EvidenceIDs = append(fact.EvidenceIDs, id)
		snaps.Pages[u] = claimstest.Page{Text: "Notice. The minimum wage is $18.00 per hour."}
	}
	resp.SearchCalls = []claims.SearchCall{call}
	resp.Analysis.Status = claims.StatusConfirmed
	resp.Analysis.AtomicFacts = []claims.ProviderFact{fact}
	return resp, snaps
}

// The cited snapshot mode is capped per tier: 3 pages on standard, 8 on
// deep; evidence beyond the cap stays unchecked and does not count.
func TestSnapshotCapsPerTier(t *testing.T) {
	for _, tc := range []struct {
		tier       string
		maxSources int
		wantEv     int
		wantSnaps  int
	}{
		{claims.Standard, 8, 8, 3},
		{claims.Deep, 10, 10, 8},
	} {
		t.Run(tc.tier, func(t *testing.T) {
			resp, snaps := manyPagesFixture(12)
			e, _ := newEngine(t, claimstest.Respond(resp, 0), snaps, nil)
			req := defaultRequest("Exampleton's minimum wage is $18.00 per hour.")
			req.MaxSources = tc.maxSources
			res, err := e.Verify(t.Context(), tc.tier, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			validate(t, res)
			reqs := snaps.Requests()
			if len(reqs) != 1 || len(reqs[0]) != tc.wantSnaps {
				t.Fatalf("snapshot requests %v, want one batch of %d", reqs, tc.wantSnaps)
			}
			for i, u := range reqs[0] {
				if want := fmt.Sprintf("https://www.city%02d.gov/wage", i+1); u != want {
					t.Fatalf("snapshot %d is %s, want %s (evidence order)", i, u, want)
				}
			}
			var snapshotted, verified int
			for _, ev := range res.Evidence {
				if ev.Snapshotted {
					snapshotted++
				}
				if strings.HasPrefix(ev.QualityReason, "quote verified on snapshot") && ev.Counted {
					verified++
				} else if beyond := fmt.Sprintf("not checked, because the %s tier checks at most %d pages and this page was not among them", tc.tier, tc.wantSnaps); !strings.HasPrefix(ev.QualityReason, beyond) || ev.Counted {
					t.Errorf("%s beyond the cap: %q (counted %v)", ev.ID, ev.QualityReason, ev.Counted)
				}
			}
			p := res.Provenance
			if len(res.Evidence) != tc.wantEv || len(res.Snapshots) != tc.wantSnaps || p.SnapshottedSourceCount != tc.wantSnaps ||
				snapshotted != tc.wantSnaps || verified != tc.wantSnaps {
				t.Fatalf("%d evidence, %d snapshots, %d snapshotted, %d verified, provenance %+v", len(res.Evidence), len(res.Snapshots), snapshotted, verified, p)
			}
			if res.Status != claims.StatusConfirmed {
				t.Fatalf("status %s", res.Status)
			}
		})
	}
}

// A provider that searches a local collection (the corpus) made no web
// search: searchedWeb false, webSearchCallCount 0, no search fee, and a
// limitation says so; its actions stay in providerSources.
func TestOfflineProviderDidNotSearchTheWeb(t *testing.T) {
	c, err := corpus.Demo()
	if err != nil {
		t.Fatal(err)
	}
	p, err := corpus.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	obs := &recordingObserver{}
	e, _ := newEngine(t, p, nil, &claims.Options{Observer: obs})
	call := &claims.Call{}
	res, err := e.Verify(t.Context(), claims.Standard, defaultRequest("Base mainnet uses chain ID 8453."), call)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, res)
	pv := res.Provenance
	if pv.Provider != "corpus" || pv.SearchedWeb || pv.WebSearchCallCount != 0 || pv.ProviderSourceCount == 0 {
		t.Fatalf("provenance %+v", pv)
	}
	if !hasLimitation(res, "The provider (corpus) searched a local document collection, not the web (") ||
		!hasLimitation(res, "not the live web") {
		t.Fatalf("limitations %q", res.Limitations)
	}
	if !slices.Contains(res.ProviderSources[0].Actions, claims.ActionSearch) {
		t.Fatalf("the corpus search is not listed: %+v", res.ProviderSources[0])
	}
	if !call.ProviderCalled || call.Usage.SearchCalls != 0 || len(obs.usages()) != 1 || obs.usages()[0].SearchCalls != 0 {
		t.Fatalf("usage %+v / %+v", call.Usage, obs.usages())
	}
	// The same answer from a web provider is a web search.
	f := fixture(t, "confirmed")
	web := runFixture(t, "confirmed", nil).res.Provenance
	offline := f.Provider()
	offline.Caps.Offline = true
	e2, _ := newEngine(t, offline, f.Snapshotter(), nil)
	req, _ := f.Request()
	res2, err := e2.Verify(t.Context(), f.Tier, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !web.SearchedWeb || web.WebSearchCallCount != 2 || res2.Provenance.SearchedWeb || res2.Provenance.WebSearchCallCount != 0 {
		t.Fatalf("web %+v, offline %+v", web, res2.Provenance)
	}
}
