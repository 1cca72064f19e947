package httpgate_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/storetest"
)

const publicBase = "https://api.example.test"

// paidHandler is a paid route for tests. It rejects bodies containing
// "invalid" (422) and niche ids "niche_missing" (404) in Precheck, and
// obeys X-Test-Behaviour: fail502, timeout, big, panic.
type paidHandler struct {
	delivered atomic.Int64
	kind      string
	// during, when set, runs while the paid work runs (a fault that
	// starts after verification).
	during func()
}

func (h *paidHandler) Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	body, _ := io.ReadAll(r.Body)
	if bytes.Contains(body, []byte("invalid")) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write([]byte(`{"detail":[{"type":"string_too_short","loc":["body","claim"]}]}`))
		return r, false
	}
	if r.PathValue("id") == "niche_missing" {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"detail":"Niche not found"}`))
		return r, false
	}
	return r, true
}

func (h *paidHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call, ok := payment.CallFrom(r.Context())
	if !ok || call.OrderID == "" || call.Payer == "" {
		http.Error(w, "no call", http.StatusInternalServerError)
		return
	}
	body, _ := io.ReadAll(r.Body) // the body must still be readable after the gate and Precheck
	if h.during != nil {
		h.during()
	}
	switch r.Header.Get("X-Test-Behaviour") {
	case "fail502":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(`{"detail":"Evidence provider failed: Timeout"}`))
		return
	case "timeout":
		<-r.Context().Done()
		w.WriteHeader(http.StatusGatewayTimeout)
		_, _ = w.Write([]byte(`{"detail":"The request timed out"}`))
		return
	case "big":
		_, _ = w.Write(bytes.Repeat([]byte("x"), 2048))
		return
	case "panic":
		panic("boom")
	}
	id := "cv_0123456789abcdef0123456789abcdef"
	if r.PathValue("id") != "" {
		id = r.PathValue("id")
	}
	call.SetResult(h.kind, id)
	call.AddUsage(payment.Usage{Provider: "openai", InputTokens: 1000, OutputTokens: 500, SearchCalls: 2})
	h.delivered.Add(1)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"result":%q,"payer":%q,"customer":%q,"body":%q,"amount":%d}`, id, call.Payer, call.CustomerID, body, call.Offer.AmountMicroUSD)
}

var (
	quickOffer = payment.Offer{ID: "claims.verify.quick", Description: "Quick claim verification", AmountMicroUSD: 20000,
		CardMicroUSD: 500000, MimeType: "application/json", Product: "quick", WorkTimeout: 2 * time.Second}
	deepOffer  = payment.Offer{ID: "claims.verify.deep", AmountMicroUSD: 120000, CardMicroUSD: 500000, MimeType: "application/json", Product: "deep"}
	nicheOffer = payment.Offer{ID: "niche.evaluation", Description: "One full niche evaluation", AmountMicroUSD: 250000, MimeType: "application/json"}
)

type env struct {
	t       *testing.T
	proc    *gatetest.Processor
	db      *store.DB
	gate    *httpgate.Gate
	cashier *payment.Cashier
	h       *paidHandler
	url     string
	clock   *clock
}

type clock struct {
	mu sync.Mutex
	d  time.Duration
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.d) }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d += d
}

// emptyDB is an empty, migrated database, copied for each test that
// opens it (migrating each anew cost about 10 ms).
var emptyDB storetest.Template

func openDB(t testing.TB, dsn string) *store.DB {
	t.Helper()
	db, err := anydb.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newEnv serves the test routes through a gate on db (a fresh in-memory
// SQLite database when nil). proc may be shared between instances.
func newEnv(t *testing.T, db *store.DB, proc *gatetest.Processor, mod func(*httpgate.Options)) *env {
	t.Helper()
	if db == nil {
		db = emptyDB.Open(t, nil)
	}
	if proc == nil {
		proc = &gatetest.Processor{}
	}
	keys, err := payment.LoadKeyring(context.Background(), db, "")
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{}
	opts := &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys, Now: clk.now,
		Costs: payment.CostPrices{InputPerMillion: 1_250_000, OutputPerMillion: 10_000_000, PerSearchCall: 10_000}},
		PublicBaseURL: publicBase, MaxResponseBytes: 1024, ReadCredential: gatetest.ReadCredential}
	if mod != nil {
		mod(opts)
	}
	g, err := httpgate.New(proc, paymentstore.New(db), opts)
	if err != nil {
		t.Fatal(err)
	}
	h := &paidHandler{kind: "verification"}
	nh := &paidHandler{kind: "niche"}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/claims/verify/quick", g.Gate(quickOffer, h))
	mux.Handle("POST /v1/claims/verify/deep", g.Gate(deepOffer, h))
	pricier := quickOffer
	pricier.AmountMicroUSD = 30000
	mux.Handle("POST /v2/claims/verify/quick", g.Gate(pricier, h))
	mux.Handle("GET /v1/niches/{id}/pay-per-call", g.Gate(nicheOffer, nh))
	mux.Handle("POST /v1/stream", g.Gate(quickOffer, streamer{}))
	srv := httptest.NewServer(recoverer(mux))
	t.Cleanup(srv.Close)
	return &env{t: t, proc: proc, db: db, gate: g, cashier: g.Cashier(), h: h, url: srv.URL, clock: clk}
}

// recoverer stands in for the server's panic recovery.
func recoverer(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}()
		h.ServeHTTP(w, r)
	})
}

type streamer struct{}

func (streamer) StreamsPaidResponse() bool { return true }
func (streamer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range 3 {
		fmt.Fprintf(w, "data: %d\n\n", i)
		http.NewResponseController(w).Flush()
	}
}

type result struct {
	status int
	header http.Header
	body   []byte
	trail  http.Header
}

func (e *env) do(method, path, body string, headers map[string]string) result {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return result{status: res.StatusCode, header: res.Header, body: b, trail: res.Trailer}
}

func pay(payer, nonce string, extra ...string) map[string]string {
	v := gatetest.Credential(payer, nonce)
	for _, x := range extra {
		v += ";" + x
	}
	return map[string]string{gatetest.Header: v}
}

func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func detail(t *testing.T, b []byte) string {
	t.Helper()
	var d struct {
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("body is not a JSON object with detail: %s", b)
	}
	return d.Detail
}

func (e *env) order(id string) *payment.Order {
	e.t.Helper()
	o, err := paymentstore.New(e.db).Order(context.Background(), id)
	if err != nil {
		e.t.Fatalf("order %q: %v", id, err)
	}
	return o
}

// countOrders counts the orders in a state (any age).
func (e *env) countOrders(status payment.OrderStatus) int {
	e.t.Helper()
	os, err := paymentstore.New(e.db).OrdersInState(context.Background(), status, time.Now().Add(time.Hour), 10000)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(os)
}

const claimBody = `{"claim":"The Eiffel Tower is in Paris"}`

func TestGateChallengesWithoutCredential(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	r := e.do("POST", "/v1/claims/verify/quick?x=1", claimBody, nil)
	if r.status != 402 || r.header.Get("PAYMENT-REQUIRED") == "" || r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("unpaid: %d %v %s", r.status, r.header, r.body)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", cc)
	}
	ch := e.proc.Challenges()
	if len(ch) != 1 {
		t.Fatalf("%d challenges issued", len(ch))
	}
	sum := sha256.Sum256([]byte(claimBody))
	if ch[0].URL != publicBase+"/v1/claims/verify/quick?x=1" || ch[0].Method != "POST" || !strings.Contains(ch[0].BodyDigest, "sha-256=:") {
		t.Errorf("challenge resource = %+v (body sha %x)", ch[0], sum)
	}
	if e.h.delivered.Load() != 0 || e.countOrders(payment.OrderProcessing) != 0 {
		t.Error("an unpaid request ran the handler or opened an order")
	}
	// The resource URL never comes from an untrusted Host header.
	req, _ := http.NewRequest("POST", e.url+"/v1/claims/verify/quick", strings.NewReader(claimBody))
	req.Host = "evil.example"
	req.Header.Set("X-Forwarded-Host", "evil2.example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := e.proc.Challenges()[1].URL; got != publicBase+"/v1/claims/verify/quick" {
		t.Errorf("resource URL taken from the request: %q", got)
	}
}

func TestGateChecksRequestBeforePayment(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	for name, c := range map[string]struct {
		method, path, body string
		want               int
	}{
		"invalid body":   {"POST", "/v1/claims/verify/quick", `{"claim":"invalid"}`, 422},
		"unknown niche":  {"GET", "/v1/niches/niche_missing/pay-per-call", "", 404},
		"invalid unpaid": {"POST", "/v1/claims/verify/quick", `{"claim":"invalid"}`, 422},
	} {
		h := pay("0xA", "n-"+name)
		if name == "invalid unpaid" {
			h = nil
		}
		r := e.do(c.method, c.path, c.body, h)
		if r.status != c.want || r.header.Get("PAYMENT-REQUIRED") != "" {
			t.Errorf("%s: %d %s, want %d without a challenge", name, r.status, r.body, c.want)
		}
	}
	if len(e.proc.Challenges()) != 0 || e.proc.TotalSettled() != 0 || e.countOrders(payment.OrderProcessing)+e.countOrders(payment.OrderFailed) != 0 {
		t.Error("a request refused by its own checks was challenged, charged or recorded")
	}
}

func TestGatePaidCallReceiptVerifiesOffline(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, pay("0xAbC", "n1"))
	if r.status != 200 {
		t.Fatalf("paid call: %d %s", r.status, r.body)
	}
	for _, h := range []string{httpgate.HeaderOrderID, httpgate.HeaderOrderToken, httpgate.HeaderReceiptID, "PAYMENT-RESPONSE"} {
		if r.header.Get(h) == "" {
			t.Errorf("missing %s", h)
		}
	}
	if cc := r.header.Get("Cache-Control"); cc != "private" {
		t.Errorf("Cache-Control = %q", cc)
	}
	if !strings.Contains(string(r.body), `"payer":"0xabc"`) || !strings.Contains(string(r.body), "Eiffel Tower") {
		t.Errorf("handler did not see the payment or the body: %s", r.body)
	}
	if n := e.proc.Settled("0xabc", "n1"); n != 1 {
		t.Fatalf("settled %d times", n)
	}
	o := e.order(r.header.Get(httpgate.HeaderOrderID))
	sum := sha256.Sum256(r.body)
	if o.Status != payment.OrderCompleted || o.ResultSHA256 != hex.EncodeToString(sum[:]) || o.ReceiptID != r.header.Get(httpgate.HeaderReceiptID) ||
		o.SettlementRef != "0xtx-n1" || o.ResultID == "" || o.Usage.SearchCalls != 2 {
		t.Fatalf("order = %+v", o)
	}
	// 1000 in × 1.25 USD/M + 500 out × 10 USD/M + 2 searches × 0.01 = 1250 + 5000 + 20000 µUSD.
	if o.CostMicroUSD != 26250 {
		t.Errorf("cost = %d µUSD, want 26250", o.CostMicroUSD)
	}
	// Offline: only the published JWKS (as JSON) and the receipt.
	jwksJSON, _ := json.Marshal(e.cashier.Keys().JWKS())
	var jwks payment.JWKS
	if err := json.Unmarshal(jwksJSON, &jwks); err != nil {
		t.Fatal(err)
	}
	data, err := paymentstore.New(e.db).Receipt(context.Background(), o.ID)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := payment.VerifyReceipt(data, jwks)
	if err != nil {
		t.Fatalf("receipt does not verify offline: %v\n%s", err, data)
	}
	if rc.ResultSHA256 != hex.EncodeToString(sum[:]) || rc.OrderID != o.ID || rc.Tier != "quick" || rc.AmountMicroUSD != 20000 ||
		rc.Payer != "0xabc" || rc.ResultKind != "verification" || rc.PaymentProtocol != payment.ProtocolX402 {
		t.Errorf("receipt contents: %+v", rc)
	}
	if diffs := rc.MatchesOrder(o); diffs != nil {
		t.Errorf("receipt does not match the order: %v", diffs)
	}
	// The order token is the only key to the order.
	if o.TokenHash == r.header.Get(httpgate.HeaderOrderToken) || o.TokenHash != hashHex(r.header.Get(httpgate.HeaderOrderToken)) {
		t.Error("order token not stored as its SHA-256")
	}
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestGateHeadIsNeverChargedAndCORSExposesHeaders(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	id := "niche_0123456789abcdef0123456789abcdef"
	r := e.do("HEAD", "/v1/niches/"+id+"/pay-per-call", "", pay("0xA", "h1"))
	if r.status != 402 || e.proc.TotalSettled() != 0 || e.h.delivered.Load() != 0 {
		t.Fatalf("HEAD with a credential: %d, settled %d", r.status, e.proc.TotalSettled())
	}
	r = e.do("GET", "/v1/niches/"+id+"/pay-per-call", "", with(pay("0xA", "h1"), "Origin", "https://app.example"))
	exp := r.header.Get("Access-Control-Expose-Headers")
	for _, h := range []string{httpgate.HeaderOrderID, httpgate.HeaderOrderToken, httpgate.HeaderReceiptID, "PAYMENT-RESPONSE", "Payment-Receipt"} {
		if r.status != 200 || !strings.Contains(exp, h) {
			t.Errorf("%d: %s not exposed in %q", r.status, h, exp)
		}
	}
}

func TestGateRefusesReusedAndBadPayments(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	if r := e.do("POST", "/v1/claims/verify/quick", claimBody, pay("0xA", "n1")); r.status != 200 {
		t.Fatalf("first use: %d %s", r.status, r.body)
	}
	cases := []struct {
		name       string
		headers    map[string]string
		path       string
		status     int
		detail     string
		challenged bool
	}{
		{"reused nonce", pay("0xA", "n1"), "/v1/claims/verify/quick", 402, "Payment already used", true},
		{"reused on another route", pay("0xA", "n1"), "/v1/claims/verify/deep", 402, "Payment already used", true},
		{"malformed header", map[string]string{gatetest.Header: "garbage"}, "/v1/claims/verify/quick", 400, "Malformed payment credential", false},
		{"missing nonce", map[string]string{gatetest.Header: "payer=0xA;nonce="}, "/v1/claims/verify/quick", 400, "Payment credential lacks payer or nonce", false},
		{"bad signature", pay("0xA", "bad1"), "/v1/claims/verify/quick", 402, "The payment signature does not verify", true},
		{"expired", pay("0xA", "expired1"), "/v1/claims/verify/quick", 402, "The payment has expired", true},
		{"wrong amount", pay("0xA", "n2", "amount=1"), "/v1/claims/verify/quick", 402, "The payment is for 1, the price is 20000", true},
		{"processor down", pay("0xA", "down1"), "/v1/claims/verify/quick", 503, "Payment verification is temporarily unavailable; the payment was not used", false},
	}
	for _, c := range cases {
		r := e.do("POST", c.path, claimBody, c.headers)
		if r.status != c.status || detail(t, r.body) != c.detail || (r.header.Get("PAYMENT-REQUIRED") != "") != c.challenged {
			t.Errorf("%s: %d %s (challenge %q), want %d %q challenged=%v", c.name, r.status, r.body, r.header.Get("PAYMENT-REQUIRED"), c.status, c.detail, c.challenged)
		}
		if c.challenged && r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: 402 without Cache-Control: no-store", c.name)
		}
	}
	if e.h.delivered.Load() != 1 || e.proc.TotalSettled() != 1 || e.countOrders(payment.OrderCompleted) != 1 || e.countOrders(payment.OrderProcessing) != 0 {
		t.Errorf("refused payments delivered or recorded: delivered %d, settled %d", e.h.delivered.Load(), e.proc.TotalSettled())
	}
}

func TestGateFailingHandlerIsNotChargedAndCanRetry(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	for _, behaviour := range []string{"fail502", "timeout", "big", "panic"} {
		t.Run(behaviour, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil, nil, func(o *httpgate.Options) {})
			r := e.do("POST", "/v1/claims/verify/quick", claimBody, with(pay("0xA", "n1"), "X-Test-Behaviour", behaviour))
			if r.status < 400 || r.header.Get(httpgate.HeaderReceiptID) != "" || r.header.Get("PAYMENT-RESPONSE") != "" {
				t.Fatalf("failing handler: %d %v %s", r.status, r.header, r.body)
			}
			id := r.header.Get(httpgate.HeaderOrderID)
			if behaviour != "panic" && (id == "" || r.header.Get(httpgate.HeaderOrderToken) == "") {
				t.Fatalf("order headers missing on a failed call: %v", r.header)
			}
			if e.proc.Settled("0xa", "n1") != 0 || e.proc.Voided("0xa", "n1") != 1 {
				t.Fatalf("settled %d, voided %d; want 0 and 1", e.proc.Settled("0xa", "n1"), e.proc.Voided("0xa", "n1"))
			}
			failed, _ := paymentstore.New(e.db).OrdersInState(context.Background(), payment.OrderFailed, time.Now().Add(time.Hour), 10)
			if len(failed) != 1 || failed[0].FailureReason == "" {
				t.Fatalf("failed orders = %+v", failed)
			}
			if behaviour == "fail502" && failed[0].FailureReason != "handler answered 502: Evidence provider failed: Timeout" {
				t.Errorf("reason = %q", failed[0].FailureReason)
			}
			// The same credential works once the provider is back.
			r = e.do("POST", "/v1/claims/verify/quick", claimBody, pay("0xA", "n1"))
			if r.status != 200 || e.proc.Settled("0xa", "n1") != 1 {
				t.Fatalf("retry with the same credential: %d %s", r.status, r.body)
			}
		})
	}
}

func TestGateSettlementFailureDeliversNothing(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	e.proc.SetSettleError("n1", &payment.Problem{Status: 402, Type: "verification-failed", Reason: "insufficient_funds", Detail: "Insufficient funds"})
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, pay("0xA", "n1"))
	if r.status != 402 || strings.Contains(string(r.body), "cv_") || r.header.Get("PAYMENT-REQUIRED") == "" {
		t.Fatalf("failed settlement: %d %s", r.status, r.body)
	}
	if d := detail(t, r.body); d != "Settlement failed: Insufficient funds" {
		t.Errorf("detail = %q", d)
	}
	// The fresh challenge is for this request: its body digest included.
	ch := e.proc.Challenges()
	if len(ch) != 1 || ch[0].BodyDigest != mpp.BodyDigest([]byte(claimBody)) || ch[0].URL != publicBase+"/v1/claims/verify/quick" {
		t.Errorf("fresh challenge for %+v", ch)
	}
	o := e.order(r.header.Get(httpgate.HeaderOrderID))
	if o.Status != payment.OrderFailed || o.FailureReason != "settlement failed: Insufficient funds" || o.ReceiptID != "" {
		t.Fatalf("order = %+v", o)
	}
}

func TestGateSettlementPendingThenReconciled(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	e.proc.SetSettleError("n1", fmt.Errorf("facilitator: %w", payment.ErrSettlementPending))
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, pay("0xA", "n1"))
	var body struct{ OrderID, Status, OrderURL string }
	if err := json.Unmarshal(r.body, &body); err != nil || r.status != 202 || body.Status != "settling" || body.OrderID == "" ||
		body.OrderURL != publicBase+"/v1/orders/"+body.OrderID || r.header.Get(httpgate.HeaderOrderToken) == "" {
		t.Fatalf("pending settlement: %d %s", r.status, r.body)
	}
	if strings.Contains(string(r.body), "cv_") {
		t.Fatal("content delivered before settlement")
	}
	// Paying again with the same credential is refused (no double charge).
	if r2 := e.do("POST", "/v1/claims/verify/quick", claimBody, pay("0xA", "n1")); r2.status != 402 {
		t.Fatalf("reuse while settling: %d", r2.status)
	}
	// While the settle call could still be running, the order is not
	// touched.
	rep, err := e.cashier.Reconcile(context.Background())
	if err != nil || rep.StillSettling != 0 || rep.Completed != 0 {
		t.Fatalf("reconcile during the settle window: %+v %v", rep, err)
	}
	e.clock.advance(2 * time.Minute)
	rep, err = e.cashier.Reconcile(context.Background())
	if err != nil || rep.StillSettling != 1 {
		t.Fatalf("reconcile without an outcome: %+v %v", rep, err)
	}
	e.proc.Check = func(o *payment.Order) (*payment.Settlement, error) {
		return &payment.Settlement{Reference: "0xlate", Network: gatetest.Network}, nil
	}
	// The next attempt waits for its back-off.
	if rep, err = e.cashier.Reconcile(context.Background()); err != nil || rep.Completed != 0 {
		t.Fatalf("reconcile before the back-off: %+v %v", rep, err)
	}
	e.clock.advance(time.Minute)
	rep, err = e.cashier.Reconcile(context.Background())
	if err != nil || rep.Completed != 1 {
		t.Fatalf("reconcile: %+v %v", rep, err)
	}
	o := e.order(body.OrderID)
	if o.Status != payment.OrderCompleted || o.SettlementRef != "0xlate" {
		t.Fatalf("order after reconcile: %+v", o)
	}
	resp, err := paymentstore.New(e.db).Response(context.Background(), o.ID)
	if err != nil || !strings.Contains(string(resp.Body), "cv_") {
		t.Fatalf("stored result: %v %v", resp, err)
	}
	data, _ := paymentstore.New(e.db).Receipt(context.Background(), o.ID)
	if _, err := payment.VerifyReceipt(data, e.cashier.Keys()); err != nil {
		t.Fatal(err)
	}
}

func TestReconcileReleasesInterruptedOrders(t *testing.T) {
	e := newEnv(t, nil, nil, func(o *httpgate.Options) { o.StaleAfter = time.Minute })
	ctx := context.Background()
	cred, _ := gatetest.ParseCredential(gatetest.Credential("0xA", "n1"))
	ch, err := e.cashier.Begin(ctx, quickOffer, payment.Resource{URL: publicBase + "/x"}, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A crash: neither Complete nor Fail. A fresh order is left alone.
	if rep, err := e.cashier.Reconcile(ctx); err != nil || rep.Interrupted != 0 {
		t.Fatalf("reconcile touched a live order: %+v %v", rep, err)
	}
	e.clock.advance(2 * time.Minute)
	rep, err := e.cashier.Reconcile(ctx)
	if err != nil || rep.Interrupted != 1 {
		t.Fatalf("reconcile: %+v %v", rep, err)
	}
	if o := e.order(ch.Order().ID); o.Status != payment.OrderFailed || o.FailureReason != "interrupted" {
		t.Fatalf("order = %+v", o)
	}
	if e.proc.TotalSettled() != 0 {
		t.Fatal("an interrupted order was settled")
	}
	if _, err := e.cashier.Begin(ctx, quickOffer, payment.Resource{URL: publicBase + "/x"}, cred, nil); err != nil {
		t.Fatalf("reservation not released: %v", err)
	}
}

func TestGateIdempotencyKeyReplaysWithoutCharging(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	first := e.do("POST", "/v1/claims/verify/quick", claimBody, with(pay("0xA", "n1"), "Idempotency-Key", "k1"))
	if first.status != 200 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	second := e.do("POST", "/v1/claims/verify/quick", claimBody, with(pay("0xA", "n2"), "Idempotency-Key", "k1"))
	if second.status != 200 || !bytes.Equal(first.body, second.body) || second.header.Get(httpgate.HeaderOrderID) != first.header.Get(httpgate.HeaderOrderID) ||
		second.header.Get(httpgate.HeaderReplay) != "true" || second.header.Get(httpgate.HeaderReceiptID) != first.header.Get(httpgate.HeaderReceiptID) {
		t.Fatalf("replay: %d %v %s", second.status, second.header, second.body)
	}
	if e.proc.Settled("0xa", "n2") != 0 || e.proc.Voided("0xa", "n2") != 1 || e.proc.Settled("0xa", "n1") != 1 || e.h.delivered.Load() != 1 {
		t.Fatal("the replay charged or ran again")
	}
	// The replay hands out a fresh order token; the first one stops working.
	tok1, tok2 := first.header.Get(httpgate.HeaderOrderToken), second.header.Get(httpgate.HeaderOrderToken)
	if o := e.order(first.header.Get(httpgate.HeaderOrderID)); tok2 == "" || tok2 == tok1 || o.TokenHash != ids.Hash(tok2) {
		t.Fatalf("replay token %q (first %q), order token hash %s", tok2, tok1, o.TokenHash)
	}
	// The same credential again with the key: a replay too, never voided.
	third := e.do("POST", "/v1/claims/verify/quick", claimBody, with(pay("0xA", "n1"), "Idempotency-Key", "k1"))
	if third.status != 200 || !bytes.Equal(first.body, third.body) || e.proc.Voided("0xa", "n1") != 0 {
		t.Fatalf("replay with the first credential: %d, voided %d", third.status, e.proc.Voided("0xa", "n1"))
	}
	// Another payer with the same key gets their own call (keys are per payer).
	other := e.do("POST", "/v1/claims/verify/quick", claimBody, with(pay("0xB", "n1"), "Idempotency-Key", "k1"))
	if other.status != 200 || other.header.Get(httpgate.HeaderOrderID) == first.header.Get(httpgate.HeaderOrderID) {
		t.Fatalf("other payer: %d", other.status)
	}
	// Same key, different request: 409, nothing charged.
	conflict := e.do("POST", "/v1/claims/verify/quick", `{"claim":"Something else"}`, with(pay("0xA", "n3"), "Idempotency-Key", "k1"))
	if conflict.status != 409 || detail(t, conflict.body) != "Idempotency-Key was already used for a different request" || e.proc.Settled("0xa", "n3") != 0 {
		t.Fatalf("conflict: %d %s", conflict.status, conflict.body)
	}
}

func TestGateQuotesLockAndBindThePrice(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	ctx := context.Background()
	q, err := e.cashier.CreateQuote(ctx, quickOffer)
	if err != nil {
		t.Fatal(err)
	}
	// The route's price went up to 30000; the quote holds 20000.
	r := e.do("POST", "/v2/claims/verify/quick", claimBody, with(pay("0xA", "n1", "amount=20000"), httpgate.HeaderQuoteID, q.ID))
	if r.status != 200 || !strings.Contains(string(r.body), `"amount":20000`) {
		t.Fatalf("quoted payment: %d %s", r.status, r.body)
	}
	if o := e.order(r.header.Get(httpgate.HeaderOrderID)); o.QuoteID != q.ID || o.AmountMicroUSD != 20000 {
		t.Fatalf("order = %+v", o)
	}
	if got := e.proc.Challenges(); len(got) != 0 {
		t.Fatalf("unexpected challenges %v", got)
	}
	unquoted := e.do("POST", "/v2/claims/verify/quick", claimBody, pay("0xA", "n1b", "amount=20000"))
	if unquoted.status != 402 {
		t.Fatalf("old price without quote: %d", unquoted.status)
	}
	expiring, _ := e.cashier.CreateQuote(ctx, quickOffer)
	e.clock.advance(10 * time.Minute)
	// used is still valid (10 minutes old) but was used.
	used := e.do("POST", "/v1/claims/verify/quick", claimBody, with(pay("0xA", "q-used"), httpgate.HeaderQuoteID, q.ID))
	if used.status != 402 || detail(t, used.body) != "Quote "+q.ID+" was already used" {
		t.Errorf("used quote: %d %s", used.status, used.body)
	}
	deep, _ := e.cashier.CreateQuote(ctx, deepOffer)
	bound, _ := e.cashier.CreateQuote(ctx, quickOffer)
	fresh, _ := e.cashier.CreateQuote(ctx, quickOffer)
	e.clock.advance(6 * time.Minute) // expiring is 16 minutes old
	cases := []struct {
		name, quote string
		extra       []string
		detail      string
	}{
		{"expired", expiring.ID, nil, "Quote " + expiring.ID + " expired at " + expiring.ExpiresAt.Format(time.RFC3339)},
		{"other tier", deep.ID, nil, "Quote " + deep.ID + " is for the deep tier, not for this operation"},
		{"unknown", "quo_00000000000000000000000000000000", nil, "Unknown quote quo_00000000000000000000000000000000"},
		{"payment names another quote", fresh.ID, []string{"quote=" + bound.ID}, fmt.Sprintf("The payment names quote %q but the request names quote %q (send it in X-Agentic-Quote-Id)", bound.ID, fresh.ID)},
	}
	for i, c := range cases {
		before := len(e.proc.Challenges())
		r := e.do("POST", "/v1/claims/verify/quick", claimBody, with(pay("0xA", fmt.Sprintf("q%d", i), c.extra...), httpgate.HeaderQuoteID, c.quote))
		if r.status != 402 || detail(t, r.body) != c.detail || r.header.Get("PAYMENT-REQUIRED") == "" {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
		if ch := e.proc.Challenges(); len(ch) != before+1 || (c.name != "payment names another quote" && ch[len(ch)-1].QuoteID != "") {
			t.Errorf("%s: the fresh challenge should not carry the refused quote: %+v", c.name, ch[len(ch)-1])
		}
	}
	if e.h.delivered.Load() != 1 || e.proc.TotalSettled() != 1 {
		t.Fatalf("refused quotes delivered %d / settled %d", e.h.delivered.Load(), e.proc.TotalSettled())
	}
	// The MPP binding: a credential naming the quote it was issued for.
	r = e.do("POST", "/v1/claims/verify/quick", claimBody, with(pay("0xA", "q-ok", "quote="+fresh.ID), httpgate.HeaderQuoteID, fresh.ID))
	if r.status != 200 {
		t.Fatalf("bound quote: %d %s", r.status, r.body)
	}
}

func TestGateCustomerKey(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	ctx := context.Background()
	cu, key, err := e.cashier.CreateCustomer(ctx, "Acme", "ops@acme.test")
	if err != nil || !strings.HasPrefix(key, "ask_") {
		t.Fatal(key, err)
	}
	bad := e.do("POST", "/v1/claims/verify/quick", claimBody, map[string]string{httpgate.HeaderCustomerKey: "ask_wrong"})
	if bad.status != 401 || detail(t, bad.body) != "A valid X-Agentic-Customer-Key is required" || len(e.proc.Challenges()) != 0 {
		t.Fatalf("invalid customer key: %d %s", bad.status, bad.body)
	}
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, with(pay("0xA", "n1"), httpgate.HeaderCustomerKey, key))
	if r.status != 200 || !strings.Contains(string(r.body), cu.ID) {
		t.Fatalf("customer call: %d %s", r.status, r.body)
	}
	orders, _, err := paymentstore.New(e.db).CustomerOrders(ctx, cu.ID, payment.OrderPage{Limit: 10})
	if err != nil || len(orders) != 1 || orders[0].ID != r.header.Get(httpgate.HeaderOrderID) {
		t.Fatalf("customer orders = %v %v", orders, err)
	}
}

func TestGateNichePurchaseGetsOrderAndReceipt(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	id := "niche_0123456789abcdef0123456789abcdef"
	r := e.do("GET", "/v1/niches/"+id+"/pay-per-call", "", pay("0xA", "n1"))
	if r.status != 200 || r.header.Get(httpgate.HeaderReceiptID) == "" {
		t.Fatalf("niche purchase: %d %s", r.status, r.body)
	}
	if ch := e.proc.Challenges(); len(ch) != 0 {
		t.Fatal("paid niche call challenged")
	}
	data, _ := paymentstore.New(e.db).Receipt(context.Background(), r.header.Get(httpgate.HeaderOrderID))
	rc, err := payment.VerifyReceipt(data, e.cashier.Keys().JWKS())
	if err != nil || rc.ResultKind != "niche" || rc.ResultID != id || rc.OfferID != "niche.evaluation" || rc.AmountMicroUSD != 250000 {
		t.Fatalf("niche receipt: %+v %v", rc, err)
	}
}

func TestGateCardPayment(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, pay("cus_stripe_1", "pi1", "method=stripe"))
	if r.status != 200 {
		t.Fatalf("card: %d %s", r.status, r.body)
	}
	if o := e.order(r.header.Get(httpgate.HeaderOrderID)); o.Protocol != payment.ProtocolMPPStripe || o.AmountMicroUSD != 500000 {
		t.Fatalf("card order = %+v", o)
	}
}

func TestGateStreamingHandlerGetsTrailers(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	r := e.do("POST", "/v1/stream", claimBody, pay("0xA", "s1"))
	if r.status != 200 || !strings.Contains(string(r.body), "data: 2") || r.header.Get(httpgate.HeaderOrderID) == "" {
		t.Fatalf("stream: %d %v %s", r.status, r.header, r.body)
	}
	rid := r.trail.Get(httpgate.HeaderReceiptID)
	if rid == "" || r.trail.Get("PAYMENT-RESPONSE") == "" {
		t.Fatalf("trailers = %v", r.trail)
	}
	o := e.order(r.header.Get(httpgate.HeaderOrderID))
	if o.ReceiptID != rid || o.ResultSHA256 != hashHex(string(r.body)) {
		t.Fatalf("streamed order = %+v", o)
	}
}

// TestGateConcurrentSamePayment fires one payment from 50 goroutines: one
// delivery, one settlement, one completed order.
func TestGateConcurrentSamePayment(t *testing.T) {
	e := newEnv(t, openDB(t, storetest.SQLitePath(t)), &gatetest.Processor{SettleDelay: 5 * time.Millisecond}, nil)
	raceOnePayment(t, []*env{e})
}

// TestGateConcurrentAcrossInstances runs two gates (two servers, two
// database handles) on one database: SQLite file and PostgreSQL schema.
func TestGateConcurrentAcrossInstances(t *testing.T) {
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite-file": func(t *testing.T) string { return storetest.SQLitePath(t) },
		"postgres":    func(t *testing.T) string { return storetest.MigratedPostgresURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			proc := &gatetest.Processor{SettleDelay: 5 * time.Millisecond}
			a := newEnv(t, openDB(t, d), proc, nil)
			b := newEnv(t, openDB(t, d), proc, nil)
			if a.cashier.Keys().KeyID() != b.cashier.Keys().KeyID() {
				t.Fatal("instances sharing a database sign with different keys")
			}
			raceOnePayment(t, []*env{a, b})
		})
	}
}

func raceOnePayment(t *testing.T, envs []*env) {
	const n = 50
	urls := make([]string, len(envs))
	for i, e := range envs {
		urls[i] = e.url
	}
	got := fireOnePayment(t, urls, n, map[string]string{gatetest.Header: gatetest.Credential("0xRace", "same-nonce")})
	ok, used := got.ok, got.used
	delivered := int64(0)
	completed := 0
	for _, e := range envs {
		delivered += e.h.delivered.Load()
	}
	completed = envs[0].countOrders(payment.OrderCompleted)
	if ok != 1 || used != n-1 || delivered != 1 || completed != 1 || envs[0].proc.Settled("0xrace", "same-nonce") != 1 {
		t.Fatalf("200s %d, refused %d, deliveries %d, completed orders %d, settlements %d; want 1, %d, 1, 1, 1",
			ok, used, delivered, completed, envs[0].proc.Settled("0xrace", "same-nonce"), n-1)
	}
}

// fired counts the answers to copies of one payment.
type fired struct {
	ok       int // 200, delivered (not a replay)
	replayed int // 200 replays of the delivered order
	inFlight int // 409: the payment's order is still processing
	pending  int // 202: the payment's order is settling
	used     int // 402 "Payment already used"
}

// fireOnePayment sends n concurrent quick-tier calls carrying the same
// payment headers, spread over the servers at urls, and counts the
// answers; any other answer, or a replay of another order than the one
// delivered, fails t.
func fireOnePayment(t *testing.T, urls []string, n int, headers map[string]string) fired {
	t.Helper()
	var wg sync.WaitGroup
	statuses := make([]int, n)
	bodies := make([][]byte, n)
	hdrs := make([]http.Header, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", urls[i%len(urls)]+"/v1/claims/verify/quick", strings.NewReader(claimBody))
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			statuses[i] = res.StatusCode
			hdrs[i] = res.Header
			bodies[i], _ = io.ReadAll(res.Body)
		}()
	}
	wg.Wait()
	var f fired
	orders := map[string]bool{}
	for i, s := range statuses {
		switch {
		case s == 200 && hdrs[i].Get(httpgate.HeaderReplay) == "true":
			f.replayed++
			orders[hdrs[i].Get(httpgate.HeaderOrderID)] = true
		case s == 200:
			f.ok++
			orders[hdrs[i].Get(httpgate.HeaderOrderID)] = true
		case s == 409 && strings.Contains(string(bodies[i]), payment.PaymentInFlightDetail):
			f.inFlight++
		case s == 202 && strings.Contains(string(bodies[i]), `"status":"settling"`):
			f.pending++
		case s == 402 && strings.Contains(string(bodies[i]), "Payment already used"):
			f.used++
		default:
			t.Errorf("unexpected answer %d %s", s, bodies[i])
		}
	}
	if len(orders) > 1 {
		t.Errorf("copies of one payment answered with %d orders", len(orders))
	}
	return f
}

func TestNewGateNeedsAPublicBase(t *testing.T) {
	db := emptyDB.Open(t, nil)
	keys, _ := payment.LoadKeyring(context.Background(), db, "")
	for _, base := range []string{"", "ftp://x", "https://", "https://a.example/?q=1"} {
		if _, err := httpgate.New(&gatetest.Processor{}, paymentstore.New(db), &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys}, PublicBaseURL: base}); err == nil {
			t.Errorf("httpgate.New accepted base %q", base)
		}
	}
	if _, err := httpgate.New(&gatetest.Processor{}, paymentstore.New(db), &httpgate.Options{PublicBaseURL: publicBase}); err == nil {
		t.Error("httpgate.New accepted no receipt keys")
	}
}

func TestReconcileAfterRestartTakesEveryOpenOrder(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	ctx := context.Background()
	cred, _ := gatetest.ParseCredential(gatetest.Credential("0xA", "n1"))
	ch, err := e.cashier.Begin(ctx, quickOffer, payment.Resource{URL: publicBase + "/x"}, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A settlement left pending, then a crash.
	e.proc.SetSettleError("n2", payment.ErrSettlementPending)
	if r := e.do("POST", "/v1/claims/verify/quick", claimBody, pay("0xA", "n2")); r.status != 202 {
		t.Fatalf("pending: %d %s", r.status, r.body)
	}
	e.proc.Check = func(o *payment.Order) (*payment.Settlement, error) {
		return &payment.Settlement{Reference: "0xafter", Network: gatetest.Network}, nil
	}
	// Without the age threshold, both fresh orders are handled at once.
	rep, err := e.cashier.ReconcileAfterRestart(ctx)
	if err != nil || rep.Interrupted != 1 || rep.Completed != 1 {
		t.Fatalf("after restart: %+v %v", rep, err)
	}
	if o := e.order(ch.Order().ID); o.Status != payment.OrderFailed || o.FailureReason != "interrupted" {
		t.Fatalf("interrupted order = %+v", o)
	}
}

// The gate used on its own bounds the request bodies it reads: 413 before
// any payment step, at the default limit or a configured one.
func TestGateBoundsRequestBodies(t *testing.T) {
	big := `{"claim":"` + strings.Repeat("x", httpgate.DefaultMaxRequestBytes) + `"}`
	e := newEnv(t, nil, nil, nil)
	r := e.do("POST", "/v1/claims/verify/quick", big, pay("0xA", "n1"))
	if r.status != 413 || !strings.Contains(detail(t, r.body), "Request body too large") || r.header.Get("PAYMENT-REQUIRED") != "" {
		t.Fatalf("default limit: %d %s", r.status, r.body)
	}
	if e.proc.TotalSettled() != 0 || len(e.proc.Challenges()) != 0 || e.h.delivered.Load() != 0 {
		t.Fatal("an oversized request reached a payment step or the handler")
	}
	small := newEnv(t, nil, nil, func(o *httpgate.Options) { o.MaxRequestBytes = 64 })
	if r := small.do("POST", "/v1/claims/verify/quick", `{"claim":"`+strings.Repeat("y", 64)+`"}`, nil); r.status != 413 {
		t.Fatalf("configured limit: %d %s", r.status, r.body)
	}
	if r := small.do("POST", "/v1/claims/verify/quick", claimBody, pay("0xA", "n2")); r.status != 200 {
		t.Fatalf("within the limit: %d %s", r.status, r.body)
	}
	unlimited := newEnv(t, nil, nil, func(o *httpgate.Options) { o.MaxRequestBytes, o.MaxResponseBytes = -1, 4<<20 })
	if r := unlimited.do("POST", "/v1/claims/verify/quick", big, pay("0xA", "n3")); r.status != 200 {
		t.Fatalf("no limit: %d", r.status)
	}
}
