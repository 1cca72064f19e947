// Command niche measures the niche catalogue's HTTP routes on a synthetic
// catalogue (100,000 published evaluations by default, generated from a
// seed, bulk-loaded in transactions) in SQLite and, when a PostgreSQL URL
// is given, in PostgreSQL, each route under 32 concurrent clients on
// loopback and each compared in the same run with a baseline handler that
// serves a pre-rendered response of the same size (the HTTP ceiling of the
// machine). It prints p50, p99, throughput, the ratios and the load
// average, which the figures depend on.
//
// Routes: GET /v1/search (limit 20) with typical multi-word queries and
// with broad one-word ones, and GET /v1/niches?sort=score, each on an
// engine without a result cache (every request reaches the database) and
// on one with niche.Options.SearchCacheTTL (-cache-ttl): for the cached
// engine, typical search is measured both on the 500 hot queries and on a
// mix of 7,200 distinct queries of the same kinds that do not repeat
// within a measurement (all misses; the output says when they ran out).
//
//	go run ./bench/niche                       # SQLite only
//	go run ./bench/niche -postgres "$ASSAY_TEST_POSTGRES"
//	go run ./bench/niche -n 10000 -duration 2s # quicker
//
// Loading 100,000 evaluations takes minutes; load once and reuse:
//
//	go run ./bench/niche -load-only /tmp/niche100k.db
//	go run ./bench/niche -load-only "$ASSAY_TEST_POSTGRES&search_path=niche100k"
//	go run ./bench/niche -reuse-sqlite /tmp/niche100k.db -reuse-postgres "$ASSAY_TEST_POSTGRES&search_path=niche100k"
//
// The Go benchmarks of this package (go test -bench . ./bench/niche, with
// ASSAY_BENCH_NICHE_DB naming a -load-only file) report the CPU time per
// request (cpu-ns/op), which a loaded machine changes less than latency.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/postgres"
	"github.com/assaykit/assay/store/sqlite"
)

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	cfg := config{Out: os.Stdout}
	var pg string
	flag.IntVar(&cfg.N, "n", 100000, "published evaluations to generate")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "generator seed")
	flag.IntVar(&cfg.Clients, "clients", 32, "concurrent clients")
	flag.DurationVar(&cfg.Warm, "warm", time.Second, "warm-up before each measurement")
	flag.DurationVar(&cfg.Duration, "duration", 5*time.Second, "length of each measurement")
	flag.DurationVar(&cfg.CacheTTL, "cache-ttl", 10*time.Second, "SearchCacheTTL of the cached engine")
	flag.IntVar(&cfg.SQLiteConns, "sqlite-conns", 0, "SQLite reader connections (store.Options.MaxOpenConns; 0: the store's default)")
	flag.StringVar(&pg, "postgres", os.Getenv("ASSAY_TEST_POSTGRES"), "PostgreSQL URL (a fresh schema is created and dropped); empty skips PostgreSQL")
	loadOnly := flag.String("load-only", "", "only generate the catalogue into this SQLite file or PostgreSQL URL (its search_path schema is created) and exit")
	flag.StringVar(&cfg.ReuseSQLite, "reuse-sqlite", "", "measure this SQLite file (made with -load-only) instead of generating one")
	flag.StringVar(&cfg.ReusePostgres, "reuse-postgres", "", "measure this PostgreSQL URL (made with -load-only; name the schema with search_path) instead of generating one")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.BoolVar(&cfg.SkipPages, "skip-pages", false, "skip the pages' figures (list and search pages against their JSON routes)")
	flag.BoolVar(&cfg.SkipScale, "skip-scale", false, "skip the scale figures (index load, remote writes, two instances, the one-by-one import sample)")
	flag.IntVar(&cfg.RemoteWrites, "remote-writes", 40, "writes of the remote-write CPU measurement")
	flag.IntVar(&cfg.ImportSample, "import-sample", 2000, "drafts of the one-by-one import (the way before) measured per draft")
	flag.DurationVar(&cfg.TwoInstances, "two-instances", 20*time.Second, "length of the two-instance measurement on PostgreSQL")
	flag.BoolVar(&cfg.NoIndex, "no-index", false, "turn the engines' in-memory search index off (niche.Options.DisableSearchIndex), as before it existed")
	only := flag.String("only", "", "run only the measurements whose name matches this regular expression (and the baselines)")
	flag.Parse()
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return err
		}
		cfg.Only = re
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *loadOnly != "" {
		return loadOnlyInto(context.Background(), cfg, *loadOnly)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return run(ctx, cfg, pg)
}

func loadOnlyInto(ctx context.Context, cfg config, dsn string) error {
	if err := createSearchPath(ctx, dsn); err != nil {
		return err
	}
	db, err := anydb.Open(ctx, dsn, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	signals, recs := generate(cfg.Seed, cfg.N, time.Now().UTC())
	return nichestore.New(db).BulkLoadNiche(ctx, signals, recs, 5000)
}

func run(ctx context.Context, cfg config, pg string) error {
	dir, err := os.MkdirTemp("", "assay-niche-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(cfg.Out, "niche bench: %d evaluations, seed %d, %d clients, %v per measurement after %v warm-up; %s\n",
		cfg.N, cfg.Seed, cfg.Clients, cfg.Duration, cfg.Warm, loadAverage())
	backends := []backend{sqliteBackend(dir, cfg)}
	if cfg.ReuseSQLite != "" {
		backends[0] = backend{Name: "sqlite", Reuse: true, Open: func(ctx context.Context) (*store.DB, error) {
			return sqlite.Open(ctx, cfg.ReuseSQLite, cfg.sqliteOptions())
		}, Cleanup: func() {}}
	}
	if cfg.ReusePostgres != "" {
		backends = append(backends, backend{Name: "postgres", Reuse: true, Open: func(ctx context.Context) (*store.DB, error) {
			return postgres.Open(ctx, cfg.ReusePostgres, &store.Options{MaxOpenConns: 32})
		}, Cleanup: func() {}})
	} else if pg != "" {
		b, err := postgresBackend(pg)
		if err != nil {
			return err
		}
		backends = append(backends, b)
	} else {
		fmt.Fprintln(cfg.Out, "(PostgreSQL skipped: pass -postgres or set ASSAY_TEST_POSTGRES)")
	}
	all := map[string][]result{}
	scale := map[string]*scaleResult{}
	var order []string
	for _, b := range backends {
		rs, sr, err := runBackend(ctx, cfg, b)
		if err != nil {
			return fmt.Errorf("%s: %w", b.Name, err)
		}
		all[b.Name], scale[b.Name] = rs, sr
		order = append(order, b.Name)
	}
	fmt.Fprintf(cfg.Out, "\nratios against the same-size pre-rendered baseline (1.00 = the HTTP ceiling); %s:\n", loadAverage())
	for _, name := range order {
		report(cfg.Out, all[name])
	}
	if !cfg.SkipScale {
		reportScale(cfg, order, scale)
	}
	return nil
}

// createSearchPath creates the schema named by the search_path parameter
// of a PostgreSQL URL if it does not exist (nothing for other DSNs).
func createSearchPath(ctx context.Context, dsn string) error {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return err
	}
	schema := u.Query().Get("search_path")
	if schema == "" {
		return nil
	}
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	admin, err := sql.Open("pgx", u.String())
	if err != nil {
		return err
	}
	defer admin.Close()
	_, err = admin.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS "`+strings.ReplaceAll(schema, `"`, `""`)+`"`)
	return err
}
