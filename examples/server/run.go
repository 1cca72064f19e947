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
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store"
)

// run starts the service and blocks until ctx is cancelled, then shuts down
// gracefully. When ready is non-nil it receives the base URL once the
// listener is open (tests use it).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log, err := cfg.logger(stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

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
	db, err := store.Open(ctx, dsn, &store.Options{Logger: log, MaxOpenConns: int(cfg.DBReadConns), MaxWriteConns: int(cfg.DBWriteConns)})
	if err != nil {
		return err
	}
	defer db.Close()
	if soleOwner {
		// No other process can hold a claims idempotency lease: the ones
		// left are a crash's, and a retry should not wait for them to expire.
		n, err := db.ReleaseIdempotencyLeases(ctx)
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

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	publicBase := strings.TrimRight(cfg.PublicBaseURL, "/")
	if publicBase == "" {
		publicBase = base
	}
	// /metrics shows settled revenue and traffic: with -metrics-addr it is
	// served only on that listener (keep it private), not on the API port.
	var metricsLn net.Listener
	if cfg.MetricsAddr != "" {
		metricsLn, err = net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		defer metricsLn.Close()
	}

	m := metrics.New(nil)
	verify, err := newVerification(cfg, db, m, log)
	if err != nil {
		return err
	}
	defer verify.Close()
	payCfg, err := readPaymentsConfig(cfg, getenv)
	if err != nil {
		return err
	}
	subs, err := newSubscriptions(getenv, payCfg.Dev, db, log.With("component", "subscriptions"))
	if err != nil {
		return err
	}
	var subscribers niche.Subscribers
	if subs != nil {
		subscribers = subs
	}
	catalogue, err := newCatalogue(ctx, cfg, db, subscribers, log.With("component", "niche"))
	if err != nil {
		return err
	}
	bz := &server.Bazaar{}
	proc, probe, err := newProcessor(payCfg, cfg.PublicBaseURL, publicBase, bz, log.With("component", "payment"))
	if err != nil {
		return err
	}
	keys, err := payment.LoadKeyring(ctx, db, payCfg.ReceiptKey)
	if err != nil {
		return err
	}
	gate, err := newGate(ctx, payCfg, proc, keys, publicBase, db, soleOwner, m, log.With("component", "payment"))
	if err != nil {
		return err
	}
	go purgeLoop(ctx, cfg.PurgeInterval, log, verify)

	var metricsRoute http.Handler
	if metricsLn == nil {
		metricsRoute = m.Handler()
	}
	h, err := server.New(server.Config{
		Logger:        log,
		PublicBaseURL: publicBase,
		Discovery: server.DiscoveryConfig{
			Enabled: cfg.Discovery,
			Provider: discovery.Provider{ID: cfg.ProviderURL, Name: cfg.ProviderName,
				Contact: cfg.ProviderEmail, URL: cfg.ProviderURL},
			Homepage: cfg.HomepageURL, Terms: cfg.TermsURL, Privacy: cfg.PrivacyURL,
			Repository: "https://github.com/assaykit/assay",
		},
		MaxBodyBytes: cfg.MaxBodyBytes,
		AdminKey:     cfg.AdminKey,
		Metrics:      metricsRoute,
		Observers:    []func(*http.Request, string, int, time.Duration){m.ObserveRequest},
		Paywall:      gate,
		Commerce:     server.CommerceConfig{Cashier: gate.Cashier()},
		Niche:        catalogue,
		Claims:       server.ClaimsConfig{Engine: verify.engine, Prefix: cfg.ClaimsPrefix, ServiceSlug: cfg.ClaimsServiceSlug},
		MCP: server.MCPConfig{DisableLocalhostProtection: cfg.MCPNoLocalhostProtection,
			TrustedOrigins: splitList(cfg.MCPTrustedOrigins)},
		Snapshots:     server.SnapshotsConfig{Service: verify.snapshots, Prefixes: []string{cfg.ClaimsPrefix}},
		Subscriptions: server.SubscriptionConfig{Service: subs},
		// Each check is documented in ready.go.
		Ready: map[string]func(context.Context) error{
			"store":    db.Ping,
			"claims":   verify.ready,
			"payments": paymentsReady(payCfg.Dev, proc, probe, keys),
			"niche": func(ctx context.Context) error {
				_, err := catalogue.Engine.HasPublished(ctx)
				return err
			},
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
	mode := "payments: LIVE via facilitator"
	if proc.Dev() {
		mode = "payments: DEV MODE (signatures verified, nothing settled on-chain)"
	}
	fmt.Fprintf(stdout, "assay listening on %s (store: %s; %s)\n", base, db.Dialect(), mode)
	if metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Handler())
		servers = append(servers, &http.Server{
			Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
			WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, ErrorLog: errLog,
		})
		listeners = append(listeners, metricsLn)
		fmt.Fprintf(stdout, "metrics on http://%s/metrics (not on the API address)\n", metricsLn.Addr())
	}
	if ready != nil {
		ready <- base
	}

	errc := make(chan error, len(servers))
	for i, s := range servers {
		go func() { errc <- s.Serve(listeners[i]) }()
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
	if err := errors.Join(shutdownErrs...); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// purgeLoop deletes expired verifications and snapshots (and their
// unreferenced content) every interval, starting at once.
func purgeLoop(ctx context.Context, every time.Duration, log *slog.Logger, v *verification) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
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
