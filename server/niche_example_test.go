package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/netip"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/sqlite"
)

// Example_nicheCatalogue wires the niche catalogue the way a host (or
// examples/server) does: keys kept in the store, the demo catalogue loaded
// idempotently, subscribers and the paywall plugged in.
func Example_nicheCatalogue() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()

	unlockKey, err := niche.LoadOrCreateUnlockKey(ctx, db) // shared by every instance on this database
	if err != nil {
		panic(err)
	}
	signer, err := niche.NewUnlockSigner(unlockKey, nil)
	if err != nil {
		panic(err)
	}
	quotaKey, err := niche.LoadOrCreateKey(ctx, db, niche.QuotaKeyMetaName)
	if err != nil {
		panic(err)
	}
	eng, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources()})
	if err != nil {
		panic(err)
	}
	if _, err := nichedemo.Load(ctx, eng, nil); err != nil { // idempotent: safe on every start
		panic(err)
	}
	subs := &nichetest.Subscribers{} // the subscriptions service in production
	h, err := server.New(server.Config{
		Paywall: httpgate.Free{}, // the payment gate in production
		Niche: server.NicheConfig{
			Engine:         eng,
			Subscribers:    subs,
			Unlock:         signer,
			QuotaKey:       quotaKey,
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		},
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	res, err := srv.Client().Get(srv.URL + "/niche-discovery/v1/niches?limit=100")
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	var list struct {
		Count int `json:"count"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
		panic(err)
	}
	fmt.Println(res.StatusCode, list.Count, "published evaluations")
	// Output: 200 42 published evaluations
}
