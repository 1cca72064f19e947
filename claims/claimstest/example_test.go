package claimstest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimsmem"
	"github.com/assaykit/assay/claims/claimstest"
)

// A recorded fixture replays a provider answer and serves the pages it
// cites. Here the model cites a URL no search returned: the engine drops
// it, and says so.
func ExampleLoadFixture() {
	ctx := context.Background()
	f, err := claimstest.LoadFixture("invented_url")
	if err != nil {
		log.Fatal(err)
	}
	req, err := f.Request()
	if err != nil {
		log.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) }
	pages := f.Snapshotter()
	pages.Now = now
	provider := f.Provider()
	engine, err := claims.New(provider, claimsmem.New(now), pages, &claims.Options{Now: now})
	if err != nil {
		log.Fatal(err)
	}
	res, err := engine.Verify(ctx, f.Tier, req, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Tier, res.Status, provider.Calls(), "provider call")
	for _, e := range res.Evidence {
		fmt.Println(e.ID, e.ProviderSourceMatched, e.Counted, e.Quote)
	}
	// Output:
	// standard insufficient_evidence 1 provider call
	// e1 true true verified
	// e2 false false not_checked
}

// A scripted provider plays its steps in order: here a rate-limit error,
// then an answer.
func ExampleNewProvider() {
	p := claimstest.NewProvider(
		claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderRateLimited, RetryAfter: time.Second}},
		claimstest.Step{Response: &claims.ProviderResponse{Provider: "scripted", Model: "m", ResponseID: "r1"}},
	)
	q := &claims.ProviderQuery{Tier: claims.Quick, Claim: "Base mainnet uses chain ID 8453."}
	_, err := p.Search(context.Background(), q)
	fmt.Println(err != nil, p.Calls())
	r, err := p.Search(context.Background(), q)
	fmt.Println(r.ResponseID, err, p.Calls(), p.Queries()[1].Claim)
	// Output:
	// true 1
	// r1 <nil> 2 Base mainnet uses chain ID 8453.
}
