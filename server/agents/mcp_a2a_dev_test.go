package agents

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"
	x402seller "github.com/assaykit/assay/payment/x402/seller"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// devEnv is a full server with the real payment processor in dev mode:
// real x402 and MPP challenges, real EIP-3009 signature checks, settlement
// recorded without moving funds.
type devEnv struct {
	*paidEnv
	proc *protocols.Processor
}

func newDevEnv(t *testing.T) *devEnv { return newDevEnvWith(t, devOptions{}) }

// devOptions change newDevEnv.
type devOptions struct {
	// dsn is the database (shared by the instances of one test); "" means
	// a private in-memory SQLite database.
	dsn string
	// now is the payment clock (nil: time.Now).
	now func() time.Time
	// engine builds the claims engine on the database (nil: the
	// "confirmed" fixture's scripted provider and snapshotter).
	engine func(db *store.DB) *claims.Engine
	// niche serves the demo niche catalogue too (on a private database).
	niche bool
}

func newDevEnvWith(t *testing.T, o devOptions) *devEnv {
	t.Helper()
	ctx := context.Background()
	if o.dsn == "" {
		o.dsn = ":memory:"
	}
	var db *store.DB
	if o.niche {
		db = demoCatalogue.Open(t, nil)
	} else {
		var err error
		if db, err = anydb.Open(ctx, o.dsn, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
	}
	var prov *claimstest.Provider
	var eng *claims.Engine
	if o.engine != nil {
		eng = o.engine(db)
	} else {
		f, err := claimstest.LoadFixture("confirmed")
		if err != nil {
			t.Fatal(err)
		}
		prov = f.Provider()
		if eng, err = claims.New(prov, claimsstore.New(db), f.Snapshotter(), nil); err != nil {
			t.Fatal(err)
		}
	}
	now := o.now
	proc, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true,
		MPPSecret: []byte("mpp-secret-for-transport-tests-0123456789"), Realm: "api.example.test", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	gate, err := httpgate.New(proc, paymentstore.New(db), &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys, Now: now}, PublicBaseURL: agentsTestBase})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Paywall: gate, Claims: ClaimsConfig{Engine: eng}, Commerce: CommerceConfig{Cashier: gate.Cashier()},
		MCP: MCPConfig{PublicBaseURL: agentsTestBase}, A2A: A2AConfig{PublicBaseURL: agentsTestBase}}
	var ne *niche.Engine
	if o.niche {
		if ne, err = niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources()}); err != nil {
			t.Fatal(err)
		}
		signer, err := niche.NewUnlockSigner([]byte("unlock-key-for-transport-tests-0123456789"), nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Niche = NicheConfig{Engine: ne, Unlock: signer}
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env := &paidEnv{t: t, db: db, prov: prov, eng: eng, gate: gate, srv: srv, niche: ne}
	env.hs = newLoopbackServer(t, srv)
	env.client = env.hs.Client()
	return &devEnv{paidEnv: env, proc: proc}
}

// signFor signs an x402 v2 payment for a PaymentRequired object with the
// dev wallet, as @x402/evm would; it returns the payload as JSON.
func signFor(t *testing.T, pr []byte) json.RawMessage {
	t.Helper()
	ch := &payment.Challenge{PaymentRequired: pr}
	hdr := paymenttest.X402V2(t, paymenttest.DevWallet(), ch, time.Now())
	raw, err := base64.StdEncoding.DecodeString(hdr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestMCPDevProcessor(t *testing.T) {
	env := newDevEnv(t)
	cs := env.mcpSession("/claim-verification/mcp", nil)
	unpaid := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, nil)
	pr := []byte(unpaid.Content[0].(*mcp.TextContent).Text)
	var req x402.PaymentRequired
	if err := json.Unmarshal(pr, &req); err != nil || !unpaid.IsError || req.Resource.URL != "mcp://api.example.test/verify_claim" ||
		req.Accepts[0].Amount != "50000" || req.Accepts[0].Network != "eip155:8453" {
		t.Fatalf("PaymentRequired %s", pr)
	}
	pay := signFor(t, pr)
	var payObj map[string]any
	if err := json.Unmarshal(pay, &payObj); err != nil {
		t.Fatal(err)
	}
	r := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: payObj})
	if r.IsError {
		t.Fatalf("paid: %s", r.Content[0].(*mcp.TextContent).Text)
	}
	sr, _ := r.Meta[metaPaymentResponse].(map[string]any)
	tx, _ := sr["transaction"].(string)
	if sr["success"] != true || !strings.HasPrefix(tx, x402seller.DevReferencePrefix) ||
		!strings.EqualFold(sr["payer"].(string), paymenttest.DevAddress) {
		t.Fatalf("settlement %v", r.Meta)
	}
	cm := structured(t, r)["commerce"].(map[string]any)
	if rc := env.receipt(cm["orderId"].(string)); !rc.Dev || rc.SettlementReference != tx || rc.Tier != "standard" {
		t.Fatalf("receipt %+v", rc)
	}
	// The same payment for the same call is the same purchase: the same
	// bytes, order and receipt, and a fresh token that replaces the first.
	again := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: payObj})
	acm, _ := structured(t, again)["commerce"].(map[string]any)
	if again.IsError || again.Content[0].(*mcp.TextContent).Text != r.Content[0].(*mcp.TextContent).Text || acm["replay"] != true ||
		acm["orderId"] != cm["orderId"] || acm["receiptId"] != cm["receiptId"] {
		t.Fatalf("the payment presented again: %v", structured(t, again))
	}
	env.checkRotated(cm["orderId"].(string), cm["orderToken"].(string), acm["orderToken"].(string))
	// For another call it is used: refused over MCP, and over HTTP (where
	// its resource is not even this one).
	other := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim + " Really."}, mcp.Meta{metaPayment: payObj})
	if m := structured(t, other); !other.IsError || m["error"] != payment.ReasonPaymentUsed {
		t.Fatalf("another call: %v", m)
	}
	st, b := env.post("/claim-verification/v1/claims/verify", string(mustJSON(map[string]string{"claim": testClaim})),
		map[string]string{x402.HeaderPaymentSignature: base64.StdEncoding.EncodeToString(pay)})
	if st != 402 {
		t.Fatalf("HTTP with the MCP payment: %d %s", st, b)
	}
	// A signature for another tool's resource does not pay this one.
	deep := callTool(t, cs, "verify_claim_deep", map[string]any{"claim": testClaim}, nil)
	deepPay := signFor(t, []byte(deep.Content[0].(*mcp.TextContent).Text))
	var deepObj map[string]any
	_ = json.Unmarshal(deepPay, &deepObj)
	r = callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: deepObj})
	if m := structured(t, r); !r.IsError || m["x402Version"] == nil {
		t.Fatalf("wrong resource accepted: %v", m)
	}
	// The base64 header form is accepted too.
	fresh := signFor(t, pr)
	r = callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: base64.StdEncoding.EncodeToString(fresh)})
	if r.IsError {
		t.Fatalf("base64 payment: %s", r.Content[0].(*mcp.TextContent).Text)
	}
}

func TestA2ADevProcessor(t *testing.T) {
	env := newDevEnv(t)
	for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
		body := sendBody(method, testClaim, map[string]any{"tier": "deep"})
		st, hd, b := env.do("POST", a2aPath, body, a2aHeaders())
		if st != 402 || len(hd.Values("Www-Authenticate")) == 0 {
			t.Fatalf("%s unpaid: %d %v %s", method, st, hd, b)
		}
		raw, err := base64.StdEncoding.DecodeString(hd.Get(x402.HeaderPaymentRequired))
		if err != nil {
			t.Fatal(err)
		}
		pay := base64.StdEncoding.EncodeToString(signFor(t, raw))
		req, _ := http.NewRequest("POST", env.hs.URL+a2aPath, strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set(x402.HeaderPaymentSignature, pay)
		resp, err := env.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var last string
		if method == "SendMessage" {
			b, _ := io.ReadAll(resp.Body)
			if task := decodeRPC(t, b).task(t); task.Status.State != a2aCompleted {
				t.Fatalf("task %+v", task)
			}
			last = resp.Header.Get(x402.HeaderPaymentResponse)
		} else {
			sseEvents(t, resp.Body, func(_ rpcAnswer, ev a2aEvent) bool { return true })
			last = resp.Trailer.Get(x402.HeaderPaymentResponse)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || last == "" || !strings.HasPrefix(resp.Header.Get(httpgate.HeaderOrderID), "ord_") {
			t.Fatalf("%s paid: %d %v %v", method, resp.StatusCode, resp.Header, resp.Trailer)
		}
		var sr x402.SettleResponse
		if err := x402.DecodeHeader(last, &sr); err != nil || !sr.Success || !strings.HasPrefix(sr.Transaction, x402seller.DevReferencePrefix) {
			t.Fatalf("%s settlement %q: %v", method, last, err)
		}
		o := env.order(resp.Header.Get(httpgate.HeaderOrderID))
		if o.Status != payment.OrderCompleted || o.Tier != "deep" || !o.Dev {
			t.Fatalf("%s order %+v", method, o)
		}
		// The same payment for the same request: the same purchase again,
		// with a fresh token; for another request: used.
		st, ahd, ab := env.do("POST", a2aPath, body, a2aHeaders(x402.HeaderPaymentSignature, pay))
		if st != 200 || ahd.Get(httpgate.HeaderReplay) != "true" || ahd.Get(httpgate.HeaderOrderID) != o.ID || ahd.Get(httpgate.HeaderReceiptID) != o.ReceiptID {
			t.Fatalf("%s presented again: %d %v %s", method, st, ahd, ab)
		}
		if method == "SendMessage" {
			if task := decodeRPC(t, ab).task(t); task.ID != o.ID || task.Status.State != a2aCompleted {
				t.Fatalf("%s presented again: task %+v", method, task)
			}
		} else {
			n := 0
			sseEvents(t, strings.NewReader(string(ab)), func(_ rpcAnswer, ev a2aEvent) bool {
				if ev.Task != nil && ev.Task.ID == o.ID && ev.Task.Status.State == a2aCompleted && len(ev.Task.Artifacts) == 1 {
					n++
				}
				return true
			})
			if n != 1 {
				t.Fatalf("%s presented again: %s", method, ab)
			}
		}
		env.checkRotated(o.ID, resp.Header.Get(httpgate.HeaderOrderToken), ahd.Get(httpgate.HeaderOrderToken))
		// GetTask answers the fresh token, not the old one.
		for tok, want := range map[string]bool{ahd.Get(httpgate.HeaderOrderToken): true, resp.Header.Get(httpgate.HeaderOrderToken): false} {
			_, _, gb := env.do("POST", a2aPath, `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"`+o.ID+`"}}`,
				a2aHeaders(httpgate.HeaderOrderToken, tok))
			if got := decodeRPC(t, gb).Error == nil; got != want {
				t.Fatalf("%s GetTask with the %v token: %s", method, map[bool]string{true: "fresh", false: "old"}[want], gb)
			}
		}
		otherBody := sendBody(method, testClaim+" Really.", map[string]any{"tier": "deep"})
		st, ohd, b := env.do("POST", a2aPath, otherBody, a2aHeaders(x402.HeaderPaymentSignature, pay))
		var opr x402.PaymentRequired
		if st != 402 || !strings.Contains(string(b), payment.ReasonPaymentUsed) ||
			x402.DecodeHeader(ohd.Get(x402.HeaderPaymentRequired), &opr) != nil || opr.Error != payment.ReasonPaymentUsed {
			t.Fatalf("%s for another request: %d %s (PAYMENT-REQUIRED error %q)", method, st, b, opr.Error)
		}
	}
}

// checkRotated checks that the order's token is the fresh one: the old
// token no longer reads the order, the fresh one does.
func (e *paidEnv) checkRotated(orderID, oldToken, freshToken string) {
	e.t.Helper()
	if oldToken == "" || freshToken == "" || oldToken == freshToken {
		e.t.Fatalf("tokens %q then %q: want two different tokens", oldToken, freshToken)
	}
	if st, b := e.get("/claim-verification/v1/orders/"+orderID, map[string]string{httpgate.HeaderOrderToken: freshToken}); st != 200 {
		e.t.Fatalf("the fresh token: %d %s", st, b)
	}
	if st, b := e.get("/claim-verification/v1/orders/"+orderID, map[string]string{httpgate.HeaderOrderToken: oldToken}); st != 404 {
		e.t.Fatalf("the old token still works: %d %s", st, b)
	}
}
