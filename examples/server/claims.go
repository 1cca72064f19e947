package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/claims/openai"
	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store"
)

// verification holds the claim-verification components and what must be
// closed when the server stops.
type verification struct {
	engine    *claims.Engine
	snapshots *snapshot.Service
	blobs     snapshot.BlobStore // the snapshots' content store
	health    *providerHealth    // the provider's recent failures (readiness)
	provider  string             // what answers searches, for the start-up line
	closers   []func() error
}

func (v *verification) Close() error {
	var err error
	for i := len(v.closers) - 1; i >= 0; i-- {
		err = errors.Join(err, v.closers[i]())
	}
	return err
}

// newVerification builds the search provider (OpenAI when configured, else
// the offline corpus served on loopback), the snapshot service and the
// claims engine.
func newVerification(cfg *config, db *store.DB, m *metrics.Metrics, log *slog.Logger) (*verification, error) {
	v := &verification{}
	snapOpts := &snapshot.Options{
		Logger:         log.With("component", "snapshot"),
		MaxBytes:       cfg.SnapshotMaxBytes,
		CaptureTimeout: cfg.SnapshotTimeout,
		AllowedPorts:   cfg.SnapshotPorts,
		Retention:      cfg.SnapshotRetention,
		OnCapture:      m.SnapshotCaptured,
	}

	var provider claims.SearchProvider
	engOpts := &claims.Options{
		Logger:      log.With("component", "claims"),
		Timeout:     cfg.ClaimsTimeout,
		ResultCache: cfg.ClaimsResultCache,
	}
	switch {
	case cfg.Provider == "openai" || (cfg.Provider == "auto" && cfg.OpenAIKey != ""):
		p, err := openai.New(&openai.Options{
			APIKey: cfg.OpenAIKey, BaseURL: cfg.OpenAIBaseURL, Model: cfg.OpenAIModel,
			ReasoningEffort: cfg.OpenAIEffort, SendBlockedDomains: cfg.OpenAISendBlocked,
			Logger: log.With("component", "openai"),
		})
		if err != nil {
			return nil, err
		}
		provider = p
		v.provider = "OpenAI web search"
		log.Info("claims: OpenAI web search", "model", p.Model())
	default:
		coll, err := corpus.Demo()
		if cfg.CorpusDir != "" {
			coll, err = corpus.Load(os.DirFS(cfg.CorpusDir))
		}
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		srv, err := corpus.Serve(coll)
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		v.closers = append(v.closers, srv.Close)
		p, err := corpus.New(coll, &corpus.Options{Logger: log.With("component", "corpus")})
		if err != nil {
			_ = v.Close()
			return nil, err
		}
		provider = p
		// The corpus states what kind of site each host is; the engine
		// classifies sources (official, news, ...) by domain.
		engOpts.OfficialDomains = coll.HostsOfKind(corpus.KindOfficial)
		engOpts.AcademicDomains = coll.HostsOfKind(corpus.KindAcademic)
		engOpts.NewsDomains = coll.HostsOfKind(corpus.KindNews)
		engOpts.VendorDomains = coll.HostsOfKind(corpus.KindVendor)
		// The corpus's hosts are dialled at its loopback server, and only
		// that one loopback address is let past the capturer's checks.
		snapOpts.HostMap = srv.HostMap()
		snapOpts.AllowAddrs = srv.AllowList()
		v.provider = "offline corpus"
		log.Warn("claims: OFFLINE DEMO CORPUS, not the live web; set OPENAI_API_KEY")
		log.Debug("claims: offline corpus", "documents", len(coll.Documents()), "loopback", srv.Addr())
	}

	var blobs snapshot.BlobStore = db
	if cfg.SnapshotBlobs == "files" || (cfg.SnapshotBlobs == "" && cfg.PostgresURL == "") {
		fb, err := snapshot.NewFileBlobStore(filepath.Join(cfg.DataDir, "snapshots"), nil)
		if err != nil {
			_ = v.Close()
			return nil, err
		}
		blobs = fb
	}
	snaps, err := snapshot.NewService(db, blobs, snapOpts)
	if err != nil {
		_ = v.Close()
		return nil, err
	}
	v.snapshots, v.blobs = snaps, blobs
	v.closers = append(v.closers, func() error { snaps.Close(); return nil })

	v.health = newProviderHealth(m.ClaimsObserver(provider.Name()))
	engOpts.Observer = v.health
	eng, err := claims.New(provider, db, snaps, engOpts)
	if err != nil {
		_ = v.Close()
		return nil, err
	}
	v.engine = eng
	return v, nil
}

// ready reports whether verifications can run: a provider is configured
// and its recent calls did not all fail on credentials or quota.
func (v *verification) ready(context.Context) error {
	if !v.engine.Configured() {
		return errors.New("no search provider configured")
	}
	return v.health.ready()
}
