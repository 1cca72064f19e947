package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/assaykit/assay/metrics"
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

	dsn := cfg.PostgresURL
	if dsn == "" {
		dsn = filepath.Join(cfg.DataDir, "assay.db")
	}
	db, err := store.Open(ctx, dsn, &store.Options{Logger: log})
	if err != nil {
		return err
	}
	defer db.Close()

	m := metrics.New(nil)
	h, err := server.New(server.Config{
		Logger:       log,
		Metrics:      m.Handler(),
		Observers:    []func(*http.Request, string, int, time.Duration){m.ObserveRequest},
		MaxBodyBytes: cfg.MaxBodyBytes,
		AdminKey:     cfg.AdminKey,
		Ready: map[string]func(context.Context) error{
			"store": db.Ping,
		},
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       2 * time.Minute,
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "assay listening on %s (store: %s)\n", base, db.Dialect())
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
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownWait)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
