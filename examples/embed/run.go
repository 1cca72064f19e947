package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
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

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

// config is the host's configuration: flags, each with an ASSAY_*
// environment variable as default. The host's token comes from the
// environment only (a secret never goes on a command line).
type config struct {
	Addr       string
	DataDir    string
	Prefix     string
	Payments   string // "free" or "gate"
	PublicBase string
	LogLevel   string
	Token      string

	level slog.Level // LogLevel, parsed
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	c := &config{Token: getenv("ASSAY_EMBED_TOKEN")}
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	str := func(p *string, name, env, def, usage string) {
		if v := getenv(env); v != "" {
			def = v
		}
		fs.StringVar(p, name, def, usage+" (env "+env+")")
	}
	str(&c.Addr, "addr", "ASSAY_ADDR", "127.0.0.1:8081", "listen address")
	str(&c.DataDir, "data", "ASSAY_DATA", "./embed-data", "directory for the SQLite database and snapshot files")
	str(&c.Prefix, "prefix", "ASSAY_EMBED_PREFIX", "/api", "path prefix assay is mounted under")
	str(&c.Payments, "payments", "ASSAY_PAYMENTS", "free", "free (httpgate.Free: serve without charging) or gate (the 402 payment gate, x402 in dev mode)")
	str(&c.PublicBase, "public-base-url", "ASSAY_PUBLIC_BASE_URL", "", "absolute URL clients reach this host at (payment resources); empty: http://<listen address>")
	str(&c.LogLevel, "log-level", "ASSAY_LOG_LEVEL", "info", "log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err}
	}
	// Every problem at once, each naming its flag and variable.
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if c.Payments != "free" && c.Payments != "gate" {
		errs = append(errs, fmt.Errorf("-payments (ASSAY_PAYMENTS): %q is neither free nor gate", c.Payments))
	}
	c.Prefix = "/" + strings.Trim(c.Prefix, "/")
	if c.Prefix == "/" || strings.ContainsAny(c.Prefix, "{} ") {
		errs = append(errs, fmt.Errorf("-prefix (ASSAY_EMBED_PREFIX): %q is not a path prefix such as /api", c.Prefix))
	}
	if err := c.level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		errs = append(errs, fmt.Errorf("-log-level (ASSAY_LOG_LEVEL): %q is not debug, info, warn or error", c.LogLevel))
	}
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}
	return c, nil
}

// usageError is a wrong command line or configuration: nothing was
// started, and main exits with status 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// run starts the host and blocks until ctx is cancelled. When ready is
// non-nil it receives the base URL once the listener is open. snap, when
// non-nil, is the base of the snapshot options (main passes nil; tests pass
// a table resolver and a dial tripwire so that no capture leaves the
// machine).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string, snap *snapshot.Options) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.level}))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	token := cfg.Token
	if token == "" {
		token = randomToken()
		fmt.Fprintf(stdout, "ASSAY_EMBED_TOKEN is not set; this run's host token is %s\n", token)
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	publicBase := strings.TrimRight(cfg.PublicBase, "/")
	if publicBase == "" {
		publicBase = "http://" + ln.Addr().String()
	}

	a, err := newAssay(ctx, cfg, publicBase, log, snap)
	if err != nil {
		return err
	}
	defer a.Close()

	srv := &http.Server{
		Handler:           hostMux(cfg.Prefix, token, a.handler, a.metrics.Handler()),
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      150 * time.Second, // a verification may take 120 s
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	fmt.Fprintf(stdout, "host listening on %s; assay's claim verification, snapshots and niche catalogue under %s/ (payments: %s)\n",
		publicBase, cfg.Prefix, cfg.Payments)
	if ready != nil {
		ready <- "http://" + ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 130*time.Second)
	defer scancel()
	return srv.Shutdown(sctx)
}

// hostMux is the host application's own mux: its own routes, and assay
// mounted under prefix behind the host's bearer check. assay's metrics are
// served at the host's /metrics, next to its own health check (scraped
// from inside the network, like them).
func hostMux(prefix, token string, assay, metrics http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Example host application. assay is mounted under %s/ (Authorization: Bearer <host token>): "+
			"claim verification at %s/v1/claims/verify, the niche catalogue at %s/v1/niches, an index at %s.\n", prefix, prefix, prefix, prefix)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	mux.Handle("GET /metrics", metrics)
	// assay's routes are configured with the prefix (see newAssay), so the
	// handler sees the full path: the URLs it builds (snapshot contentUrl,
	// payment resources) carry the prefix without any rewriting here.
	mux.Handle(prefix+"/", requireBearer(token, assay))
	return mux
}

// requireBearer is the host's own authentication: a fixed bearer token,
// compared in constant time, with the host's own error body (not assay's
// {"detail": ...}).
func requireBearer(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="example-host"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"unauthorized","message":"this host requires its own bearer token"}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// assay holds the mounted handler, its metrics, and what must be closed
// with it.
type assay struct {
	handler http.Handler
	metrics *metrics.Metrics
	closers []func() error
}

func (a *assay) Close() error {
	var err error
	for i := len(a.closers) - 1; i >= 0; i-- {
		err = errors.Join(err, a.closers[i]())
	}
	return err
}

// newAssay builds the claims engine (demo corpus served on loopback, real
// snapshot captures), the niche catalogue (the demo catalogue), the paywall
// chosen by cfg.Payments, and the assay handler with the claims, snapshot,
// niche and (when paid) commerce routes, all under cfg.Prefix. snap, when non-nil, is the base of the snapshot
// options (see run).
func newAssay(ctx context.Context, cfg *config, publicBase string, log *slog.Logger, snap *snapshot.Options) (_ *assay, err error) {
	a := &assay{metrics: metrics.New(nil)}
	defer func() {
		if err != nil {
			_ = a.Close()
		}
	}()
	db, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "assay.db"), &store.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, db.Close)

	coll, err := corpus.Demo()
	if err != nil {
		return nil, err
	}
	site, err := corpus.Serve(coll)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, site.Close)
	provider, err := corpus.New(coll, nil)
	if err != nil {
		return nil, err
	}
	blobs, err := snapshot.NewFileBlobStore(filepath.Join(cfg.DataDir, "snapshots"), nil)
	if err != nil {
		return nil, err
	}
	var sopts snapshot.Options
	if snap != nil {
		sopts = *snap
	}
	sopts.Logger = log.With("component", "snapshot")
	sopts.HostMap = site.HostMap() // corpus hosts are dialled at the loopback server
	sopts.AllowAddrs = site.AllowList()
	sopts.OnCapture = a.metrics.SnapshotCaptured
	snaps, err := snapshot.NewService(snapshotstore.New(db), blobs, &sopts)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() error { snaps.Close(); return nil })
	engine, err := claims.New(provider, claimsstore.New(db), snaps, &claims.Options{
		Logger:   log.With("component", "claims"),
		Observer: a.metrics.ClaimsObserver(provider.Name()),
	})
	if err != nil {
		return nil, err
	}
	// Retention runs until the handler is closed, and is stopped before
	// the snapshot service and the database it uses.
	rctx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); retention(rctx, log, engine, snaps) }()
	a.closers = append(a.closers, func() error { stop(); <-stopped; return nil })

	catalogue, err := newCatalogue(ctx, db, cfg.Prefix)
	if err != nil {
		return nil, err
	}

	scfg := server.Config{
		Logger:    log,
		Observers: []func(*http.Request, string, int, time.Duration){a.metrics.ObserveRequest},
		Claims:    server.ClaimsConfig{Engine: engine, Prefix: cfg.Prefix},
		Snapshots: server.SnapshotsConfig{Service: snaps, Prefixes: []string{cfg.Prefix}},
		Niche:     catalogue,
		// HTTP only (no MCP or A2A mounts), with the index of what is
		// mounted; the services share one prefix, so they have no
		// per-service discovery documents.
		Mounts: []server.Mount{discovery.Documents{IndexOnly: true}},
	}
	switch cfg.Payments {
	case "free":
		scfg.Paywall = httpgate.Free{}
	case "gate":
		gate, err := newGate(ctx, db, publicBase, a.metrics, log.With("component", "payment"))
		if err != nil {
			return nil, err
		}
		scfg.Paywall = gate
		scfg.Commerce = server.CommerceConfig{
			Cashier:      gate.Cashier(),
			Prefixes:     []string{cfg.Prefix},
			JWKSPrefixes: []string{cfg.Prefix},
		}
	}
	h, err := server.New(scfg)
	if err != nil {
		return nil, err
	}
	a.handler = h
	return a, nil
}

// newCatalogue builds the niche catalogue with the demo catalogue loaded
// (idempotently), under prefix. Its keys are generated once and kept in
// the database: the one that signs x-niche-paid-call tokens after a
// pay-per-call, and the one that pseudonymises callers in the free-search
// quota. No subscription backend: full evaluations are sold per call only.
func newCatalogue(ctx context.Context, db *store.DB, prefix string) (server.NicheConfig, error) {
	eng, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources()})
	if err != nil {
		return server.NicheConfig{}, err
	}
	if _, err := nichedemo.Load(ctx, eng, nil); err != nil {
		return server.NicheConfig{}, fmt.Errorf("demo catalogue: %w", err)
	}
	unlockKey, err := niche.LoadOrCreateUnlockKey(ctx, db)
	if err != nil {
		return server.NicheConfig{}, err
	}
	signer, err := niche.NewUnlockSigner(unlockKey, nil)
	if err != nil {
		return server.NicheConfig{}, err
	}
	quotaKey, err := niche.LoadOrCreateKey(ctx, db, niche.QuotaKeyMetaName)
	if err != nil {
		return server.NicheConfig{}, err
	}
	return server.NicheConfig{Engine: eng, Unlock: signer, QuotaKey: quotaKey, Prefix: prefix}, nil
}

// newGate builds the 402 gate in dev mode: payment signatures are verified
// for real, nothing is settled on-chain, and receipts say dev: true. For
// real money, give the processor a facilitator and your payee address as
// examples/server/payments.go does.
//
// MPP is left off on purpose: its credentials travel in the Authorization
// header, which this host uses for its own bearer token. x402 uses its own
// PAYMENT-SIGNATURE header and works behind the host's check.
func newGate(ctx context.Context, db *store.DB, publicBase string, m *metrics.Metrics, log *slog.Logger) (*httpgate.Gate, error) {
	proc, err := protocols.New(&protocols.Options{
		PayTo:  "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", // set your own payee address
		Dev:    true,
		Logger: log,
		// Where a payer reads how to pay (the 402 body's links).
		Links: map[string]string{"client": discovery.DefaultRepository + "/tree/main/examples/client"},
	})
	if err != nil {
		return nil, err
	}
	keys, err := payment.LoadKeyring(ctx, db, "") // generated once, kept in the database
	if err != nil {
		return nil, err
	}
	gate, err := httpgate.New(proc, paymentstore.New(db), &httpgate.Options{
		CashierOptions: payment.CashierOptions{Keys: keys, Logger: log, OnEvent: m.PaymentEvent},
		PublicBaseURL:  publicBase,
	})
	if err != nil {
		return nil, err
	}
	if _, err := gate.Cashier().Reconcile(ctx); err != nil { // orders a crash left behind
		return nil, fmt.Errorf("payment reconciliation: %w", err)
	}
	return gate, nil
}

// retention deletes expired verifications and snapshots every hour.
func retention(ctx context.Context, log *slog.Logger, engine *claims.Engine, snaps *snapshot.Service) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if _, err := engine.PurgeExpired(ctx); err != nil && ctx.Err() == nil {
			log.Warn("purge verifications", "err", err)
		}
		if _, err := snaps.PurgeExpired(ctx); err != nil && ctx.Err() == nil {
			log.Warn("purge snapshots", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
