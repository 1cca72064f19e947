package sell_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/sell"
)

func TestCatalogueDefaultsAndOverrides(t *testing.T) {
	c, err := sell.NewCatalogue(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		price, card int64
		path, tool  string
	}{
		"claims.verify.quick":    {20_000, 500_000, "/v1/claims/verify/quick", "verify_claim_quick"},
		"claims.verify.standard": {50_000, 500_000, "/v1/claims/verify", "verify_claim"},
		"claims.verify.deep":     {120_000, 500_000, "/v1/claims/verify/deep", "verify_claim_deep"},
		"claims.verify.research": {250_000, 500_000, "/v1/claims/verify/research", "verify_claim_research"},
		"niche.evaluation":       {250_000, 0, "/v1/niches/{niche_id}/pay-per-call", "get_niche"},
		"niche.search":           {50_000, 0, "/v1/search/pay-per-call", "search_niches"},
	}
	ls := c.Listings()
	if len(ls) != len(want) {
		t.Fatalf("%d listings, want %d", len(ls), len(want))
	}
	for _, l := range ls {
		w, ok := want[l.ID]
		if !ok || l.AmountMicroUSD != w.price || l.CardMicroUSD != w.card || l.HTTPPath != w.path || l.MCPTool != w.tool || l.Description == "" {
			t.Errorf("listing %+v, want %+v", l, w)
		}
		if (l.Service == sell.ServiceClaims) != (l.Product != "") || (l.Tier != "") != (l.Service == sell.ServiceClaims) {
			t.Errorf("%s: service %q product %q tier %q", l.ID, l.Service, l.Product, l.Tier)
		}
	}
	if l, _ := c.Tier(claims.Deep); l.WorkTimeout != claims.DefaultTimeout+claims.DefaultCheckGrace {
		t.Errorf("deep work timeout %s", l.WorkTimeout)
	}
	c, err = sell.NewCatalogue(&sell.CatalogueOptions{ClaimsWorkTimeout: time.Minute,
		Prices: sell.Prices{Claims: map[string]int64{claims.Deep: 90_000}, ClaimsCard: 750_000, NicheSearch: 70_000}})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := c.Tier(claims.Deep); d.AmountMicroUSD != 90_000 || d.CardMicroUSD != 750_000 || d.WorkTimeout != time.Minute {
		t.Errorf("deep %+v", d)
	}
	if q, _ := c.Tier(claims.Quick); q.AmountMicroUSD != 20_000 {
		t.Errorf("quick kept its default? %+v", q)
	}
	if s := c.Offer(sell.OfferNicheSearch); s.AmountMicroUSD != 70_000 {
		t.Errorf("niche search %+v", s)
	}
	if c, err := sell.NewCatalogue(&sell.CatalogueOptions{Prices: sell.Prices{NoCards: true}}); err != nil || c.Offer("claims.verify.quick").CardMicroUSD != 0 {
		t.Errorf("no cards: %v", err)
	}
	for name, p := range map[string]sell.Prices{
		"unknown tier":    {Claims: map[string]int64{"premium": 1}},
		"negative tier":   {Claims: map[string]int64{claims.Quick: -1}},
		"card below 0.50": {ClaimsCard: 499_999},
		"negative niche":  {NicheEvaluation: -5},
		"negative search": {NicheSearch: -1},
	} {
		if _, err := sell.NewCatalogue(&sell.CatalogueOptions{Prices: p}); !errors.Is(err, sell.ErrPrice) {
			t.Errorf("%s: %v, want ErrPrice", name, err)
		}
	}
}

// Every offer is stated once: its prices, its HTTP route and its MCP tool.
func ExampleCatalogue() {
	c, _ := sell.NewCatalogue(&sell.CatalogueOptions{Prices: sell.Prices{Claims: map[string]int64{claims.Deep: 150_000}}})
	for _, l := range c.Listings() {
		fmt.Printf("%-22s USD %-5s %-4s %-34s %s\n", l.ID, fmtUSD(l.AmountMicroUSD), l.HTTPMethod, l.HTTPPath, l.MCPTool)
	}
	// Output:
	// claims.verify.quick    USD 0.02  POST /v1/claims/verify/quick            verify_claim_quick
	// claims.verify.standard USD 0.05  POST /v1/claims/verify                  verify_claim
	// claims.verify.deep     USD 0.15  POST /v1/claims/verify/deep             verify_claim_deep
	// claims.verify.research USD 0.25  POST /v1/claims/verify/research         verify_claim_research
	// niche.evaluation       USD 0.25  GET  /v1/niches/{niche_id}/pay-per-call get_niche
	// niche.search           USD 0.05  GET  /v1/search/pay-per-call            search_niches
}

func fmtUSD(m int64) string { return payment.MicroUSD(m).String() }
