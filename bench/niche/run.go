package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// result is one load measurement.
type result struct {
	Name     string
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
}

// backend opens a store and says how to clean it up.
type backend struct {
	Name    string
	Reuse   bool // the store already holds the catalogue
	Open    func(ctx context.Context) (*store.DB, error)
	Cleanup func()
}

// sqliteBackend is a fresh SQLite file under dir.
func sqliteBackend(dir string) backend {
	return backend{Name: "sqlite", Open: func(ctx context.Context) (*store.DB, error) {
		return store.Open(ctx, dir+"/bench.db", nil)
	}, Cleanup: func() {}}
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
		return store.Open(ctx, u.String(), &store.Options{MaxOpenConns: 32})
	}, Cleanup: func() {
		if created {
			_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		}
		admin.Close()
	}}, nil
}

// runBackend loads the catalogue into b and measures every route against
// its baseline.
func runBackend(ctx context.Context, cfg config, b backend) ([]result, error) {
	defer b.Cleanup()
	db, err := b.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if b.Reuse {
		fmt.Fprintf(cfg.Out, "%s: reusing %s\n", b.Name, cfg.ReuseSQLite)
	} else {
		now := time.Now().UTC()
		t0 := time.Now()
		signals, recs := generate(cfg.Seed, cfg.N, now)
		genTime := time.Since(t0)
		t0 = time.Now()
		if err := db.BulkLoadNiche(ctx, signals, recs, 5000); err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.Out, "%s: generated %d evaluations and %d signals in %v, loaded in %v\n",
			b.Name, len(recs), len(signals), genTime.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	}

	eng, err := niche.New(db, nil)
	if err != nil {
		return nil, err
	}
	subs := &nichetest.Subscribers{}
	subs.Add("nd_bench", niche.Subscriber{ID: "cus_bench"})
	h, err := server.New(server.Config{Niche: server.NicheConfig{Engine: eng, Subscribers: subs, FreeSearchesPerDay: -1}})
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := &http.Client{Transport: &http.Transport{MaxIdleConns: cfg.Clients * 2, MaxIdleConnsPerHost: cfg.Clients * 2}, Timeout: 15 * time.Second}
	defer c.CloseIdleConnections()

	typical, broad := queries(cfg.Seed, 500)
	searchURL := func(qs []string) func(w, i int) string {
		return func(w, i int) string {
			return srv.URL + "/v1/search?limit=20&q=" + url.QueryEscape(qs[(w*131+i)%len(qs)])
		}
	}
	listURL := func(w, i int) string {
		if i%2 == 0 {
			return srv.URL + "/v1/niches?sort=score&limit=20"
		}
		return srv.URL + "/v1/niches?sort=score&limit=20&category=" + url.QueryEscape(categories[(w+i)%len(categories)])
	}
	// Baselines serve real responses of the measured routes, pre-rendered.
	var searchBody []byte
	for i := range 20 {
		body, err := fetch(c, searchURL(typical)(0, i))
		if err != nil {
			return nil, err
		}
		if len(body) > len(searchBody) {
			searchBody = body
		}
	}
	listBody, err := fetch(c, listURL(0, 0))
	if err != nil {
		return nil, err
	}
	baseSearch := httptest.NewServer(baseline(searchBody))
	defer baseSearch.Close()
	baseList := httptest.NewServer(baseline(listBody))
	defer baseList.Close()

	var out []result
	measure := func(name string, next func(w, i int) string) {
		r := load(ctx, c, b.Name+" "+name, next, cfg.Clients, cfg.Warm, cfg.Duration)
		out = append(out, r)
		fmt.Fprintf(cfg.Out, "  %-44s n=%-7d err=%-3d p50=%-10v p99=%-10v %8.0f req/s  %6d B\n",
			r.Name, r.Requests, r.Errors, r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.RPS, r.Bytes)
	}
	measure("baseline (search-sized body)", func(w, i int) string { return baseSearch.URL })
	measure("GET /v1/search typical (previews)", searchURL(typical))
	measure("GET /v1/search broad one-word (previews)", searchURL(broad))
	measure("baseline (list-sized body)", func(w, i int) string { return baseList.URL })
	measure("GET /v1/niches?sort=score", listURL)
	return out, nil
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// report prints the route/baseline ratios of a backend's results.
func report(w io.Writer, rs []result) {
	if len(rs) != 5 {
		return
	}
	base, typical, broad, baseL, list := rs[0], rs[1], rs[2], rs[3], rs[4]
	row := func(r, b result) {
		fmt.Fprintf(w, "  %-44s p50 x%-6.2f p99 x%-6.2f throughput %.2f of baseline\n", r.Name, ratio(r.P50, b.P50), ratio(r.P99, b.P99), r.RPS/max(b.RPS, 1))
	}
	row(typical, base)
	row(broad, base)
	row(list, baseL)
}
