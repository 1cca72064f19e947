package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/google/go-cmp/cmp"
)

const testAdminKey = "admin-secret"

type commerceEnv struct {
	t    *testing.T
	h    http.Handler
	db   *store.DB
	gate *httpgate.Gate
	proc *gatetest.Processor
}

// paidEcho is a paid route: it records a result and usage and echoes the
// payer.
type paidEcho struct{}

func (paidEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call, _ := payment.CallFrom(r.Context())
	call.SetResult("verification", "cv_0123456789abcdef0123456789abcdef")
	call.AddUsage(payment.Usage{Provider: "openai", Model: "gpt", InputTokens: 2000, CachedInputTokens: 1000, OutputTokens: 1000, SearchCalls: 3})
	httpjson := fmt.Sprintf(`{"verificationId":"cv_0123456789abcdef0123456789abcdef","payer":%q}`, call.Payer)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, httpjson)
}

func newCommerceEnv(t *testing.T) *commerceEnv {
	t.Helper()
	db := emptyDB.Open(t, nil)
	keys, err := payment.LoadKeyring(context.Background(), db, "")
	if err != nil {
		t.Fatal(err)
	}
	proc := &gatetest.Processor{}
	gate, err := httpgate.New(proc, paymentstore.New(db), &httpgate.Options{PublicBaseURL: "https://api.example.test", ReadCredential: gatetest.ReadCredential,
		CashierOptions: payment.CashierOptions{Keys: keys, Costs: payment.CostPrices{InputPerMillion: 1_000_000, CachedInputPerMillion: 100_000, OutputPerMillion: 4_000_000, PerSearchCall: 10_000}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Paywall: gate, AdminKey: testAdminKey, Commerce: CommerceConfig{Cashier: gate.Cashier()}})
	if err != nil {
		t.Fatal(err)
	}
	offer := payment.Offer{ID: "claims.verify.quick", Product: "quick", AmountMicroUSD: 20000, CardMicroUSD: 500000}
	s.routes = append(s.routes, &Route{ID: "test.paid", Method: "POST", Path: "/v1/claims/verify/quick", Prefixes: []string{"/claim-verification"},
		Offer: &offer, Handler: s.Paid(offer, paidEcho{})})
	rt := &router{maxBody: s.cfg.MaxBodyBytes}
	for _, r := range s.routes {
		for _, p := range r.Patterns() {
			if err := rt.add(r.Method, p, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &commerceEnv{t: t, h: s.observe(s.cors(rt)), db: db, gate: gate, proc: proc}
}

func (e *commerceEnv) do(method, target, body string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	return do(e.t, e.h, method, target, body, hdr...)
}

func (e *commerceEnv) paidCall(nonce string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	rec := e.do("POST", "/v1/claims/verify/quick", `{"claim":"abc"}`, append([]string{gatetest.Header, gatetest.Credential("0xA", nonce)}, hdr...)...)
	if rec.Code != 200 {
		e.t.Fatalf("paid call: %d %s", rec.Code, rec.Body)
	}
	return rec
}

func decodeJSON[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("body %s: %v", rec.Body, err)
	}
	return v
}

func wantDetail(t *testing.T, rec *httptest.ResponseRecorder, status int, detail string) {
	t.Helper()
	if rec.Code != status || strings.TrimSpace(rec.Body.String()) != `{"detail":"`+detail+`"}` {
		t.Errorf("got %d %s, want %d %q", rec.Code, rec.Body, status, detail)
	}
}

func TestCommerceQuotes(t *testing.T) {
	e := newCommerceEnv(t)
	for _, c := range []struct {
		path, body, tier string
		amount           int64
	}{
		{"/v1/quotes", `{"tier":"deep"}`, "deep", 120000},
		{"/v1/quotes", `{}`, "standard", 50000},
		{"/claim-verification/v1/quotes", `{"tier":"research"}`, "research", 250000},
		{"/v1/quotes", `{"tier":"quick"}`, "quick", 20000},
	} {
		rec := e.do("POST", c.path, c.body)
		q := decodeJSON[struct {
			QuoteID, Tier, Currency, CreatedAt, ExpiresAt, Operation string
			AmountMicrousd, CardAmountMicrousd                       int64
			PaymentMethods                                           []string
			PaymentOptions                                           []payment.PaymentOption
		}](t, rec)
		created, _ := time.Parse(time.RFC3339, q.CreatedAt)
		expires, _ := time.Parse(time.RFC3339, q.ExpiresAt)
		if rec.Code != 200 || q.Tier != c.tier || q.AmountMicrousd != c.amount || q.CardAmountMicrousd != 500000 || q.Currency != "USD" ||
			!strings.HasPrefix(q.QuoteID, "quo_") || expires.Sub(created) != 15*time.Minute || len(q.PaymentOptions) != 3 {
			t.Errorf("%s %s: %d %s", c.path, c.body, rec.Code, rec.Body)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "private, no-store" {
			t.Errorf("Cache-Control = %q", cc)
		}
	}
	if rec := e.do("POST", "/v1/quotes", `{"tier":"platinum"}`); rec.Code != 422 || rec.Body.String() != `{"detail":[{"type":"literal_error","loc":["body","tier"],"msg":"Input should be 'quick', 'standard', 'deep' or 'research'","input":"platinum","ctx":{"expected":"'quick', 'standard', 'deep' or 'research'"}}]}` {
		t.Errorf("unknown tier: %d %s", rec.Code, rec.Body)
	}
	// The quote pays for its tier.
	q := decodeJSON[struct{ QuoteID string }](t, e.do("POST", "/v1/quotes", `{"tier":"quick"}`))
	rec := e.paidCall("n-quote", httpgate.HeaderQuoteID, q.QuoteID)
	o, err := paymentstore.New(e.db).Order(context.Background(), rec.Header().Get(httpgate.HeaderOrderID))
	if err != nil || o.QuoteID != q.QuoteID {
		t.Fatalf("order %+v %v", o, err)
	}
}

func TestCommerceOrderLookup(t *testing.T) {
	e := newCommerceEnv(t)
	paid := e.paidCall("n1")
	id, token := paid.Header().Get(httpgate.HeaderOrderID), paid.Header().Get(httpgate.HeaderOrderToken)
	wantDetail(t, e.do("GET", "/v1/orders/"+id, ""), 401, "X-Agentic-Order-Token is required")
	wantDetail(t, e.do("GET", "/v1/orders/"+id, "", httpgate.HeaderOrderToken, "ort_wrong"), 404, "Order not found")
	wantDetail(t, e.do("GET", "/v1/orders/ord_00000000000000000000000000000000", "", httpgate.HeaderOrderToken, token), 404, "Order not found")
	wantDetail(t, e.do("GET", "/v1/orders/not-an-id", "", httpgate.HeaderOrderToken, token), 404, "Order not found")
	for _, path := range []string{"/v1/orders/" + id, "/claim-verification/v1/orders/" + id} {
		rec := e.do("GET", path, "", httpgate.HeaderOrderToken, token)
		v := decodeJSON[map[string]any](t, rec)
		receipt, _ := v["receipt"].(map[string]any)
		if rec.Code != 200 || v["status"] != "completed" || v["orderId"] != id || v["tier"] != "quick" || receipt["receiptId"] != v["receiptId"] ||
			v["amountMicrousd"] != float64(20000) || rec.Header().Get("Cache-Control") != "private, no-store" {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
		if _, leaked := v["costMicrousd"]; leaked {
			t.Error("payer view shows our cost")
		}
	}
	res := e.do("GET", "/v1/orders/"+id+"/result", "", httpgate.HeaderOrderToken, token)
	if res.Code != 200 || !bytes.Equal(res.Body.Bytes(), paid.Body.Bytes()) || res.Header().Get(httpgate.HeaderReceiptID) != paid.Header().Get(httpgate.HeaderReceiptID) {
		t.Errorf("result: %d %s", res.Code, res.Body)
	}
	// A failed order can be looked up too, and has no result.
	e.proc.SetSettleError("n2", &payment.Problem{Status: 402, Detail: "Insufficient funds"})
	failed := e.do("POST", "/v1/claims/verify/quick", `{"claim":"abc"}`, gatetest.Header, gatetest.Credential("0xA", "n2"))
	fid, ftoken := failed.Header().Get(httpgate.HeaderOrderID), failed.Header().Get(httpgate.HeaderOrderToken)
	v := decodeJSON[map[string]any](t, e.do("GET", "/v1/orders/"+fid, "", httpgate.HeaderOrderToken, ftoken))
	if v["status"] != "failed" || v["failureReason"] != "settlement failed: Insufficient funds" || v["receipt"] != nil {
		t.Errorf("failed order view: %v", v)
	}
	wantDetail(t, e.do("GET", "/v1/orders/"+fid+"/result", "", httpgate.HeaderOrderToken, ftoken), 409, "The order is failed; its result is available once it is completed")
}

type receiptCheckBody struct {
	OrderID                                                        string
	Valid, SignatureValid, KeyKnown, ContentsValid, MatchesRecords bool
	Problems                                                       []string
}

func TestCommerceReceiptVerification(t *testing.T) {
	e := newCommerceEnv(t)
	paid := e.paidCall("n1")
	other := e.paidCall("n2")
	id, oid := paid.Header().Get(httpgate.HeaderOrderID), other.Header().Get(httpgate.HeaderOrderID)
	stored := decodeJSON[receiptCheckBody](t, e.do("GET", "/v1/receipts/"+id+"/verify", ""))
	if !stored.Valid || !stored.MatchesRecords || len(stored.Problems) != 0 {
		t.Fatalf("stored receipt: %+v", stored)
	}
	wantDetail(t, e.do("GET", "/v1/receipts/ord_00000000000000000000000000000000/verify", ""), 404, "Receipt not found")

	receipt, err := paymentstore.New(e.db).Receipt(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	tamper := func(k string, v any) string {
		var m map[string]any
		_ = json.Unmarshal(receipt, &m)
		m[k] = v
		b, _ := json.Marshal(m)
		return string(b)
	}
	wrap := func(r string) string { return `{"receipt":` + r + `}` }
	otherKey, _ := payment.ParseKeyring(payment.GenerateReceiptKey())
	var foreign payment.Receipt
	_ = json.Unmarshal(receipt, &foreign)
	foreignSigned, _ := payment.SignReceipt(otherKey, &foreign)
	cases := []struct {
		name, path, body string
		want             receiptCheckBody
	}{
		{"wrapped", id, `{"receipt":` + string(receipt) + `}`, receiptCheckBody{Valid: true, SignatureValid: true, KeyKnown: true, ContentsValid: true, MatchesRecords: true}},
		{"extra member ignored", id, `{"note":"x","receipt":` + string(receipt) + `}`, receiptCheckBody{Valid: true, SignatureValid: true, KeyKnown: true, ContentsValid: true, MatchesRecords: true}},
		{"amount tampered", id, wrap(tamper("amountMicrousd", 1)), receiptCheckBody{KeyKnown: true, MatchesRecords: false}},
		{"result hash tampered", id, wrap(tamper("resultSha256", strings.Repeat("0", 64))), receiptCheckBody{KeyKnown: true}},
		{"signed by someone else", id, wrap(string(foreignSigned)), receiptCheckBody{MatchesRecords: true}}, // a copy of our contents, not our signature
		{"presented for another order", oid, wrap(string(receipt)), receiptCheckBody{SignatureValid: true, KeyKnown: true, ContentsValid: true}},
	}
	for _, c := range cases {
		rec := e.do("POST", "/v1/receipts/"+c.path+"/verify", c.body)
		got := decodeJSON[receiptCheckBody](t, rec)
		c.want.OrderID = c.path
		if rec.Code != 200 || got.Valid != c.want.Valid || got.SignatureValid != c.want.SignatureValid || got.KeyKnown != c.want.KeyKnown ||
			got.ContentsValid != c.want.ContentsValid || got.MatchesRecords != c.want.MatchesRecords || got.OrderID != c.path {
			t.Errorf("%s: %d %s", c.name, rec.Code, rec.Body)
		}
		if !got.Valid && len(got.Problems) == 0 {
			t.Errorf("%s: invalid without a reason", c.name)
		}
	}
	// The body is the ReceiptVerifyRequest shape, validated as FastAPI
	// would: a bare receipt lacks "receipt"; invalid JSON anywhere is
	// json_invalid.
	for _, body := range []string{`[1]`, `"x"`, `{"receipt":5}`, `{`, ``, string(receipt), `{"receipt":{},"x":[1,}`} {
		if rec := e.do("POST", "/v1/receipts/"+id+"/verify", body); rec.Code != 422 || !strings.HasPrefix(rec.Body.String(), `{"detail":[{"type":`) {
			t.Errorf("body %s: %d %s", body, rec.Code, rec.Body)
		}
	}
	// An order that does not exist (or cannot: a malformed id) has no
	// receipt on record, as for the stored receipt.
	for _, unknown := range []string{"ord_00000000000000000000000000000000", "nothing"} {
		wantDetail(t, e.do("POST", "/v1/receipts/"+unknown+"/verify", wrap(string(receipt))), 404, "Receipt not found")
	}
}

func TestCommerceJWKSVerifiesReceiptsOffline(t *testing.T) {
	e := newCommerceEnv(t)
	paid := e.paidCall("n1")
	receipt, _ := paymentstore.New(e.db).Receipt(context.Background(), paid.Header().Get(httpgate.HeaderOrderID))
	for _, path := range []string{"/.well-known/jwks.json", "/claim-verification/.well-known/jwks.json", "/niche-discovery/.well-known/jwks.json"} {
		rec := e.do("GET", path, "")
		jwks := decodeJSON[payment.JWKS](t, rec)
		if rec.Code != 200 || len(jwks.Keys) != 1 || jwks.Keys[0].Kty != "OKP" || jwks.Keys[0].Crv != "Ed25519" || jwks.Keys[0].Kid == "" {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		if _, err := payment.VerifyReceipt(receipt, jwks); err != nil {
			t.Fatalf("%s: receipt does not verify with the published keys: %v", path, err)
		}
	}
}

func TestCommerceCustomers(t *testing.T) {
	e := newCommerceEnv(t)
	admin := []string{"Authorization", "Bearer " + testAdminKey}
	if rec := e.do("POST", "/v1/admin/customers", `{"name":"Acme"}`); rec.Code != 401 {
		t.Fatalf("without admin key: %d", rec.Code)
	}
	for _, body := range []string{`{"name":""}`, `{"name":"` + strings.Repeat("n", 201) + `"}`, `{"name":"a","email":"` + strings.Repeat("e", 321) + `"}`} {
		if rec := e.do("POST", "/v1/admin/customers", body, admin...); rec.Code != 422 {
			t.Errorf("%.40s: %d %s", body, rec.Code, rec.Body)
		}
	}
	rec := e.do("POST", "/v1/admin/customers", `{"name":"Acme","email":"ops@acme.test"}`, admin...)
	cu := decodeJSON[struct {
		CustomerID, Name, Status, APIKey string
		Email                            *string
		APIKeyShownOnce                  bool
	}](t, rec)
	if rec.Code != 200 || !strings.HasPrefix(cu.CustomerID, "cus_") || !strings.HasPrefix(cu.APIKey, "ask_") || !cu.APIKeyShownOnce || cu.Status != "active" {
		t.Fatalf("create customer: %d %s", rec.Code, rec.Body)
	}
	other := decodeJSON[struct{ APIKey string }](t, e.do("POST", "/v1/admin/customers", `{"name":"Other"}`, admin...))
	key := []string{httpgate.HeaderCustomerKey, cu.APIKey}
	var ids []string
	for i := range 5 {
		rec := e.paidCall(fmt.Sprintf("c%d", i), key...)
		ids = append([]string{rec.Header().Get(httpgate.HeaderOrderID)}, ids...)
		time.Sleep(2 * time.Millisecond)
	}
	e.paidCall("no-customer")
	wantDetail(t, e.do("GET", "/v1/customer/orders", ""), 401, "A valid X-Agentic-Customer-Key is required")
	wantDetail(t, e.do("GET", "/v1/customer/orders", "", httpgate.HeaderCustomerKey, "ask_nope"), 401, "A valid X-Agentic-Customer-Key is required")
	var got []string
	next := ""
	for range 5 {
		target := "/v1/customer/orders?limit=2"
		if next != "" {
			target += "&cursor=" + next
		}
		page := decodeJSON[struct {
			Orders     []struct{ OrderID, CustomerID string }
			NextCursor *string
		}](t, e.do("GET", target, "", key...))
		for _, o := range page.Orders {
			got = append(got, o.OrderID)
			if o.CustomerID != cu.CustomerID {
				t.Errorf("another customer's order listed: %+v", o)
			}
		}
		if page.NextCursor == nil {
			break
		}
		next = *page.NextCursor
	}
	if d := cmp.Diff(ids, got); d != "" {
		t.Errorf("pages differ (-want +got):\n%s", d)
	}
	byOffset := decodeJSON[struct{ Orders []struct{ OrderID string } }](t, e.do("GET", "/claim-verification/v1/customer/orders?offset=4", "", key...))
	if len(byOffset.Orders) != 1 || byOffset.Orders[0].OrderID != ids[4] {
		t.Errorf("offset page: %+v", byOffset)
	}
	for _, q := range []string{"limit=0", "limit=201", "offset=-1"} {
		if rec := e.do("GET", "/v1/customer/orders?"+q, "", key...); rec.Code != 422 {
			t.Errorf("%s: %d %s", q, rec.Code, rec.Body)
		}
	}
	if rec := e.do("GET", "/v1/customer/orders?cursor=zzz", "", key...); rec.Code != 422 ||
		!strings.HasPrefix(rec.Body.String(), `{"detail":[{"type":"value_error","loc":["query","cursor"],`) {
		t.Errorf("bad cursor: %d %s", rec.Code, rec.Body)
	}
	if rec := e.do("GET", "/v1/customer/orders/"+ids[0], "", key...); rec.Code != 200 {
		t.Errorf("own order: %d", rec.Code)
	}
	wantDetail(t, e.do("GET", "/v1/customer/orders/"+ids[0], "", httpgate.HeaderCustomerKey, other.APIKey), 404, "Order not found")
}

func TestCommerceAdminCosts(t *testing.T) {
	e := newCommerceEnv(t)
	admin := []string{"Authorization", "Bearer " + testAdminKey}
	paid := e.paidCall("n1")
	e.proc.SetSettleError("n2", &payment.Problem{Status: 402, Detail: "no"})
	e.do("POST", "/v1/claims/verify/quick", `{"claim":"abc"}`, gatetest.Header, gatetest.Credential("0xA", "n2"))
	id := paid.Header().Get(httpgate.HeaderOrderID)
	if rec := e.do("GET", "/v1/admin/orders/"+id, ""); rec.Code != 401 {
		t.Fatalf("admin view without key: %d", rec.Code)
	}
	v := decodeJSON[struct {
		OrderID                      string
		CostMicrousd, MarginMicrousd int64
		Usage                        struct{ InputTokens, CachedInputTokens, OutputTokens, SearchCalls int }
	}](t, e.do("GET", "/v1/admin/orders/"+id, "", admin...))
	// 1000 uncached × 1 USD/M + 1000 cached × 0.1 USD/M + 1000 out × 4 USD/M + 3 × 0.01 = 1000 + 100 + 4000 + 30000.
	if v.OrderID != id || v.CostMicrousd != 35100 || v.MarginMicrousd != 20000-35100 || v.Usage.SearchCalls != 3 || v.Usage.CachedInputTokens != 1000 {
		t.Fatalf("admin order: %+v", v)
	}
	wantDetail(t, e.do("GET", "/v1/admin/orders/ord_00000000000000000000000000000000", "", admin...), 404, "Order not found")
	sum := decodeJSON[struct {
		Days   int
		Offers []struct {
			OfferID                                       string
			Orders, Completed, Failed                     int64
			RevenueMicrousd, CostMicrousd, MarginMicrousd int64
		}
	}](t, e.do("GET", "/v1/admin/orders/summary?days=7", "", admin...))
	if sum.Days != 7 || len(sum.Offers) != 1 || sum.Offers[0].Orders != 2 || sum.Offers[0].Completed != 1 || sum.Offers[0].Failed != 1 ||
		sum.Offers[0].RevenueMicrousd != 20000 || sum.Offers[0].CostMicrousd != 35100 {
		t.Fatalf("summary: %+v", sum)
	}
	if rec := e.do("GET", "/v1/admin/orders/summary?days=0", "", admin...); rec.Code != 422 {
		t.Errorf("days=0: %d", rec.Code)
	}
}

func TestCommerceRoutesAreDescribed(t *testing.T) {
	e := newCommerceEnv(t)
	caps := decodeJSON[struct {
		Capabilities []struct{ ID, Path, Method string }
	}](t, e.do("GET", "/v1/capabilities", ""))
	seen := map[string]bool{}
	for _, c := range caps.Capabilities {
		seen[c.ID] = true
	}
	for _, id := range []string{"commerce.quotes.create", "commerce.orders.get", "commerce.orders.result", "commerce.customer.orders.list",
		"commerce.customer.orders.get", "commerce.receipts.verify.stored", "commerce.receipts.verify", "commerce.jwks",
		"commerce.admin.customers.create", "commerce.admin.orders.get", "commerce.admin.orders.summary"} {
		if !seen[id] {
			t.Errorf("capability %s missing", id)
		}
	}
	s, _ := New(Config{})
	if rs, _ := s.commerceRoutes(); rs != nil {
		t.Error("commerce routes mounted without a cashier")
	}
}

// TestAdminOpenOrdersAndResolve: the operator sees what is not finished
// and can have a settling order resolved now.
func TestAdminOpenOrdersAndResolve(t *testing.T) {
	e := newCommerceEnv(t)
	admin := []string{"Authorization", "Bearer " + testAdminKey}
	e.proc.SetSettleError("n1", fmt.Errorf("facilitator timeout: %w", payment.ErrSettlementPending))
	r := e.do("POST", "/v1/claims/verify/quick", `{"claim":"abc"}`, gatetest.Header, gatetest.Credential("0xA", "n1"))
	if r.Code != http.StatusAccepted {
		t.Fatalf("pending settlement: %d %s", r.Code, r.Body)
	}
	id := r.Header().Get(httpgate.HeaderOrderID)
	if rec := e.do("GET", "/claim-verification/v1/admin/orders/open", ""); rec.Code != http.StatusUnauthorized && rec.Code != http.StatusForbidden {
		t.Fatalf("without the admin key: %d", rec.Code)
	}
	var open OpenOrders
	rec := e.do("GET", "/claim-verification/v1/admin/orders/open", "", admin...)
	if err := json.Unmarshal(rec.Body.Bytes(), &open); err != nil || rec.Code != 200 || open.Count != 1 || len(open.Orders) != 1 {
		t.Fatalf("open orders: %d %s", rec.Code, rec.Body)
	}
	if o := open.Orders[0]; o.OrderID != id || o.Status != string(payment.OrderSettling) || o.Attempts != 1 ||
		!strings.Contains(o.Reason, "facilitator timeout") || o.NextAttemptAt == nil {
		t.Fatalf("open order %+v", o)
	}
	// Resolve now: the processor learns it settled.
	e.proc.Check = func(o *payment.Order) (*payment.Settlement, error) {
		return &payment.Settlement{Reference: "0xresolved", Network: gatetest.Network}, nil
	}
	var res Resolution
	rec = e.do("POST", "/claim-verification/v1/admin/orders/"+id+"/resolve", "", admin...)
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != 200 || res.Outcome != "settled" || res.Status != string(payment.OrderCompleted) {
		t.Fatalf("resolve: %d %s", rec.Code, rec.Body)
	}
	if rec := e.do("GET", "/claim-verification/v1/admin/orders/open", "", admin...); !strings.Contains(rec.Body.String(), `"count":0`) {
		t.Fatalf("open orders after resolution: %s", rec.Body)
	}
	rec = e.do("POST", "/claim-verification/v1/admin/orders/"+id+"/resolve", "", admin...)
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.Outcome != "not_open" || res.Status != string(payment.OrderCompleted) {
		t.Fatalf("resolve a completed order: %d %s", rec.Code, rec.Body)
	}
	if rec := e.do("POST", "/claim-verification/v1/admin/orders/ord_unknown/resolve", "", admin...); rec.Code != http.StatusNotFound {
		t.Fatalf("unknown order: %d %s", rec.Code, rec.Body)
	}
}
