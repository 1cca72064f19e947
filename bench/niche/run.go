package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/pages"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/postgres"
	"github.com/assaykit/assay/store/sqlite"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// result is one load measurement.
type result struct {
	Name     string
	Kind     string // base-search, search, base-list or list
	Requests int
	Errors   int
	P50, P99 time.Duration
	RPS      float64
	Bytes    int
}

// load sends GET requests to the URLs returned by next from clients
// goroutines for d (after a warm-up of warm) and measures latency and
// throughput. Every request is bounded in time; the run stops by itself.
func load(ctx context.Context, c *http.Client, name string, next func(worker, i int) string, clients int, warm, d time.Duration) result {
	var mu sync.Mutex
	var lat []time.Duration
	errs, size := 0, 0
	start := time.Now()
	measureFrom, stop := start.Add(warm), start.Add(warm+d)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			myErrs, mySize := 0, 0
			for i := 0; ; i++ {
				now := time.Now()
				if now.After(stop) || ctx.Err() != nil {
					break
				}
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				req, _ := http.NewRequestWithContext(rctx, "GET", next(w, i), nil)
				req.Header.Set("Authorization", "")
				t0 := time.Now()
				res, err := c.Do(req)
				if err == nil {
					n, _ := io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						err = fmt.Errorf("status %d", res.StatusCode)
					}
					mySize = int(n)
				}
				el := time.Since(t0)
				cancel()
				if t0.Before(measureFrom) {
					continue
				}
				if err != nil {
					myErrs++
					continue
				}
				mine = append(mine, el)
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += myErrs
			if mySize > 0 {
				size = mySize
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	r := result{Name: name, Requests: len(lat), Errors: errs, Bytes: size}
	if len(lat) > 0 {
		r.P50 = lat[len(lat)*50/100]
		r.P99 = lat[min(len(lat)*99/100, len(lat)-1)]
		r.RPS = float64(len(lat)) / d.Seconds()
	}
	return r
}

// baseline serves a fixed, pre-rendered body: the HTTP ceiling on this
// machine for a response of that size.
func baseline(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		_, _ = w.Write(body)
	})
}

func fetch(c *http.Client, u string, hdr ...string) ([]byte, error) {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return b, nil
}

// config of one benchmark run.
type config struct {
	N        int
	Seed     uint64
	Clients  int
	Warm     time.Duration
	Duration time.Duration
	Out      io.Writer
	// ReuseSQLite names an SQLite file made with -load-only to measure
	// instead of generating a catalogue.
	ReuseSQLite string
	// Only, when set, restricts the measurements (besides baselines) to
	// those whose name it matches.
	Only *regexp.Regexp
	// SQLiteConns is the SQLite reader pool size (0: the default).
	SQLiteConns int
	// CacheTTL is the result cache of the cached engine.
	CacheTTL time.Duration
	// ReusePostgres names a PostgreSQL URL (schema in search_path) loaded
	// with -load-only to measure instead of generating a catalogue.
	ReusePostgres string
	// SkipScale skips the scale figures; RemoteWrites, ImportSample and
	// TwoInstances size them.
	SkipScale    bool
	RemoteWrites int
	ImportSample int
	TwoInstances time.Duration
	// SkipPages skips the pages' figures (pageFigures).
	SkipPages bool
	// NoIndex turns the engines' search index off
	// (niche.Options.DisableSearchIndex): searches ask the store.
	NoIndex bool
}

// backend opens a store and says how to clean it up.
type backend struct {
	Name  string
	Reuse bool // the store already holds the catalogue
	Open  func(ctx context.Context) (*store.DB, error)
	// Another opens a second handle on the database Open opened (a
	// second instance).
	Another func(ctx context.Context) (*store.DB, error)
	Cleanup func()
}

// sqliteOptions are the options of the SQLite store.
func (cfg config) sqliteOptions() *store.Options {
	if cfg.SQLiteConns <= 0 {
		return nil
	}
	return &store.Options{MaxOpenConns: cfg.SQLiteConns}
}

// sqliteBackend is a fresh SQLite file under dir.
func sqliteBackend(dir string, cfg config) backend {
	open := func(ctx context.Context) (*store.DB, error) {
		return sqlite.Open(ctx, dir+"/bench.db", cfg.sqliteOptions())
	}
	return backend{Name: "sqlite", Open: open, Another: open, Cleanup: func() {}}
}

// postgresBackend is a fresh schema on the server at base, dropped by
// Cleanup.
func postgresBackend(base string) (backend, error) {
	u, err := url.Parse(base)
	if err != nil {
		return backend{}, err
	}
	schema := "bench_" + ids.New("")[:20]
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return backend{}, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	created := false
	return backend{Name: "postgres", Open: func(ctx context.Context) (*store.DB, error) {
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
			return nil, err
		}
		created = true
		return postgres.Open(ctx, u.String(), &store.Options{MaxOpenConns: 32})
	}, Another: func(ctx context.Context) (*store.DB, error) {
		return postgres.Open(ctx, u.String(), &store.Options{MaxOpenConns: 32})
	}, Cleanup: func() {
		if created {
			_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		}
		admin.Close()
	}}, nil
}

// runBackend imports the catalogue into b, measures the scale figures
// and every route against its baseline.
func runBackend(ctx context.Context, cfg config, b backend) ([]result, *scaleResult, error) {
	defer b.Cleanup()
	db, err := b.Open(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	sr := &scaleResult{}
	if b.Reuse {
		fmt.Fprintf(cfg.Out, "%s: reusing the catalogue loaded with -load-only (no import measured)\n", b.Name)
	} else if sr.Import, err = importCatalogue(ctx, cfg, db, cfg.Out, b.Name); err != nil {
		return nil, nil, err
	}
	if !cfg.SkipScale {
		if err := scaleFigures(ctx, cfg, b, db, sr); err != nil {
			return nil, nil, err
		}
	}

	// Two servers over the same store: one engine without a result cache
	// (every request reaches the database) and one with it.
	subs := &nichetest.Subscribers{}
	subs.Add("nd_bench", niche.Subscriber{ID: "cus_bench"})
	newServer := func(ttl time.Duration) (*httptest.Server, error) {
		eng, err := niche.New(nichestore.New(db), &niche.Options{SearchCacheTTL: ttl, DisableSearchIndex: cfg.NoIndex})
		if err != nil {
			return nil, err
		}
		pg, err := pages.New(nil)
		if err != nil {
			return nil, err
		}
		h, err := server.New(server.Config{Paywall: httpgate.Free{}, Niche: server.NicheConfig{Engine: eng, Subscribers: subs, FreeSearchesPerDay: new(server.UnlimitedSearches)},
			Mounts: []server.Mount{pg}})
		if err != nil {
			return nil, err
		}
		return httptest.NewServer(h), nil
	}
	plain, err := newServer(0)
	if err != nil {
		return nil, nil, err
	}
	defer plain.Close()
	cached, err := newServer(cfg.CacheTTL)
	if err != nil {
		return nil, nil, err
	}
	defer cached.Close()
	c := &http.Client{Transport: &http.Transport{MaxIdleConns: cfg.Clients * 2, MaxIdleConnsPerHost: cfg.Clients * 2}, Timeout: 15 * time.Second}
	defer c.CloseIdleConnections()

	typical, broad := queries(cfg.Seed, 500)
	distinct := distinctQueries(cfg.Seed)
	var nextDistinct atomic.Int64
	searchURL := func(srv *httptest.Server, qs []string) func(w, i int) string {
		return func(w, i int) string {
			return srv.URL + "/v1/search?limit=20&q=" + url.QueryEscape(qs[(w*131+i)%len(qs)])
		}
	}
	distinctURL := func(srv *httptest.Server) func(w, i int) string {
		return func(w, i int) string {
			return srv.URL + "/v1/search?limit=20&q=" + url.QueryEscape(distinct[int(nextDistinct.Add(1))%len(distinct)])
		}
	}
	listURL := func(srv *httptest.Server) func(w, i int) string {
		return func(w, i int) string {
			if i%2 == 0 {
				return srv.URL + "/v1/niches?sort=score&limit=20"
			}
			return srv.URL + "/v1/niches?sort=score&limit=20&category=" + url.QueryEscape(categories[(w+i)%len(categories)])
		}
	}
	// The first search loads the plain engine's search index: report its
	// time and the heap it added.
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap := ms.HeapAlloc
	t0 := time.Now()
	slow := &http.Client{Transport: c.Transport, Timeout: 5 * time.Minute} // a loaded machine
	if _, err := fetch(slow, searchURL(plain, typical)(0, 0)); err != nil {
		return nil, nil, err
	}
	loadTime := time.Since(t0)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if !cfg.NoIndex {
		fmt.Fprintf(cfg.Out, "%s: first search (search index load) %v; heap +%d MB, %d B per evaluation\n", b.Name,
			loadTime.Round(time.Millisecond), (int64(ms.HeapAlloc)-int64(heap))>>20, (int64(ms.HeapAlloc)-int64(heap))/int64(max(cfg.N, 1)))
	}
	// The cached engine keeps its own index: load it too before measuring
	// (else its load, seconds long, stalls the first cached measurement).
	if _, err := fetch(slow, searchURL(cached, typical)(0, 0)); err != nil {
		return nil, nil, err
	}
	// Baselines serve real responses of the measured routes, pre-rendered.
	var searchBody []byte
	for i := range 20 {
		body, err := fetch(c, searchURL(plain, typical)(0, i))
		if err != nil {
			return nil, nil, err
		}
		if len(body) > len(searchBody) {
			searchBody = body
		}
	}
	listBody, err := fetch(c, listURL(plain)(0, 0))
	if err != nil {
		return nil, nil, err
	}
	baseSearch := httptest.NewServer(baseline(searchBody))
	defer baseSearch.Close()
	baseList := httptest.NewServer(baseline(listBody))
	defer baseList.Close()

	fmt.Fprintf(cfg.Out, "%s: %s; cached engine: SearchCacheTTL %v; %d distinct typical queries for the miss mix\n",
		b.Name, loadAverage(), cfg.CacheTTL, len(distinct))
	var out []result
	measure := func(kind, name string, next func(w, i int) string) {
		if cfg.Only != nil && !strings.HasPrefix(kind, "base") && !cfg.Only.MatchString(name) {
			return
		}
		r := load(ctx, c, b.Name+" "+name, next, cfg.Clients, cfg.Warm, cfg.Duration)
		r.Kind = kind
		out = append(out, r)
		fmt.Fprintf(cfg.Out, "  %-58s n=%-7d err=%-3d p50=%-10v p99=%-10v %8.0f req/s  %6d B\n",
			r.Name, r.Requests, r.Errors, r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.RPS, r.Bytes)
	}
	measure("base-search", "baseline (search-sized body)", func(w, i int) string { return baseSearch.URL })
	measure("search", "GET /v1/search typical, no cache", searchURL(plain, typical))
	measure("search", "GET /v1/search broad one-word, no cache", searchURL(plain, broad))
	measure("search", "GET /v1/search typical, cache, 500 hot queries", searchURL(cached, typical))
	measure("search", "GET /v1/search typical, cache, all distinct (misses)", distinctURL(cached))
	if n := int(nextDistinct.Load()); n > len(distinct) {
		fmt.Fprintf(cfg.Out, "  (the miss mix sent %d requests for %d distinct queries: %d were repeats, possibly cache hits)\n",
			n, len(distinct), n-len(distinct))
	}
	measure("search", "GET /v1/search broad one-word, cache", searchURL(cached, broad))
	measure("base-list", "baseline (list-sized body)", func(w, i int) string { return baseList.URL })
	measure("list", "GET /v1/niches?sort=score, no cache", listURL(plain))
	measure("list", "GET /v1/niches?sort=score, cache", listURL(cached))
	if !cfg.SkipPages {
		if err := pageFigures(cfg, c, plain.URL, typical); err != nil {
			return nil, nil, err
		}
	}
	if !cfg.SkipScale && !b.Reuse && cfg.ImportSample > 0 {
		if sr.ImportBaselinePer, err = importBaseline(ctx, cfg, db, cfg.ImportSample); err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(cfg.Out, "%s: %d drafts imported one by one (the way before): %.0f µs each\n", b.Name, cfg.ImportSample,
			float64(sr.ImportBaselinePer)/1e3)
	}
	fmt.Fprintf(cfg.Out, "%s: done, %s\n", b.Name, loadAverage())
	return out, sr, nil
}

// loadAverage describes the machine's load (/proc/loadavg), which the
// figures depend on.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load average unknown"
	}
	return fmt.Sprintf("load average %s %s %s (%d CPUs)", f[0], f[1], f[2], runtime.NumCPU())
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// report prints the route/baseline ratios of a backend's results: search
// routes against the search-sized baseline, lists against the list-sized
// one.
func report(w io.Writer, rs []result) {
	var base result
	for _, r := range rs {
		switch r.Kind {
		case "base-search", "base-list":
			base = r
		default:
			fmt.Fprintf(w, "  %-58s p50 x%-7.2f p99 x%-7.2f throughput %.2f of baseline\n", r.Name,
				ratio(r.P50, base.P50), ratio(r.P99, base.P99), r.RPS/max(base.RPS, 1))
		}
	}
}

// pageFigures measures the pages for people (package pages) against the
// JSON routes they show, in the same run and on the same engine (no
// result cache): the catalogue list page against GET /v1/niches, the
// search page against GET /v1/search, one client at a time, so that the
// latency is the server's work for one request (the rendering included).
func pageFigures(cfg config, c *http.Client, base string, typical []string) error {
	const warm, n = 50, 400
	type pair struct{ name, json, page string }
	pairs := []pair{
		{"list by score", "/niche-discovery/v1/niches?sort=score&limit=20", "/niche-discovery/browse"},
		{"list by score, category", "/niche-discovery/v1/niches?sort=score&limit=20&category=" + url.QueryEscape(categories[0]),
			"/niche-discovery/browse?category=" + url.QueryEscape(categories[0])},
		{"search typical", "/niche-discovery/v1/search?limit=20&q=", "/niche-discovery/browse/search?q="},
	}
	seq := func(path string, search bool, accept string) (p50, p99 time.Duration, size int, err error) {
		var lat []time.Duration
		for i := range warm + n {
			u := base + path
			if search {
				u += url.QueryEscape(typical[i%len(typical)])
			}
			t0 := time.Now()
			body, err := fetch(c, u, "Accept", accept)
			if err != nil {
				return 0, 0, 0, err
			}
			if i >= warm {
				lat = append(lat, time.Since(t0))
				size = max(size, len(body))
			}
		}
		slices.Sort(lat)
		return lat[len(lat)/2], lat[len(lat)*99/100], size, nil
	}
	fmt.Fprintf(cfg.Out, "pages (one client, %d requests each, after %d warm-up; %s):\n", n, warm, loadAverage())
	for _, p := range pairs {
		search := strings.HasSuffix(p.json, "q=")
		j50, j99, jb, err := seq(p.json, search, "application/json")
		if err != nil {
			return err
		}
		h50, h99, hb, err := seq(p.page, search, "text/html")
		if err != nil {
			return err
		}
		fmt.Fprintf(cfg.Out, "  %-26s JSON p50=%-9v p99=%-9v %6d B | page p50=%-9v p99=%-9v %6d B | page/JSON p50 x%.2f\n", p.name,
			j50.Round(time.Microsecond), j99.Round(time.Microsecond), jb, h50.Round(time.Microsecond), h99.Round(time.Microsecond), hb, ratio(h50, j50))
	}
	return nil
}
