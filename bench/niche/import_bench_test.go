package main

import (
	"context"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// BenchmarkImport imports a synthetic catalogue (ASSAY_BENCH_IMPORT_N
// evaluations, 10,000 by default) into a fresh SQLite file and, with
// ASSAY_TEST_POSTGRES, a fresh PostgreSQL schema, through
// niche.Engine.Import: the profile of the bulk import
// (go test -bench Import -cpuprofile).
func BenchmarkImport(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("ASSAY_BENCH_IMPORT_N")); err == nil && v > 0 {
		n = v
	}
	cfg := config{N: n, Seed: 1}
	b.Run("sqlite", func(b *testing.B) {
		for b.Loop() {
			benchImportInto(b, cfg, sqliteBackend(b.TempDir(), cfg))
		}
	})
	b.Run("postgres", func(b *testing.B) {
		pg := os.Getenv(storetest.PostgresEnv)
		if pg == "" {
			b.Skip("set " + storetest.PostgresEnv)
		}
		for b.Loop() {
			be, err := postgresBackend(pg)
			if err != nil {
				b.Fatal(err)
			}
			benchImportInto(b, cfg, be)
		}
	})
}

func benchImportInto(b *testing.B, cfg config, be backend) {
	b.Helper()
	ctx := context.Background()
	b.StopTimer()
	defer be.Cleanup()
	db, err := be.Open(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.StartTimer()
	took, err := importCatalogue(ctx, cfg, db, io.Discard, be.Name)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(took)/float64(cfg.N)/float64(time.Microsecond), "µs/evaluation")
}

// BenchmarkIndexLoad loads a fresh engine's search index from the
// catalogue named by ASSAY_BENCH_NICHE_DB (an SQLite file) or
// ASSAY_BENCH_NICHE_PG (a PostgreSQL URL naming its schema with
// search_path), each made with go run ./bench/niche -load-only: the
// profile of the index load (go test -bench IndexLoad -cpuprofile).
func BenchmarkIndexLoad(b *testing.B) {
	for _, v := range []string{"ASSAY_BENCH_NICHE_DB", "ASSAY_BENCH_NICHE_PG"} {
		b.Run(v, func(b *testing.B) {
			dsn := os.Getenv(v)
			if dsn == "" {
				b.Skip("set " + v)
			}
			ctx := context.Background()
			db, err := anydb.Open(ctx, dsn, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			var read, build time.Duration
			for b.Loop() {
				eng, err := niche.New(nichestore.New(db), nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := eng.LoadIndex(ctx); err != nil {
					b.Fatal(err)
				}
				st := eng.IndexStatus()
				read, build = read+st.LoadReadTime, build+st.LoadBuildTime
			}
			b.ReportMetric(float64(read.Milliseconds())/float64(b.N), "read-ms/op")
			b.ReportMetric(float64(build.Milliseconds())/float64(b.N), "build-ms/op")
		})
	}
}
