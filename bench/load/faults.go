package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymenttest"
)

// The faults scenario (go run ./bench/load -scenarios faults): the
// example server in production mode (ASSAY_DEV_MODE=false, a payee, an
// MPP secret, -facilitator-url) against a facilitator that fails the way
// real ones do, on SQLite (one instance, with -chain-rpc-url) and on
// PostgreSQL (two instances on one schema, without the chain: resolution
// rests on repeats of /settle alone).
//
// Per backend there is one in-memory chain (paymenttest.NewChain), a fake
// facilitator of that chain (paymenttest.StartFacilitator), the chain's
// JSON-RPC, and a proxy in front of the facilitator (faultfront.go), all
// on loopback. Every payment is made by a fresh wallet, so the chain
// shows which credential moved what. Payments alternate between the
// claims quick tier and a niche pay-per-call, and between x402 v2 and MPP.
//
// Each fault of faultcases.go runs the same phases: two single calls, a
// burst of 20, every credential re-sent while the fault holds, the fault
// healed, every credential re-sent at once, a wait without requests until
// the fault's orders must be closed (the settle timeout plus seven
// resolver periods), and every credential re-sent again. After the last
// fault the servers are restarted gracefully and every credential of the
// run is sent once more. Every answer and the orders after every fault are
// judged (faultcheck.go).

// Timing of the servers under test.
const (
	faultFacilitatorTimeout = time.Second
	faultSettleTimeout      = 2 * time.Second
	faultResolveEvery       = 500 * time.Millisecond
	// serverSettleMargin is what examples/server adds to -settle-timeout
	// for the cashier's own bound on a settlement (newGate), and
	// serverCommitTimeout the cashier's default CommitTimeout
	// (payment.CashierOptions): an order a dead process left settling is
	// taken over by another instance after both (its ResolveAfter).
	serverSettleMargin  = 5 * time.Second
	serverCommitTimeout = 30 * time.Second
	// faultBurst is the size of a burst.
	faultBurst = 20
)

// closeBound is how long after a fault healed its orders must be closed:
// one settle timeout (an attempt under way) plus seven resolver periods
// (the longest back-off, six periods, and one tick).
func closeBound() time.Duration { return faultSettleTimeout + 7*faultResolveEvery }

// takeoverBound is how long after a SIGKILL an order the killed process
// left settling must be closed on a shared database: the cashier's
// ResolveAfter (its settle bound plus the commit timeout), then the close
// bound.
func takeoverBound() time.Duration {
	return faultSettleTimeout + serverSettleMargin + serverCommitTimeout + closeBound()
}

// fcred is one payment of the faults scenario and everything its payer saw.
type fcred struct {
	n      int
	fault  string
	route  string
	req    paidReq
	proto  string
	ch     *challenge
	cred   *credential
	wallet *evm.KeySigner
	nonce  [32]byte
	home   int

	mu     sync.Mutex
	orders []string
	seen   []string // "phase:status" in order
}

func (c *fcred) payer() string { return c.wallet.Address().Hex() }

func (c *fcred) saw(phase string, a answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := "err"
	if a.err == nil {
		s = fmt.Sprint(a.status)
		if a.header.Get(httpgate.HeaderReplay) == "true" {
			s += "r"
		}
		if id := a.header.Get(httpgate.HeaderOrderID); id != "" && !slices.Contains(c.orders, id) {
			c.orders = append(c.orders, id)
		}
	}
	c.seen = append(c.seen, phase+":"+s)
}

// history lists what the payer saw so far.
func (c *fcred) history() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.seen, " ")
}

// faultEnv is one backend's run of the faults scenario.
type faultEnv struct {
	cfg     *Config
	backend string
	chain   *paymenttest.Chain
	fac     *paymenttest.Facilitator
	front   *front
	rpc     *http.Server
	rpcAddr string
	payee   evm.Address
	cl      *cluster
	db      *sql.DB
	ph      string // SQL placeholder
	hc      *http.Client
	st      *stats
	j       *judge
	cat     *catalogue

	mu    sync.Mutex
	creds []*fcred
	// excused are orders a SIGKILL left processing on PostgreSQL (the
	// stale window is ten minutes; the suite does not wait it out).
	excused map[string]bool
	// table is what the payers saw, per fault and phase.
	table map[string]map[string]map[string]int
	// closedAfter is how long the fault's orders took to close after the
	// wait began (absent: not within the bound).
	closedAfter map[string]time.Duration
	// took is how long each fault ran; pendingRefs counts the pending
	// orders whose transaction hash was stored.
	took        map[string]time.Duration
	pendingRefs int
	// excusedFirst counts first answers of 503 to a /verify the server
	// gave up on (a loaded machine) where the fault wanted another.
	excusedFirst int
	fatal        error
}

// faultSummary is what one fault's payers saw.
type faultSummary struct {
	Fault string `json:"fault"`
	// Credits is the number of credentials (payments) the fault made,
	// Settled how many of them are on the chain at the end.
	Credits int `json:"credentials"`
	Settled int `json:"settled"`
	// Seen lists, per phase, the answers (status, replay, 402 reason).
	Seen string `json:"seen"`
}

// runFaults runs the faults scenario on one backend.
func runFaults(ctx context.Context, cfg *Config, backend string) (*report, error) {
	instances := 1
	if backend == backendPostgres {
		instances = 2
	}
	rep := &report{Scenario: "faults", Backend: backend, Instances: instances, Clients: faultBurst, Strict: cfg.Strict}
	e := &faultEnv{cfg: cfg, backend: backend, st: newStats(), j: &judge{}, excused: map[string]bool{},
		table: map[string]map[string]map[string]int{}, closedAfter: map[string]time.Duration{}, took: map[string]time.Duration{}, hc: newHTTPClient(2 * time.Minute)}
	e.hc.Transport.(*http.Transport).MaxIdleConnsPerHost = 128
	start := time.Now()
	if err := e.setUp(ctx, instances); err != nil {
		e.tearDown()
		return nil, err
	}
	defer e.tearDown()
	var summaries []faultSummary
	for _, fc := range faultCases() {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if len(cfg.Faults) > 0 && !slices.Contains(cfg.Faults, fc.name) {
			continue
		}
		t0 := time.Now()
		if err := e.runCase(ctx, fc); err != nil {
			return nil, fmt.Errorf("fault %s: %w", fc.name, err)
		}
		e.took[fc.name] = time.Since(t0)
		fmt.Fprintf(cfg.Log, "  %s on %s: %s\n", fc.name, backend, time.Since(t0).Round(100*time.Millisecond))
		if e.fatal != nil {
			break
		}
	}
	if e.fatal == nil {
		// One graceful restart, then every credential once more.
		if err := e.restart(ctx, false); err != nil {
			return nil, err
		}
		e.resendAll(ctx, "", "after a restart", e.allCreds())
		e.judgeOrders(ctx, "", "after a restart", true)
	}
	elapsed := time.Since(start)
	rep.fill(e.st, elapsed)
	if err := e.cl.stop(cfg.StopTimeout); err != nil {
		e.st.fail("graceful stop", "%v", err)
	}
	logs := e.cl.checkLogs(e.st)
	vs := e.j.violations()
	for _, v := range vs {
		e.st.fail("invariant "+v.Invariant, "%s", v)
	}
	if e.fatal != nil {
		e.st.fail("5xx other than 503", "%v", e.fatal)
	}
	settled := map[string]bool{}
	for _, tx := range e.chain.Transfers() {
		settled[strings.ToLower(tx.Authorization.From.Hex())] = true
	}
	for _, fc := range faultCases() {
		if len(cfg.Faults) > 0 && !slices.Contains(cfg.Faults, fc.name) {
			continue
		}
		s := faultSummary{Fault: fc.name}
		for _, c := range e.allCreds() {
			if c.fault == fc.name {
				s.Credits++
				if settled[strings.ToLower(c.payer())] {
					s.Settled++
				}
			}
		}
		s.Seen = e.describe(fc.name)
		summaries = append(summaries, s)
		closed := "not within the bound"
		if d, ok := e.closedAfter[fc.name]; ok {
			closed = "after " + d.Round(100*time.Millisecond).String()
		}
		rep.addFact("fault "+fc.name, "%s; %d credentials, %d settled on the chain, orders closed %s; seen: %s",
			e.took[fc.name].Round(100*time.Millisecond), s.Credits, s.Settled, closed, s.Seen)
	}
	counts := e.j.count()
	var parts []string
	for _, inv := range []string{invUnpaid, invTwice, invOpen, invRecover, invReason, invConcurrent, invContract, inv5xx} {
		parts = append(parts, fmt.Sprintf("%q %d", inv, counts[inv]))
	}
	rep.addFact("violations", "%s", strings.Join(parts, ", "))
	rep.addFact("first answers excused", "%d answered 503 because the server gave up on a slow /verify (the fault not reached)", e.excusedFirst)
	if backend == backendPostgres {
		rep.addFact("orders a SIGKILL left processing", "%d (on PostgreSQL an instance fails them only after the 10-minute stale window, which the suite does not wait out: excused from invariant 3)", len(e.excused))
	}
	rep.addFact("pending transactions stored", "%d orders answered 202 under settlement_pending store the transaction hash", e.pendingRefs)
	rep.addFact("chain", "%d transfers to the payee, %d payers", len(e.chain.Transfers()), len(settled))
	rep.addFact("server logs", "%s", logs)
	rep.Deliveries = len(settled)
	rep.Faults = summaries
	rep.Violations = vs
	rep.finish(e.st)
	return rep, nil
}

// setUp starts the chain, its RPC, the facilitator, the proxy and the
// servers.
func (e *faultEnv) setUp(ctx context.Context, instances int) error {
	var err error
	if e.chain, err = paymenttest.NewChain(nil); err != nil {
		return err
	}
	if e.fac, err = paymenttest.StartFacilitator(&paymenttest.FacilitatorOptions{Chain: e.chain}); err != nil {
		return err
	}
	if e.front, err = startFront(e.fac.URL); err != nil {
		return err
	}
	// The server's timeout runs from before the call reaches the proxy:
	// on a loaded machine, half of it is already suspect.
	e.front.mu.Lock()
	e.front.slowAfter = faultFacilitatorTimeout / 2
	e.front.mu.Unlock()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	e.rpcAddr = ln.Addr().String()
	e.rpc = &http.Server{Handler: e.chain.RPC(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = e.rpc.Serve(ln) }()
	e.payee, _ = evm.ParseAddress(paymenttest.DevPayee)
	env := map[string]string{
		"ASSAY_LOG_LEVEL":           "info",
		"ASSAY_DEV_MODE":            "false",
		"ASSAY_FACILITATOR_URL":     e.front.URL(),
		"ASSAY_PAYEE_ADDRESS":       paymenttest.DevPayee,
		"ASSAY_FACILITATOR_TIMEOUT": faultFacilitatorTimeout.String(),
		"ASSAY_SETTLE_TIMEOUT":      faultSettleTimeout.String(),
		"ASSAY_RESOLVE_EVERY":       faultResolveEvery.String(),
		"ASSAY_MPP_REALM":           "assay.faults",
	}
	if e.backend == backendSQLite {
		env["ASSAY_CHAIN_RPC_URL"] = "http://" + e.rpcAddr
	}
	if e.cl, err = newCluster(ctx, e.cfg, "faults", e.backend, instances, env); err != nil {
		return err
	}
	if err := e.cl.start(ctx, e.cfg.StartTimeout); err != nil {
		return err
	}
	switch e.backend {
	case backendSQLite:
		e.db, err = sql.Open("sqlite", "file:"+filepath.ToSlash(e.cl.dsn)+"?_pragma=query_only(1)&_pragma=busy_timeout(10000)")
		e.ph = "?"
	default:
		e.db, err = sql.Open("pgx", e.cl.dsn)
		e.ph = "$1"
	}
	if err != nil {
		return err
	}
	e.db.SetMaxOpenConns(4)
	e.cat, err = loadCatalogue(ctx, e.hc, e.cl.procs[0].base())
	return err
}

func (e *faultEnv) tearDown() {
	if e.db != nil {
		_ = e.db.Close()
	}
	if e.cl != nil {
		if err := e.cl.close(e.cfg.Keep); err != nil {
			fmt.Fprintln(e.cfg.Log, "cleanup:", err)
		}
	}
	if e.front != nil {
		e.front.close()
	}
	if e.fac != nil {
		e.fac.Close()
	}
	if e.rpc != nil {
		_ = e.rpc.Close()
	}
}

// secrets are the addresses no answer may carry.
func (e *faultEnv) secrets() []string {
	return []string{e.front.addr, strings.TrimPrefix(e.fac.URL, "http://"), e.rpcAddr}
}

// base returns the URL of instance i (modulo the instances).
func (e *faultEnv) base(i int) string {
	return e.cl.procs[i%len(e.cl.procs)].base()
}

func (e *faultEnv) allCreds() []*fcred {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.creds)
}

// record notes what a payer saw, for the per-fault table.
func (e *faultEnv) record(fault, phase string, a answer) {
	s := "no answer"
	if a.err == nil {
		s = fmt.Sprint(a.status)
		if a.header.Get(httpgate.HeaderReplay) == "true" {
			s += " replay"
		}
		if a.status == http.StatusPaymentRequired {
			s += " " + reasonOf(a)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.table[fault] == nil {
		e.table[fault] = map[string]map[string]int{}
	}
	if e.table[fault][phase] == nil {
		e.table[fault][phase] = map[string]int{}
	}
	e.table[fault][phase][s]++
}

// phaseOrder is the order phases are listed in.
var phaseOrder = []string{"unpaid", "single", "burst", "during", "during, after a restart", "after a SIGKILL", "concurrent",
	"healed", "closed", "after a restart"}

// describe renders what the payers of a fault saw, phase by phase.
func (e *faultEnv) describe(fault string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var parts []string
	for _, ph := range phaseOrder {
		m := e.table[fault][ph]
		if len(m) == 0 {
			continue
		}
		var ss []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			ss = append(ss, fmt.Sprintf("%s ×%d", k, m[k]))
		}
		parts = append(parts, ph+": "+strings.Join(ss, ", "))
	}
	return strings.Join(parts, "; ")
}

// newCred makes a fresh wallet, asks route n's challenge and signs it
// (route and protocol alternate with n).
func (e *faultEnv) newCred(ctx context.Context, fault string, n int) (*fcred, error) {
	c, err := e.prepareCred(ctx, fault, n)
	if err != nil {
		return nil, err
	}
	return c, e.signCred(ctx, c)
}

// prepareCred makes a fresh wallet and asks route n's challenge.
func (e *faultEnv) prepareCred(ctx context.Context, fault string, n int) (*fcred, error) {
	w, err := evm.GenerateKeySigner()
	if err != nil {
		return nil, err
	}
	c := &fcred{n: n, fault: fault, wallet: w, home: n, proto: protoX402V2}
	if n%2 == 0 {
		c.route = "claims quick"
		c.req = paidReq{class: "claims quick", method: http.MethodPost, path: "/v1/claims/verify/quick",
			body: []byte(fmt.Sprintf(`{"claim":%q}`, claimTexts[n%len(claimTexts)]))}
	} else {
		c.route = "niche pay-per-call"
		c.req = paidReq{class: "niche pay-per-call", method: http.MethodGet, path: "/v1/niches/" + e.cat.ids[n%len(e.cat.ids)] + "/pay-per-call"}
	}
	if (n/2)%2 == 1 {
		c.proto = protoMPP
	}
	a := do(ctx, e.hc, e.st, "challenge", e.base(c.home), c.req.method, c.req.path, c.req.body, nil)
	if a.err != nil {
		return nil, a.err
	}
	if a.status != http.StatusPaymentRequired {
		return nil, fmt.Errorf("%s %s unpaid: %d %s", c.req.method, c.req.path, a.status, snippet(a.body))
	}
	if c.ch, err = parseChallenge(a.header, a.body); err != nil {
		return nil, err
	}
	return c, nil
}

// signCred signs c's challenge now (an x402 authorization is valid from
// its signing).
func (e *faultEnv) signCred(ctx context.Context, c *fcred) error {
	var err error
	if c.cred, err = c.ch.pay(ctx, c.wallet, c.proto, time.Now()); err != nil {
		return err
	}
	_, nonce, _ := strings.Cut(c.cred.Nonce, "/")
	nb, err := hexBytes(nonce)
	if err != nil || len(nb) != 32 {
		return fmt.Errorf("credential nonce %q: %v", nonce, err)
	}
	c.nonce = [32]byte(nb)
	e.mu.Lock()
	e.creds = append(e.creds, c)
	e.mu.Unlock()
	return nil
}

func hexBytes(s string) ([]byte, error) {
	return hex.DecodeString(strings.TrimPrefix(strings.ToLower(s), "0x"))
}

// paid reports whether the chain shows c's payment.
func (e *faultEnv) paid(c *fcred) bool { return e.chain.Used(c.wallet.Address(), c.nonce) != "" }

// send sends c's credential to instance i and judges the answer.
func (e *faultEnv) send(ctx context.Context, c *fcred, phase string, i int, concurrent bool) answer {
	before := e.paid(c)
	h := http.Header{}
	h.Set(c.cred.Header, c.cred.Value)
	a := doFault(ctx, e.hc, e.st, c.route+" ("+phase+")", e.base(i), c.req.method, c.req.path, c.req.body, h)
	after := e.paid(c)
	c.saw(phase, a)
	e.record(c.fault, phase, a)
	vs := judgeAnswer(a, answerFacts{PaidBefore: before, PaidAfter: after, Concurrent: concurrent, Secrets: e.secrets()})
	e.blame(c, phase, a, vs)
	if a.err == nil && a.status >= 500 && a.status != http.StatusServiceUnavailable {
		inst := e.cl.procs[i%len(e.cl.procs)]
		e.mu.Lock()
		if e.fatal == nil {
			e.fatal = fmt.Errorf("%s %s answered %d to %s %s (%s); last log lines of %s:\n%s", c.fault, phase, a.status,
				c.req.method, c.req.path, snippet(a.body), inst.name, tail(inst.logPath, 30))
		}
		e.mu.Unlock()
	}
	if a.err == nil && a.status != http.StatusOK {
		if id, tok := a.header.Get(httpgate.HeaderOrderID), a.header.Get(httpgate.HeaderOrderToken); id != "" && tok != "" {
			e.probeReads(ctx, c, phase, i, id, tok)
		}
	}
	return a
}

// blame adds the context of c to violations.
func (e *faultEnv) blame(c *fcred, phase string, a answer, vs []violation) {
	for k := range vs {
		vs[k].Fault, vs[k].Backend, vs[k].Phase = c.fault, e.backend, phase
		vs[k].Route, vs[k].Protocol, vs[k].Payer = c.route, c.cred.Protocol, c.payer()
		if vs[k].Order == "" && a.header != nil {
			vs[k].Order = a.header.Get(httpgate.HeaderOrderID)
		}
	}
	e.j.add(vs...)
}

// probeReads tries to read an unfinished order's paid result with its
// token: GET /v1/orders/{id}/result and, for a verification, the
// verification read. A 200 is allowed only for a completed order.
func (e *faultEnv) probeReads(ctx context.Context, c *fcred, phase string, i int, id, token string) {
	h := http.Header{}
	h.Set(httpgate.HeaderOrderToken, token)
	paths := []string{"/v1/orders/" + id + "/result"}
	if o, ok, err := readOrder(ctx, e.db, id, e.ph); err == nil && ok && o.ResultKind != "" && o.ResultID != "" && c.route == "claims quick" {
		paths = append(paths, "/v1/claims/verifications/"+o.ResultID)
	}
	for k, p := range paths {
		class := "read: order result, with the token"
		if k > 0 {
			class = "read: verification, with the token"
		}
		a := doFault(ctx, e.hc, e.st, class, e.base(i), http.MethodGet, p, nil, h)
		if a.err != nil || a.status != http.StatusOK {
			if a.err == nil && a.status >= 500 && a.status != http.StatusServiceUnavailable {
				e.blame(c, phase, a, []violation{{Invariant: inv5xx, Order: id, Seen: fmt.Sprintf("GET %s: %d %s", p, a.status, snippet(a.body))}})
			}
			continue
		}
		o, ok, err := readOrder(ctx, e.db, id, e.ph)
		if err != nil || !ok || o.Status != "completed" || !e.paid(c) {
			e.blame(c, phase, a, []violation{{Invariant: invUnpaid, Order: id,
				Seen: fmt.Sprintf("GET %s with the order token: 200 (%d bytes) while the order is %q (read error %v), payment on the chain %t", p, len(a.body), o.Status, err, e.paid(c))}})
		}
	}
}

// doFault sends one request and records it in st; unlike do, a 5xx is
// not a failure by itself (the judge decides).
func doFault(ctx context.Context, hc *http.Client, st *stats, class, base, method, path string, body []byte, hdr http.Header) answer {
	s := &stats{classes: map[string]*classStats{}, failures: map[string]*failure{}, defects: map[string]*failure{}}
	a := do(ctx, hc, s, class, base, method, path, body, hdr)
	if a.err != nil {
		st.netErr(class)
	} else {
		st.observe(class, a.status, a.dur)
	}
	return a
}

// sendAll sends every credential of cs at once, each to its instance
// shifted by shift.
func (e *faultEnv) sendAll(ctx context.Context, cs []*fcred, phase string, shift int) []answer {
	out := make([]answer, len(cs))
	var g errgroup.Group
	for k, c := range cs {
		g.Go(func() error {
			out[k] = e.send(ctx, c, phase, c.home+shift, false)
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// resendAll re-sends credentials at once and checks invariant 4 where
// closed is set (phase after the resolver's bound): a payer whose
// payment is on the chain must get the stored answer.
func (e *faultEnv) resendAll(ctx context.Context, fault, phase string, cs []*fcred) {
	type pre struct{ paid bool }
	pres := make([]pre, len(cs))
	for k, c := range cs {
		pres[k] = pre{paid: e.paid(c)}
	}
	as := e.sendAll(ctx, cs, phase, 1)
	if phase != "closed" && phase != "after a restart" {
		return
	}
	for k, a := range as {
		c := cs[k]
		if !pres[k].paid || e.excusedCred(c) {
			continue
		}
		if a.err != nil || a.status != http.StatusOK || a.header.Get(httpgate.HeaderReplay) != "true" || a.header.Get(httpgate.HeaderReceiptID) == "" {
			e.blame(c, phase, a, []violation{{Invariant: invRecover,
				Seen: fmt.Sprintf("paid on the chain, re-sent after the resolver's bound: %s (answers so far: %s)", describeAnswer(a), c.history())}})
		}
	}
}

// excusedCred reports whether one of c's orders was left processing by a
// SIGKILL on PostgreSQL.
func (e *faultEnv) excusedCred(c *fcred) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range c.orders {
		if e.excused[id] {
			return true
		}
	}
	return false
}

func describeAnswer(a answer) string {
	if a.err != nil {
		return "no answer: " + a.err.Error()
	}
	return fmt.Sprintf("%d replay=%q receipt=%q %s", a.status, a.header.Get(httpgate.HeaderReplay), a.header.Get(httpgate.HeaderReceiptID), snippet(a.body))
}

// judgeOrders reads the orders and judges them against the chain.
func (e *faultEnv) judgeOrders(ctx context.Context, fault, phase string, closed bool) {
	orders, err := readOrders(ctx, e.db)
	if err != nil {
		e.st.fail("reading the orders", "%v", err)
		return
	}
	vs := judgeOrders(orders, e.chainView(), closed, func(o orderRow) bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.excused[o.ID]
	})
	byKey := map[string]*fcred{}
	for _, c := range e.allCreds() {
		byKey[strings.ToLower(c.payer())] = c
	}
	for k := range vs {
		vs[k].Backend, vs[k].Phase = e.backend, phase
		if c := byKey[strings.ToLower(vs[k].Payer)]; c != nil {
			vs[k].Fault, vs[k].Route, vs[k].Protocol = c.fault, c.route, c.cred.Protocol
		} else {
			vs[k].Fault = fault
		}
	}
	e.j.add(vs...)
}

func (e *faultEnv) chainView() chainView {
	return chainView{Transfers: e.chain.Transfers(), Tx: e.chain.Tx, Network: e.chain.Network(), Payee: e.payee}
}

// openOrders returns the orders of cs that are processing or settling.
func (e *faultEnv) openOrders(ctx context.Context, cs []*fcred) ([]orderRow, error) {
	orders, err := readOrders(ctx, e.db)
	if err != nil {
		return nil, err
	}
	mine := map[string]bool{}
	for _, c := range cs {
		mine[c.cred.OrderKey] = true
	}
	var open []orderRow
	for _, o := range orders {
		if (o.Status == "processing" || o.Status == "settling") && mine[o.ReservationKey] && !e.excused[o.ID] {
			open = append(open, o)
		}
	}
	return open, nil
}

// waitClosed waits, without a request to the servers, until no order of
// cs is open or bound has passed since from, and notes how long it took.
func (e *faultEnv) waitClosed(ctx context.Context, fault string, cs []*fcred, from time.Time, bound time.Duration) {
	deadline := from.Add(bound)
	for {
		e.mu.Lock()
		open, err := e.openOrders(ctx, cs)
		if err == nil && len(open) == 0 {
			e.closedAfter[fault] = time.Since(from)
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		if time.Now().After(deadline) || ctx.Err() != nil {
			return // judged by judgeOrders(closed)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// restart stops every instance (SIGKILL when kill, else gracefully) and
// starts them again on the same data and ports.
func (e *faultEnv) restart(ctx context.Context, kill bool) error {
	if kill {
		for _, p := range e.cl.procs {
			if err := p.kill(); err != nil {
				return err
			}
		}
	} else if err := e.cl.stop(e.cfg.StopTimeout); err != nil {
		e.st.fail("graceful stop", "%v", err)
	}
	return e.cl.start(ctx, e.cfg.StartTimeout)
}

// setServerEnv sets an environment variable of every instance, from
// its next start.
func (e *faultEnv) setServerEnv(k, v string) {
	for _, p := range e.cl.procs {
		p.mu.Lock()
		env := slices.DeleteFunc(slices.Clone(p.env), func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
		p.env = append(env, k+"="+v)
		p.mu.Unlock()
	}
}

// healAll heals the facilitator and the proxy.
func (e *faultEnv) healAll() error {
	e.fac.SetNetworks(nil)
	return errors.Join(e.fac.Heal(), e.front.heal())
}

// adminOpen reads GET /v1/admin/orders/open of instance i.
func (e *faultEnv) adminOpen(ctx context.Context, i int) (map[string][]string, error) {
	h := http.Header{}
	h.Set("X-Admin-Key", e.cl.adminKey)
	a := doFault(ctx, e.hc, e.st, "admin: open orders", e.base(i), http.MethodGet, "/v1/admin/orders/open", nil, h)
	if a.err != nil {
		return nil, a.err
	}
	if a.status != http.StatusOK {
		return nil, fmt.Errorf("admin open orders: %d %s", a.status, snippet(a.body))
	}
	var v struct {
		Orders []struct {
			OrderID        string   `json:"orderId"`
			SettlementRefs []string `json:"settlementRefs"`
		} `json:"orders"`
	}
	if err := json.Unmarshal(a.body, &v); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, o := range v.Orders {
		out[o.OrderID] = o.SettlementRefs
	}
	return out, nil
}

// readyz returns the status of /readyz on instance i.
func (e *faultEnv) readyz(ctx context.Context, i int) int {
	a := doFault(ctx, e.hc, e.st, "readyz", e.base(i), http.MethodGet, "/readyz", nil, nil)
	if a.err != nil {
		return 0
	}
	return a.status
}
