package sell

import (
	"errors"
	"fmt"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment"
)

// Services.
const (
	ServiceClaims = "claims"
	ServiceNiche  = "niche"
)

// Offer ids of the niche catalogue. A claim tier's offer id is
// ClaimsOfferID(tier).
const (
	OfferNicheEvaluation = "niche.evaluation"
	OfferNicheSearch     = "niche.search"
)

// ClaimsOfferID is the offer id of a claim tier: "claims.verify.<tier>".
func ClaimsOfferID(tier string) string { return "claims.verify." + tier }

// Default prices in micro-USD (USDC atomic units).
const (
	DefaultQuickPrice     = 20_000  // USD 0.02
	DefaultStandardPrice  = 50_000  // USD 0.05
	DefaultDeepPrice      = 120_000 // USD 0.12
	DefaultResearchPrice  = 250_000 // USD 0.25
	DefaultClaimsCard     = 500_000 // USD 0.50: Stripe's minimum card charge
	DefaultNicheEvalPrice = 250_000 // USD 0.25
	DefaultNicheSearch    = 50_000  // USD 0.05
	// MinCardMicroUSD is the smallest card price (Stripe's USD 0.50
	// minimum charge).
	MinCardMicroUSD = 500_000
)

// nicheWork bounds the work of a niche sale (a read of the store).
const nicheWork = 10 * time.Second

// Listing is one offer of the catalogue, stated once: what is sold, its
// prices, and where each transport sells it.
type Listing struct {
	// Offer is what the payment core charges: id, product (the claim
	// tier; "" for niche offers, which cannot be quoted), description,
	// USDC and card prices, media type and work timeout.
	payment.Offer
	// Service is ServiceClaims or ServiceNiche.
	Service string
	// Tier is the claim tier sold ("" for niche offers).
	Tier string
	// HTTPMethod and HTTPPath are the canonical HTTP route (service
	// prefixes and aliases are the HTTP server's); a path may hold
	// {niche_id}.
	HTTPMethod string
	HTTPPath   string
	// MCPTool is the MCP tool that sells the offer ("" when none).
	MCPTool string
}

// Prices set the catalogue's prices in micro-USD. A zero field keeps its
// default.
type Prices struct {
	// Claims maps a claim tier to its USDC price (x402, MPP evm).
	Claims map[string]int64
	// ClaimsCard is the card (MPP stripe) price of every claim tier; at
	// least MinCardMicroUSD. NoCards offers no card payments.
	ClaimsCard int64
	NoCards    bool
	// NicheEvaluation is the price of one full evaluation, NicheSearch of
	// one paid search.
	NicheEvaluation int64
	NicheSearch     int64
}

// DefaultPrices returns today's prices.
func DefaultPrices() Prices {
	return Prices{
		Claims: map[string]int64{claims.Quick: DefaultQuickPrice, claims.Standard: DefaultStandardPrice,
			claims.Deep: DefaultDeepPrice, claims.Research: DefaultResearchPrice},
		ClaimsCard: DefaultClaimsCard, NicheEvaluation: DefaultNicheEvalPrice, NicheSearch: DefaultNicheSearch,
	}
}

// TierPrice is one claim tier's USDC price.
type TierPrice struct {
	Tier     string
	MicroUSD int64
}

// Tiers returns the claim tiers' prices in the tier table's order (a tier
// without a price has 0).
func (p Prices) Tiers() []TierPrice {
	var out []TierPrice
	for _, t := range claims.Tiers() {
		out = append(out, TierPrice{Tier: t.Name, MicroUSD: p.Claims[t.Name]})
	}
	return out
}

// WaiverInsufficientEvidence is the reason of the "no verdict, no charge"
// waiver: a verification whose verdict is insufficient_evidence.
const WaiverInsufficientEvidence = "insufficient_evidence"

// DefaultFreeVerdictsPerDay is how many insufficient_evidence verdicts one
// payer gets free per UTC day under "no verdict, no charge" when
// NoVerdictNoCharge.PerPayerPerDay is 0.
const DefaultFreeVerdictsPerDay = 5

// NoVerdictNoCharge is the "no verdict, no charge" policy of the claim
// tiers: on the tiers it names, a verification whose verdict is
// insufficient_evidence is delivered without charge (the payment is voided,
// the order is voided and its receipt says so), up to PerPayerPerDay such
// verdicts per payer per UTC day; beyond that they are charged like any
// other verdict. The zero value holds nowhere: every verdict is charged.
type NoVerdictNoCharge struct {
	// Tiers are the claim tiers the policy holds on.
	Tiers []string
	// PerPayerPerDay bounds the free verdicts of one payer per UTC day;
	// zero means DefaultFreeVerdictsPerDay.
	PerPayerPerDay int
}

// CatalogueOptions configure NewCatalogue. Nil means defaults.
type CatalogueOptions struct {
	// Prices override the defaults field by field.
	Prices Prices
	// NoVerdictNoCharge sets the tiers where insufficient_evidence
	// verdicts are free (none by default).
	NoVerdictNoCharge NoVerdictNoCharge
	// ClaimsWorkTimeout is the longest a verification may take (the claim
	// offers' WorkTimeout): the engine's Timeout plus its CheckGrace. Zero
	// means claims.DefaultTimeout plus claims.DefaultCheckGrace.
	ClaimsWorkTimeout time.Duration
}

// Catalogue is every offer, stated once. It is immutable and safe for
// concurrent use.
type Catalogue struct {
	listings []Listing
	byID     map[string]int
}

// ErrPrice reports a price the catalogue refuses.
var ErrPrice = errors.New("sell: invalid price")

// NewCatalogue returns the catalogue with o's prices.
func NewCatalogue(o *CatalogueOptions) (*Catalogue, error) {
	if o == nil {
		o = &CatalogueOptions{}
	}
	p := DefaultPrices()
	for tier, v := range o.Prices.Claims {
		if _, ok := claims.TierByName(tier); !ok {
			return nil, fmt.Errorf("%w: unknown claim tier %q", ErrPrice, tier)
		}
		p.Claims[tier] = v
	}
	set := func(dst *int64, v int64) {
		if v != 0 {
			*dst = v
		}
	}
	set(&p.ClaimsCard, o.Prices.ClaimsCard)
	set(&p.NicheEvaluation, o.Prices.NicheEvaluation)
	set(&p.NicheSearch, o.Prices.NicheSearch)
	card := p.ClaimsCard
	if o.Prices.NoCards {
		card = 0
	}
	for name, v := range map[string]int64{"niche evaluation": p.NicheEvaluation, "niche search": p.NicheSearch} {
		if v < 1 {
			return nil, fmt.Errorf("%w: the %s price must be at least 1 micro-USD, got %d", ErrPrice, name, v)
		}
	}
	if !o.Prices.NoCards && card < MinCardMicroUSD {
		return nil, fmt.Errorf("%w: the card price must be at least %s (Stripe's minimum), got %d micro-USD", ErrPrice,
			payment.MicroUSD(MinCardMicroUSD), card)
	}
	work := o.ClaimsWorkTimeout
	if work <= 0 {
		work = claims.DefaultTimeout + claims.DefaultCheckGrace
	}
	free := map[string]bool{}
	for _, tier := range o.NoVerdictNoCharge.Tiers {
		if _, ok := claims.TierByName(tier); !ok {
			return nil, fmt.Errorf("%w: no verdict, no charge: unknown claim tier %q", ErrPrice, tier)
		}
		free[tier] = true
	}
	perDay := o.NoVerdictNoCharge.PerPayerPerDay
	switch {
	case perDay == 0:
		perDay = DefaultFreeVerdictsPerDay
	case perDay < 0:
		return nil, fmt.Errorf("%w: no verdict, no charge: free verdicts per payer per day must be at least 1, got %d", ErrPrice, perDay)
	}
	c := &Catalogue{byID: map[string]int{}}
	for _, t := range claims.Tiers() {
		price := p.Claims[t.Name]
		if price < 1 {
			return nil, fmt.Errorf("%w: the %s tier's price must be at least 1 micro-USD, got %d", ErrPrice, t.Name, price)
		}
		offer := payment.Offer{ID: ClaimsOfferID(t.Name), Product: t.Name,
			Description:    "Claim verification, " + t.Name + " tier: a cited, structured verdict on a factual claim from current web sources. ",
			AmountMicroUSD: price, CardMicroUSD: card, MimeType: "application/json", WorkTimeout: work}
		if free[t.Name] {
			offer.Waiver = &payment.Waiver{Reason: WaiverInsufficientEvidence, PerPayerPerDay: perDay}
		}
		offer.Description += ChargePolicy(offer.Waiver)
		c.add(Listing{Offer: offer, Service: ServiceClaims, Tier: t.Name, HTTPMethod: "POST", HTTPPath: claimsPath(t.Name), MCPTool: claimsTool(t.Name)})
	}
	c.add(Listing{
		Offer: payment.Offer{ID: OfferNicheEvaluation, Description: "One full niche evaluation with its evidence",
			AmountMicroUSD: p.NicheEvaluation, MimeType: "application/json", WorkTimeout: nicheWork},
		Service: ServiceNiche, HTTPMethod: "GET", HTTPPath: "/v1/niches/{niche_id}/pay-per-call", MCPTool: "get_niche",
	})
	c.add(Listing{
		Offer: payment.Offer{ID: OfferNicheSearch, Description: "Niche catalogue search with full evaluations",
			AmountMicroUSD: p.NicheSearch, MimeType: "application/json", WorkTimeout: nicheWork},
		Service: ServiceNiche, HTTPMethod: "GET", HTTPPath: "/v1/search/pay-per-call", MCPTool: "search_niches",
	})
	return c, nil
}

// ChargePolicy states a claim tier's charge policy in a sentence, as the
// tier's offer description (and so its 402 challenges, in every transport)
// and the discovery documents carry it.
func ChargePolicy(w *payment.Waiver) string {
	if w == nil {
		return "Every delivered verdict is charged, insufficient_evidence included."
	}
	return fmt.Sprintf("No verdict, no charge: an insufficient_evidence verdict is delivered free (the payment is voided, never settled; "+
		"the order is voided and its receipt says so), up to %d per payer per UTC day; beyond that it is charged like any verdict.", w.PerPayerPerDay)
}

// claimsPath is a claim tier's canonical HTTP path; the standard tier is
// the service's plain verify route.
func claimsPath(tier string) string {
	if tier == claims.Standard {
		return "/v1/claims/verify"
	}
	return "/v1/claims/verify/" + tier
}

// claimsTool is a claim tier's MCP tool; the standard tier's is the plain
// verify_claim.
func claimsTool(tier string) string {
	if tier == claims.Standard {
		return "verify_claim"
	}
	return "verify_claim_" + tier
}

func (c *Catalogue) add(l Listing) {
	c.byID[l.ID] = len(c.listings)
	c.listings = append(c.listings, l)
}

// Listings returns every listing: the claim tiers cheapest first, then
// the niche offers. The slice is a copy.
func (c *Catalogue) Listings() []Listing { return append([]Listing(nil), c.listings...) }

// Listing returns the listing of an offer id.
func (c *Catalogue) Listing(id string) (Listing, bool) {
	i, ok := c.byID[id]
	if !ok {
		return Listing{}, false
	}
	return c.listings[i], true
}

// Tier returns the listing of a claim tier.
func (c *Catalogue) Tier(name string) (Listing, bool) { return c.Listing(ClaimsOfferID(name)) }

// Offer returns the offer of an id (the zero Offer when unknown).
func (c *Catalogue) Offer(id string) payment.Offer {
	l, _ := c.Listing(id)
	return l.Offer
}
