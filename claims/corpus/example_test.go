package corpus_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
)

// The demo collection answers a compound claim part by part.
func Example() {
	c, err := corpus.Demo()
	if err != nil {
		log.Fatal(err)
	}
	p, err := corpus.New(c, nil)
	if err != nil {
		log.Fatal(err)
	}
	tier, _ := claims.TierByName(claims.Standard)
	r, err := p.Search(context.Background(), &claims.ProviderQuery{
		Tier:             tier.Name,
		Claim:            "Base mainnet uses chain ID 8453 and USDC on Base has 18 decimals.",
		MaxToolActions:   tier.MaxToolActions,
		MaxSources:       tier.MaxCitedSources,
		IncludeConflicts: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Provider, r.Model, r.Analysis.Status)
	for _, f := range r.Analysis.AtomicFacts {
		fmt.Printf("%s: %s\n", f.Statement, f.Status)
	}
	fmt.Println(r.Analysis.Evidence[1].Relationship, r.Analysis.Evidence[1].URL)
	fmt.Println(r.Analysis.Evidence[1].Excerpt)
	// Output:
	// corpus bm25-lexical-v1 partially_confirmed
	// Base mainnet uses chain ID 8453: confirmed
	// USDC on Base has 18 decimals.: contradicted
	// contradicts http://docs.circle-usdc.example/stablecoins/usdc-on-base
	// USDC on Base has 6 decimals, like USDC on every other supported network.
}

// Serve the collection on loopback and fetch a page by its own URL. The
// snapshot capturer is configured with the same HostMap and AllowList.
func ExampleServe() {
	c, err := corpus.Demo()
	if err != nil {
		log.Fatal(err)
	}
	srv, err := corpus.Serve(c)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	fmt.Println(srv.HostMap()["docs.base.example:80"] == srv.Addr(), len(srv.AllowList()))

	resp, err := srv.Client().Get("http://docs.base.example/network-information")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.Contains(string(page), "Base Mainnet uses chain ID 8453."))
	// Output:
	// true 1
	// 200 true
}
