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
	"time"

	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/niche"
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
	db, err := store.Open(ctx, dsn, &store.Options{Logger: log})
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

	m := metrics.New(nil)
	verify, err := newVerification(cfg, db, m, log)
	if err != nil {
		return err
	}
	defer verify.Close()
	payCfg, err := readPaymentsConfig(getenv)
	if err != nil {
		return err
	}
	subs, err := newSubscriptions(getenv, payCfg.dev(), db, log.With("component", "subscriptions"))
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
	proc, err := newProcessor(payCfg, cfg.PublicBaseURL, publicBase, bz, log.With("component", "payment"))
	if err != nil {
		return err
	}
	gate, err := newGate(ctx, payCfg, proc, publicBase, db, soleOwner, m, log.With("component", "payment"))
	if err != nil {
		return err
	}
	go purgeLoop(ctx, cfg.PurgeInterval, log, verify)

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
		Metrics:      m.Handler(),
		Observers:    []func(*http.Request, string, int, time.Duration){m.ObserveRequest},
		Paywall:      gate,
		Commerce:     server.CommerceConfig{Cashier: gate.Cashier()},
		Niche:        catalogue,
		Claims:       server.ClaimsConfig{Engine: verify.engine},
		MCP: server.MCPConfig{DisableLocalhostProtection: cfg.MCPNoLocalhostProtection,
			TrustedOrigins: splitList(cfg.MCPTrustedOrigins)},
		Snapshots:     server.SnapshotsConfig{Service: verify.snapshots, Prefixes: []string{server.DefaultClaimsPrefix}},
		Subscriptions: server.SubscriptionConfig{Service: subs},
		Ready: map[string]func(context.Context) error{
			"store":  db.Ping,
			"claims": verify.ready,
			"payments": func(context.Context) error {
				if proc.PayTo().String() == "" {
					return errors.New("no payee configured")
				}
				return nil
			},
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

	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	mode := "payments: LIVE via facilitator"
	if proc.Dev() {
		mode = "payments: DEV MODE (signatures verified, nothing settled on-chain)"
	}
	fmt.Fprintf(stdout, "assay listening on %s (store: %s; %s)\n", base, db.Dialect(), mode)
	if ready != nil {
		ready <- base
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "wait", cfg.ShutdownWait)
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownWait)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
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
