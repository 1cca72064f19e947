package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymenttest"
)

// faultCase is one way the facilitator fails, and what a payer must see
// first while it holds.
type faultCase struct {
	name string
	// start begins the fault.
	start func(e *faultEnv) error
	// arm, when set, is called before each batch of n fresh calls (the
	// outage that starts after a burst's /verify answers).
	arm func(e *faultEnv, n int)
	// first lists the statuses the fault's first answers (single calls
	// and the burst) may have, need one that must be among them, and
	// reason what a 402 must name.
	first  []int
	need   int
	reason string
	// restartDuring restarts the servers (gracefully) while it holds.
	restartDuring bool
	// network: the facilitator stops listing the network; the credentials
	// are signed before (no route offers a challenge while it holds).
	network bool
	// kill: the servers are killed with SIGKILL while /settle hangs.
	kill bool
	// concurrent: copies of one credential sent at once.
	concurrent bool
	// check, when set, runs after the first answers.
	check func(ctx context.Context, e *faultEnv, cs []*fcred, first []answer)
}

// settleFault returns a start function that fails every /settle with ft.
func settleFault(ft paymenttest.Fault) func(*faultEnv) error {
	return func(e *faultEnv) error { e.fac.SetFault("/settle", ft); return nil }
}

func verifyFault(ft paymenttest.Fault) func(*faultEnv) error {
	return func(e *faultEnv) error { e.fac.SetFault("/verify", ft); return nil }
}

// faultCases are the faults, in the order they run.
func faultCases() []faultCase {
	unknown := []int{http.StatusAccepted}
	return []faultCase{
		{name: "verify-500", start: verifyFault(paymenttest.Fault{Kind: paymenttest.FaultStatus}), first: []int{503}, need: 503},
		{name: "verify-hang", start: verifyFault(paymenttest.Fault{Kind: paymenttest.FaultHang}), first: []int{503}, need: 503},
		{name: "verify-refused", start: verifyFault(paymenttest.Fault{Kind: paymenttest.FaultRefuse}), first: []int{402}, need: 402,
			reason: paymenttest.ReasonInsufficientFunds},
		{name: "verify-outage", start: func(e *faultEnv) error { return e.front.setOutage(true) }, first: []int{503}, need: 503},
		{name: "settle-500", start: settleFault(paymenttest.Fault{Kind: paymenttest.FaultStatus}), first: unknown, need: 202, restartDuring: true},
		{name: "settle-hang", start: settleFault(paymenttest.Fault{Kind: paymenttest.FaultHang}), first: unknown, need: 202},
		{name: "settle-refused-funds", start: settleFault(paymenttest.Fault{Kind: paymenttest.FaultRefuse}), first: []int{402}, need: 402,
			reason: paymenttest.ReasonInsufficientFunds},
		{name: "settle-refused-expired", start: settleFault(paymenttest.Fault{Kind: paymenttest.FaultRefuse, Reason: paymenttest.ReasonValidBefore}),
			first: []int{402}, need: 402, reason: "valid_before"},
		{name: "settle-late-success", start: settleFault(paymenttest.Fault{Kind: paymenttest.FaultLateSuccess, Delay: faultSettleTimeout + time.Second}),
			first: unknown, need: 202},
		{name: "settle-reset", start: settleFault(paymenttest.Fault{Kind: paymenttest.FaultReset}), first: unknown, need: 202},
		{name: "settle-pending", start: settleFault(paymenttest.Fault{Kind: paymenttest.FaultPending, Delay: 3 * time.Second}),
			first: unknown, need: 202, check: checkPendingRefs},
		// The outage begins right after the /verify answers: /settle finds
		// the facilitator unreachable (503, the payment held). A /settle
		// sent on a connection the outage cut as it was written is an
		// unknown outcome (202).
		{name: "settle-outage", start: func(*faultEnv) error { return nil },
			arm: func(e *faultEnv, n int) {
				_ = e.front.heal()
				e.front.outageAfterVerify(n, 700*time.Millisecond)
			}, first: []int{503, 202}, need: 503},
		{name: "network-unsupported", network: true, start: func(e *faultEnv) error {
			e.fac.SetNetworks([]string{"eip155:84532"})
			return nil
		}, first: []int{503}, need: 503},
		{name: "kill-settle-hang", kill: true, start: settleFault(paymenttest.Fault{Kind: paymenttest.FaultHang}), first: unknown, need: 202},
		{name: "concurrent-resend", concurrent: true, start: func(e *faultEnv) error {
			e.front.setVerifyDelay(300 * time.Millisecond)
			return nil
		}},
	}
}

// runCase runs one fault through its phases.
func (e *faultEnv) runCase(ctx context.Context, fc faultCase) error {
	if fc.concurrent {
		return e.runConcurrent(ctx, fc)
	}
	total := 2 + faultBurst
	var pre []*fcred
	if fc.network {
		// No route offers a challenge while the fault holds: ask them
		// before, sign when sending.
		for n := range total {
			c, err := e.prepareCred(ctx, fc.name, n)
			if err != nil {
				return err
			}
			pre = append(pre, c)
		}
	}
	next := func(n int) (*fcred, error) {
		if pre != nil {
			return pre[n], e.signCred(ctx, pre[n])
		}
		return e.newCred(ctx, fc.name, n)
	}
	if err := fc.start(e); err != nil {
		return err
	}
	if fc.network {
		e.networkContract(ctx, fc)
	}
	var cs []*fcred
	var first []answer
	// Two single calls.
	for n := range 2 {
		c, err := next(n)
		if err != nil {
			return err
		}
		cs = append(cs, c)
		if fc.arm != nil {
			fc.arm(e, 1)
		}
		first = append(first, e.send(ctx, c, "single", c.home, false))
	}
	// A burst of 20.
	var burst []*fcred
	for n := 2; n < total; n++ {
		c, err := next(n)
		if err != nil {
			return err
		}
		burst = append(burst, c)
	}
	cs = append(cs, burst...)
	if fc.arm != nil {
		fc.arm(e, len(burst))
	}
	var killedAt time.Time
	if fc.kill {
		killedAt = e.killDuringSettle(ctx, burst)
	} else {
		first = append(first, e.sendAll(ctx, burst, "burst", 0)...)
	}
	e.contract(fc, cs, first)
	if fc.check != nil {
		fc.check(ctx, e, cs, first)
	}
	if !fc.kill {
		// Re-sent while the fault holds.
		e.sendAll(ctx, cs, "during", 1)
		if fc.restartDuring {
			if err := e.restart(ctx, false); err != nil {
				return err
			}
			e.sendAll(ctx, cs, "during, after a restart", 0)
		}
	}
	if err := e.healAll(); err != nil {
		return err
	}
	bound := closeBound()
	var killFrom time.Time
	if fc.kill {
		if err := e.cl.start(ctx, e.cfg.StartTimeout); err != nil {
			return err
		}
		if e.backend == backendPostgres {
			// Another instance takes an order a dead one left settling
			// over only after that call's own bound.
			killFrom, bound = killedAt, takeoverBound()
		}
	}
	e.resendAll(ctx, fc.name, "healed", cs)
	if fc.network {
		e.waitReady(ctx, http.StatusOK, 15*time.Second)
	}
	from := time.Now()
	if !killFrom.IsZero() {
		from = killFrom
	}
	e.waitClosed(ctx, fc.name, cs, from, bound)
	e.judgeOrders(ctx, fc.name, "closed", true)
	e.resendAll(ctx, fc.name, "closed", cs)
	return nil
}

// contract checks the first answers against the fault's statuses.
func (e *faultEnv) contract(fc faultCase, cs []*fcred, first []answer) {
	seenNeed := false
	for k, a := range first {
		if k >= len(cs) {
			break
		}
		c := cs[k]
		if a.err != nil {
			continue
		}
		if a.status == fc.need {
			seenNeed = true
		}
		var vs []violation
		if a.status == http.StatusServiceUnavailable && !slices.Contains(fc.first, a.status) &&
			e.front.abandonedOf("/verify", strings.ToLower(c.cred.Nonce)) > 0 {
			// The server gave up on a slow /verify (a loaded machine):
			// 503 is the right answer, and the fault was not reached.
			e.mu.Lock()
			e.excusedFirst++
			e.mu.Unlock()
			continue
		}
		if !slices.Contains(fc.first, a.status) {
			vs = append(vs, violation{Invariant: invContract, Seen: fmt.Sprintf("first answer %d, want one of %v: %s", a.status, fc.first, snippet(a.body))})
		}
		if a.status == http.StatusPaymentRequired && fc.reason != "" && !strings.Contains(reasonOf(a), fc.reason) {
			vs = append(vs, violation{Invariant: invReason, Seen: fmt.Sprintf("402 names %q, want %q", reasonOf(a), fc.reason)})
		}
		e.blame(c, "first", a, vs)
	}
	if fc.need != 0 && !seenNeed && len(first) > 0 {
		e.j.add(violation{Invariant: invContract, Fault: fc.name, Backend: e.backend, Phase: "first",
			Seen: fmt.Sprintf("no first answer was %d", fc.need)})
	}
}

// checkPendingRefs checks that the transaction hash of a
// settlement_pending answer is stored on the order — by the call itself,
// or at the latest by the resolver's first attempt (a /settle that the
// server gave up on before the answer came names no hash) — and that
// the admin route lists it with the open order.
func checkPendingRefs(ctx context.Context, e *faultEnv, cs []*fcred, first []answer) {
	pending := map[string]int{} // order id -> index in cs
	for k, a := range first {
		if a.err == nil && a.status == http.StatusAccepted {
			pending[a.header.Get(httpgate.HeaderOrderID)] = k
		}
	}
	stored := map[string]orderRow{}
	deadline := time.Now().Add(closeBound())
	for len(stored) < len(pending) && time.Now().Before(deadline) {
		for id := range pending {
			if o, ok, err := readOrder(ctx, e.db, id, e.ph); err == nil && ok && (o.SettlementRefs != "" || o.SettlementRef != "") {
				stored[id] = o
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	for id, k := range pending {
		if _, ok := stored[id]; !ok {
			e.blame(cs[k], "first", first[k], []violation{{Invariant: invContract, Order: id,
				Seen: fmt.Sprintf("settlement_pending named a transaction, but the order stores none after %s", closeBound())}})
		}
	}
	// Hashes are only ever added, and an order once closed stays closed:
	// an order that stores one and is open in the admin list must show it.
	listed, err := e.adminOpen(ctx, 0)
	if err != nil {
		e.st.fail("admin open orders", "%v", err)
		return
	}
	for id, k := range pending {
		refs, open := listed[id]
		if _, ok := stored[id]; !ok {
			continue
		}
		if open && len(refs) == 0 {
			e.blame(cs[k], "first", first[k], []violation{{Invariant: invContract, Order: id,
				Seen: "the admin route lists the pending order without its transaction"}})
		}
		if !open {
			if o, ok, err := readOrder(ctx, e.db, id, e.ph); err == nil && ok && (o.Status == "settling" || o.Status == "processing") {
				e.blame(cs[k], "first", first[k], []violation{{Invariant: invContract, Order: id,
					Seen: "the admin route does not list the open pending order"}})
			}
		}
	}
	e.mu.Lock()
	e.pendingRefs += len(stored)
	e.mu.Unlock()
}

// networkContract waits until every instance's /readyz says 503 (the
// facilitator's /supported is cached for up to 30 s) and checks that a
// paid route offers no challenge: 503. A /readyz of 503 may come first
// from a /supported probe that timed out on a loaded machine, which does
// not stop paid routes: each is asked again until it answers 503, within
// the same bound.
func (e *faultEnv) networkContract(ctx context.Context, fc faultCase) {
	const bound = 45 * time.Second
	deadline := time.Now().Add(bound)
	e.waitReady(ctx, http.StatusServiceUnavailable, bound)
	for i := range e.cl.procs {
		var a answer
		for {
			a = doFault(ctx, e.hc, e.st, "unpaid (network unsupported)", e.base(i), http.MethodPost, "/v1/claims/verify/quick", []byte(`{"claim":"Canberra is the capital of Australia."}`), nil)
			if a.status == http.StatusServiceUnavailable || time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		e.record(fc.name, "unpaid", a)
		if a.err != nil || a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" {
			e.j.add(violation{Invariant: invContract, Fault: fc.name, Backend: e.backend, Phase: "first",
				Seen: fmt.Sprintf("an unpaid request while the facilitator lacks the network: %s, want 503 with Retry-After", describeAnswer(a))})
		}
	}
}

// waitReady polls every instance's /readyz until it answers want, at most
// bound; an instance that does not is a contract violation.
func (e *faultEnv) waitReady(ctx context.Context, want int, bound time.Duration) {
	deadline := time.Now().Add(bound)
	for i := range e.cl.procs {
		for {
			got := e.readyz(ctx, i)
			if got == want {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				e.j.add(violation{Invariant: invContract, Fault: "network-unsupported", Backend: e.backend, Phase: "readyz",
					Seen: fmt.Sprintf("%s: /readyz %d after %s, want %d", e.cl.procs[i].name, got, bound, want)})
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// killDuringSettle sends the burst, waits until its /settle calls hang
// at the facilitator and kills every instance with SIGKILL. On PostgreSQL
// the orders the kill left processing (their /settle not reached) wait
// for the ten-minute stale window: they are excused from invariant 3.
func (e *faultEnv) killDuringSettle(ctx context.Context, burst []*fcred) time.Time {
	var wg sync.WaitGroup
	for _, c := range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.send(ctx, c, "after a SIGKILL", c.home, false)
		}()
	}
	var firstSettle time.Time
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		n := 0
		for _, c := range burst {
			if e.front.callsOf("/settle", strings.ToLower(c.cred.Nonce)) > 0 {
				n++
			}
		}
		if n > 0 && firstSettle.IsZero() {
			firstSettle = time.Now()
		}
		// Every /settle hangs until the server gives up (the settle
		// timeout): kill before the first one ends.
		if n == len(burst) || (!firstSettle.IsZero() && time.Since(firstSettle) > faultSettleTimeout*3/4) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, p := range e.cl.procs {
		_ = p.kill()
	}
	killedAt := time.Now()
	wg.Wait()
	if e.backend == backendPostgres {
		orders, err := readOrders(ctx, e.db)
		if err == nil {
			e.mu.Lock()
			for _, o := range orders {
				if o.Status == "processing" {
					e.excused[o.ID] = true
				}
			}
			e.mu.Unlock()
		}
	}
	return killedAt
}

// runConcurrent sends one credential 100 times at once, in five rounds
// (a fresh credential each), with /verify delayed: no copy may get a 402,
// and the facilitator must see the payment once.
func (e *faultEnv) runConcurrent(ctx context.Context, fc faultCase) error {
	// The servers run this fault with a facilitator timeout far above the
	// delay: on a loaded machine a /verify that outlasts 1 s is retried by
	// the server's client (by design: /verify is idempotent), and that
	// retry cannot be told from a second copy reaching the facilitator.
	e.setServerEnv("ASSAY_FACILITATOR_TIMEOUT", "10s")
	defer e.setServerEnv("ASSAY_FACILITATOR_TIMEOUT", faultFacilitatorTimeout.String())
	// With that timeout a slow answer is not a call given up on: only a
	// call whose caller really went away counts as abandoned.
	e.front.mu.Lock()
	slow := e.front.slowAfter
	e.front.slowAfter = 0
	e.front.mu.Unlock()
	defer func() {
		e.front.mu.Lock()
		e.front.slowAfter = slow
		e.front.mu.Unlock()
	}()
	if err := e.restart(ctx, false); err != nil {
		return err
	}
	if err := fc.start(e); err != nil {
		return err
	}
	var cs []*fcred
	for round := range 5 {
		c, err := e.newCred(ctx, fc.name, round)
		if err != nil {
			return err
		}
		cs = append(cs, c)
		var wg sync.WaitGroup
		for k := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.send(ctx, c, "concurrent", k, true)
			}()
		}
		wg.Wait()
		key := strings.ToLower(c.cred.Nonce)
		// A call the server gave up on (its timeout, on a loaded machine)
		// is tried again by design: /verify by its retry or the next copy,
		// /settle by the resolver.
		v := e.front.callsOf("/verify", key) - e.front.abandonedOf("/verify", key)
		s := e.front.callsOf("/settle", key) - e.front.abandonedOf("/settle", key)
		orders := 0
		if rows, err := readOrders(ctx, e.db); err == nil {
			for _, o := range rows {
				if o.ReservationKey == c.cred.OrderKey {
					orders++
				}
			}
		}
		if orders != 1 {
			e.j.add(violation{Invariant: invConcurrent, Fault: fc.name, Backend: e.backend, Phase: "concurrent", Route: c.route,
				Protocol: c.cred.Protocol, Payer: c.payer(), Seen: fmt.Sprintf("100 copies opened %d orders, want one", orders)})
		}
		if v != 1 || s != 1 {
			e.j.add(violation{Invariant: invConcurrent, Fault: fc.name, Backend: e.backend, Phase: "concurrent", Route: c.route,
				Protocol: c.cred.Protocol, Payer: c.payer(), Seen: fmt.Sprintf("100 copies reached the facilitator %d times at /verify and %d at /settle, want once each", v, s)})
		}
	}
	if err := e.healAll(); err != nil {
		return err
	}
	e.resendAll(ctx, fc.name, "healed", cs)
	e.waitClosed(ctx, fc.name, cs, time.Now(), closeBound())
	e.judgeOrders(ctx, fc.name, "closed", true)
	e.resendAll(ctx, fc.name, "closed", cs)
	return nil
}
