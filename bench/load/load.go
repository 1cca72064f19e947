package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
)

// counters are the scenario-wide tallies of the paid operations.
type counters struct {
	replays, replaysAnswered    atomic.Int64
	replaysRefused              atomic.Int64
	dupPairs, dupOneWinner      atomic.Int64
	idemTries, idemReplayed     atomic.Int64
	orderLookups, orderComplete atomic.Int64
	byProto                     sync.Map // protocol -> *atomic.Int64 (deliveries)
}

func (c *counters) delivered(proto string) {
	v, _ := c.byProto.LoadOrStore(proto, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (c *counters) protoSummary() string {
	s := ""
	for _, p := range protocols {
		n := int64(0)
		if v, ok := c.byProto.Load(p); ok {
			n = v.(*atomic.Int64).Load()
		}
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", p, n)
	}
	return s
}

// loadClient is one simulated caller: its own connections, wallet, client
// address (sent as X-Forwarded-For through the trusted loopback proxy, so
// that free-search quotas are per client) and memory of what it bought.
type loadClient struct {
	*payer
	id      int
	rng     *rand.Rand
	bases   []string // its own instance first
	ip      string
	cat     *catalogue
	cnt     *counters
	used    []*paidCall // recent paid calls without Idempotency-Key, for replays
	unlocks map[string]string
	mine    []*delivery
}

// op is one kind of request with its weight in the mix.
type op struct {
	name   string
	weight int
	run    func(c *loadClient, ctx context.Context)
}

// loadMix is the request mix of the load scenario: free niche reads, paid
// niche calls and paid verifications of every tier, plus the double-spend
// probes (replays, concurrent duplicates, idempotent retries).
func loadMix() []op {
	mix := []op{
		{"niche.list", 12, (*loadClient).list},
		{"niche.search", 8, (*loadClient).search},
		{"niche.preview", 10, (*loadClient).preview},
		{"niche.get locked", 4, (*loadClient).locked},
		{"niche.get unlocked", 4, (*loadClient).unlocked},
		{"niche.misc", 3, (*loadClient).misc},
		{"niche.pay-per-call", 6, (*loadClient).nichePPC},
		{"niche.search.pay-per-call", 6, (*loadClient).searchPPC},
		{"replay", 5, (*loadClient).replay},
		{"duplicate", 3, (*loadClient).duplicate},
		{"idempotent", 3, (*loadClient).idempotent},
		{"order lookup", 4, (*loadClient).orderLookup},
	}
	for i, t := range tiers {
		w := []int{8, 6, 4, 2}[i]
		mix = append(mix, op{"claims." + t.name, w, func(c *loadClient, ctx context.Context) { c.verify(ctx, t.name, t.path) }})
	}
	return mix
}

func pickOp(rng *rand.Rand, mix []op) op {
	total := 0
	for _, o := range mix {
		total += o.weight
	}
	n := rng.IntN(total)
	for _, o := range mix {
		if n < o.weight {
			return o
		}
		n -= o.weight
	}
	return mix[len(mix)-1]
}

func (c *loadClient) base() string { return c.bases[0] }

// other returns another instance than the client's own, if there is one.
func (c *loadClient) other() string { return c.bases[len(c.bases)-1] }

func (c *loadClient) get(ctx context.Context, class, path string, hdr http.Header, want ...int) answer {
	a := do(ctx, c.hc, c.st, class, c.base(), http.MethodGet, path, nil, hdr)
	if a.err == nil && !a.is(want...) {
		c.st.fail("unexpected status", "GET %s -> %d, want %v: %s", path, a.status, want, snippet(a.body))
	}
	return a
}

func (c *loadClient) list(ctx context.Context) {
	q := url.Values{}
	q.Set("limit", strconv.Itoa(1+c.rng.IntN(50)))
	q.Set("sort", pick(c.rng, []string{"score", "recent"}))
	switch c.rng.IntN(4) {
	case 0:
		// A text filter is a search: it shares the client's free daily
		// quota with /v1/search, then 429 until midnight.
		q.Set("q", pick(c.rng, c.cat.words))
		h := http.Header{}
		h.Set("X-Forwarded-For", c.ip)
		c.get(ctx, "niche.list (q, free)", "/v1/niches?"+q.Encode(), h, http.StatusOK, http.StatusTooManyRequests)
		return
	case 1:
		q.Set("category", pick(c.rng, c.cat.categories))
	}
	c.get(ctx, "niche.list", "/v1/niches?"+q.Encode(), nil, http.StatusOK)
}

func (c *loadClient) search(ctx context.Context) {
	q := url.Values{}
	q.Set("q", pick(c.rng, c.cat.words)+" "+pick(c.rng, c.cat.words))
	q.Set("limit", strconv.Itoa(1+c.rng.IntN(20)))
	h := http.Header{}
	h.Set("X-Forwarded-For", c.ip)
	// Three free searches per client and day, then 429 until midnight.
	c.get(ctx, "niche.search (free)", "/v1/search?"+q.Encode(), h, http.StatusOK, http.StatusTooManyRequests)
}

func (c *loadClient) preview(ctx context.Context) {
	c.get(ctx, "niche.preview", "/v1/niches/"+pick(c.rng, c.cat.ids)+"/preview", nil, http.StatusOK)
}

func (c *loadClient) locked(ctx context.Context) {
	c.get(ctx, "niche.get (locked)", "/v1/niches/"+pick(c.rng, c.cat.ids), nil, http.StatusUnauthorized)
}

func (c *loadClient) unlocked(ctx context.Context) {
	for id, tok := range c.unlocks {
		h := http.Header{}
		h.Set("X-Niche-Paid-Call", tok)
		c.get(ctx, "niche.get (unlock token)", "/v1/niches/"+id, h, http.StatusOK)
		return
	}
	c.locked(ctx)
}

func (c *loadClient) misc(ctx context.Context) {
	path := pick(c.rng, []string{"/v1/sources", "/v1/capabilities", "/.well-known/jwks.json", "/healthz", "/readyz"})
	c.get(ctx, "free misc", path, nil, http.StatusOK)
}

// paid runs one paid call on the client's instance and keeps what it needs
// for replays and lookups.
func (c *loadClient) paid(ctx context.Context, r paidReq) *paidCall {
	pc := c.pay(ctx, c.base(), r)
	if pc == nil || pc.ans.err != nil {
		return pc
	}
	if pc.ans.status != http.StatusOK {
		if !c.sharedRefusal(pc.cred, pc.ans) {
			c.st.fail("unexpected status", "paid %s %s (%s) -> %d: %s", r.method, r.path, pc.cred.Protocol, pc.ans.status, snippet(pc.ans.body))
		}
		return pc
	}
	c.cnt.delivered(pc.cred.Protocol)
	c.mine = append(c.mine, &delivery{OrderID: pc.ans.header.Get(httpgate.HeaderOrderID), Token: pc.ans.header.Get(httpgate.HeaderOrderToken)})
	if r.idem == "" {
		c.used = append(c.used, pc)
		if len(c.used) > 16 {
			c.used = c.used[1:]
		}
	}
	return pc
}

func (c *loadClient) verify(ctx context.Context, tier, path string) {
	c.paid(ctx, paidReq{class: "claims." + tier + " (paid)", method: http.MethodPost, path: path, body: claimBody(c.rng)})
}

func (c *loadClient) nichePPC(ctx context.Context) {
	id := pick(c.rng, c.cat.ids)
	pc := c.paid(ctx, paidReq{class: "niche.pay-per-call (paid)", method: http.MethodGet, path: "/v1/niches/" + id + "/pay-per-call"})
	if pc != nil && pc.ans.is(http.StatusOK) {
		if tok := pc.ans.header.Get("X-Niche-Paid-Call"); tok != "" {
			if len(c.unlocks) > 8 {
				clear(c.unlocks)
			}
			c.unlocks[id] = tok
		} else {
			c.st.fail("niche unlock token", "pay-per-call of %s answered without X-Niche-Paid-Call", id)
		}
	}
}

func (c *loadClient) searchPPC(ctx context.Context) {
	q := url.Values{}
	q.Set("q", pick(c.rng, c.cat.words))
	q.Set("limit", strconv.Itoa(1+c.rng.IntN(20)))
	c.paid(ctx, paidReq{class: "niche.search.pay-per-call (paid)", method: http.MethodGet, path: "/v1/search/pay-per-call?" + q.Encode()})
}

// replay sends a used credential again, to either instance. For the same
// request it is the same purchase: its answer again (the same order and
// bytes, a fresh token that replaces the client's); for another request
// (a claim with another body) it must be refused with 402 and deliver
// nothing.
func (c *loadClient) replay(ctx context.Context) {
	if len(c.used) == 0 {
		c.verify(ctx, "quick", tiers[0].path)
		return
	}
	pc := pick(c.rng, c.used)
	base := pick(c.rng, c.bases)
	c.cnt.replays.Add(1)
	r := pc.req
	r.class = "replay of a used credential"
	elsewhere := r.body != nil && c.rng.IntN(2) == 0
	if elsewhere {
		r.class = "replay of a used credential (another request)"
		r.body = []byte(fmt.Sprintf(`{"claim":"%s (replayed elsewhere)"}`, claimTexts[c.rng.IntN(len(claimTexts))]))
	}
	a := c.send(ctx, base, r, pc.cred)
	if a.err != nil {
		return
	}
	switch {
	case elsewhere && a.status == http.StatusPaymentRequired:
		c.cnt.replaysRefused.Add(1)
	case !elsewhere && a.status == http.StatusOK && a.header.Get(httpgate.HeaderReplay) == "true" &&
		a.header.Get(httpgate.HeaderOrderID) == pc.ans.header.Get(httpgate.HeaderOrderID):
		c.cnt.replaysAnswered.Add(1)
		c.retoken(a)
	default:
		c.st.fail("replay of a used credential", "%s %s (%s, another request: %t) replayed on %s -> %d replay=%q: %s", r.method, r.path, pc.cred.Protocol,
			elsewhere, base, a.status, a.header.Get(httpgate.HeaderReplay), snippet(a.body))
	}
}

// duplicate sends one fresh credential twice at the same moment, to both
// instances when there are two: exactly one may be delivered.
func (c *loadClient) duplicate(ctx context.Context) {
	t := pick(c.rng, tiers[:2])
	r := paidReq{class: "duplicate credential (concurrent)", method: http.MethodPost, path: t.path, body: claimBody(c.rng)}
	ch, ok := c.challenge(ctx, c.base(), r)
	if !ok {
		return
	}
	cred, ok := c.sign(ctx, ch)
	if !ok {
		return
	}
	c.cnt.dupPairs.Add(1)
	var wg sync.WaitGroup
	answers := make([]answer, 2)
	bases := []string{c.base(), c.other()}
	for i, base := range bases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = do(ctx, c.hc, c.st, r.class, base, r.method, r.path, r.body, c.headers(r, cred))
		}()
	}
	wg.Wait()
	// Booked in order: the delivery, then a replay of it. The copy that
	// lost the race found the order open, so its token (a replay's, or a
	// 202's while settling) replaced the winner's.
	for _, replays := range []bool{false, true} {
		for i, a := range answers {
			if a.err == nil && a.status == http.StatusOK && (a.header.Get(httpgate.HeaderReplay) == "true") == replays {
				c.record(bases[i], r, cred, a)
			}
		}
	}
	for _, a := range answers {
		if a.err == nil && a.status == http.StatusAccepted {
			c.retoken(a)
		}
	}
	// The copy that loses the race is the same purchase: in flight (409),
	// settling (202) or the winner's answer again (a replay).
	won, lost := 0, 0
	for _, a := range answers {
		switch {
		case a.err != nil:
			return
		case a.status == http.StatusPaymentRequired && c.sharedRefusal(cred, a):
			lost++
		case a.status == http.StatusOK && a.header.Get(httpgate.HeaderReplay) != "true":
			won++
		case a.status == http.StatusOK || a.status == http.StatusConflict || a.status == http.StatusAccepted:
			lost++
		default:
			c.st.fail("unexpected status", "duplicate credential -> %d: %s", a.status, snippet(a.body))
		}
	}
	if won == 1 && lost == 1 {
		c.cnt.dupOneWinner.Add(1)
		c.cnt.delivered(cred.Protocol)
		return
	}
	if won == 0 && !c.sharedRefusal(cred, answers[0]) {
		c.st.fail("duplicate credential: nobody served", "both copies of a fresh credential were refused: %s | %s", snippet(answers[0].body), snippet(answers[1].body))
	}
	// won == 2 is recorded by the ledger as a double delivery.
}

// idempotent pays once with an Idempotency-Key, then sends the same
// request with the same key and a new credential: the answer must replay
// the first order's bytes (and the new payment is not used).
func (c *loadClient) idempotent(ctx context.Context) {
	r := paidReq{class: "claims.quick (paid, Idempotency-Key)", method: http.MethodPost, path: tiers[0].path, body: claimBody(c.rng), idem: "idem-" + randomHex(12)}
	first := c.paid(ctx, r)
	if first == nil || !first.ans.is(http.StatusOK) {
		return
	}
	c.cnt.idemTries.Add(1)
	r.class = "idempotent retry (new credential)"
	second := c.pay(ctx, pick(c.rng, c.bases), r)
	if second == nil || second.ans.err != nil {
		return
	}
	h := second.ans.header
	if second.ans.status != http.StatusOK || h.Get(httpgate.HeaderReplay) != "true" || h.Get(httpgate.HeaderOrderID) != first.ans.header.Get(httpgate.HeaderOrderID) {
		c.st.fail("idempotent retry", "retry -> %d replay=%q order %q (first %q): %s", second.ans.status, h.Get(httpgate.HeaderReplay),
			h.Get(httpgate.HeaderOrderID), first.ans.header.Get(httpgate.HeaderOrderID), snippet(second.ans.body))
		return
	}
	c.cnt.idemReplayed.Add(1)
	c.retoken(second.ans)
}

// retoken adopts the fresh order token of an answer that replayed an
// order (or told that it is settling): the previous one stops working.
func (c *loadClient) retoken(a answer) {
	id, tok := a.header.Get(httpgate.HeaderOrderID), a.header.Get(httpgate.HeaderOrderToken)
	for _, d := range c.mine {
		if d.OrderID == id {
			d.Token = tok
		}
	}
	c.led.retoken(id, tok)
}

// orderLookup reads one of the client's orders with its token.
func (c *loadClient) orderLookup(ctx context.Context) {
	if len(c.mine) == 0 {
		c.misc(ctx)
		return
	}
	d := pick(c.rng, c.mine)
	h := http.Header{}
	h.Set(httpgate.HeaderOrderToken, d.Token)
	c.cnt.orderLookups.Add(1)
	a := do(ctx, c.hc, c.st, "order lookup (token)", pick(c.rng, c.bases), http.MethodGet, "/v1/orders/"+d.OrderID, nil, h)
	if a.err != nil {
		return
	}
	var o orderView
	if a.status != http.StatusOK || json.Unmarshal(a.body, &o) != nil || o.Status != string(payment.OrderCompleted) {
		c.st.fail("order lookup", "order %s -> %d %s", d.OrderID, a.status, snippet(a.body))
		return
	}
	c.cnt.orderComplete.Add(1)
}

// runLoad is the load scenario on one backend: clients mixing free and
// paid calls for cfg.Duration against instances servers sharing one
// database. name is the scenario reported: "load", or "soak" (the same
// run, longer).
func runLoad(ctx context.Context, cfg *Config, name, backend string, instances int) (*report, error) {
	rep := &report{Scenario: name, Backend: backend, Instances: instances, Clients: cfg.Clients, Strict: cfg.Strict}
	st := newStats()
	cl, err := newCluster(ctx, cfg, name, backend, instances, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := cl.close(cfg.Keep); err != nil {
			fmt.Fprintln(cfg.Log, "cleanup:", err)
		}
	}()
	if err := cl.start(ctx, cfg.StartTimeout); err != nil {
		return nil, err
	}
	bases := cl.bases()
	setupHC := newHTTPClient(time.Minute)
	cat, err := loadCatalogue(ctx, setupHC, bases[0])
	if err != nil {
		return nil, err
	}
	led := newLedger(st)
	cnt := &counters{}

	mctx, stopMem := context.WithCancel(ctx)
	mem := watchMemory(mctx, cl.procs, cfg.RSSEvery)

	mix := loadMix()
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		wallet, err := evm.GenerateKeySigner()
		if err != nil {
			stopMem()
			return nil, err
		}
		own := bases[i%len(bases)]
		other := bases[(i+1)%len(bases)]
		c := &loadClient{
			payer: &payer{hc: newHTTPClient(cfg.RequestTimeout), st: st, led: led, wallet: wallet, proto: i},
			id:    i, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i))), bases: []string{own, other},
			ip: fmt.Sprintf("10.77.%d.%d", i/250, 1+i%250), cat: cat, cnt: cnt, unlocks: map[string]string{},
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				pickOp(c.rng, mix).run(c, ctx)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	rep.fill(st, elapsed) // the load phase only; the audit below is not in the throughput
	// Memory is judged over the load phase, not the audit burst after it.
	stopMem()
	mem.wait()
	rep.Memory = judgeMemory(st, mem, cfg.Growth)

	verified := auditDeliveries(ctx, setupHC, st, bases, cl.adminKey, led.deliveries(), 8)
	if err := cl.stop(cfg.StopTimeout); err != nil {
		st.fail("graceful stop", "%v", err)
	}
	logs := cl.checkLogs(st)
	dbf, err := checkDatabase(ctx, cl.dsn, led)
	if err != nil {
		st.fail("database check", "%v", err)
	}
	judgeDatabase(st, dbf, true)

	ds := led.deliveries()
	rep.Deliveries = len(ds)
	rep.addFact("paid deliveries", "%d (%s); credentials signed %d", len(ds), cnt.protoSummary(), led.signed)
	rep.addFact("double deliveries", "%d (by credential nonce and by order id)", led.doubles)
	rep.addFact("replayed credentials", "%d sent; same request: %d answered with their order again; another request: %d refused with 402",
		cnt.replays.Load(), cnt.replaysAnswered.Load(), cnt.replaysRefused.Load())
	rep.addFact("concurrent duplicates", "%d pairs (across instances: %t), %d with exactly one delivery", cnt.dupPairs.Load(), instances > 1, cnt.dupOneWinner.Load())
	rep.addFact("idempotent retries", "%d, %d replayed the first order's bytes", cnt.idemTries.Load(), cnt.idemReplayed.Load())
	rep.addFact("order lookups during load", "%d, %d completed", cnt.orderLookups.Load(), cnt.orderComplete.Load())
	rep.addFact("audit", "%d delivered orders looked up with their tokens (another instance when there are two), %d receipts verified offline against the JWKS and the received bytes", len(ds), verified)
	rep.addFact("database", "%s", dbf.describe())
	rep.addFact("server logs", "%s", logs)
	if n := led.sharedKeys(); n > 0 {
		rep.addFact("shared MPP challenges", "%d challenge ids were handed out (and signed) more than once", n)
	}
	rep.finish(st)
	return rep, nil
}

// judgeMemory summarises the memory samples and fails on sustained
// growth.
func judgeMemory(st *stats, mem *memWatch, l growthLimits) []memRow {
	rows := mem.rows(l)
	for _, m := range rows {
		if m.Sustained {
			st.fail("memory grows", "%s: %s", m.Instance, m.Verdict)
		}
	}
	return rows
}

// judgeDatabase turns the database facts into failures. strict: every
// completed order must have been received by a client (no kill happened).
func judgeDatabase(st *stats, f dbFacts, strict bool) {
	if f.Integrity != "ok" {
		st.fail("database integrity", "%s", f.Integrity)
	}
	if f.DuplicateSettlements > 0 {
		st.fail("payment settled twice", "%d reservations have more than one completed order", f.DuplicateSettlements)
	}
	if f.Processing > 0 || f.Settling > 0 {
		st.fail("orders left in flight", "%d processing, %d settling after a graceful stop", f.Processing, f.Settling)
	}
	if strict && len(f.UndeliveredCompleted) > 0 {
		st.fail("completed order nobody received", "%d, e.g. %v", len(f.UndeliveredCompleted), f.UndeliveredCompleted[:min(5, len(f.UndeliveredCompleted))])
	}
}
