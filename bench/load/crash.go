package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/paymentstore"
)

// The crash scenario kills the server with SIGKILL during paid load and
// restarts it on the same data and port, several times.
//
// After each kill, before the restart, it opens the SQLite database
// itself: PRAGMA integrity_check must pass, and the orders left processing
// or settling are listed. The server fails orders left processing at
// start-up only when they are older than the cashier's StaleAfter (10
// minutes, not configurable in the example server), because on a shared
// PostgreSQL database a younger one may belong to a live instance. A
// restart seconds after a kill would therefore leave them processing (and
// their credentials reserved) for ten minutes. With -crash-age (the
// default) the scenario emulates a server whose stale window has passed
// (or is shorter than its restart, the fix README.md suggests): it moves
// the updated_at of the orders left processing back by StaleAfter plus a
// minute, and nothing else, so that the server's own start-up
// reconciliation handles them; with -crash-age=false it observes the server
// as it is. See README.md.
//
// After the restart every order left processing must be failed as
// "interrupted", without settlement reference or receipt (admin order
// lookup), and every request a client had in flight at the kill is sent
// again with its credential, without Idempotency-Key, twice. The
// credential is the purchase: the first retry must get the call's answer —
// the stored answer of an order the kill left completed or settling
// (recovered: X-Agentic-Idempotent-Replay, a fresh order token that reads
// the order), or a fresh run when the kill released the payment (served) —
// and the second the same order again with another fresh token (the first
// one then stops working). No in-flight request may be refused, every
// completed order must end up received by its payer, no payment settled
// twice and no order left processing or settling.

// staleAfter is the cashier's default StaleAfter, which the example server
// uses.
const staleAfter = 10 * time.Minute

// upSignal tells clients whether the server is up.
type upSignal struct {
	mu sync.Mutex
	ch chan struct{} // closed while the server is up
}

func newUpSignal() *upSignal {
	ch := make(chan struct{})
	close(ch)
	return &upSignal{ch: ch}
}

func (u *upSignal) down() {
	u.mu.Lock()
	defer u.mu.Unlock()
	select {
	case <-u.ch:
		u.ch = make(chan struct{})
	default:
	}
}

func (u *upSignal) up() {
	u.mu.Lock()
	defer u.mu.Unlock()
	select {
	case <-u.ch:
	default:
		close(u.ch)
	}
}

func (u *upSignal) wait(ctx context.Context) bool {
	u.mu.Lock()
	ch := u.ch
	u.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// outcome is what became of a credential in flight at a kill when it was
// sent again after the restart.
type outcome string

const (
	outServed    outcome = "served after the restart (payment released by the kill)"
	outRecovered outcome = "recovered (the charged order's answer, fresh token)"
	outExpired   outcome = "expired while the server was down (refused with payment-expired, nothing charged)"
	outRefused   outcome = "refused"
)

// crashState is shared by the clients and the controller.
type crashState struct {
	up       *upSignal
	mu       sync.Mutex
	outcomes map[string]outcome // the order's reservation key -> outcome
	counts   map[outcome]int
	reasons  map[string]int // refusals after a restart by status and detail
	inFlight atomic.Int64   // credentials in flight at a kill
	waits    atomic.Int64   // requests that found the server down
	tokensOK atomic.Int64   // retried purchases whose fresh token reads the order (and the replaced one no longer)
}

func (s *crashState) record(key string, o outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes[key] = o
	s.counts[o]++
}

// attempt is a paid request whose answer was lost.
type attempt struct {
	req  paidReq
	cred *credential
}

type crashClient struct {
	*payer
	rng     *rand.Rand
	base    string
	cat     *catalogue
	cs      *crashState
	pending []*attempt
}

// nextRequest returns a random paid request, without Idempotency-Key: a
// request whose answer is lost is recovered by its credential alone.
func (c *crashClient) nextRequest() paidReq {
	var r paidReq
	switch n := c.rng.IntN(10); {
	case n < 6:
		t := tiers[n%len(tiers)]
		r = paidReq{class: "claims." + t.name + " (paid)", method: http.MethodPost, path: t.path, body: claimBody(c.rng)}
	case n < 8:
		r = paidReq{class: "niche.pay-per-call (paid)", method: http.MethodGet, path: "/v1/niches/" + pick(c.rng, c.cat.ids) + "/pay-per-call"}
	default:
		q := url.Values{}
		q.Set("q", pick(c.rng, c.cat.words))
		r = paidReq{class: "niche.search.pay-per-call (paid)", method: http.MethodGet, path: "/v1/search/pay-per-call?" + q.Encode()}
	}
	return r
}

// step makes one paid call; a lost answer keeps the credential pending.
func (c *crashClient) step(ctx context.Context) {
	r := c.nextRequest()
	ch, ok := c.challenge(ctx, c.base, r)
	if !ok {
		c.cs.waits.Add(1)
		c.cs.up.wait(ctx)
		return
	}
	cred, ok := c.sign(ctx, ch)
	if !ok {
		return
	}
	a := c.send(ctx, c.base, r, cred)
	switch {
	case a.err != nil:
		if ctx.Err() != nil {
			return
		}
		c.cs.inFlight.Add(1)
		c.pending = append(c.pending, &attempt{req: r, cred: cred})
		c.cs.up.wait(ctx)
	case a.status == http.StatusOK:
	case c.sharedRefusal(cred, a):
	default:
		c.st.fail("unexpected status", "paid %s %s (%s) -> %d: %s", r.method, r.path, cred.Protocol, a.status, snippet(a.body))
	}
}

// resend sends every pending credential again, twice, and classifies what
// happens. It returns false when the server went down again.
func (c *crashClient) resend(ctx context.Context) bool {
	for len(c.pending) > 0 {
		at := c.pending[0]
		r := at.req
		r.class = "re-send after restart"
		a1, ok := c.resendOnce(ctx, r, at.cred)
		if !ok {
			return false
		}
		a2, ok := c.resendOnce(ctx, r, at.cred)
		if !ok {
			return false
		}
		c.pending = c.pending[1:]
		replay1, replay2 := a1.header.Get(httpgate.HeaderReplay) == "true", a2.header.Get(httpgate.HeaderReplay) == "true"
		id1, id2 := a1.header.Get(httpgate.HeaderOrderID), a2.header.Get(httpgate.HeaderOrderID)
		switch {
		case a1.status == http.StatusOK:
			oc := outServed
			if replay1 {
				oc = outRecovered
			}
			// The second copy is the same purchase again, with a token
			// that replaces the first one.
			if a2.status != http.StatusOK || !replay2 || id1 != id2 || sha256Hex(a1.body) != sha256Hex(a2.body) {
				c.st.fail("inconsistent after restart", "%s: %s (%s), then %d replay=%t order %s (%s)", at.cred.Key, oc, id1, a2.status, replay2, id2, snippet(a2.body))
			} else {
				c.checkTokens(ctx, id1, a1.header.Get(httpgate.HeaderOrderToken), a2.header.Get(httpgate.HeaderOrderToken))
			}
			c.cs.record(at.cred.OrderKey, oc)
		case expiredRefusal(a1) && expiredRefusal(a2):
			// The restart outlasted the authorization's validity (a loaded
			// machine): the server rightly asks for a new signature, and
			// the database checks prove nothing was charged.
			c.cs.record(at.cred.OrderKey, outExpired)
		default:
			c.st.fail("in-flight request refused after restart", "%s (%s %s): %d %s, then %d", at.cred.Key, r.method, r.path, a1.status, snippet(a1.body), a2.status)
			c.cs.record(at.cred.OrderKey, outRefused)
			c.cs.mu.Lock()
			c.cs.reasons[fmt.Sprintf("%d %s", a1.status, detailOf(a1.body))]++
			c.cs.mu.Unlock()
		}
	}
	return true
}

// resendOnce sends a request with its credential again until it has an
// answer: a 409 (its first request still in flight) or a 202 (its order
// settling) is asked again shortly. ok is false when the server is down.
func (c *crashClient) resendOnce(ctx context.Context, r paidReq, cred *credential) (answer, bool) {
	for range 200 {
		a := c.send(ctx, c.base, r, cred)
		if a.err != nil {
			return a, false
		}
		if a.status != http.StatusConflict && a.status != http.StatusAccepted {
			return a, true
		}
		select {
		case <-ctx.Done():
			return a, false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return c.send(ctx, c.base, r, cred), true
}

// checkTokens checks the order tokens of two answers of one purchase: the
// later one reads the completed order, the earlier one no longer does.
func (c *crashClient) checkTokens(ctx context.Context, id, earlier, later string) {
	lookup := func(token string) int {
		h := http.Header{}
		h.Set(httpgate.HeaderOrderToken, token)
		// A kill can cut a lookup off: ask again once the server is back.
		a := do(ctx, c.hc, c.st, "order lookup after a retry", c.base, http.MethodGet, "/v1/orders/"+id, nil, h)
		for try := 0; a.err != nil && try < 10 && c.cs.up.wait(ctx); try++ {
			time.Sleep(200 * time.Millisecond) // the controller may not have marked the kill yet
			a = do(ctx, c.hc, c.st, "order lookup after a retry", c.base, http.MethodGet, "/v1/orders/"+id, nil, h)
		}
		if a.err != nil {
			return 0
		}
		if a.status == http.StatusOK && !strings.Contains(string(a.body), `"status":"completed"`) {
			c.st.fail("order after a retry", "order %s is not completed: %s", id, snippet(a.body))
		}
		return a.status
	}
	switch {
	case earlier == "" || later == "" || earlier == later:
		c.st.fail("order token after a retry", "order %s: tokens %q then %q, want two fresh tokens", id, earlier, later)
	case lookup(later) != http.StatusOK:
		c.st.fail("order token after a retry", "order %s: the fresh token does not read the order", id)
	case lookup(earlier) != http.StatusNotFound:
		c.st.fail("order token after a retry", "order %s: the replaced token still reads the order", id)
	default:
		c.cs.tokensOK.Add(1)
	}
}

// run is the client loop.
func (c *crashClient) run(ctx context.Context, stop <-chan struct{}) {
	for ctx.Err() == nil && !closed(stop) {
		if len(c.pending) > 0 {
			if !c.cs.up.wait(ctx) {
				return
			}
			if !c.resend(ctx) {
				c.cs.up.wait(ctx)
			}
			continue
		}
		c.step(ctx)
	}
	// Settle what was in flight at the last kill (the server is up again
	// by then; a minute bounds a server that does not come back).
	flushUntil := time.Now().Add(time.Minute)
	for len(c.pending) > 0 && ctx.Err() == nil && time.Now().Before(flushUntil) {
		if !c.cs.up.wait(ctx) || c.resend(ctx) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(c.pending) > 0 {
		c.st.fail("in-flight credential never re-sent", "%d credentials in flight at the last kill could not be sent again", len(c.pending))
	}
}

// afterKill is what the database held right after a kill.
type afterKill struct {
	processing []payment.Order
	settling   []payment.Order
	aged       int64
}

// inspectAfterKill opens the database of the killed server: integrity
// check, orders left in flight, and (age) the simulated passage of the
// stale window for the processing ones.
func inspectAfterKill(ctx context.Context, dsn string, age bool) (*afterKill, error) {
	db, err := anydb.Open(ctx, dsn, nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.CheckIntegrity(ctx); err != nil {
		return nil, err
	}
	ak := &afterKill{}
	if ak.processing, err = paymentstore.New(db).OrdersInState(ctx, payment.OrderProcessing, farFuture, 100_000); err != nil {
		return nil, err
	}
	if ak.settling, err = paymentstore.New(db).OrdersInState(ctx, payment.OrderSettling, farFuture, 100_000); err != nil {
		return nil, err
	}
	if age && len(ak.processing) > 0 {
		w, _ := db.SQL()
		res, err := w.ExecContext(ctx, "UPDATE payment_orders SET updated_at = updated_at - ? WHERE status = ?",
			(staleAfter + time.Minute).Microseconds(), payment.OrderProcessing)
		if err != nil {
			return nil, fmt.Errorf("age processing orders: %w", err)
		}
		ak.aged, _ = res.RowsAffected()
	}
	return ak, nil
}

// adminOrder is the admin view of an order.
type adminOrder struct {
	orderView
	ReservationKey string `json:"reservationKey"`
}

func getAdminOrder(ctx context.Context, hc *http.Client, st *stats, base, adminKey, id string) (*adminOrder, error) {
	h := http.Header{}
	h.Set("X-Admin-Key", adminKey)
	a := do(ctx, hc, st, "admin order lookup", base, http.MethodGet, "/v1/admin/orders/"+id, nil, h)
	if a.err != nil {
		return nil, a.err
	}
	if a.status != http.StatusOK {
		return nil, fmt.Errorf("admin order %s: %d %s", id, a.status, snippet(a.body))
	}
	var o adminOrder
	if err := json.Unmarshal(a.body, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

var reconciledRE = regexp.MustCompile(`"Interrupted":(\d+)`)

// startupReconciled returns the Interrupted count of the last "payments
// reconciled at start" line in the log, or -1.
func startupReconciled(logPath string) int {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return -1
	}
	n := -1
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, "payments reconciled at start") {
			continue
		}
		if m := reconciledRE.FindStringSubmatch(line); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
	}
	return n
}

// runCrash is the crash scenario (SQLite).
func runCrash(ctx context.Context, cfg *Config) (*report, error) {
	rep := &report{Scenario: "crash", Backend: backendSQLite, Instances: 1, Clients: cfg.Clients, Strict: cfg.Strict}
	st := newStats()
	cl, err := newCluster(ctx, cfg, "crash", backendSQLite, 1, map[string]string{"ASSAY_LOG_LEVEL": "info"})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := cl.close(cfg.Keep); err != nil {
			fmt.Fprintln(cfg.Log, "cleanup:", err)
		}
	}()
	srv := cl.procs[0]
	if err := cl.start(ctx, cfg.StartTimeout); err != nil {
		return nil, err
	}
	setupHC := newHTTPClient(time.Minute)
	base := srv.base()
	cat, err := loadCatalogue(ctx, setupHC, base)
	if err != nil {
		return nil, err
	}
	led := newLedger(st)
	cs := &crashState{up: newUpSignal(), outcomes: map[string]outcome{}, counts: map[outcome]int{}, reasons: map[string]int{}}
	mctx, stopMem := context.WithCancel(ctx)
	mem := watchMemory(mctx, cl.procs, cfg.RSSEvery)

	start := time.Now()
	deadline := start.Add(cfg.Duration)
	// The clients run until the controller has made every kill and the
	// restarted server has served a while, however slow a restart is (a
	// fixed deadline let a loaded machine end the run before the last
	// kill).
	stop := make(chan struct{})
	// The clients stop at once if the controller fails (a server that does
	// not restart must not leave them waiting).
	cctx, stopClients := context.WithCancel(ctx)
	defer stopClients()
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		wallet, err := evm.GenerateKeySigner()
		if err != nil {
			stopMem()
			return nil, err
		}
		c := &crashClient{
			payer: &payer{hc: newHTTPClient(cfg.RequestTimeout), st: st, led: led, wallet: wallet, proto: i, recover: true},
			rng:   rand.New(rand.NewPCG(cfg.Seed, uint64(1000+i))), base: base, cat: cat, cs: cs,
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(cctx, stop)
		}()
	}

	// The controller: kill, inspect, restart, check the reconciliation.
	var interrupted []payment.Order
	settlingAtKill := map[string]bool{}
	settlingResolved := 0
	var aged int64
	kills := 0
	krng := rand.New(rand.NewPCG(cfg.Seed, 7))
	every := cfg.Duration / time.Duration(cfg.Kills+1)
	var ctrlErr error
	for k := 0; k < cfg.Kills && ctx.Err() == nil; k++ {
		// Kill at a random moment of each interval, not on a beat.
		wait := every/2 + time.Duration(krng.Int64N(int64(every)))
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		cs.up.down()
		if err := srv.kill(); err != nil {
			ctrlErr = err
			break
		}
		kills++
		ak, err := inspectAfterKill(ctx, cl.dsn, cfg.CrashAge)
		if err != nil {
			st.fail("after SIGKILL", "kill %d: %v", kills, err)
			ctrlErr = err
			break
		}
		interrupted = append(interrupted, ak.processing...)
		aged += ak.aged
		var newlySettling []string
		for _, o := range ak.settling {
			if !settlingAtKill[o.ID] {
				settlingAtKill[o.ID] = true
				newlySettling = append(newlySettling, o.ID)
			}
		}
		if err := srv.start(ctx, cfg.StartTimeout); err != nil {
			ctrlErr = err
			break
		}
		// A dev-mode settlement cannot fail: start-up resolves the orders a
		// kill left settling, completed with a signed receipt.
		for _, id := range newlySettling {
			ao, err := getAdminOrder(ctx, setupHC, st, base, cl.adminKey, id)
			switch {
			case err != nil:
				st.fail("settling order lookup", "%v", err)
			case ao.Status == string(payment.OrderSettling):
				st.known("settling order never resolved after a crash", "kill %d: order %s is still settling after the restart", kills, id)
			case ao.Status != string(payment.OrderCompleted) || !hasJSON(ao.Receipt) || ao.SettlementReference == nil:
				st.fail("settling order resolved wrongly", "kill %d: order %s left settling is %s after the restart (receipt %v)", kills, id, ao.Status, hasJSON(ao.Receipt))
			default:
				settlingResolved++
			}
		}
		if n := startupReconciled(srv.logPath); n != len(ak.processing) {
			st.fail("start-up reconciliation", "kill %d: %d orders were left processing, the start-up reconciliation reports %d interrupted", kills, len(ak.processing), n)
		}
		for _, o := range ak.processing {
			ao, err := getAdminOrder(ctx, setupHC, st, base, cl.adminKey, o.ID)
			switch {
			case err != nil:
				st.fail("interrupted order lookup", "%v", err)
			case ao.Status != string(payment.OrderFailed) || !strings.Contains(deref(ao.FailureReason), "interrupted"):
				st.fail("not reconciled at start-up", "kill %d: order %s left processing is %s (%s) after the restart", kills, o.ID, ao.Status, deref(ao.FailureReason))
			case ao.SettlementReference != nil || hasJSON(ao.Receipt) || ao.ReceiptID != nil:
				st.fail("interrupted order settled", "order %s has a settlement or receipt", o.ID)
			}
		}
		cs.up.up()
	}
	// After the last kill the restarted server serves at least a quarter
	// interval, and the run lasts at least its configured duration.
	tail := time.Until(deadline)
	if tail < every/4 {
		tail = every / 4
	}
	select {
	case <-ctx.Done():
	case <-time.After(tail):
	}
	close(stop)
	if ctrlErr != nil {
		stopClients()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cs.up.up()
	rep.fill(st, elapsed)
	stopMem()
	mem.wait()
	// Each process life lasts one kill interval: too short to tell a leak
	// from warm-up, so memory is reported here and judged in load and
	// badinput.
	rep.Memory = mem.rows(cfg.Growth)
	if ctrlErr != nil {
		return nil, ctrlErr
	}

	// Interrupted orders stay failed, and what became of their credentials.
	byOutcome := map[outcome]int{}
	for _, o := range interrupted {
		ao, err := getAdminOrder(ctx, setupHC, st, base, cl.adminKey, o.ID)
		if err != nil {
			st.fail("interrupted order lookup", "%v", err)
			continue
		}
		if ao.Status != string(payment.OrderFailed) {
			st.fail("interrupted order changed", "order %s is %s at the end", o.ID, ao.Status)
		}
		cs.mu.Lock()
		oc, ok := cs.outcomes[o.ReservationKey]
		cs.mu.Unlock()
		if !ok {
			oc = "no client re-sent it"
		}
		byOutcome[oc]++
	}

	verified := auditDeliveries(ctx, setupHC, st, []string{base}, cl.adminKey, led.deliveries(), 8)
	if err := cl.stop(cfg.StopTimeout); err != nil {
		st.fail("graceful stop", "%v", err)
	}
	logs := cl.checkLogs(st)
	dbf, err := checkDatabase(ctx, cl.dsn, led)
	if err != nil {
		st.fail("database check", "%v", err)
	}
	// Every promise holds after the kills too: nothing left processing or
	// settling (start-up resolved what the kills left open), and every
	// completed order was received by its payer (the retries recovered the
	// answers the kills cut off).
	judgeDatabase(st, dbf, true)
	if kills == 0 {
		st.fail("no kill", "the scenario ended before the first kill (duration %s, kills %d)", cfg.Duration, cfg.Kills)
	}

	ds := led.deliveries()
	rep.Deliveries, rep.Kills = len(ds), kills
	cs.mu.Lock()
	counts := fmt.Sprintf("%s %d, %s %d, %s %d, %s %d", outServed, cs.counts[outServed], outRecovered, cs.counts[outRecovered], outExpired, cs.counts[outExpired], outRefused, cs.counts[outRefused])
	rep.InFlight, rep.Recovered, rep.Served, rep.Expired, rep.Refused = int(cs.inFlight.Load()), cs.counts[outRecovered], cs.counts[outServed], cs.counts[outExpired], cs.counts[outRefused]
	var reasons []string
	for _, r := range slices.Sorted(maps.Keys(cs.reasons)) {
		reasons = append(reasons, fmt.Sprintf("%q %d", r, cs.reasons[r]))
	}
	cs.mu.Unlock()
	rep.addFact("kills", "%d SIGKILLs, each followed by an integrity check (ok) and a restart on the same data and port; requests that found the server down: %d", kills, cs.waits.Load())
	rep.addFact("orders left processing at kills", "%d (aged past the stale window before restart: %d; -crash-age=%t), all failed as interrupted at start-up with no settlement or receipt unless reported below; their credentials: %s",
		len(interrupted), aged, cfg.CrashAge, formatOutcomes(byOutcome))
	rep.addFact("orders left settling at kills", "%d, resolved at start-up (completed with a receipt) %d", len(settlingAtKill), settlingResolved)
	rep.addFact("requests in flight at kills", "%d, each sent again twice with its credential (no Idempotency-Key) after the restart: %s", cs.inFlight.Load(), counts)
	rep.addFact("in flight / recovered / served / expired / refused", "%d / %d / %d / %d / %d", rep.InFlight, rep.Recovered, rep.Served, rep.Expired, rep.Refused)
	rep.addFact("order tokens after the retries", "%d purchases: the fresh token reads the completed order, the replaced one no longer does", cs.tokensOK.Load())
	rep.addFact("refusals after a restart", "%s", orNone(strings.Join(reasons, ", ")))
	rep.addFact("paid deliveries", "%d (recovered after a kill by presenting the credential again: %d); credentials signed %d", len(ds), led.recovered, led.signed)
	rep.addFact("double deliveries", "%d (by payment nonce and by order id)", led.doubles)
	rep.addFact("audit", "%d delivered orders looked up, %d receipts verified offline against the JWKS and the received bytes", len(ds), verified)
	rep.addFact("database", "%s", dbf.describe())
	rep.addFact("server logs", "%s", logs)
	rep.finish(st)
	return rep, nil
}

// detailOf returns the detail (or x402 error) of an error body.
func detailOf(b []byte) string {
	var p struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
	}
	_ = json.Unmarshal(b, &p)
	if p.Detail != "" {
		return p.Detail
	}
	return p.Error
}

// hasJSON reports whether a raw member holds a value other than null.
func hasJSON(m json.RawMessage) bool { return len(m) > 0 && string(m) != "null" }

func formatOutcomes(m map[outcome]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	return strings.Join(parts, ", ")
}

// closed reports whether c is closed.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// expiredRefusal reports whether an answer is the 402 that refuses an
// authorization expiring too soon (x402's reason, or MPP's problem type).
func expiredRefusal(a answer) bool {
	return a.status == http.StatusPaymentRequired &&
		(bytes.Contains(a.body, []byte("authorization_valid_before")) || bytes.Contains(a.body, []byte("problems/payment-expired")))
}
