package agents

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/protocols"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noVerdictEnv is a full server whose provider finds too little evidence
// (every verdict insufficient_evidence), with the real payment processor
// in production mode against a fake facilitator, so that a settlement is
// a /settle call the test can count.
type noVerdictEnv struct {
	*paidEnv
	fac *paymenttest.Facilitator
}

func newNoVerdictEnv(t *testing.T, policy sell.NoVerdictNoCharge) *noVerdictEnv {
	t.Helper()
	ctx := context.Background()
	db, err := anydb.Open(ctx, ":memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f, err := claimstest.LoadFixture("all_insufficient")
	if err != nil {
		t.Fatal(err)
	}
	prov := f.Provider()
	eng, err := claims.New(prov, claimsstore.New(db), f.Snapshotter(), nil)
	if err != nil {
		t.Fatal(err)
	}
	fac := paymenttest.NewFacilitator(t)
	xf, err := x402.NewFacilitator(&x402.FacilitatorOptions{URL: fac.URL, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	proc, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Facilitator: xf,
		MPPSecret: []byte("mpp-secret-for-transport-tests-0123456789"), Realm: "api.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	gate, err := httpgate.New(proc, paymentstore.New(db), &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys}, PublicBaseURL: agentsTestBase})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := sell.NewCatalogue(&sell.CatalogueOptions{NoVerdictNoCharge: policy})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Paywall: gate, Claims: ClaimsConfig{Engine: eng}, Commerce: CommerceConfig{Cashier: gate.Cashier()}, Catalogue: cat,
		MCP: MCPConfig{PublicBaseURL: agentsTestBase}, A2A: A2AConfig{PublicBaseURL: agentsTestBase}})
	if err != nil {
		t.Fatal(err)
	}
	env := &paidEnv{t: t, db: db, prov: prov, eng: eng, gate: gate, srv: srv}
	env.hs = newLoopbackServer(t, srv)
	env.client = env.hs.Client()
	return &noVerdictEnv{paidEnv: env, fac: fac}
}

// paidQuick makes one paid quick-tier verification over transport (http,
// mcp or a2a) with a fresh x402 payment of the dev wallet, and returns its
// order id and the delivered verdict.
func (e *noVerdictEnv) paidQuick(transport, claim string) (orderID string, status claims.Status) {
	t := e.t.(*testing.T)
	t.Helper()
	var res struct {
		Status claims.Status `json:"status"`
	}
	switch transport {
	case "http":
		path, body := "/claim-verification/v1/claims/verify/quick", string(mustJSON(map[string]string{"claim": claim}))
		st, hd, b := e.do("POST", path, body, nil)
		raw, err := base64.StdEncoding.DecodeString(hd.Get(x402.HeaderPaymentRequired))
		if st != 402 || err != nil {
			t.Fatalf("HTTP unpaid: %d %s", st, b)
		}
		if !strings.Contains(string(raw), "insufficient_evidence") {
			t.Errorf("the 402 does not state the charge policy: %s", raw)
		}
		st, hd, b = e.do("POST", path, body, map[string]string{x402.HeaderPaymentSignature: base64.StdEncoding.EncodeToString(signFor(t, raw))})
		if st != 200 || json.Unmarshal(b, &res) != nil {
			t.Fatalf("HTTP paid: %d %s", st, b)
		}
		if o := e.order(hd.Get(httpgate.HeaderOrderID)); hd.Get(httpgate.HeaderOrderStatus) != string(o.Status) {
			t.Errorf("HTTP: %s %q, the order is %s", httpgate.HeaderOrderStatus, hd.Get(httpgate.HeaderOrderStatus), o.Status)
		}
		return hd.Get(httpgate.HeaderOrderID), res.Status
	case "mcp":
		cs := e.mcpSession("/claim-verification/mcp", nil)
		unpaid := callTool(t, cs, "verify_claim_quick", map[string]any{"claim": claim}, nil)
		pr := []byte(unpaid.Content[0].(*mcp.TextContent).Text)
		var payObj map[string]any
		if err := json.Unmarshal(signFor(t, pr), &payObj); err != nil || !unpaid.IsError {
			t.Fatalf("MCP unpaid: %s", pr)
		}
		r := callTool(t, cs, "verify_claim_quick", map[string]any{"claim": claim}, mcp.Meta{metaPayment: payObj})
		if r.IsError || json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &res) != nil {
			t.Fatalf("MCP paid: %s", r.Content[0].(*mcp.TextContent).Text)
		}
		cm := structured(t, r)["commerce"].(map[string]any)
		if o := e.order(cm["orderId"].(string)); cm["status"] != string(o.Status) || cm["receiptId"] != o.ReceiptID {
			t.Errorf("MCP commerce %v, the order is %s", cm, o.Status)
		}
		return cm["orderId"].(string), res.Status
	case "a2a":
		body := sendBody("SendMessage", claim, map[string]any{"tier": "quick"})
		st, hd, b := e.do("POST", a2aPath, body, a2aHeaders())
		raw, err := base64.StdEncoding.DecodeString(hd.Get(x402.HeaderPaymentRequired))
		if st != 402 || err != nil {
			t.Fatalf("A2A unpaid: %d %s", st, b)
		}
		st, hd, b = e.do("POST", a2aPath, body, a2aHeaders(x402.HeaderPaymentSignature, base64.StdEncoding.EncodeToString(signFor(t, raw))))
		task := decodeRPC(t, b).task(t)
		if st != 200 || task.Status.State != a2aCompleted || len(task.Artifacts) != 1 {
			t.Fatalf("A2A paid: %d %s", st, b)
		}
		if hd.Get(httpgate.HeaderOrderStatus) != string(e.order(task.ID).Status) {
			t.Errorf("A2A: %s %q, the order is %s", httpgate.HeaderOrderStatus, hd.Get(httpgate.HeaderOrderStatus), e.order(task.ID).Status)
		}
		for _, p := range task.Artifacts[0].Parts {
			if p.Data != nil {
				b, _ := json.Marshal(p.Data)
				_ = json.Unmarshal(b, &res)
			}
		}
		return hd.Get(httpgate.HeaderOrderID), res.Status
	}
	t.Fatalf("transport %s", transport)
	return "", ""
}

// "No verdict, no charge": with the option on, an insufficient_evidence
// verdict is delivered over HTTP, MCP and A2A without any /settle call,
// its order voided and its receipt voided (amount 0); beyond the payer's
// daily bound the next one is charged; with the option off every one
// settles.
func TestNoVerdictNoCharge(t *testing.T) {
	transports := []string{"http", "mcp", "a2a"}
	t.Run("on", func(t *testing.T) {
		env := newNoVerdictEnv(t, sell.NoVerdictNoCharge{Tiers: []string{claims.Quick}, PerPayerPerDay: len(transports)})
		for i, tr := range transports {
			id, status := env.paidQuick(tr, testClaim+" #"+tr)
			if status != claims.StatusInsufficientEvidence {
				t.Fatalf("%s: verdict %s, want insufficient_evidence", tr, status)
			}
			o := env.order(id)
			r := env.receipt(id)
			if o.Status != payment.OrderVoided || !r.Voided || r.AmountMicroUSD != 0 || r.SettlementReference != "" || r.ResultID == "" {
				t.Errorf("%s: order %s, receipt %+v; want voided", tr, o.Status, r)
			}
			if d := r.MatchesOrder(o); d != nil {
				t.Errorf("%s: receipt and order disagree: %v", tr, d)
			}
			if n := len(env.fac.Calls("/settle")); n != 0 {
				t.Fatalf("after %d free verdicts: %d /settle calls", i+1, n)
			}
		}
		// The payer's daily bound is used up: the next one is charged.
		id, _ := env.paidQuick("http", testClaim+" #beyond")
		if o := env.order(id); o.Status != payment.OrderCompleted || len(env.fac.Calls("/settle")) != 1 {
			t.Errorf("beyond the bound: order %s, %d /settle calls; want completed and 1", o.Status, len(env.fac.Calls("/settle")))
		}
	})
	t.Run("off", func(t *testing.T) {
		env := newNoVerdictEnv(t, sell.NoVerdictNoCharge{})
		for i, tr := range transports {
			id, status := env.paidQuick(tr, testClaim+" #"+tr)
			o := env.order(id)
			if status != claims.StatusInsufficientEvidence || o.Status != payment.OrderCompleted || env.receipt(id).Voided {
				t.Errorf("%s: verdict %s, order %s; want a charged insufficient_evidence", tr, status, o.Status)
			}
			if n := len(env.fac.Calls("/settle")); n != i+1 {
				t.Fatalf("after %d charged verdicts: %d /settle calls", i+1, n)
			}
		}
	})
}
