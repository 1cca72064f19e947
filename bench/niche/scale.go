package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
)

// The scale figures (issue 29), each against the way before in the same
// run:
//
//   - import: the catalogue as a bulk import file through
//     niche.Engine.Import (batched transactions; COPY on PostgreSQL),
//     against the same Import creating its drafts one by one (the way
//     before, when the store was no niche.BulkCreator) on a sample;
//   - index load: niche.Engine.LoadIndex of a fresh engine, split into
//     the read of the rows and the build; before, the first search waited
//     for it: now it answers from the database meanwhile (measured);
//   - remote write: the CPU one instance spends applying one write made by
//     another (its change feed catch-up), against the full rebuild every
//     remote write cost before (the CPU of a fresh load);
//   - two instances on one PostgreSQL database, a writer at one write per
//     second through the first while 32 clients search both: latency,
//     how soon the second sees each write (LISTEN/NOTIFY), and its full
//     loads (one: at start).

// scaleResult gathers one backend's scale figures.
type scaleResult struct {
	Import, ImportBaselinePer  time.Duration // the whole import; per draft one by one
	LoadRead, LoadBuild, Load  time.Duration
	FirstSearchWhileLoading    time.Duration
	RemoteWriteCPU, RebuildCPU time.Duration
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// oneByOne hides a store's niche.BulkCreator: Import then creates drafts
// one by one, the way before.
type oneByOne struct{ niche.Store }

// importCatalogue imports the synthetic catalogue into db through
// Engine.Import and returns how long it took.
func importCatalogue(ctx context.Context, cfg config, db *store.DB, out io.Writer, name string) (time.Duration, error) {
	f, err := os.CreateTemp("", "assay-niche-bench-*.jsonl")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := catalogueJSONL(f, cfg.Seed, cfg.N, time.Now().UTC()); err != nil {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	eng, err := niche.New(nichestore.New(db), &niche.Options{DisableSearchIndex: true})
	if err != nil {
		return 0, err
	}
	t0, c0 := time.Now(), cpuTime()
	rep, err := eng.Import(ctx, f, nil)
	took, cpu := time.Since(t0), cpuTime()-c0
	if err != nil {
		return 0, err
	}
	if rep.DraftsCreated != cfg.N || rep.DraftsFailed != 0 {
		return 0, fmt.Errorf("import: %d created, %d failed of %d", rep.DraftsCreated, rep.DraftsFailed, cfg.N)
	}
	fmt.Fprintf(out, "%s: imported %d evaluations and %d signals in %v (%.0f per second; CPU of this process %v), %s\n", name, rep.DraftsCreated,
		rep.SignalsCreated, took.Round(time.Millisecond), float64(cfg.N)/took.Seconds(), cpu.Round(time.Millisecond), loadAverage())
	// Resumable: the same file again creates nothing.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	t0 = time.Now()
	again, err := eng.Import(ctx, f, nil)
	if err != nil {
		return 0, err
	}
	if again.DraftsCreated != 0 || again.DraftsReplayed != cfg.N {
		return 0, fmt.Errorf("import again: %d created, %d replayed", again.DraftsCreated, again.DraftsReplayed)
	}
	fmt.Fprintf(out, "%s: the same file again: %d replayed, nothing created, in %v\n", name, again.DraftsReplayed, time.Since(t0).Round(time.Millisecond))
	return took, nil
}

// importBaseline imports a sample of n drafts (another seed) one by one
// and returns the time per draft.
func importBaseline(ctx context.Context, cfg config, db *store.DB, n int) (time.Duration, error) {
	r, w := io.Pipe()
	go func() { w.CloseWithError(catalogueJSONL(w, cfg.Seed+1000, n, time.Now().UTC())) }()
	eng, err := niche.New(oneByOne{nichestore.New(db)}, &niche.Options{DisableSearchIndex: true})
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	rep, err := eng.Import(ctx, r, nil)
	took := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if rep.DraftsCreated != n {
		return 0, fmt.Errorf("baseline import: %d created of %d", rep.DraftsCreated, n)
	}
	return took / time.Duration(n), nil
}

// measureLoad times a fresh engine's index load (the read of the rows and
// the build) and, meanwhile, a first search, which the database answers.
func measureLoad(ctx context.Context, db *store.DB, query string) (st niche.IndexStatus, firstSearch time.Duration, err error) {
	eng, err := niche.New(nichestore.New(db), nil)
	if err != nil {
		return st, 0, err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	eng.StartIndex(cctx)
	t0 := time.Now()
	if _, err := eng.Search(ctx, niche.SearchOptions{Query: query, Limit: 20}); err != nil {
		return st, 0, err
	}
	firstSearch = time.Since(t0)
	if err := eng.LoadIndex(ctx); err != nil {
		return st, 0, err
	}
	return eng.IndexStatus(), firstSearch, nil
}

// measureRemoteWrites makes writes through one engine (a second
// instance) and measures the CPU another engine, whose index is loaded,
// spends applying each (its catch-up with the change feed), one write at
// a time; and the CPU of a full load, what each remote write cost before.
func measureRemoteWrites(ctx context.Context, cfg config, writerDB, readerDB *store.DB, writes int) (perWrite, rebuild time.Duration, err error) {
	writer, err := niche.New(nichestore.New(writerDB), &niche.Options{DisableSearchIndex: true})
	if err != nil {
		return 0, 0, err
	}
	reader, err := niche.New(nichestore.New(readerDB), &niche.Options{SearchCacheTTL: time.Hour})
	if err != nil {
		return 0, 0, err
	}
	c0 := cpuTime()
	if err := reader.LoadIndex(ctx); err != nil {
		return 0, 0, err
	}
	rebuild = cpuTime() - c0
	loads := reader.IndexStatus().FullLoads
	rng := rand.New(rand.NewPCG(cfg.Seed, 29))
	var total time.Duration
	for i := range writes {
		if err := remoteWrite(ctx, cfg, writer, rng, i); err != nil {
			return 0, 0, err
		}
		c0 := cpuTime()
		if err := reader.LoadIndex(ctx); err != nil { // applies the feed
			return 0, 0, err
		}
		total += cpuTime() - c0
	}
	if st := reader.IndexStatus(); st.FullLoads != loads {
		return 0, 0, fmt.Errorf("the reader loaded its index anew during the remote writes: %+v", st)
	}
	return total / time.Duration(writes), rebuild, nil
}

// remoteWrite makes the i-th write of the remote-write measurement: a
// revision, a withdrawal, a republication or a creation, in turn.
func remoteWrite(ctx context.Context, cfg config, e *niche.Engine, rng *rand.Rand, i int) error {
	page, err := e.Store().Evaluations(ctx, fmt.Sprintf("niche_%032x", rng.IntN(1<<30)), 1)
	if err != nil || len(page) == 0 {
		page, err = e.Store().Evaluations(ctx, "", 1)
		if err != nil || len(page) == 0 {
			return fmt.Errorf("no evaluation to write: %v", err)
		}
	}
	rec := page[0]
	op := niche.Op{ID: fmt.Sprintf("scale-%d-%d", cfg.Seed, i), Actor: "bench"}
	switch i % 4 {
	case 0, 1:
		d := draftOf(rec)
		d.Title = fmt.Sprintf("Revised evaluation %d of %s", i, rec.Buyer)
		_, err = e.Revise(ctx, rec.ID, rec.Revision, op, d)
	case 2:
		if rec.Status == niche.StatusPublished {
			_, err = e.Withdraw(ctx, rec.ID, rec.Revision, op)
		} else {
			_, err = e.Publish(ctx, rec.ID, rec.Revision, op)
		}
	default:
		d := draftOf(rec)
		d.Title = fmt.Sprintf("New evaluation %d for %s", i, rec.Buyer)
		_, err = e.Create(ctx, op, d)
	}
	return err
}

// draftOf is the draft that would write rec's content.
func draftOf(rec *niche.Record) niche.Draft {
	d := rec.Dimensions
	return niche.Draft{Title: rec.Title, Problem: rec.Problem, Buyer: rec.Buyer, Category: rec.Category,
		SolutionHypothesis: rec.SolutionHypothesis, EvaluationNotes: rec.EvaluationNotes,
		Pain: new(d.Pain), Frequency: new(d.Frequency), WillingnessToPay: new(d.WillingnessToPay),
		ReachableBuyers: new(d.ReachableBuyers), Feasibility: new(d.Feasibility), CompetitionGap: new(d.CompetitionGap),
		SignalIDs: rec.SignalIDs, Publish: true}
}

// measureTwoInstances serves searches from two engines on two handles of
// one database (two instances), each following the change feed
// (StartIndex), while a writer makes one write per second through the
// first; 32 clients search both for d. It prints the latencies, how long
// the second took to apply each write, and its full loads.
func measureTwoInstances(ctx context.Context, cfg config, name string, a, b *store.DB, d time.Duration) error {
	subs := &nichetest.Subscribers{}
	var engines []*niche.Engine
	var urls []string
	for _, db := range []*store.DB{a, b} {
		eng, err := niche.New(nichestore.New(db), nil)
		if err != nil {
			return err
		}
		ictx, cancel := context.WithCancel(ctx)
		defer cancel()
		eng.StartIndex(ictx)
		if err := eng.LoadIndex(ctx); err != nil {
			return err
		}
		h, err := server.New(server.Config{Paywall: httpgate.Free{}, Niche: server.NicheConfig{Engine: eng, Subscribers: subs,
			FreeSearchesPerDay: new(server.UnlimitedSearches)}})
		if err != nil {
			return err
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		engines = append(engines, eng)
		urls = append(urls, srv.URL)
	}
	loadsBefore := engines[1].IndexStatus().FullLoads
	typical, _ := queries(cfg.Seed, 500)
	wctx, stop := context.WithTimeout(ctx, cfg.Warm+d)
	defer stop()
	var lags []time.Duration
	var writes atomic.Int64
	var wg sync.WaitGroup
	var werr error
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(cfg.Seed, 7))
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
			if err := remoteWrite(wctx, cfg, engines[0], rng, 1_000_000+i); err != nil {
				if wctx.Err() == nil {
					werr = err
				}
				return
			}
			head, err := nichestore.New(a).SearchVersion(wctx)
			if err != nil {
				return
			}
			t0 := time.Now()
			for engines[1].IndexStatus().Seq < head && wctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			if wctx.Err() == nil {
				lags = append(lags, time.Since(t0))
				writes.Add(1)
			}
		}
	})
	c := &http.Client{Transport: &http.Transport{MaxIdleConns: cfg.Clients * 2, MaxIdleConnsPerHost: cfg.Clients * 2}, Timeout: 15 * time.Second}
	defer c.CloseIdleConnections()
	r := load(ctx, c, name+" two instances, 1 write/s", func(w, i int) string {
		return urls[(w+i)%2] + "/v1/search?limit=20&q=" + url.QueryEscape(typical[(w*131+i)%len(typical)])
	}, cfg.Clients, cfg.Warm, d)
	wg.Wait()
	if werr != nil {
		return werr
	}
	slices.Sort(lags)
	st := engines[1].IndexStatus()
	fmt.Fprintf(cfg.Out, "  %-58s n=%-7d err=%-3d p50=%-10v p99=%-10v %8.0f req/s\n", r.Name, r.Requests, r.Errors,
		r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.RPS)
	if len(lags) > 0 {
		fmt.Fprintf(cfg.Out, "  %s: %d writes; the second instance applied each in p50 %v, max %v (LISTEN/NOTIFY); its full loads: %d (before the writes: %d), entries applied: %d\n",
			name, writes.Load(), lags[len(lags)/2].Round(time.Microsecond), lags[len(lags)-1].Round(time.Microsecond),
			st.FullLoads, loadsBefore, st.Applied)
	}
	if st.FullLoads != loadsBefore {
		return fmt.Errorf("the second instance loaded its index anew during the writes: %+v", st)
	}
	return nil
}

// scaleFigures measures the index load, the remote writes and, on
// PostgreSQL, two instances, printing each (the one-by-one import sample
// is measured after the routes, so that they see the catalogue alone).
func scaleFigures(ctx context.Context, cfg config, b backend, db *store.DB, sr *scaleResult) error {
	typical, _ := queries(cfg.Seed, 10)
	st, first, err := measureLoad(ctx, db, typical[0])
	if err != nil {
		return err
	}
	sr.Load, sr.LoadRead, sr.LoadBuild, sr.FirstSearchWhileLoading = st.LoadTime, st.LoadReadTime, st.LoadBuildTime, first
	fmt.Fprintf(cfg.Out, "%s: search index load %v (reading %d rows %v, building %v); the first search, while it loads, answered by the database in %v\n",
		b.Name, st.LoadTime.Round(time.Millisecond), st.Documents, st.LoadReadTime.Round(time.Millisecond),
		st.LoadBuildTime.Round(time.Millisecond), first.Round(time.Microsecond))
	other, err := b.Another(ctx)
	if err != nil {
		return err
	}
	defer other.Close()
	if cfg.RemoteWrites <= 0 {
		return nil
	}
	if sr.RemoteWriteCPU, sr.RebuildCPU, err = measureRemoteWrites(ctx, cfg, other, db, cfg.RemoteWrites); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "%s: CPU per remote write %.2f ms (change feed, %d writes) against %.0f ms for the full rebuild each cost before (x%.4f)\n",
		b.Name, ms(sr.RemoteWriteCPU), cfg.RemoteWrites, ms(sr.RebuildCPU), float64(sr.RemoteWriteCPU)/float64(max(sr.RebuildCPU, 1)))
	if db.Dialect() == store.Postgres && cfg.TwoInstances > 0 {
		if err := measureTwoInstances(ctx, cfg, b.Name, db, other, cfg.TwoInstances); err != nil {
			return err
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// reportScale prints the scale figures against the way before, and last
// the line the issue names.
func reportScale(cfg config, order []string, scale map[string]*scaleResult) {
	fmt.Fprintf(cfg.Out, "\nscale figures at %d evaluations against the way before, same run; %s:\n", cfg.N, loadAverage())
	var cpu, load time.Duration
	imports := map[string]string{"sqlite": "n/a", "postgres": "n/a"}
	for _, name := range order {
		sr := scale[name]
		if sr.Import > 0 {
			per := sr.Import / time.Duration(cfg.N)
			fmt.Fprintf(cfg.Out, "  %-9s import %v (%.0f µs per evaluation, bulk) against %.0f µs per evaluation one by one (%d sampled): x%.3f\n",
				name, sr.Import.Round(time.Millisecond), float64(per)/1e3, float64(sr.ImportBaselinePer)/1e3, cfg.ImportSample,
				float64(per)/float64(max(sr.ImportBaselinePer, 1)))
			imports[name] = fmt.Sprintf("%.1f", sr.Import.Seconds())
		}
		fmt.Fprintf(cfg.Out, "  %-9s index load %v (read %v, build %v); first search while loading %v instead of waiting for the load (x%.4f)\n",
			name, sr.Load.Round(time.Millisecond), sr.LoadRead.Round(time.Millisecond), sr.LoadBuild.Round(time.Millisecond),
			sr.FirstSearchWhileLoading.Round(time.Microsecond), float64(sr.FirstSearchWhileLoading)/float64(max(sr.Load, 1)))
		fmt.Fprintf(cfg.Out, "  %-9s CPU per remote write %.2f ms against a full rebuild's %.0f ms (x%.4f)\n", name,
			ms(sr.RemoteWriteCPU), ms(sr.RebuildCPU), float64(sr.RemoteWriteCPU)/float64(max(sr.RebuildCPU, 1)))
		cpu, load = max(cpu, sr.RemoteWriteCPU), max(load, sr.Load)
	}
	fmt.Fprintf(cfg.Out, "scale: remote-write-cpu-ms=%.2f index-load-s=%.2f import-sqlite-s=%s import-postgres-s=%s\n",
		ms(cpu), load.Seconds(), imports["sqlite"], imports["postgres"])
}
