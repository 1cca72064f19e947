package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/anthropic"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/claims/openai"
	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/metrics"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/wacz"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/s3blobs"
	"github.com/assaykit/assay/store/snapshotstore"
)

// verification holds the claim-verification components and what must be
// closed when the server stops.
type verification struct {
	engine    *claims.Engine
	snapshots *snapshot.Service
	blobs     snapshot.BlobStore // the snapshots' content store
	s3        *s3blobs.Store     // blobs, when in an object store (-snapshot-blobs s3)
	health    []*providerHealth  // each provider's recent failures (readiness), in order
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

// newVerification builds the search providers (those -provider names, in
// order, else the offline corpus served on loopback), the snapshot service
// and the claims engine. With several providers the first is given to the
// engine and the others go to Options.Providers: they corroborate on the
// deep and research tiers. Each is wrapped in a trackedProvider so that
// readiness sees its credential and quota failures.
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

	var providers []claims.SearchProvider
	engOpts := &claims.Options{
		Logger:      log.With("component", "claims"),
		Timeout:     cfg.ClaimsTimeout,
		ResultCache: cfg.ClaimsResultCache,
	}
	var names []string
	for _, name := range cfg.providers() {
		p, label, err := liveProvider(cfg, name, log)
		if err != nil {
			return nil, err
		}
		providers = append(providers, p)
		names = append(names, label)
	}
	switch {
	case len(providers) > 0:
		v.provider = strings.Join(names, " + ")
		if len(providers) > 1 {
			v.provider += " (corroborating on deep and research)"
		}
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
		providers = append(providers, p)
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
		log.Warn("claims: OFFLINE DEMO CORPUS, not the live web; set OPENAI_API_KEY or ANTHROPIC_API_KEY")
		log.Debug("claims: offline corpus", "documents", len(coll.Documents()), "loopback", srv.Addr())
	}

	records := snapshotstore.New(db)
	var blobs snapshot.BlobStore = records
	switch {
	case cfg.SnapshotBlobs == "s3":
		o := &s3blobs.Options{Bucket: cfg.S3Bucket, Prefix: cfg.S3Prefix, Endpoint: cfg.S3Endpoint, Region: cfg.S3Region}
		if cfg.S3AccessKey != "" {
			o.Credentials = credentials.NewStaticCredentialsProvider(cfg.S3AccessKey, cfg.S3SecretKey, cfg.S3SessionToken)
		}
		s3, err := s3blobs.New(context.Background(), records, o)
		if err != nil {
			_ = v.Close()
			return nil, err
		}
		blobs, v.s3 = s3, s3
	case cfg.SnapshotBlobs == "files" || (cfg.SnapshotBlobs == "" && cfg.PostgresURL == ""):
		fb, err := snapshot.NewFileBlobStore(filepath.Join(cfg.DataDir, "snapshots"), nil)
		if err != nil {
			_ = v.Close()
			return nil, err
		}
		blobs = fb
	}
	snaps, err := snapshot.NewService(records, blobs, snapOpts)
	if err != nil {
		_ = v.Close()
		return nil, err
	}
	v.snapshots, v.blobs = snaps, blobs
	v.closers = append(v.closers, func() error { snaps.Close(); return nil })

	provNames := make([]string, 0, len(providers))
	for i, p := range providers {
		h := newProviderHealth(p.Name())
		v.health = append(v.health, h)
		providers[i] = trackedProvider{SearchProvider: p, health: h}
		provNames = append(provNames, p.Name())
	}
	engOpts.Observer = m.ClaimsObserver(strings.Join(provNames, ","))
	engOpts.Providers = providers[1:]
	eng, err := claims.New(providers[0], claimsstore.New(db), snaps, engOpts)
	if err != nil {
		_ = v.Close()
		return nil, err
	}
	v.engine = eng
	return v, nil
}

// ready reports whether verifications can run: a provider is configured
// and its recent calls did not all fail on credentials or quota.
// snapshotsReady is the "snapshots" readiness check with an object store:
// its bucket answers.
func (v *verification) snapshotsReady(ctx context.Context) error {
	if v.s3 == nil {
		return nil
	}
	return v.s3.Check(ctx)
}

func (v *verification) ready(context.Context) error {
	if !v.engine.Configured() {
		return errors.New("no search provider configured")
	}
	return providersReady(v.health)
}

// liveProvider builds the named web-search provider and returns it with
// the label of the start-up line.
func liveProvider(cfg *config, name string, log *slog.Logger) (claims.SearchProvider, string, error) {
	switch name {
	case "openai":
		p, err := openai.New(&openai.Options{
			APIKey: cfg.OpenAIKey, BaseURL: cfg.OpenAIBaseURL, Model: cfg.OpenAIModel,
			ReasoningEffort: cfg.OpenAIEffort, SendBlockedDomains: cfg.OpenAISendBlocked,
			Logger: log.With("component", "openai"),
		})
		if err != nil {
			return nil, "", err
		}
		log.Info("claims: OpenAI web search", "model", p.Model())
		return p, "OpenAI web search", nil
	case "anthropic":
		p, err := anthropic.New(&anthropic.Options{
			APIKey: cfg.AnthropicKey, BaseURL: cfg.AnthropicBaseURL, Model: cfg.AnthropicModel,
			Logger: log.With("component", "anthropic"),
		})
		if err != nil {
			return nil, "", err
		}
		log.Info("claims: Anthropic web search", "model", p.Model())
		return p, "Anthropic web search", nil
	}
	return nil, "", fmt.Errorf("unknown search provider %q", name)
}

// newBundler builds the evidence bundles: signed with ASSAY_BUNDLE_KEY (or
// a key generated once and kept in the database, as the receipt key is),
// timestamped by -tsa-url when set.
func newBundler(ctx context.Context, cfg *config, db *store.DB, v *verification) (*evidence.Builder, error) {
	keys, err := evidence.LoadKeys(ctx, db, cfg.BundleKey)
	if err != nil {
		return nil, err
	}
	opts := &evidence.Options{Software: "assay examples/server"}
	if cfg.TSAURL != "" {
		opts.TSA = &wacz.TSAClient{URL: cfg.TSAURL}
	}
	return evidence.New(v.snapshots, keys, opts)
}
