package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store"
)

// newCatalogue builds the niche catalogue and, unless disabled, loads the
// demo catalogue through the bulk import (idempotent on every start).
func newCatalogue(ctx context.Context, cfg *config, db *store.DB, subs niche.Subscribers, log *slog.Logger) (server.NicheConfig, error) {
	unlockKey, err := niche.LoadOrCreateUnlockKey(ctx, db)
	if err != nil {
		return server.NicheConfig{}, err
	}
	signer, err := niche.NewUnlockSigner(unlockKey, &niche.UnlockOptions{TTL: cfg.NicheUnlockTTL})
	if err != nil {
		return server.NicheConfig{}, err
	}
	quotaKey, err := niche.LoadOrCreateKey(ctx, db, niche.QuotaKeyMetaName)
	if err != nil {
		return server.NicheConfig{}, err
	}
	var sources []niche.Source
	if cfg.NicheDemo {
		sources = nichedemo.Sources()
	}
	eng, err := niche.New(db, &niche.Options{Logger: log, Sources: sources, SearchCacheTTL: cfg.NicheSearchCache})
	if err != nil {
		return server.NicheConfig{}, err
	}
	if cfg.NicheDemo {
		rep, err := nichedemo.Load(ctx, eng, nil)
		if err != nil {
			return server.NicheConfig{}, fmt.Errorf("demo catalogue: %w", err)
		}
		// One line for the whole catalogue; each revision is at debug.
		log.Info(fmt.Sprintf("demo catalogue: %d evaluations loaded", rep.DraftsCreated+rep.DraftsReplayed),
			"new", rep.DraftsCreated, "signals", rep.SignalsCreated+rep.SignalsDuplicate)
	}
	return server.NicheConfig{
		Engine: eng, Subscribers: subs, Unlock: signer, QuotaKey: quotaKey,
		Prefix: cfg.NichePrefix, FreeSearchesPerDay: new(cfg.NicheFreeSearches),
		SearchPriceMicroUSD: cfg.NicheSearchPrice, TrustedProxies: cfg.proxies,
	}, nil
}
