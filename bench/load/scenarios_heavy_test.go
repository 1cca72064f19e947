//go:build heavy

package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/store/storetest"
)

// smallConfig is the CI size: a few seconds per scenario, a few clients.
func smallConfig(t *testing.T) *Config {
	cfg := defaultConfig()
	cfg.Log = &bytes.Buffer{}
	cfg.WorkDir = t.TempDir()
	cfg.Postgres = os.Getenv(storetest.PostgresEnv)
	cfg.Duration = 5 * time.Second
	cfg.Clients = 4
	cfg.Kills = 2
	cfg.RSSEvery = 100 * time.Millisecond
	// A few seconds cannot tell a leak from warm-up: at this size the
	// memory check only guards against gross growth; the full-size runs
	// (README.md) are the memory test.
	cfg.Growth = growthLimits{WarmFraction: 0.5, MinSamples: 16, MinMiB: 64, MinRatio: 0.5}
	cfg.RaceServer = raceEnabled // under go test -race the server is built with -race too
	return cfg
}

// TestScenarios runs every scenario at a small size against the example
// server built once: load on SQLite and on PostgreSQL (two instances),
// crash on SQLite, bad input on both. Each must keep every promise listed
// in main.go; the summary tables are logged. The scenarios start server
// processes for about a minute, so they are heavy (go test -tags heavy).
func TestScenarios(t *testing.T) {
	cfg := smallConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	cleanup, err := prepare(ctx, cfg)
	defer cleanup()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built the example server in %s (race: %t)", time.Since(start).Round(time.Millisecond), cfg.RaceServer)

	for _, tc := range []struct{ scenario, backend string }{
		{"load", backendSQLite},
		{"load", backendPostgres},
		{"crash", backendSQLite},
		{"badinput", backendSQLite},
		{"badinput", backendPostgres},
	} {
		t.Run(tc.scenario+"/"+tc.backend, func(t *testing.T) {
			if tc.backend == backendPostgres && cfg.Postgres == "" {
				testenv.Missing(t, "PostgreSQL scenarios: set %s (for example postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", storetest.PostgresEnv)
			}
			rep, err := runScenario(ctx, cfg, tc.scenario, tc.backend)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			rep.print(&out)
			t.Log(out.String())
			if !rep.passed() {
				t.Errorf("%s on %s failed:\n%s", tc.scenario, tc.backend, out.String())
			}
			checkReportShape(t, rep)
		})
	}
}

// checkReportShape guards against a scenario that "passes" by doing
// nothing: it must have sent requests and, for the paying scenarios,
// delivered and audited paid responses.
func checkReportShape(t *testing.T, rep *report) {
	t.Helper()
	if rep.Requests == 0 {
		t.Fatalf("%s: no request was answered", rep.Scenario)
	}
	facts := map[string]string{}
	for _, f := range rep.Facts {
		facts[f.Name] = f.Value
	}
	switch rep.Scenario {
	case "load", "soak", "crash":
		for _, name := range []string{"paid deliveries", "double deliveries", "audit", "database"} {
			if facts[name] == "" {
				t.Errorf("%s: fact %q missing", rep.Scenario, name)
			}
		}
		if rep.Deliveries == 0 {
			t.Errorf("%s: no paid response was delivered", rep.Scenario)
		}
		if len(rep.Memory) == 0 {
			t.Errorf("%s: no memory samples", rep.Scenario)
		}
	case "badinput":
		for _, name := range []string{"hostile requests", "tables changed", "instances healthy afterwards"} {
			if facts[name] == "" {
				t.Errorf("badinput: fact %q missing", name)
			}
		}
	}
	if rep.Scenario == "crash" && rep.Kills == 0 {
		t.Error("crash: the server was never killed")
	}
}
