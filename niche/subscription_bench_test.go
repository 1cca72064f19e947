package niche_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// BenchmarkActive measures SubscriptionService.Active (format check, SHA-256,
// one indexed join, entitlement) against its named baseline, the bare store
// lookup SubscriptionByToken of a precomputed hash, on an SQLite file with
// 1000 subscribers. PostgreSQL runs too when ASSAY_TEST_POSTGRES is set.
//
//	go test -run '^$' -bench Active -benchtime 2s ./niche/
func BenchmarkActive(b *testing.B) {
	dsns := map[string]func(b *testing.B) string{
		"sqlite": func(b *testing.B) string { return filepath.Join(b.TempDir(), "bench.db") },
	}
	if os.Getenv(storetest.PostgresEnv) != "" {
		dsns["postgres"] = func(b *testing.B) string { return storetest.PostgresURL(b) } // a fresh schema
	}
	for name, dsn := range dsns {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			db, err := anydb.Open(ctx, dsn(b), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			local, _ := niche.NewLocalBilling(nil)
			svc, _ := niche.NewSubscriptionService(nichestore.New(db), local, nil)
			var tokens []string
			for range 1000 {
				cs, _, err := svc.Checkout(ctx, niche.CheckoutParams{BaseURL: "http://x"})
				if err != nil {
					b.Fatal(err)
				}
				it, err := svc.ConfirmLocalCheckout(ctx, cs.ID)
				if err != nil {
					b.Fatal(err)
				}
				tokens = append(tokens, it.Token)
			}
			hashes := make([]string, len(tokens))
			for i, t := range tokens {
				hashes[i] = ids.Hash(t)
			}
			b.Run("baseline=store-lookup", func(b *testing.B) {
				i := 0
				for b.Loop() {
					if _, err := nichestore.New(db).SubscriptionByToken(ctx, hashes[i%len(hashes)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("Active", func(b *testing.B) {
				i := 0
				for b.Loop() {
					if _, err := svc.Active(ctx, tokens[i%len(tokens)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("Active-parallel", func(b *testing.B) {
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						if _, err := svc.Active(ctx, tokens[i%len(tokens)]); err != nil {
							b.Error(err)
							return
						}
						i++
					}
				})
			})
			b.Run("Active-unknown-token", func(b *testing.B) {
				unknown := ids.Token(ids.Subscriber)
				for b.Loop() {
					if _, err := svc.Active(ctx, unknown); err == nil {
						b.Fatal("unknown token accepted")
					}
				}
			})
		})
	}
}
