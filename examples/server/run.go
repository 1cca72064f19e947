package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/pages"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/server/agents"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/nichestore"
)

// run starts the service and blocks until ctx is cancelled, then shuts down
// gracefully. Everything it logs goes to stderr (see log.go). When ready is
// non-nil it receives the base URL once the server answers (tests use it).
//
// Start-up is ordered so that a mistake shows at once: the whole
// configuration is checked first (every problem reported together, nothing
// started); then the listeners are opened, so that a busy port fails at
// once, naming it, and the listening address is the first line; then the
// store is opened and migrated, the demo catalogue loaded and the rest
// built, one summary line per phase; connections that arrive meanwhile
// wait in the listen queue and are answered once the server is ready.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready chan<- string) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	if err != nil {
		return err
	}
	log := cfg.logger(stderr)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	ln, err := listen("addr", "ASSAY_ADDR", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	// /metrics shows settled revenue and traffic: with -metrics-addr it is
	// served only on that listener (keep it private), not on the API port.
	var metricsLn net.Listener
	if cfg.MetricsAddr != "" {
		metricsLn, err = listen("metrics-addr", "ASSAY_METRICS_ADDR", cfg.MetricsAddr)
		if err != nil {
			return err
		}
		defer metricsLn.Close()
	}
	if metricsLn != nil {
		log.InfoContext(announce(ctx), "assay listening on "+base, "metrics", "http://"+metricsLn.Addr().String()+"/metrics")
	} else {
		log.InfoContext(announce(ctx), "assay listening on "+base)
	}
	publicBase := strings.TrimRight(cfg.PublicBaseURL, "/")
	if publicBase == "" {
		publicBase = base
	}

	dsn := cfg.PostgresURL
	soleOwner := false
	if dsn == "" {
		dsn = filepath.Join(cfg.DataDir, "assay.db")
		release, err := lockDataDir(cfg.DataDir)
		if err != nil {
			return err
		}
		if release != nil {
			defer release()
			soleOwner = true
		}
	}
	db, err := anydb.Open(ctx, dsn, &store.Options{Logger: log, MaxOpenConns: int(cfg.DBReadConns), MaxWriteConns: int(cfg.DBWriteConns)})
	if err != nil {
		return err
	}
	defer db.Close()
	if soleOwner {
		// No other process can hold a claims idempotency lease: the ones
		// left are a crash's, and a retry should not wait for them to expire.
		n, err := claimsstore.New(db).ReleaseIdempotencyLeases(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			log.Info("claims: released idempotency leases of interrupted calls", "count", n)
		}
	}

	for _, w := range cfg.warnings {
		log.Warn("configuration: " + w)
	}

	m := metrics.New(nil)
	verify, err := newVerification(cfg, db, m, log)
	if err != nil {
		return err
	}
	defer verify.Close()
	payCfg := paymentsOf(cfg)
	subs, err := newSubscriptions(cfg, db, log.With("component", "subscriptions"))
	if err != nil {
		return err
	}
	var subscribers niche.Subscribers
	if subs != nil {
		subscribers = subs
	}
	catalogue, closeCatalogue, err := newCatalogue(ctx, cfg, db, verify, subscribers, log.With("component", "niche"))
	if err != nil {
		return err
	}
	defer closeCatalogue()
	bz := &discovery.Bazaar{}
	proc, err := newProcessor(payCfg, publicBase, cfg.Discovery, bz, log.With("component", "payment"))
	if err != nil {
		return err
	}
	keys, err := payment.LoadKeyring(ctx, db, payCfg.ReceiptKey)
	if err != nil {
		return err
	}
	bundles, err := newBundler(ctx, cfg, db, verify)
	if err != nil {
		return err
	}
	gate, resolved, err := newGate(ctx, payCfg, proc, keys, publicBase, db, soleOwner, m, log.With("component", "payment"))
	if err != nil {
		return err
	}
	// The search index loads in the background; until it is loaded
	// searches ask the database, and /readyz says so.
	catalogue.Engine.StartIndex(ctx)
	go purgeLoop(ctx, cfg.PurgeInterval, log, verify, catalogue.Engine, db)

	var metricsRoute http.Handler
	if metricsLn == nil {
		metricsRoute = m.Handler()
	}
	// The MCP and A2A endpoints, then the index and discovery documents,
	// which describe every route before them.
	mounts := []server.Mount{
		agents.MCP{DisableLocalhostProtection: cfg.MCPNoLocalhostProtection, TrustedOrigins: splitList(cfg.MCPTrustedOrigins)},
		agents.A2A{},
	}
	if cfg.Pages {
		pg, err := pages.New(&pages.Options{Snapshots: verify.snapshots, PublicBaseURL: publicBase})
		if err != nil {
			return err
		}
		mounts = append(mounts, pg)
	}
	if cfg.Discovery {
		mounts = append(mounts, discovery.Documents{
			Provider: discovery.Provider{ID: cfg.ProviderURL, Name: cfg.ProviderName,
				Contact: cfg.ProviderEmail, URL: cfg.ProviderURL},
			Homepage: cfg.HomepageURL, Terms: cfg.TermsURL, Privacy: cfg.PrivacyURL,
			Repository: discovery.DefaultRepository,
		})
	}
	offers, err := offerCatalogue(cfg, verify.engine.Timeout()+verify.engine.CheckGrace())
	if err != nil {
		return err
	}
	h, err := server.New(server.Config{
		Catalogue:     offers,
		Logger:        log,
		PublicBaseURL: publicBase,
		MaxBodyBytes:  cfg.MaxBodyBytes,
		AdminKey:      cfg.AdminKey,
		Metrics:       metricsRoute,
		Observers:     []func(*http.Request, string, int, time.Duration){m.ObserveRequest},
		Paywall:       gate,
		Commerce:      server.CommerceConfig{Cashier: gate.Cashier()},
		Evidence:      server.EvidenceConfig{Builder: bundles},
		Niche:         catalogue,
		Claims:        server.ClaimsConfig{Engine: verify.engine, Prefix: cfg.ClaimsPrefix, ServiceSlug: cfg.ClaimsServiceSlug},
		Mounts:        mounts,
		Snapshots:     server.SnapshotsConfig{Service: verify.snapshots, Prefixes: snapshotPrefixes(cfg)},
		Subscriptions: server.SubscriptionConfig{Service: subs},
		// Each check is documented in ready.go.
		Ready: map[string]func(context.Context) error{
			"store":    db.Ping,
			"claims":   verify.ready,
			"payments": paymentsReady(payCfg.Dev, proc, keys),
			"niche": func(ctx context.Context) error {
				if _, err := catalogue.Engine.HasPublished(ctx); err != nil {
					return err
				}
				return nicheIndexReady(catalogue.Engine.IndexStatus())
			},
			"snapshots": verify.snapshotsReady,
		},
	})
	if err != nil {
		return err
	}

	bz.Bind(h)

	errLog := slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          errLog,
	}
	servers := []*http.Server{srv}
	listeners := []net.Listener{ln}
	if metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Handler())
		servers = append(servers, &http.Server{
			Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
			WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, ErrorLog: errLog,
		})
		listeners = append(listeners, metricsLn)
	}
	errc := make(chan error, len(servers))
	for i, s := range servers {
		go func() { errc <- s.Serve(listeners[i]) }()
	}
	payments := "live"
	if proc.Dev() {
		payments = "DEV MODE"
	}
	log.InfoContext(announce(ctx), "assay ready: open "+publicBase+"/ for the services and their documents",
		"store", db.Dialect(), "claims", verify.provider, "payments", payments)
	if ready != nil {
		ready <- base
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "wait", cfg.ShutdownWait)
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownWait)
	defer scancel()
	var wg sync.WaitGroup
	shutdownErrs := make([]error, len(servers))
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shutdownErrs[i] = s.Shutdown(sctx)
		}()
	}
	wg.Wait()
	// The settlement resolver stops with ctx; an attempt under way ends
	// within the settle timeout and records its outcome.
	select {
	case <-resolved:
	case <-sctx.Done():
		shutdownErrs = append(shutdownErrs, errors.New("the settlement resolver did not stop in time"))
	}
	if err := errors.Join(shutdownErrs...); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// listen opens the listener of -flagName; a failure (a busy port, an
// address not on this machine) names the setting.
func listen(flagName, env, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var hint string
		if errors.Is(err, syscall.EADDRINUSE) {
			hint = fmt.Sprintf(" (another process uses it; choose another address with -%s, or port 0 for any free one)", flagName)
		}
		// "bind: address already in use" rather than the whole chain.
		reason := err
		var op *net.OpError
		if errors.As(err, &op) {
			reason = op.Err
			var sc *os.SyscallError
			if errors.As(reason, &sc) {
				reason = sc.Err
			}
		}
		return nil, fmt.Errorf("cannot listen on %s (-%s, %s): %w%s", addr, flagName, env, reason, hint)
	}
	return ln, nil
}

// nicheFeedKeep is how many entries of the niche change feed the purge
// keeps: far more than an instance that is running falls behind by (it
// applies them within seconds); an instance further behind, or started
// after a pruning, loads its index anew.
const nicheFeedKeep = 100_000

// nicheIndexReady is the search index part of the "niche" readiness
// check: not ready while the index loads (searches meanwhile ask the
// database).
func nicheIndexReady(st niche.IndexStatus) error {
	if !st.Enabled || st.Ready {
		return nil
	}
	if st.LoadError != "" {
		return fmt.Errorf("search index not loaded (searches ask the database): %s", st.LoadError)
	}
	return errors.New("search index loading (searches ask the database meanwhile)")
}

// purgeLoop deletes expired verifications and snapshots (and their
// unreferenced content) every interval, starting at once, after releasing
// the evidence captures no niche evaluation needs any more and pruning the
// niche change feed.
func purgeLoop(ctx context.Context, every time.Duration, log *slog.Logger, v *verification, cat *niche.Engine, db *store.DB) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := cat.ReleaseEvidence(ctx); err != nil && ctx.Err() == nil {
			log.Warn("release niche evidence captures", "err", err)
		} else if n > 0 {
			log.Info("released niche evidence captures", "count", n)
		}
		if n, err := nichestore.New(db).PruneNicheFeed(ctx, nicheFeedKeep); err != nil && ctx.Err() == nil {
			log.Warn("prune the niche change feed", "err", err)
		} else if n > 0 {
			log.Debug("pruned the niche change feed", "entries", n)
		}
		if n, err := v.engine.PurgeExpired(ctx); err != nil && ctx.Err() == nil {
			log.Warn("purge verifications", "err", err)
		} else if n > 0 {
			log.Info("purged verifications", "count", n)
		}
		if st, err := v.snapshots.PurgeExpired(ctx); err != nil && ctx.Err() == nil {
			log.Warn("purge snapshots", "err", err)
		} else {
			log.Debug("purged snapshots", "stats", st)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// snapshotPrefixes are the service prefixes of the snapshot routes: the
// claims' (whose verifications cite snapshots) and the niche catalogue's
// (whose evidence is captured), when it is another one.
func snapshotPrefixes(cfg *config) []string {
	p := []string{cfg.ClaimsPrefix}
	if cfg.NichePrefix != "" && cfg.NichePrefix != cfg.ClaimsPrefix {
		p = append(p, cfg.NichePrefix)
	}
	return p
}

// splitList splits a comma-separated setting, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// offerCatalogue is the catalogue of offers at the configured prices.
func offerCatalogue(cfg *config, claimsWork time.Duration) (*sell.Catalogue, error) {
	p := sell.Prices{Claims: map[string]int64{}, ClaimsCard: cfg.ClaimsCardPrice,
		NicheEvaluation: cfg.NicheEvalPrice, NicheSearch: cfg.NicheSearchPrice}
	for tier, v := range cfg.ClaimsPrices {
		p.Claims[tier] = *v
	}
	return sell.NewCatalogue(&sell.CatalogueOptions{Prices: p, ClaimsWorkTimeout: claimsWork,
		NoVerdictNoCharge: sell.NoVerdictNoCharge{Tiers: cfg.NoVerdictNoCharge, PerPayerPerDay: int(cfg.FreeVerdicts)}})
}
