package server

import (
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/google/go-cmp/cmp"
)

// The verify routes and the quotes build claim-tier offers in one place.
func TestClaimTierOfferIsTheRouteOffer(t *testing.T) {
	env := newClaimsEnv(t, nil, nil)
	offers := env.srv.TierOffers()
	for _, tier := range claims.Tiers() {
		if diff := cmp.Diff(claimTierOffer(tier, env.eng.Timeout()), offers[tier.Name]); diff != "" {
			t.Errorf("%s (-constructor +route):\n%s", tier.Name, diff)
		}
	}
}
