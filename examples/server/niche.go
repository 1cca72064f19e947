package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/snapshotstore"
)

// newCatalogue builds the niche catalogue and, unless disabled, loads the
// demo catalogue through the bulk import (idempotent on every start).
// Evidence pages are captured by the claims' snapshot service; with the
// demo, by a snapshot service of their own that dials the demo pages
// served on loopback (same record and content stores, so the snapshot
// routes serve both). The returned function stops the demo pages.
func newCatalogue(ctx context.Context, cfg *config, db *store.DB, v *verification, subs niche.Subscribers, log *slog.Logger) (server.NicheConfig, func(), error) {
	none := func() {}
	unlockKey, err := niche.LoadOrCreateUnlockKey(ctx, db)
	if err != nil {
		return server.NicheConfig{}, none, err
	}
	signer, err := niche.NewUnlockSigner(unlockKey, &niche.UnlockOptions{TTL: cfg.NicheUnlockTTL})
	if err != nil {
		return server.NicheConfig{}, none, err
	}
	quotaKey, err := niche.LoadOrCreateKey(ctx, db, niche.QuotaKeyMetaName)
	if err != nil {
		return server.NicheConfig{}, none, err
	}
	var sources []niche.Source
	var capturer niche.Capturer = v.snapshots
	closeAll := none
	if cfg.NicheDemo {
		sources = nichedemo.Sources()
		pages, err := nichedemo.ServePages()
		if err != nil {
			return server.NicheConfig{}, none, fmt.Errorf("demo pages: %w", err)
		}
		snaps, err := snapshot.NewService(snapshotstore.New(db), v.blobs, &snapshot.Options{
			Logger: log.With("component", "snapshot"), MaxBytes: cfg.SnapshotMaxBytes, CaptureTimeout: cfg.SnapshotTimeout,
			Retention: cfg.SnapshotRetention, HostMap: pages.HostMap(), AllowAddrs: pages.AllowList(), TLSConfig: pages.TLSConfig(),
		})
		if err != nil {
			_ = pages.Close()
			return server.NicheConfig{}, none, err
		}
		capturer = snaps
		closeAll = func() { snaps.Close(); _ = pages.Close() }
		log.Debug("niche: demo evidence pages on loopback", "pages", pages.Len(), "addr", pages.Addr())
	}
	eng, err := niche.New(nichestore.New(db), &niche.Options{Logger: log, Sources: sources, SearchCacheTTL: cfg.NicheSearchCache, Capturer: capturer})
	if err != nil {
		closeAll()
		return server.NicheConfig{}, none, err
	}
	if cfg.NicheDemo {
		rep, err := nichedemo.Load(ctx, eng, nil)
		if err != nil {
			closeAll()
			return server.NicheConfig{}, none, fmt.Errorf("demo catalogue: %w", err)
		}
		// One line for the whole catalogue; each revision is at debug.
		log.Info(fmt.Sprintf("demo catalogue: %d evaluations loaded", rep.DraftsCreated+rep.DraftsReplayed),
			"new", rep.DraftsCreated, "signals", rep.SignalsCreated+rep.SignalsDuplicate)
	}
	if cfg.NicheImport != "" {
		if err := importCatalogue(ctx, eng, cfg.NicheImport, log); err != nil {
			closeAll()
			return server.NicheConfig{}, none, err
		}
	}
	return server.NicheConfig{
		Engine: eng, Subscribers: subs, Unlock: signer, QuotaKey: quotaKey,
		Prefix: cfg.NichePrefix, FreeSearchesPerDay: new(cfg.NicheFreeSearches),
		TrustedProxies: cfg.proxies,
	}, closeAll, nil
}

// importCatalogue imports the JSON Lines catalogue at path (-niche-import)
// through the engine: batched transactions, resumable. A file with bad
// lines stores nothing and stops the start with every bad line named.
func importCatalogue(ctx context.Context, eng *niche.Engine, path string, log *slog.Logger) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("niche import: %w", err)
	}
	defer f.Close()
	start := time.Now()
	rep, err := eng.Import(ctx, f, nil)
	if err != nil {
		return fmt.Errorf("niche import of %s: %w", path, err)
	}
	for _, l := range rep.Lines {
		if l.Outcome == "failed" {
			log.Warn("niche import: a draft was not created", "file", path, "line", l.Line, "reason", l.Reason)
		}
	}
	log.Info(fmt.Sprintf("niche import: %d evaluations created, %d already stored", rep.DraftsCreated, rep.DraftsReplayed),
		"file", path, "failed", rep.DraftsFailed, "signals", rep.SignalsCreated, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}
