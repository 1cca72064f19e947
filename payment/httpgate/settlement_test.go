package httpgate_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/store/paymentstore"
)

// The tests in this file run the gate in production mode against a
// facilitator of an in-memory chain (paymenttest.Chain) that fails the way
// real facilitators do, and check that settlement always ends: nothing is
// delivered before it settled, nothing settles twice, unknown outcomes are
// resolved, and a payer who paid gets the answer by re-sending its
// credential.

// chainEnv is a production gate over a chain-backed facilitator.
type chainEnv struct {
	*realEnv
	chain *paymenttest.Chain
}

type chainOpts struct {
	// rpc also gives the processor the chain's JSON-RPC.
	rpc bool
	// minedAfter delays mining at the facilitator.
	minedAfter time.Duration
}

// settleTimeout is the facilitator client's bound on /settle in these
// tests: the faults that hang outlast it.
const settleTimeout = 300 * time.Millisecond

func newChainEnv(t *testing.T, co chainOpts) *chainEnv {
	t.Helper()
	clk := &clock{}
	chain, err := paymenttest.NewChain(&paymenttest.ChainOptions{Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	fac, err := paymenttest.StartFacilitator(&paymenttest.FacilitatorOptions{Chain: chain, MinedAfter: co.minedAfter})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fac.Close)
	o := realOpts{production: true, fac: fac, clock: clk,
		facilitator: func(f *x402.FacilitatorOptions) {
			f.SettleTimeout, f.Timeout, f.RetryMax = settleTimeout, 2*time.Second, 1
		},
		gate: func(g *httpgate.Options) {
			g.SettleTimeout, g.ResolveEvery = settleTimeout+100*time.Millisecond, time.Second
		},
	}
	if co.rpc {
		rpcSrv := httptest.NewServer(chain.RPC())
		t.Cleanup(rpcSrv.Close)
		rpc, err := evm.NewRPC(&evm.RPCOptions{URL: rpcSrv.URL})
		if err != nil {
			t.Fatal(err)
		}
		o.proc = func(p *protocols.Options) { p.Chain = rpc }
	}
	return &chainEnv{realEnv: newRealEnv(t, o), chain: chain}
}

// x402 returns a fresh x402 v2 credential for the quick route.
func (e *chainEnv) x402() map[string]string {
	ch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	return map[string]string{"Payment-Signature": paymenttest.X402V2(e.t, e.wallet, ch, e.clock.now())}
}

// resolveAll advances the clock past every back-off and resolves what is
// due, until nothing is settling or rounds run out.
func (e *chainEnv) resolveAll(rounds int) payment.ReconcileReport {
	e.t.Helper()
	var total payment.ReconcileReport
	for range rounds {
		e.clock.advance(10 * time.Second)
		rep, err := e.cashier.Reconcile(context.Background())
		if err != nil {
			e.t.Fatal(err)
		}
		total.Completed += rep.Completed
		total.Failed += rep.Failed
		total.StillSettling += rep.StillSettling
		if e.countOrders(payment.OrderSettling) == 0 {
			break
		}
	}
	return total
}

// checkReplay re-sends cred and checks that it gets the stored answer,
// whose bytes the receipt binds.
func (e *chainEnv) checkReplay(name string, cred map[string]string) {
	e.t.Helper()
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, cred)
	if r.status != 200 || r.header.Get(httpgate.HeaderReplay) != "true" || r.header.Get(httpgate.HeaderReceiptID) == "" {
		e.t.Fatalf("%s: re-sent credential: %d %s", name, r.status, r.body)
	}
	o := e.order(r.header.Get(httpgate.HeaderOrderID))
	sum := sha256.Sum256(r.body)
	if o.Status != payment.OrderCompleted || o.ResultSHA256 != hex.EncodeToString(sum[:]) {
		e.t.Fatalf("%s: order %s %s, body digest %x", name, o.Status, o.ResultSHA256, sum)
	}
	data, err := paymentstore.New(e.db).Receipt(context.Background(), o.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	rc, err := payment.VerifyReceipt(data, e.cashier.Keys())
	if err != nil || rc.ResultSHA256 != o.ResultSHA256 || rc.SettlementReference != o.SettlementRef {
		e.t.Fatalf("%s: receipt %+v %v", name, rc, err)
	}
	if tx := e.chain.Tx(o.SettlementRef); tx == nil || !tx.Success || tx.Authorization.To.Hex() != strings.ToLower(paymenttest.DevPayee) && !strings.EqualFold(tx.Authorization.To.Hex(), paymenttest.DevPayee) {
		e.t.Fatalf("%s: settlement %q is not a transfer to the payee on the chain: %+v", name, o.SettlementRef, tx)
	}
}

// checkNotDelivered checks that the order's result cannot be read while it
// is not completed.
func (e *chainEnv) checkNotDelivered(name string, r result) {
	e.t.Helper()
	if strings.Contains(string(r.body), `"kind"`) {
		e.t.Fatalf("%s: content delivered before settlement: %s", name, r.body)
	}
	resp, err := e.cashier.Ledger().Response(context.Background(), r.header.Get(httpgate.HeaderOrderID))
	if err != nil {
		e.t.Fatalf("%s: the answer was not kept: %v", name, err)
	}
	_ = resp
}

func TestSettlementFaultsAreResolved(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  paymenttest.Fault
		outage bool
		want   int // the first answer's status
	}{
		{"500", paymenttest.Fault{Kind: paymenttest.FaultStatus}, false, 202},
		{"hang past the timeout", paymenttest.Fault{Kind: paymenttest.FaultHang}, false, 202},
		{"late success", paymenttest.Fault{Kind: paymenttest.FaultLateSuccess, Delay: 2 * settleTimeout}, false, 202},
		{"reset after settling", paymenttest.Fault{Kind: paymenttest.FaultReset}, false, 202},
		{"settlement_pending", paymenttest.Fault{Kind: paymenttest.FaultPending, Delay: time.Second}, false, 202},
		{"outage", paymenttest.Fault{}, true, 503},
	} {
		for _, rpc := range []bool{false, true} {
			name := tc.name
			if rpc {
				name += ", with the chain"
			}
			t.Run(name, func(t *testing.T) {
				e := newChainEnv(t, chainOpts{rpc: rpc})
				cred := e.x402()
				if tc.outage {
					// The facilitator goes down while the work runs, after
					// it verified the payment.
					e.h.during = func() { _ = e.fac.SetOutage(true) }
				} else {
					e.fac.SetFault("/settle", tc.fault)
				}
				r := e.do("POST", "/v1/claims/verify/quick", claimBody, cred)
				if r.status != tc.want || r.header.Get(httpgate.HeaderOrderToken) == "" || r.header.Get("Retry-After") == "" {
					t.Fatalf("first answer: %d %v %s", r.status, r.header, r.body)
				}
				if strings.Contains(string(r.body), "127.0.0.1") || strings.Contains(string(r.body), "facilitator /") {
					t.Fatalf("internals in the answer: %s", r.body)
				}
				e.checkNotDelivered(name, r)
				id := r.header.Get(httpgate.HeaderOrderID)
				if o := e.order(id); o.Status != payment.OrderSettling {
					t.Fatalf("order after the fault: %s (%s)", o.Status, o.FailureReason)
				}
				if tc.fault.Kind == paymenttest.FaultPending && e.order(id).SettlementRef == "" {
					t.Fatal("the pending transaction hash is not on the order")
				}
				// While it holds, re-sending gets 202 and reads get 409.
				e.h.during = nil
				if again := e.do("POST", "/v1/claims/verify/quick", claimBody, cred); again.status != 202 {
					t.Fatalf("re-sent while settling: %d %s", again.status, again.body)
				}
				if err := e.fac.Heal(); err != nil {
					t.Fatal(err)
				}
				rep := e.resolveAll(8)
				if rep.Completed != 1 || e.countOrders(payment.OrderSettling) != 0 {
					t.Fatalf("resolution: %+v, %d still settling", rep, e.countOrders(payment.OrderSettling))
				}
				e.checkReplay(name, cred)
				if n := len(e.chain.Transfers()); n != 1 {
					t.Fatalf("%d transfers on the chain, want 1", n)
				}
			})
		}
	}
}

// A refused settlement fails at once; nothing is delivered anywhere.
func TestSettlementRefusedFailsAtOnce(t *testing.T) {
	e := newChainEnv(t, chainOpts{})
	e.fac.SetFault("/settle", paymenttest.Fault{Kind: paymenttest.FaultRefuse, Reason: "insufficient_funds"})
	cred := e.x402()
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, cred)
	if r.status != 402 || !strings.Contains(string(r.body), "insufficient_funds") {
		t.Fatalf("refused settlement: %d %s", r.status, r.body)
	}
	o := e.order(r.header.Get(httpgate.HeaderOrderID))
	if o.Status != payment.OrderFailed {
		t.Fatalf("order %s", o.Status)
	}
	if n := len(e.chain.Transfers()); n != 0 {
		t.Fatalf("%d transfers", n)
	}
}

// An order whose payment never lands is failed and released once its
// authorization expired: the payer may pay again. Before that, refusals
// decide nothing (a pending first attempt may still land).
func TestUnsettledPaymentReleasedAfterValidBefore(t *testing.T) {
	for _, rpc := range []bool{false, true} {
		t.Run(map[bool]string{false: "facilitator", true: "chain"}[rpc], func(t *testing.T) {
			e := newChainEnv(t, chainOpts{rpc: rpc})
			cred := e.x402()
			e.fac.SetFault("/settle", paymenttest.Fault{Kind: paymenttest.FaultHang})
			r := e.do("POST", "/v1/claims/verify/quick", claimBody, cred)
			if r.status != 202 {
				t.Fatalf("first answer %d %s", r.status, r.body)
			}
			id := r.header.Get(httpgate.HeaderOrderID)
			e.fac.SetFault("/settle", paymenttest.Fault{Kind: paymenttest.FaultRefuse, Reason: "insufficient_funds"})
			e.resolveAll(2)
			if o := e.order(id); o.Status != payment.OrderSettling || o.SettleAttempts == 0 {
				t.Fatalf("before validBefore: %s after %d attempts", o.Status, o.SettleAttempts)
			}
			e.clock.advance(time.Hour)
			rep := e.resolveAll(2)
			o := e.order(id)
			if rep.Failed != 1 || o.Status != payment.OrderFailed {
				t.Fatalf("after validBefore: %+v, order %s", rep, o.Status)
			}
			if _, err := paymentstore.New(e.db).OrderByReservation(context.Background(), o.ReservationKey); err == nil {
				t.Fatal("the reservation was not released")
			}
			if n := len(e.chain.Transfers()); n != 0 {
				t.Fatalf("%d transfers", n)
			}
		})
	}
}

// A payer who spends the nonce elsewhere while our settlement is unknown
// never gets the answer: the order fails once that is known.
func TestNonceSpentElsewhereFails(t *testing.T) {
	for _, rpc := range []bool{false, true} {
		t.Run(map[bool]string{false: "facilitator", true: "chain"}[rpc], func(t *testing.T) {
			e := newChainEnv(t, chainOpts{rpc: rpc})
			ch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
			hdr := paymenttest.X402V2(e.t, e.wallet, ch, e.clock.now())
			cred := map[string]string{"Payment-Signature": hdr}
			e.fac.SetFault("/settle", paymenttest.Fault{Kind: paymenttest.FaultHang})
			r := e.do("POST", "/v1/claims/verify/quick", claimBody, cred)
			if r.status != 202 {
				t.Fatalf("first answer %d %s", r.status, r.body)
			}
			// The payer signs another transfer with the same nonce, to
			// itself, and has it mined first.
			a := authorizationOf(t, hdr)
			other := *a
			other.To = e.wallet.Address()
			sig, err := evm.SignTransfer(context.Background(), e.wallet, e.chain.Network(), &other)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.chain.Submit(&other, sig, 0); err != nil {
				t.Fatal(err)
			}
			if err := e.fac.Heal(); err != nil {
				t.Fatal(err)
			}
			rep := e.resolveAll(3)
			o := e.order(r.header.Get(httpgate.HeaderOrderID))
			if rep.Failed != 1 || o.Status != payment.OrderFailed || !strings.Contains(o.FailureReason, "another transfer") {
				t.Fatalf("resolution %+v, order %s %q", rep, o.Status, o.FailureReason)
			}
			if again := e.do("POST", "/v1/claims/verify/quick", claimBody, cred); again.status != 402 {
				t.Fatalf("re-sent spent credential: %d %s", again.status, again.body)
			}
		})
	}
}

// authorizationOf reads the EIP-3009 authorization of an x402 v2 header.
func authorizationOf(t *testing.T, header string) *evm.TransferAuthorization {
	t.Helper()
	var pl x402.PaymentPayload
	if err := x402.DecodeHeader(header, &pl); err != nil {
		t.Fatal(err)
	}
	var ex x402.ExactEVMPayload
	if err := json.Unmarshal(pl.Payload, &ex); err != nil {
		t.Fatal(err)
	}
	a, err := ex.Authorization.Parse()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Copies of one credential sent at once reach the facilitator once and
// are never answered 402, also while /verify is slow.
func TestConcurrentCopiesOfOneCredential(t *testing.T) {
	e := newChainEnv(t, chainOpts{})
	e.fac.SetFault("/verify", paymenttest.Fault{Kind: paymenttest.FaultLateSuccess, Delay: 300 * time.Millisecond})
	for round := range 3 {
		cred := e.x402()
		var wg sync.WaitGroup
		statuses := make([]int, 20)
		for i := range statuses {
			wg.Go(func() { statuses[i] = e.do("POST", "/v1/claims/verify/quick", claimBody, cred).status })
		}
		wg.Wait()
		got := map[int]int{}
		for _, s := range statuses {
			got[s]++
		}
		if got[402] != 0 || got[200] < 1 || got[200]+got[409]+got[202] != len(statuses) {
			t.Fatalf("round %d: statuses %v", round, got)
		}
		e.checkReplay("concurrent copies", cred)
	}
	if v, s := len(e.fac.Calls("/verify")), len(e.fac.Calls("/settle")); v != 3 || s != 3 {
		t.Fatalf("/verify %d and /settle %d calls for 3 credentials", v, s)
	}
}

// An outage at /verify is a 503 without internals; the payment was not
// used and works once the facilitator is back.
func TestVerifyOutageIsRetryable(t *testing.T) {
	e := newChainEnv(t, chainOpts{})
	cred := e.x402()
	if err := e.fac.SetOutage(true); err != nil {
		t.Fatal(err)
	}
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, cred)
	if r.status != 503 || r.header.Get("Retry-After") == "" || strings.Contains(string(r.body), "127.0.0.1") {
		t.Fatalf("verify outage: %d %v %s", r.status, r.header, r.body)
	}
	if err := e.fac.Heal(); err != nil {
		t.Fatal(err)
	}
	if r := e.do("POST", "/v1/claims/verify/quick", claimBody, cred); r.status != 200 {
		t.Fatalf("after the outage: %d %s", r.status, r.body)
	}
}

// A restart resolves at once what the dead process left settling.
func TestRestartResolvesAtOnce(t *testing.T) {
	e := newChainEnv(t, chainOpts{})
	cred := e.x402()
	e.fac.SetFault("/settle", paymenttest.Fault{Kind: paymenttest.FaultLateSuccess, Delay: 2 * settleTimeout})
	if r := e.do("POST", "/v1/claims/verify/quick", claimBody, cred); r.status != 202 {
		t.Fatalf("first answer %d", r.status)
	}
	if err := e.fac.Heal(); err != nil {
		t.Fatal(err)
	}
	rep, err := e.cashier.ReconcileAfterRestart(context.Background())
	if err != nil || rep.Completed != 1 {
		t.Fatalf("after restart: %+v %v", rep, err)
	}
	e.checkReplay("restart", cred)
}
