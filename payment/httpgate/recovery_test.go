package httpgate_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/storetest"
)

// The credential is the purchase: a payer whose answer was lost presents
// the same credential again, without Idempotency-Key, at another instance
// sharing the database, after the payment expired, and gets the purchase —
// same bytes, order and receipt — with a fresh token that replaces the
// first. Nothing is verified, charged or run again.
func TestGateRecoveryByCredentialAcrossInstances(t *testing.T) {
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite-file": func(t *testing.T) string { return storetest.SQLitePath(t) },
		"postgres":    func(t *testing.T) string { return storetest.MigratedPostgresURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			clk := &clock{}
			fac := paymenttest.NewFacilitator(t)
			a := newRealEnv(t, realOpts{db: openDB(t, d), clock: clk, production: true, fac: fac})
			b := newRealEnv(t, realOpts{db: openDB(t, d), clock: clk, production: true, fac: fac})
			for _, kind := range []string{"x402 v2", "x402 v1", "mpp evm"} {
				h := a.credentials(a.challenge("POST", "/v1/claims/verify/quick", claimBody, nil))[kind]
				first := a.do("POST", "/v1/claims/verify/quick", claimBody, h)
				if first.status != 200 {
					t.Fatalf("%s: %d %s", kind, first.status, first.body)
				}
				verifies, settles := len(fac.Calls("/verify")), len(fac.Calls("/settle"))
				clk.advance(20 * time.Minute) // past validBefore and the MPP challenge's expiry
				again := b.do("POST", "/v1/claims/verify/quick", claimBody, h)
				checkRecovered(t, kind, first, again)
				if len(fac.Calls("/verify")) != verifies || len(fac.Calls("/settle")) != settles {
					t.Fatalf("%s: the retry was verified or settled again", kind)
				}
				id := first.header.Get(httpgate.HeaderOrderID)
				if o := b.order(id); o.TokenHash != ids.Hash(again.header.Get(httpgate.HeaderOrderToken)) {
					t.Fatalf("%s: the fresh token is not the order's", kind)
				}
				// Once more, at the first instance: another fresh token.
				third := a.do("POST", "/v1/claims/verify/quick", claimBody, h)
				checkRecovered(t, kind, first, third)
				if third.header.Get(httpgate.HeaderOrderToken) == again.header.Get(httpgate.HeaderOrderToken) {
					t.Fatalf("%s: the token was not rotated again", kind)
				}
			}
			if n := a.h.delivered.Load() + b.h.delivered.Load(); n != 3 {
				t.Fatalf("%d deliveries for three payments", n)
			}
		})
	}
}

// checkRecovered checks that again answers the purchase first delivered.
func checkRecovered(t *testing.T, kind string, first, again result) {
	t.Helper()
	if again.status != 200 || !bytes.Equal(again.body, first.body) || again.header.Get(httpgate.HeaderReplay) != "true" ||
		again.header.Get(httpgate.HeaderOrderID) != first.header.Get(httpgate.HeaderOrderID) ||
		again.header.Get(httpgate.HeaderReceiptID) != first.header.Get(httpgate.HeaderReceiptID) ||
		again.header.Get(httpgate.HeaderOrderToken) == "" || again.header.Get(httpgate.HeaderOrderToken) == first.header.Get(httpgate.HeaderOrderToken) {
		t.Fatalf("%s presented again: %d %v %s", kind, again.status, again.header, again.body)
	}
}

// A crash between the work and the end of settlement leaves the order
// settling: a retry with the credential is told so (202, with a fresh
// token to poll it), the start-up reconciliation completes it, and the
// retry after that gets the answer. An order a crash left processing is
// in flight (409) until the reconciliation releases it; the payment is
// then charged normally, once.
func TestGateRecoveryAfterACrash(t *testing.T) {
	ctx := context.Background()
	e := newRealEnv(t, realOpts{db: openDB(t, storetest.SQLitePath(t))})
	ch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	creds := e.credentials(ch)

	// Settling: delivered, then rewound to what a kill between MarkSettling
	// and CompleteOrder leaves.
	h := creds["x402 v2"]
	first := e.do("POST", "/v1/claims/verify/quick", claimBody, h)
	if first.status != 200 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	id := first.header.Get(httpgate.HeaderOrderID)
	w, _ := e.db.SQL()
	if _, err := w.ExecContext(ctx, `UPDATE payment_orders SET status = 'settling', settlement_ref = '', receipt_id = NULL,
		receipt_json = NULL, completed_at = 0 WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	pending := e.do("POST", "/v1/claims/verify/quick", claimBody, h)
	if pending.status != 202 || pending.header.Get(httpgate.HeaderOrderID) != id || !strings.Contains(string(pending.body), `"status":"settling"`) {
		t.Fatalf("retry while settling: %d %v %s", pending.status, pending.header, pending.body)
	}
	tok := pending.header.Get(httpgate.HeaderOrderToken)
	if st, _ := e.getOrder(id, tok); st != 200 {
		t.Fatalf("the token of the pending answer reads the order: %d", st)
	}
	rep, err := e.cashier.ReconcileAfterRestart(ctx)
	if err != nil || rep.Completed != 1 {
		t.Fatalf("reconcile: %+v %v", rep, err)
	}
	again := e.do("POST", "/v1/claims/verify/quick", claimBody, h)
	o := e.order(id)
	if again.status != 200 || !bytes.Equal(again.body, first.body) || again.header.Get(httpgate.HeaderOrderID) != id ||
		o.Status != payment.OrderCompleted || again.header.Get(httpgate.HeaderReceiptID) != o.ReceiptID || o.ReceiptID == "" {
		t.Fatalf("retry after the reconciliation: %d %v %s (order %s)", again.status, again.header, again.body, o.Status)
	}
	if st, _ := e.getOrder(id, tok); st != 404 {
		t.Fatalf("the previous token still reads the order: %d", st)
	}

	// Processing: the order a kill interrupted during the work.
	h = creds["mpp evm"]
	cred, err := e.gate.ReadCredential(header(h))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/v1/claims/verify/quick", strings.NewReader(claimBody))
	res := payment.Resource{URL: publicBase + "/v1/claims/verify/quick", Method: "POST", BodyDigest: mpp.BodyDigest([]byte(claimBody))}
	if _, err := e.cashier.Begin(ctx, quickOffer, res, cred, &payment.BeginOptions{RequestHash: httpgate.RequestHash(req, []byte(claimBody))}); err != nil {
		t.Fatal(err)
	}
	if r := e.do("POST", "/v1/claims/verify/quick", claimBody, h); r.status != 409 || r.header.Get("Retry-After") == "" {
		t.Fatalf("retry while processing: %d %s", r.status, r.body)
	}
	if rep, err := e.cashier.ReconcileAfterRestart(ctx); err != nil || rep.Interrupted != 1 {
		t.Fatalf("reconcile: %+v %v", rep, err)
	}
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, h)
	if r.status != 200 || r.header.Get(httpgate.HeaderReplay) != "" {
		t.Fatalf("retry after the release: %d %v %s", r.status, r.header, r.body)
	}
	if n := e.h.delivered.Load(); n != 2 || e.countOrders(payment.OrderCompleted) != 2 {
		t.Fatalf("%d deliveries, %d completed orders; want 2 and 2", n, e.countOrders(payment.OrderCompleted))
	}
}

func header(m map[string]string) http.Header {
	h := http.Header{}
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}

// getOrder reads an order with a token through the ledger, as the order
// route does: 200 when the token is the order's, else 404.
func (e *env) getOrder(id, token string) (int, *payment.Order) {
	o, err := paymentstore.New(e.db).Order(context.Background(), id)
	if err != nil || o.TokenHash != ids.Hash(token) {
		return 404, nil
	}
	return 200, o
}

// lossyProxy stands between the paying Transport and a gate: it loses the
// answer to the first paid request — after the gate charged for it (the
// connection is cut), or (timeout) while the gate still works on it (a
// 504, as a proxy that gave up) — and lets everything else through.
type lossyProxy struct {
	next    http.Handler
	timeout bool

	once     sync.Once
	lost     chan struct{} // closed when the first paid answer was lost
	release  chan struct{} // timeout: lets the abandoned work finish
	entered  chan struct{} // timeout: the abandoned work reached the handler (its payment is reserved)
	finished chan struct{} // timeout: the abandoned work finished
	statuses []int
	mu       sync.Mutex
}

func (p *lossyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	paid := r.Header.Get("Payment-Signature") != "" || r.Header.Get("X-Payment") != "" || r.Header.Get("Authorization") != ""
	first := false
	if paid {
		p.once.Do(func() { first = true })
	}
	switch {
	case first && p.timeout:
		body, _ := io.ReadAll(r.Body)
		r2 := r.Clone(context.WithoutCancel(r.Context()))
		r2.Body = io.NopCloser(bytes.NewReader(body))
		go func() {
			defer close(p.finished)
			p.next.ServeHTTP(httptest.NewRecorder(), r2)
		}()
		// Answer 504 only once the work holds the payment, so that the
		// retry finds it in flight whatever the scheduling.
		<-p.entered
		close(p.lost)
		w.WriteHeader(http.StatusGatewayTimeout)
	case first:
		rec := httptest.NewRecorder()
		p.next.ServeHTTP(rec, r)
		p.record(rec.Code)
		close(p.lost)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	default:
		rec := httptest.NewRecorder()
		p.next.ServeHTTP(rec, r)
		p.record(rec.Code)
		if p.timeout && rec.Code == http.StatusConflict {
			// The retry found the first request in flight: let it end
			// before answering, so that the next retry finds it done.
			close(p.release)
			<-p.finished
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}
}

func (p *lossyProxy) record(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.statuses = append(p.statuses, code)
}

// blockingHandler is a paid handler that, when release is set, closes
// entered and waits for release. The paywall runs it at most once per
// test, so entered is closed once.
type blockingHandler struct {
	*paidHandler
	entered, release chan struct{}
}

func (h blockingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.release != nil {
		close(h.entered)
		<-h.release
	}
	h.paidHandler.ServeHTTP(w, r)
}

// The paying Transport recovers an answer lost after the charge (the
// connection cut) and one lost while the work was still running (a proxy's
// 504, then 409 while in flight), by presenting the same credential again:
// one payment signed, one delivery, the purchase's bytes and order.
func TestTransportRecoversALostAnswer(t *testing.T) {
	for _, timeout := range []bool{false, true} {
		name := map[bool]string{false: "cut after the charge", true: "504 during the work"}[timeout]
		t.Run(name, func(t *testing.T) {
			e := newRealEnv(t, realOpts{})
			p := &lossyProxy{timeout: timeout, lost: make(chan struct{}), release: make(chan struct{}), entered: make(chan struct{}), finished: make(chan struct{})}
			h := blockingHandler{paidHandler: &paidHandler{kind: "verification"}}
			if timeout {
				h.entered, h.release = p.entered, p.release
			}
			p.next = e.gate.Gate(quickOffer, h)
			srv := httptest.NewServer(p)
			defer srv.Close()
			tr := paying.NewTransport(paymenttest.DevWallet(), nil, &paying.TransportOptions{RetryWait: time.Millisecond, MaxRetryWait: time.Millisecond})
			hc := &http.Client{Transport: tr}
			resp, err := hc.Post(srv.URL+"/v1/claims/verify/quick", "application/json", strings.NewReader(claimBody))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			info, ok := paying.ResponseInfo(resp)
			if resp.StatusCode != 200 || !ok || resp.Header.Get(httpgate.HeaderReplay) != "true" || !strings.HasPrefix(info.OrderID, "ord_") ||
				info.ReceiptID == "" || info.OrderToken == "" {
				t.Fatalf("%d %v %s (info %+v)", resp.StatusCode, resp.Header, body, info)
			}
			o := e.order(info.OrderID)
			if o.Status != payment.OrderCompleted || o.TokenHash != ids.Hash(info.OrderToken) || o.ReceiptID != info.ReceiptID {
				t.Fatalf("order %+v", o)
			}
			if h.delivered.Load() != 1 || tr.Spent() != quickOffer.AmountMicroUSD || e.countOrders(payment.OrderCompleted) != 1 {
				t.Fatalf("deliveries %d, spent %d, completed orders %d; want 1, %d, 1", h.delivered.Load(), tr.Spent(), e.countOrders(payment.OrderCompleted), quickOffer.AmountMicroUSD)
			}
			if timeout && (len(p.statuses) < 2 || p.statuses[len(p.statuses)-2] != http.StatusConflict) {
				t.Fatalf("statuses behind the proxy %v: want a 409 while in flight, then the answer", p.statuses)
			}
		})
	}
}
