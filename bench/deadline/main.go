// Command deadline measures what happens to provider answers that arrive
// just before a verification's deadline, under load, against a named
// baseline measured in the same run.
//
//	go run ./bench/deadline                   # 500 calls, 60 s deadline
//	go run ./bench/deadline -timeout 6s       # the same, scaled down
//
// The set-up of issue 26: -calls (500) distinct paid quick-tier calls at
// once over HTTP (the real server, gate, cashier and ledger; the fake
// payment processor of payment/gatetest), a provider that streams a search
// event at half its delay and answers -answer-before (0.5 s) before the
// -timeout (60 s) deadline, and quote checks that fetch each answer's three
// cited pages, on three host names of their own, through the real
// snapshot capturer, from a loopback site. Host names are resolved by a
// loopback DNS server that drops -drop-percent (20) of the queries, the
// way a resolver under a burst drops some.
//
// Two runs, each on fresh servers:
//
//   - baseline "no grace, 5 s DNS attempts": the behaviour before the
//     deadline budget: the checks end at the deadline (claims.Options
//     CheckGrace -1) and a dropped DNS query is asked again after 5 s
//     (Go's resolver with resolv.conf's default timeout);
//   - candidate "grace, 1 s DNS attempts": the defaults: the checks of an
//     answer that arrived in time get claims.DefaultCheckGrace, and a
//     dropped query is asked again after 1 s (snapshot.NewResolver).
//
// Each prints its calls answered 200, the provider answers, the answers
// thrown away (a provider answer whose call did not answer 200), the
// calls charged (a settlement) and latencies. Then the ratios candidate /
// baseline of answers thrown away and of the 99th percentile latency. The
// target: no answer thrown away by the candidate, and every charged call
// delivered (exit status 1 otherwise).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimsmem"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymentmem"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
	"github.com/assaykit/assay/snapshot/snapshottest"
)

// config is what one measurement runs.
type config struct {
	Calls        int
	Timeout      time.Duration
	AnswerBefore time.Duration
	DropPercent  int
	PageDelay    time.Duration
	// Verbose prints every call that did not answer 200, with its body.
	Verbose bool
	Out     io.Writer
}

func main() {
	var c config
	flag.IntVar(&c.Calls, "calls", 500, "distinct paid quick-tier calls sent at once")
	flag.DurationVar(&c.Timeout, "timeout", 60*time.Second, "the verification deadline (-claims-timeout)")
	flag.DurationVar(&c.AnswerBefore, "answer-before", 500*time.Millisecond, "how long before the deadline the provider answers")
	flag.IntVar(&c.DropPercent, "drop-percent", 20, "percentage of DNS queries dropped")
	flag.DurationVar(&c.PageDelay, "page-delay", 50*time.Millisecond, "how long each cited page takes to answer")
	flag.BoolVar(&c.Verbose, "v", false, "print every call that did not answer 200")
	flag.Parse()
	c.Out = os.Stdout
	ok, err := run(context.Background(), c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "deadline:", err)
		os.Exit(1)
	}
	if !ok {
		fmt.Println("FAIL")
		os.Exit(1)
	}
	fmt.Println("PASS")
}

// outcome is one run's figures.
type outcome struct {
	name                         string
	calls, ok, answered, charged int
	late                         int
	statuses                     map[int]int
	latencies                    []time.Duration
	dnsAsked, dnsDropped         int64
	wall                         time.Duration
}

// thrownAway counts the provider answers in time whose call did not
// deliver (answers that came late count only as far as their calls were
// not delivered either: a delivered call used its answer).
func (o *outcome) thrownAway() int { return max(0, o.answered+o.late-o.ok-o.late) }

func (o *outcome) percentile(p float64) time.Duration {
	if len(o.latencies) == 0 {
		return 0
	}
	s := slices.Clone(o.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func (o *outcome) print(w io.Writer) {
	var st []string
	for _, k := range slices.Sorted(maps.Keys(o.statuses)) {
		st = append(st, fmt.Sprintf("%d:%d", k, o.statuses[k]))
	}
	fmt.Fprintf(w, "%-40s calls=%d ok=%d provider-answers=%d late=%d thrown-away=%d charged=%d statuses=%s p50=%s p99=%s wall=%s dns-queries=%d dropped=%d\n",
		o.name, o.calls, o.ok, o.answered, o.late, o.thrownAway(), o.charged, strings.Join(st, ","),
		o.percentile(0.5).Round(time.Millisecond), o.percentile(0.99).Round(time.Millisecond), o.wall.Round(time.Millisecond), o.dnsAsked, o.dnsDropped)
}

// run measures the baseline and the candidate and reports whether the
// candidate met the target.
func run(ctx context.Context, c config) (bool, error) {
	if c.Calls < 1 || c.AnswerBefore <= 0 || c.AnswerBefore >= c.Timeout {
		return false, fmt.Errorf("need -calls ≥ 1 and 0 < -answer-before < -timeout")
	}
	fmt.Fprintf(c.Out, "deadline: %d paid quick calls at once, provider answers %s before a %s deadline, %d%% of DNS queries dropped\n",
		c.Calls, c.AnswerBefore, c.Timeout, c.DropPercent)
	base, err := measure(ctx, c, "baseline (no grace, 5 s DNS attempts)", -1, 5*time.Second)
	if err != nil {
		return false, err
	}
	base.print(c.Out)
	cand, err := measure(ctx, c, "candidate (grace, 1 s DNS attempts)", 0, snapshot.DefaultDNSAttemptTimeout)
	if err != nil {
		return false, err
	}
	cand.print(c.Out)
	ratio := func(a, b float64) string {
		if b == 0 {
			return "n/a"
		}
		return strconv.FormatFloat(a/b, 'f', 2, 64)
	}
	fmt.Fprintf(c.Out, "ratios against baseline: thrown-away=%s p99=%s\n",
		ratio(float64(cand.thrownAway()), float64(base.thrownAway())),
		ratio(float64(cand.percentile(0.99)), float64(base.percentile(0.99))))
	fmt.Fprintf(c.Out, "answers thrown away: %d (baseline %d)\n", cand.thrownAway(), base.thrownAway())
	good := cand.thrownAway() == 0 && cand.charged == cand.ok && base.charged == base.ok
	return good, nil
}

// provider answers every call AnswerAt after it started (a search event at
// half that), unless the call's context ends first.
type provider struct {
	resp     func(claim string) *claims.ProviderResponse
	answerAt time.Duration
	answered atomic.Int64 // answers returned before the call's deadline
	late     atomic.Int64 // answers returned after it
}

func (p *provider) Name() string                              { return "scripted" }
func (p *provider) Capabilities() claims.ProviderCapabilities { return claims.ProviderCapabilities{} }

func (p *provider) Search(ctx context.Context, q *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	resp := p.resp(q.Claim)
	wait := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return &claims.ProviderError{Kind: claims.ProviderTimeout, Err: ctx.Err()}
		case <-t.C:
			return nil
		}
	}
	if err := wait(p.answerAt / 2); err != nil {
		return nil, err
	}
	if q.OnSearchCall != nil && len(resp.SearchCalls) > 0 {
		q.OnSearchCall(resp.SearchCalls[0])
	}
	if err := wait(p.answerAt - p.answerAt/2); err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		// The timer fired late (a starved machine): not an answer in time.
		p.late.Add(1)
		return resp, nil
	}
	p.answered.Add(1)
	return resp, nil
}

// measure runs one set of calls on fresh servers: grace is the engine's
// CheckGrace, attempt the DNS attempt timeout of the capturer.
func measure(ctx context.Context, c config, name string, grace, attempt time.Duration) (*outcome, error) {
	site := claimstest.NewSlowSite(c.PageDelay)
	defer site.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(site.URL, "http://"))
	portN, _ := strconv.Atoi(port)
	hosts := map[string]string{}
	hostOf := func(i, k int) string { return fmt.Sprintf("p%d-%d.example.test", i, k) }
	for i := range c.Calls {
		for k := range 3 {
			hosts[hostOf(i, k)] = "127.0.0.1"
		}
	}
	dns, err := snapshottest.StartDNS(hosts, func(name string, n int) bool {
		h := fnv.New32a()
		fmt.Fprintf(h, "%s|%d", name, n)
		return int(h.Sum32()%100) < c.DropPercent
	})
	if err != nil {
		return nil, err
	}
	defer dns.Close()

	snaps, err := snapshot.NewService(snapshotmem.New(), snapshotmem.NewBlobs(nil), &snapshot.Options{
		Resolver:     snapshot.NewResolver(&snapshot.ResolverOptions{AttemptTimeout: attempt, Server: dns.Addr}),
		AllowAddrs:   []string{"127.0.0.1:" + port},
		AllowedPorts: []int{portN},
	})
	if err != nil {
		return nil, err
	}
	defer snaps.Close()
	prov := &provider{answerAt: c.Timeout - c.AnswerBefore, resp: func(claim string) *claims.ProviderResponse {
		i := 0
		if _, after, ok := strings.Cut(claim, "#"); ok {
			i, _ = strconv.Atoi(strings.TrimSpace(after))
		}
		var urls []string
		for k := range 3 {
			urls = append(urls, fmt.Sprintf("http://%s:%s/page/%d", hostOf(i, k), port, k))
		}
		return claimstest.ResponseForURLs(urls)
	}}
	eng, err := claims.New(prov, claimsmem.New(nil), snaps, &claims.Options{Timeout: c.Timeout, CheckGrace: grace})
	if err != nil {
		return nil, err
	}
	keys, err := payment.ParseKeyring(payment.GenerateReceiptKey())
	if err != nil {
		return nil, err
	}
	proc := &gatetest.Processor{}
	srvURL := "http://127.0.0.1"
	gate, err := httpgate.New(proc, paymentmem.New(nil), &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys},
		PublicBaseURL: srvURL, ReadCredential: gatetest.ReadCredential})
	if err != nil {
		return nil, err
	}
	h, err := server.New(server.Config{Paywall: gate, PublicBaseURL: srvURL, Claims: server.ClaimsConfig{Engine: eng},
		Commerce: server.CommerceConfig{Cashier: gate.Cashier()}})
	if err != nil {
		return nil, err
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.Calls, MaxConnsPerHost: 0}}

	out := &outcome{name: name, calls: c.Calls, statuses: map[int]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for i := range c.Calls {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"claim": fmt.Sprintf("Exampleton raised its minimum wage to $18.00 per hour, effective 1 November 2026. #%d", i),
				"minimumSources": 1})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/claim-verification/v1/claims/verify/quick", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(gatetest.Header, gatetest.Credential("0xb0b", fmt.Sprintf("n-%d", i)))
			t0 := time.Now()
			status := 0
			if resp, err := client.Do(req); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
				if status != http.StatusOK && c.Verbose {
					fmt.Fprintf(os.Stderr, "%s: %d after %s: %s\n", name, status, time.Since(t0).Round(time.Millisecond), b)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			out.statuses[status]++
			out.latencies = append(out.latencies, time.Since(t0))
			if status == http.StatusOK {
				out.ok++
			}
		})
	}
	wg.Wait()
	out.wall = time.Since(start)
	out.answered, out.late = int(prov.answered.Load()), int(prov.late.Load())
	out.charged = proc.TotalSettled()
	out.dnsAsked, out.dnsDropped = dns.Asked(), dns.Dropped()
	return out, nil
}
