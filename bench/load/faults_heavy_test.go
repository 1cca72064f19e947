//go:build heavy

package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/store/storetest"
)

// TestFaults runs the faults scenario on SQLite (one instance, with the
// chain's RPC) and on PostgreSQL (two instances, resolution by repeats of
// /settle alone), in parallel: the example server in production mode
// against a facilitator that fails in every way faultcases.go lists.
// The scenario fails on any broken invariant (faultcheck.go); here the
// test also requires that every fault ran and that each fault's payments
// settled in the end (a fault that settled nothing tested nothing).
func TestFaults(t *testing.T) {
	cfg := smallConfig(t)
	// The subtests run in parallel, after this function returns: what they
	// use is released by Cleanup, not defer.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	t.Cleanup(cancel)
	cleanup, err := prepare(ctx, cfg)
	t.Cleanup(cleanup)
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{backendSQLite, backendPostgres} {
		t.Run(backend, func(t *testing.T) {
			if backend == backendPostgres && cfg.Postgres == "" {
				testenv.Missing(t, "the faults scenario on PostgreSQL: set %s (for example postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", storetest.PostgresEnv)
			}
			t.Parallel()
			c := *cfg
			c.Log = &bytes.Buffer{}
			rep, err := runScenario(ctx, &c, "faults", backend)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			rep.print(&out)
			t.Log(out.String())
			if !rep.passed() {
				t.Errorf("faults on %s failed:\n%s", backend, out.String())
			}
			ran := map[string]faultSummary{}
			for _, s := range rep.Faults {
				ran[s.Fault] = s
			}
			for _, fc := range faultCases() {
				s, ok := ran[fc.name]
				switch {
				case !ok || s.Credits == 0:
					t.Errorf("fault %s did not run", fc.name)
				case s.Settled == 0:
					t.Errorf("fault %s: none of its %d payments settled", fc.name, s.Credits)
				}
			}
		})
	}
}
