package claims_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/field"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/sqlite"
)

// scripted is what a search provider might report for a claim about
// Exampleton's minimum wage: one search with three results, one page
// opened, and its analysis citing an official page and a news report.
func scripted() *claims.ProviderResponse {
	published := "2026-11-02"
	return &claims.ProviderResponse{
		Provider:   "scripted",
		Model:      "example-model",
		ResponseID: "resp_1",
		SearchCalls: []claims.SearchCall{
			{ID: "ws_1", Action: claims.ActionSearch, Queries: []string{"exampleton minimum wage 2026"}, Sources: []claims.SourceRef{
				{URL: "https://www.exampleton.gov/news/minimum-wage?utm_source=search"},
				{URL: "https://www.reuters.com/world/exampleton-wage"},
				{URL: "https://forum.example.org/t/wage-rumours"},
			}},
			{ID: "ws_2", Action: claims.ActionOpenPage, URL: "https://www.exampleton.gov/news/minimum-wage"},
		},
		Analysis: claims.Analysis{
			Status:     claims.StatusConfirmed,
			Conclusion: "The city and Reuters both report the new wage.",
			AtomicFacts: []claims.ProviderFact{{
				Statement: "Exampleton's minimum wage is $18.00 per hour.", Status: claims.StatusConfirmed,
				Confidence: 0.9, Explanation: "Two sources state it.", EvidenceIDs: []string{"e1", "e2"},
			}},
			Evidence: []claims.ProviderEvidence{
				{ID: "e1", URL: "https://www.exampleton.gov/news/minimum-wage", Title: "Minimum wage", Publisher: "City of Exampleton",
					PublishedAt: &published, Excerpt: "The minimum wage in Exampleton rises to $18.00 per hour", Relationship: claims.Supports},
				{ID: "e2", URL: "https://www.reuters.com/world/exampleton-wage", Title: "Exampleton raises wage", Publisher: "Reuters",
					PublishedAt: &published, Excerpt: "Exampleton's minimum wage rose to $18.00 an hour", Relationship: claims.Supports},
			},
		},
	}
}

// An engine over a scripted provider, an in-memory store and a fake
// snapshotter that serves the cited pages from memory. The engine re-checks
// everything the provider said: sources come from the search calls only,
// each source is classified by its domain, and each excerpt is looked up
// in the snapshot of its page.
func ExampleEngine_Verify() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	now := func() time.Time { return time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC) }
	pages := &claimstest.Snapshotter{Now: now, Pages: map[string]claimstest.Page{
		"https://www.exampleton.gov/news/minimum-wage":  {Text: "Press release. The minimum wage in Exampleton rises to $18.00 per hour on 1 November 2026."},
		"https://www.reuters.com/world/exampleton-wage": {Text: "EXAMPLETON (Reuters) - Exampleton's minimum wage rose to $18.00 an hour on Sunday."},
	}}
	engine, err := claims.New(claimstest.Respond(scripted(), 0), claimsstore.New(db), pages, &claims.Options{Now: now})
	if err != nil {
		log.Fatal(err)
	}

	req := &claims.Request{Claim: "Exampleton's minimum wage is $18.00 per hour."} // the other fields: their defaults
	res, err := engine.Verify(ctx, claims.Standard, req, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, "-", res.AtomicFacts[0].Status)
	for _, e := range res.Evidence {
		fmt.Printf("%s %s %s matched=%v snapshotted=%v\n", e.ID, e.Relationship, e.SourceType, e.ProviderSourceMatched, e.Snapshotted)
	}
	for _, s := range res.ProviderSources {
		fmt.Println(s.URL, s.Cited)
	}
	p := res.Provenance
	fmt.Println(p.Provider, p.ProviderSourceCount, "sources,", p.SnapshottedSourceCount, "snapshotted")

	// The result is stored: the payer can read it again by id.
	rec, err := engine.Verification(ctx, res.VerificationID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rec.Result.VerificationID == res.VerificationID)
	// Output:
	// confirmed - confirmed
	// e1 supports official matched=true snapshotted=true
	// e2 supports news matched=true snapshotted=true
	// https://www.exampleton.gov/news/minimum-wage true
	// https://www.reuters.com/world/exampleton-wage true
	// https://forum.example.org/t/wage-rumours false
	// scripted 3 sources, 2 snapshotted
	// true
}

// Check applies the tier rules before any work or payment: here the quick
// tier cannot cite the four sources the request demands.
func ExampleEngine_Check() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	engine, err := claims.New(nil, claimsstore.New(db), nil, nil) // no provider: Check and stored results still work
	if err != nil {
		log.Fatal(err)
	}
	req := &claims.Request{Claim: "Base mainnet uses chain ID 8453.", MinimumSources: 4}

	_, err = engine.Check(claims.Quick, req)
	var re *claims.RequestError
	fmt.Println(errors.As(err, &re), re.Msg)

	eff, err := engine.Check(claims.Deep, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(eff.Tier.Name, eff.MaxSources, eff.MinimumSources)

	_, err = engine.Verify(ctx, claims.Deep, req, nil)
	fmt.Println(errors.Is(err, claims.ErrProviderNotConfigured))
	// Output:
	// true The quick tier supports at most 3 cited sources; minimumSources (4) cannot be met
	// deep 8 4
	// true
}

// A Request's zero value takes the documented defaults; an explicit value
// that is also a zero value is written with the field's type, and a
// broken bound reads as it does over HTTP (Pydantic's message).
func ExampleRequest() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	engine, err := claims.New(nil, claimsstore.New(db), nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	req := &claims.Request{Claim: "Base mainnet uses chain ID 8453."}
	eff, err := engine.Check(claims.Standard, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(eff.FreshnessHours, eff.SourcePolicy, eff.MinimumSources, eff.MaxSources, eff.IncludeConflicts, eff.Language)

	req.FreshnessHours = field.Null[int]() // no freshness requirement (the document's null)
	req.IncludeConflicts = new(false)
	req.MinimumSources = 1
	if eff, err = engine.Check(claims.Standard, req); err != nil {
		log.Fatal(err)
	}
	fmt.Println(eff.FreshnessHours, eff.SourcePolicy, eff.MinimumSources, eff.MaxSources, eff.IncludeConflicts, eff.Language)

	_, err = engine.Check(claims.Standard, &claims.Request{Claim: "ok"})
	fmt.Println(err)
	// Output:
	// 168 authoritative 2 8 true auto
	// 0 authoritative 1 8 false auto
	// claims: claim: String should have at least 3 characters
}

// The tier table says what each tier checks: its budgets and snapshot
// policy (how a tier is sold — prices, routes, tools — is package sell's
// catalogue).
func ExampleTiers() {
	for _, t := range claims.Tiers() {
		fmt.Printf("%-8s %2d actions %2d sources %-11s %2d snapshots %s\n",
			t.Name, t.MaxToolActions, t.MaxCitedSources, t.SnapshotMode, t.MaxSnapshots, t.Timeout)
	}
	// Output:
	// quick     1 actions  3 sources none         0 snapshots 2m0s
	// standard  3 actions  8 sources cited        3 snapshots 2m0s
	// deep      7 actions 15 sources cited        8 snapshots 2m0s
	// research 15 actions 20 sources all_sources 20 snapshots 2m0s
}
