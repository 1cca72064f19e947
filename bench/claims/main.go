// Command claims measures the claim verification engine against named
// baselines measured in the same run, and prints the ratios.
//
//	go run ./bench/claims            # defaults: 7 rounds, 2000 replays
//
// 1. Engine overhead. Baseline "ideal pipeline": a scripted provider that
// answers in 200 ms, then 20 loopback pages that each answer in 100 ms,
// fetched concurrently — the provider call plus the slowest snapshot, with
// no engine (about 300 ms). Measured: a research-tier Engine.Verify with
// the same provider and pages (reconciliation, snapshots, verdicts, and the
// result stored in SQLite). Target: ratio ≤ 1.15.
//
// The engine captures through the real snapshot.Service (connect-time
// address checks with the loopback site allow-listed, streaming hashes,
// normalisation, content and records stored); the baseline fetches the same
// pages with claimstest.HTTPSnapshotter, a minimal concurrent fetcher that
// does nothing else. The 20 sources are on distinct hosts, as a research
// call's sources are (the capturer's per-host limit defaults to its batch
// concurrency, so one host would do as well). The capturer uses the test
// resolver and dial tripwire (package snapshottest): nothing here looks up a
// name or dials off the machine.
//
// 2. Idempotent replay. Measured: Engine.Verify with an Idempotency-Key
// already completed (lookup, stored result, access grant). Target: under
// 1 ms of engine time; the ratio printed is against 1 ms.
//
// 3. Captures as sources arrive. Baseline "provider alone": the scripted
// provider's call by itself (its search ends at 50 ms, its answer at
// 200 ms). Measured: a research-tier Engine.Verify whose provider streams
// its search call at 50 ms (ProviderQuery.OnSearchCall), so that the 20
// pages (100 ms each) are captured while the answer is still being
// written. Target: the last line, "research/provider-alone ratio R", with
// R ≤ 1.05.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func pct(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func main() {
	rounds := flag.Int("rounds", 7, "timed rounds of the overhead benchmark")
	replays := flag.Int("replays", 2000, "timed idempotent replays")
	providerDelay := flag.Duration("provider", 200*time.Millisecond, "scripted provider latency")
	pageDelay := flag.Duration("page", 100*time.Millisecond, "latency of each loopback page")
	searchDelay := flag.Duration("search", 50*time.Millisecond, "when the streaming provider reports its search call")
	flag.Parse()
	ctx := context.Background()

	site := claimstest.NewSlowSite(*pageDelay)
	defer site.Close()
	// The sources live on 24 distinct hosts, as a research call's sources
	// do; the capturer dials every one of them at the loopback site.
	siteAddr := strings.TrimPrefix(site.URL, "http://")
	hostMap := map[string]string{}
	var sourceURLs []string
	for i := range 24 {
		host := fmt.Sprintf("source%d.bench.example", i)
		hostMap[host+":80"] = siteAddr
		sourceURLs = append(sourceURLs, fmt.Sprintf("http://%s/page/%d", host, i))
	}
	resp := claimstest.ResponseForURLs(sourceURLs)
	prov := claimstest.Respond(resp, *providerDelay)
	fetch := &claimstest.HTTPSnapshotter{} // the baseline's minimal fetcher

	dir, err := os.MkdirTemp("", "assay-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "bench.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	blobs, err := snapshot.NewFileBlobStore(filepath.Join(dir, "snapshots"), nil)
	if err != nil {
		log.Fatal(err)
	}
	snaps, err := snapshot.NewService(snapshotstore.New(db), blobs, &snapshot.Options{
		HostMap:     hostMap,
		AllowAddrs:  []string{siteAddr},
		SpoolDir:    dir,
		Resolver:    snapshottest.Resolver(nil),
		DialControl: (&snapshottest.Tripwire{}).Control,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer snaps.Close()
	eng, err := claims.New(prov, claimsstore.New(db), snaps, nil)
	if err != nil {
		log.Fatal(err)
	}
	var urls []string
	for i := range 20 {
		urls = append(urls, fmt.Sprintf("%s/page/%d", site.URL, i))
	}
	baseline := func() time.Duration {
		start := time.Now()
		if _, err := prov.Search(ctx, &claims.ProviderQuery{}); err != nil {
			log.Fatal(err)
		}
		recs, err := fetch.CaptureAll(ctx, urls)
		if err != nil || len(recs) != 20 {
			log.Fatal(err)
		}
		return time.Since(start)
	}
	engine := func(i int) time.Duration {
		req := &claims.Request{Claim: fmt.Sprintf("Exampleton's minimum wage is $18.00 per hour (round %d).", i),
			SourcePolicy: "open_web", MinimumSources: 1, MaxSources: 20, IncludeConflicts: new(true), Language: "auto"}
		start := time.Now()
		res, err := eng.Verify(ctx, claims.Research, req, &claims.Call{Scope: "payer:bench"})
		if err != nil {
			log.Fatal(err)
		}
		d := time.Since(start)
		if res.Provenance.SnapshottedSourceCount != 20 {
			log.Fatalf("snapshotted %d sources, want 20", res.Provenance.SnapshottedSourceCount)
		}
		return d
	}
	baseline() // warm connections
	engine(-1)
	var base, eng1 []time.Duration
	for i := range *rounds {
		base = append(base, baseline())
		eng1 = append(eng1, engine(i))
	}
	mb, me := median(base), median(eng1)
	nominal := *providerDelay + *pageDelay
	fmt.Printf("claims engine overhead (research tier, provider %v, 20 pages x %v on loopback, real snapshot service), %d rounds\n", *providerDelay, *pageDelay, *rounds)
	fmt.Printf("  baseline ideal pipeline (provider + concurrent fetches, no engine): median %v\n", mb.Round(time.Microsecond))
	fmt.Printf("  engine Verify:                                                     median %v\n", me.Round(time.Microsecond))
	fmt.Printf("  ratio engine/baseline = %.3f   ratio engine/nominal %v = %.3f   (target <= 1.15)\n",
		float64(me)/float64(mb), nominal, float64(me)/float64(nominal))

	// Replays.
	req := &claims.Request{Claim: "Exampleton's minimum wage is $18.00 per hour.", SourcePolicy: "open_web",
		MinimumSources: 1, MaxSources: 20, IncludeConflicts: new(true), Language: "auto"}
	call := func() *claims.Call {
		return &claims.Call{IdempotencyKey: "bench-key", Scope: "payer:bench", OrderID: ids.New(ids.Order), OrderTokenHash: ids.Hash(ids.Token(ids.OrderToken))}
	}
	if _, err := eng.Verify(ctx, claims.Research, req, call()); err != nil {
		log.Fatal(err)
	}
	measure := func(withGrant bool) []time.Duration {
		var out []time.Duration
		for range *replays {
			c := call()
			if !withGrant {
				c.OrderTokenHash = ""
			}
			start := time.Now()
			res, err := eng.Verify(ctx, claims.Research, req, c)
			d := time.Since(start)
			if err != nil || !res.Provenance.CacheHit {
				log.Fatalf("replay: %v", err)
			}
			out = append(out, d)
		}
		return out
	}
	plain := measure(false)
	granted := measure(true)
	fmt.Printf("idempotent replay (SQLite file store, %d replays each)\n", *replays)
	fmt.Printf("  replay, no new order:        median %v  p99 %v  ratio vs 1ms = %.3f\n",
		median(plain).Round(time.Microsecond), pct(plain, 0.99).Round(time.Microsecond), float64(median(plain))/float64(time.Millisecond))
	fmt.Printf("  replay, new order granted:   median %v  p99 %v  ratio vs 1ms = %.3f  (includes one fsync'd write)\n",
		median(granted).Round(time.Microsecond), pct(granted, 0.99).Round(time.Microsecond), float64(median(granted))/float64(time.Millisecond))
	fmt.Printf("  provider calls in total: %d (rounds+warm-up+1)\n", prov.Calls())

	streamingScenario(ctx, resp, claimsstore.New(db), snaps, *rounds, *providerDelay, *searchDelay, *pageDelay)
}

// streamingScenario measures a research-tier Verify whose provider streams
// its search call early against the provider alone (scenario 3), and
// prints the ratio as the last line.
func streamingScenario(ctx context.Context, resp *claims.ProviderResponse, db claims.Store, snaps claims.Snapshotter,
	rounds int, providerDelay, searchDelay, pageDelay time.Duration) {
	// Captures as sources arrive.
	streaming := claimstest.NewProvider(claimstest.Step{Response: resp, Delay: providerDelay, Stream: true, StreamAfter: searchDelay})
	seng, err := claims.New(streaming, db, snaps, nil)
	if err != nil {
		log.Fatal(err)
	}
	alone := func() time.Duration {
		start := time.Now()
		if _, err := streaming.Search(ctx, &claims.ProviderQuery{}); err != nil {
			log.Fatal(err)
		}
		return time.Since(start)
	}
	research := func(i int) time.Duration {
		req := &claims.Request{Claim: fmt.Sprintf("Exampleton's minimum wage is $18.00 per hour (streamed round %d).", i),
			SourcePolicy: "open_web", MinimumSources: 1, MaxSources: 20, IncludeConflicts: new(true), Language: "auto"}
		start := time.Now()
		res, err := seng.Verify(ctx, claims.Research, req, &claims.Call{Scope: "payer:bench"})
		d := time.Since(start)
		if err != nil {
			log.Fatal(err)
		}
		if res.Provenance.SnapshottedSourceCount != 20 {
			log.Fatalf("snapshotted %d sources, want 20", res.Provenance.SnapshottedSourceCount)
		}
		return d
	}
	research(-1)
	var aloneT, researchT []time.Duration
	for i := range rounds {
		aloneT = append(aloneT, alone())
		researchT = append(researchT, research(i))
	}
	ma, mr := median(aloneT), median(researchT)
	fmt.Printf("captures as sources arrive (research tier, search call streamed at %v, answer at %v, 20 pages x %v), %d rounds\n",
		searchDelay, providerDelay, pageDelay, rounds)
	fmt.Printf("  baseline provider alone: median %v\n", ma.Round(time.Microsecond))
	fmt.Printf("  engine Verify:           median %v\n", mr.Round(time.Microsecond))
	fmt.Printf("research/provider-alone ratio %.3f\n", float64(mr)/float64(ma))
}
