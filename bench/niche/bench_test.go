package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/sqlite"
)

// TestGeneratorIsDeterministic checks that a seed always gives the same
// catalogue and queries.
func TestGeneratorIsDeterministic(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	s1, r1 := generate(7, 500, now)
	s2, r2 := generate(7, 500, now)
	_, r3 := generate(8, 500, now)
	if len(r1) != 500 || len(s1) != len(s2) || r1[123].Title != r2[123].Title || r1[499].Problem != r2[499].Problem || s1[3].Excerpt != s2[3].Excerpt {
		t.Fatal("same seed, different catalogue")
	}
	if r1[123].Title == r3[123].Title && r1[124].Title == r3[124].Title && r1[125].Title == r3[125].Title {
		t.Fatal("different seeds, same catalogue")
	}
	d1, d2 := distinctQueries(7), distinctQueries(7)
	if !slices.Equal(d1, d2) || len(d1) != 7200 {
		t.Fatalf("distinct queries: %d, deterministic %v", len(d1), slices.Equal(d1, d2))
	}
	seen := map[string]bool{}
	for _, q := range d1 {
		if seen[q] {
			t.Fatalf("query %q repeats", q)
		}
		seen[q] = true
	}
	q1, b1 := queries(7, 50)
	q2, b2 := queries(7, 50)
	if !slices.Equal(q1, q2) || !slices.Equal(b1, b2) {
		t.Fatal("queries not deterministic")
	}
}

// benchEngine returns an engine over a 10,000-evaluation SQLite catalogue,
// or over the catalogue file named by ASSAY_BENCH_NICHE_DB (made with
// go run ./bench/niche -load-only FILE, e.g. 100,000 evaluations).
func benchEngine(b *testing.B, ttl time.Duration) *niche.Engine {
	b.Helper()
	ctx := context.Background()
	path := os.Getenv("ASSAY_BENCH_NICHE_DB")
	reuse := path != ""
	if !reuse {
		path = b.TempDir() + "/b.db"
	}
	var opts *store.Options
	if n, err := strconv.Atoi(os.Getenv("ASSAY_BENCH_CONNS")); err == nil && n > 0 {
		opts = &store.Options{MaxOpenConns: n}
	}
	db, err := sqlite.Open(ctx, path, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if !reuse {
		signals, recs := generate(1, 10000, time.Now())
		if err := nichestore.New(db).BulkLoadNiche(ctx, signals, recs, 5000); err != nil {
			b.Fatal(err)
		}
	}
	e, err := niche.New(nichestore.New(db), &niche.Options{SearchCacheTTL: ttl})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func BenchmarkEngineSearchTypical(b *testing.B) {
	e := benchEngine(b, 0)
	qs, _ := queries(1, 200)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := e.Search(ctx, niche.SearchOptions{Query: qs[i%len(qs)], Limit: 20}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEngineListByScore(b *testing.B) {
	e := benchEngine(b, 0)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.List(ctx, niche.ListOptions{Sort: niche.SortScore, Limit: 20}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSearchText(b *testing.B) {
	s := strings.Repeat("Owners of independent cafés lose money on waste — every single week! ", 20)
	for b.Loop() {
		niche.SearchText(s)
	}
}

// benchHandler returns the niche HTTP handler over benchEngine, with a
// result cache of ttl (0: none).
func benchHandler(b *testing.B, ttl time.Duration) http.Handler {
	b.Helper()
	h, err := server.New(server.Config{Paywall: httpgate.Free{}, Niche: server.NicheConfig{Engine: benchEngine(b, ttl), FreeSearchesPerDay: new(server.UnlimitedSearches)}})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// serveAll sends GET requests for urls in turn through h from parallel
// goroutines and fails on any status but 200.
func serveAll(b *testing.B, h http.Handler, urls []string) {
	b.Helper()
	var next atomic.Int64
	if p, err := strconv.Atoi(os.Getenv("ASSAY_BENCH_PARALLELISM")); err == nil && p > 0 {
		b.SetParallelism(p)
	}
	// One request first: it loads the engine's search index, which the
	// figures must not include.
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", urls[0], nil))
	b.ResetTimer()
	defer reportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			u := urls[int(next.Add(1))%len(urls)]
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", u, nil))
			if w.Code != http.StatusOK {
				b.Errorf("GET %s: %d %s", u, w.Code, w.Body)
				return
			}
		}
	})
}

func BenchmarkHTTPSearchTypical(b *testing.B) { benchSearchTypical(b, 0) }

// BenchmarkHTTPSearchTypicalCached: the same 500 queries, all but the
// first of each answered from the cache.
func BenchmarkHTTPSearchTypicalCached(b *testing.B) { benchSearchTypical(b, time.Hour) }

func benchSearchTypical(b *testing.B, ttl time.Duration) {
	h := benchHandler(b, ttl)
	qs, _ := queries(1, 500)
	urls := make([]string, len(qs))
	for i, q := range qs {
		urls[i] = "/v1/search?limit=20&q=" + url.QueryEscape(q)
	}
	serveAll(b, h, urls)
}

// BenchmarkHTTPSearchDistinct and BenchmarkHTTPSearchDistinctCached send
// queries that do not repeat (while b.N ≤ 7,200): the cost of a miss with
// and without the cache.
func BenchmarkHTTPSearchDistinct(b *testing.B) { benchSearchDistinct(b, 0) }

func BenchmarkHTTPSearchDistinctCached(b *testing.B) { benchSearchDistinct(b, time.Hour) }

func benchSearchDistinct(b *testing.B, ttl time.Duration) {
	h := benchHandler(b, ttl)
	var urls []string
	for _, q := range distinctQueries(1) {
		urls = append(urls, "/v1/search?limit=20&q="+url.QueryEscape(q))
	}
	serveAll(b, h, urls)
}

func BenchmarkHTTPSearchBroad(b *testing.B) {
	h := benchHandler(b, 0)
	_, qs := queries(1, 500)
	urls := make([]string, len(qs))
	for i, q := range qs {
		urls[i] = "/v1/search?limit=20&q=" + url.QueryEscape(q)
	}
	serveAll(b, h, urls)
}

func BenchmarkHTTPListByScore(b *testing.B) { benchList(b, 0) }

func BenchmarkHTTPListByScoreCached(b *testing.B) { benchList(b, time.Hour) }

func benchList(b *testing.B, ttl time.Duration) {
	h := benchHandler(b, ttl)
	urls := []string{"/v1/niches?sort=score&limit=20"}
	for _, c := range categories {
		urls = append(urls, "/v1/niches?sort=score&limit=20", "/v1/niches?sort=score&limit=20&category="+url.QueryEscape(c))
	}
	serveAll(b, h, urls)
}

// reportCPU starts counting the process's CPU time; the function it
// returns reports it per operation as cpu-ns/op, a figure that, unlike
// ns/op, the other processes of a loaded machine barely change.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
