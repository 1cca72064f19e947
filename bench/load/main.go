// Command load runs load, crash and bad-input scenarios against the example
// server (examples/server), built once with go build and started as
// subprocesses on free loopback ports with their data in a temporary
// directory: SQLite, and PostgreSQL with two instances sharing one fresh
// schema (dropped afterwards).
//
//	go run ./bench/load                                  # every scenario, 3 minutes each
//	go run ./bench/load -scenarios load -duration 30s -clients 8
//	go run ./bench/load -scenarios crash -kills 5
//	ASSAY_TEST_POSTGRES=postgres://… go run ./bench/load -backends sqlite,postgres
//
// Scenarios:
//
//   - load: clients mixing niche list/search/preview (free), niche
//     pay-per-call and paid search, and paid verifications of every tier,
//     each client with its own wallet and protocol rotation (x402 v2, x402
//     v1, MPP); replays of used credentials, one credential sent twice at
//     once (to both instances on PostgreSQL) and idempotent retries.
//     Asserts zero 5xx, zero double deliveries (by the clients' own
//     credential nonces and by order id), every delivered order completed
//     with a receipt that verifies offline against the JWKS and the
//     received bytes, no payment settled twice in the database, and flat
//     memory (RSS sampled from /proc).
//   - soak: the load scenario run for -soak-duration (default 30
//     minutes) instead of -duration, with the same assertions; its memory
//     judgement is the point: over half an hour a leak shows as sustained
//     growth, where a few minutes cannot tell it from warm-up.
//   - crash: paid load on SQLite while the server is killed with SIGKILL
//     several times and restarted on the same data and port. Asserts the
//     database integrity after each kill, that orders left processing are
//     failed as interrupted at start-up and never settled, that every
//     credential in flight at a kill is then either served once or refused
//     consistently, and the load scenario's delivery checks.
//   - badinput: malformed JSON, huge bodies, wrong types and forged or
//     replayed payment headers (x402 v1/v2, MPP, garbage base64) at every
//     route /v1/capabilities lists. Asserts no 5xx, no panic in the server
//     log, no stored row changed except where a request was accepted, and
//     a healthy server afterwards.
//   - faults: the server in production mode (SQLite with the chain's
//     RPC; two PostgreSQL instances without) against a facilitator of an
//     in-memory chain that fails at /verify, /settle and /supported in
//     every way real ones do, single calls and bursts, re-sent while the
//     fault holds, after it healed, after the resolver's bound and after a
//     restart (faults.go). Asserts nothing delivered unpaid, nothing
//     settled twice, no order open after healing, every settled payer
//     recovers its answer, every refusal names its reason, concurrent
//     copies of a credential never refused (faultcheck.go).
//
// Each scenario prints a summary table: requests, throughput, p50/p99 per
// route class, answers by status, deliveries and memory. The exit status
// is 1 when any scenario fails.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"
)

// Config is the configuration of a run.
type Config struct {
	// Log receives progress and the summary tables.
	Log io.Writer
	// Bin is the example server binary (built when empty).
	Bin string
	// WorkDir holds the data directories and logs.
	WorkDir string
	// Keep leaves data directories and logs in place.
	Keep bool
	// Postgres is the base PostgreSQL URL ("" skips PostgreSQL).
	Postgres string
	// Duration of the load phase of each scenario.
	Duration time.Duration
	// SoakDuration is the load phase of the soak scenario.
	SoakDuration time.Duration
	// Clients is the number of concurrent clients.
	Clients int
	// Kills is the number of SIGKILLs in the crash scenario.
	Kills int
	// CrashAge ages orders left processing by the server's stale window
	// before the restart (see crash.go).
	CrashAge bool
	// Seed of the clients' random choices.
	Seed uint64
	// RSSEvery is the memory sampling interval.
	RSSEvery time.Duration
	// Growth says when memory growth fails a scenario.
	Growth growthLimits
	// StartTimeout, StopTimeout and RequestTimeout bound process starts,
	// graceful stops and single requests.
	StartTimeout, StopTimeout, RequestTimeout time.Duration
	// RaceServer builds the server with the race detector.
	RaceServer bool
	// Strict makes known defects of the server (README.md) fail.
	Strict bool
	// Faults selects faults of the faults scenario by name (empty: all).
	Faults []string
}

// defaultConfig is the full-size configuration.
func defaultConfig() *Config {
	return &Config{
		Log:            os.Stdout,
		Duration:       3 * time.Minute,
		SoakDuration:   30 * time.Minute,
		Clients:        16,
		Kills:          4,
		CrashAge:       false,
		Strict:         true,
		Seed:           1,
		RSSEvery:       time.Second,
		Growth:         growthLimits{WarmFraction: 0.25, MinSamples: 20, MinMiB: 32, MinRatio: 0.25},
		StartTimeout:   2 * time.Minute,
		StopTimeout:    90 * time.Second,
		RequestTimeout: 3 * time.Minute,
	}
}

func main() {
	cfg := defaultConfig()
	scenarios := flag.String("scenarios", "load,crash,badinput", "comma-separated scenarios: load, soak, crash, badinput, faults")
	backends := flag.String("backends", "sqlite,postgres", "comma-separated backends for load and badinput: sqlite, postgres (postgres runs two instances; skipped without a URL)")
	jsonOut := flag.String("json", "", "also write the reports as JSON to this file")
	flag.StringVar(&cfg.Postgres, "postgres", os.Getenv("ASSAY_TEST_POSTGRES"), "PostgreSQL base URL (a fresh schema is created per scenario and dropped)")
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each scenario's load phase (soak: -soak-duration)")
	flag.DurationVar(&cfg.SoakDuration, "soak-duration", cfg.SoakDuration, "length of the soak scenario's load phase")
	flag.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients")
	flag.IntVar(&cfg.Kills, "kills", cfg.Kills, "SIGKILLs in the crash scenario")
	flag.BoolVar(&cfg.CrashAge, "crash-age", cfg.CrashAge, "before each restart, age the orders left processing past the 10-minute stale window (not needed: the example server locks its SQLite data directory and reconciles every open order at start-up; kept to exercise the stale-window path)")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the clients' choices")
	flag.DurationVar(&cfg.RSSEvery, "rss-every", cfg.RSSEvery, "memory sampling interval")
	flag.Float64Var(&cfg.Growth.MinMiB, "growth-mib", cfg.Growth.MinMiB, "memory: sustained growth above this many MiB (and -growth-ratio) fails")
	flag.Float64Var(&cfg.Growth.MinRatio, "growth-ratio", cfg.Growth.MinRatio, "memory: sustained growth above this fraction (and -growth-mib) fails")
	flag.StringVar(&cfg.Bin, "server", "", "example server binary (default: go build ./examples/server)")
	flag.BoolVar(&cfg.RaceServer, "race-server", false, "build the server with the race detector (reports fail the run)")
	flag.BoolVar(&cfg.Strict, "strict", cfg.Strict, "fail when a defect listed in bench/load/README.md comes back (false: report it apart)")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep data directories and server logs")
	faults := flag.String("faults", "", "comma-separated faults of the faults scenario (default: all; see bench/load/faultcases.go)")
	flag.Parse()

	cfg.Faults = splitList(*faults)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	reps, err := run(ctx, cfg, splitList(*scenarios), splitList(*backends))
	if *jsonOut != "" {
		if werr := writeJSON(*jsonOut, reps); werr != nil {
			fmt.Fprintln(os.Stderr, "load:", werr)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	for _, r := range reps {
		if !r.passed() {
			os.Exit(1)
		}
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// prepare fills in the work directory and the server binary.
func prepare(ctx context.Context, cfg *Config) (cleanup func(), err error) {
	cleanup = func() {}
	if cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "assay-load-")
		if err != nil {
			return cleanup, err
		}
		cfg.WorkDir = dir
		cleanup = func() {
			if !cfg.Keep {
				_ = os.RemoveAll(dir)
			} else {
				fmt.Fprintln(cfg.Log, "kept", dir)
			}
		}
	}
	if cfg.Bin == "" {
		fmt.Fprintln(cfg.Log, "building ./examples/server …")
		bin, err := buildServer(ctx, cfg.WorkDir, cfg.RaceServer)
		if err != nil {
			return cleanup, err
		}
		cfg.Bin = bin
	}
	return cleanup, nil
}

// run runs the scenarios on the backends and returns their reports.
func run(ctx context.Context, cfg *Config, scenarios, backends []string) ([]*report, error) {
	cleanup, err := prepare(ctx, cfg)
	defer cleanup()
	if err != nil {
		return nil, err
	}
	var reps []*report
	for _, sc := range scenarios {
		for _, b := range backends {
			if sc == "crash" && b != backendSQLite {
				continue // the crash scenario checks SQLite's integrity after SIGKILL
			}
			if b == backendPostgres && cfg.Postgres == "" {
				fmt.Fprintf(cfg.Log, "%s on postgres: SKIPPED (set ASSAY_TEST_POSTGRES or -postgres)\n", sc)
				continue
			}
			if sc == "faults" {
				fmt.Fprintf(cfg.Log, "running faults on %s …\n", b)
			} else {
				fmt.Fprintf(cfg.Log, "running %s on %s (%s, %d clients) …\n", sc, b, scenarioConfig(cfg, sc).Duration, cfg.Clients)
			}
			rep, err := runScenario(ctx, cfg, sc, b)
			if err != nil {
				return reps, fmt.Errorf("%s on %s: %w", sc, b, err)
			}
			rep.print(cfg.Log)
			reps = append(reps, rep)
			if ctx.Err() != nil {
				return reps, ctx.Err()
			}
		}
	}
	return reps, nil
}

// runScenario runs one scenario on one backend.
func runScenario(ctx context.Context, cfg *Config, scenario, backend string) (*report, error) {
	instances := 1
	if backend == backendPostgres {
		instances = 2
	}
	switch scenario {
	case "load", "soak":
		return runLoad(ctx, scenarioConfig(cfg, scenario), scenario, backend, instances)
	case "crash":
		return runCrash(ctx, cfg)
	case "badinput":
		return runBadInput(ctx, cfg, backend, instances)
	case "faults":
		return runFaults(ctx, cfg, backend)
	}
	return nil, fmt.Errorf("unknown scenario %q (load, soak, crash, badinput, faults)", scenario)
}

// scenarioConfig is cfg as scenario runs it: soak is the load scenario with
// SoakDuration as its load phase.
func scenarioConfig(cfg *Config, scenario string) *Config {
	if scenario != "soak" {
		return cfg
	}
	c := *cfg
	c.Duration = cfg.SoakDuration
	return &c
}
