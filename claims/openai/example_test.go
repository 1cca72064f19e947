package openai_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/openai"
)

// Build the provider from the environment; without a key it is built but
// answers ProviderNotConfigured.
func ExampleNew() {
	p, err := openai.New(&openai.Options{
		APIKey:  os.Getenv("ASSAY_EXAMPLE_NO_SUCH_KEY"),
		Model:   "gpt-5-mini",
		BaseURL: "https://api.openai.com/v1",
	})
	if err != nil {
		log.Fatal(err)
	}
	tier, _ := claims.TierByName(claims.Quick)
	_, err = p.Search(context.Background(), &claims.ProviderQuery{Tier: tier.Name, Claim: "Base mainnet uses chain ID 8453."})
	fmt.Println(p.Configured(), errors.Is(err, claims.ErrProviderNotConfigured))
	fmt.Printf("%+v\n", p.Capabilities())
	// Output:
	// false true
	// {DomainFilter:true MaxDomains:100 BlockedDomainFilter:false SourceName:openai_web_search Offline:false}
}
