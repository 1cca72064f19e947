package server

import (
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/google/go-cmp/cmp"
)

// The verify routes sell the catalogue's offers (the quotes price them
// from the same listing).
func TestClaimRoutesSellTheCatalogueOffers(t *testing.T) {
	env := newClaimsEnv(t, nil, nil)
	offers := env.srv.TierOffers()
	for _, tier := range claims.Tiers() {
		l, ok := env.srv.Catalogue().Tier(tier.Name)
		if !ok {
			t.Fatalf("no listing of %s", tier.Name)
		}
		if l.WorkTimeout != env.eng.Timeout()+env.eng.CheckGrace() {
			t.Errorf("%s: work timeout %s, the engine's is %s plus %s of check grace", tier.Name, l.WorkTimeout, env.eng.Timeout(), env.eng.CheckGrace())
		}
		if diff := cmp.Diff(l.Offer, offers[tier.Name]); diff != "" {
			t.Errorf("%s (-catalogue +route):\n%s", tier.Name, diff)
		}
	}
}
