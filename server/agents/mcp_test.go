package agents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const testClaim = "Exampleton raised its minimum wage to $18.00 per hour, effective 1 November 2026."

// mcpSession connects the official Go client over streamable HTTP.
func (e *paidEnv) mcpSession(path string, prog *progressLog) *mcp.ClientSession {
	e.t.Helper()
	opts := &mcp.ClientOptions{}
	if prog != nil {
		opts.ProgressNotificationHandler = func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) {
			prog.add(r.Params.Message)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "assay-test", Version: "0"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.hs.URL + path, DisableStandaloneSSE: true}, nil)
	if err != nil {
		e.t.Fatalf("connect %s: %v", path, err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// structured returns structuredContent as a map (and checks that
// content[0].text holds JSON).
func structured(t testing.TB, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	if len(r.Content) == 0 {
		t.Fatal("no content")
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok || !json.Valid([]byte(tc.Text)) {
		t.Fatalf("content[0] is not JSON text: %#v", r.Content[0])
	}
	return m
}

func metaNumber(r *mcp.CallToolResult, key string) float64 {
	f, _ := r.Meta[key].(float64)
	return f
}

func TestMCPListTools(t *testing.T) {
	env := newPaidEnv(t, nil)
	for _, path := range []string{"/mcp", "/claim-verification/mcp"} {
		cs := env.mcpSession(path, nil)
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*mcp.Tool{}
		var names []string
		for _, tl := range lt.Tools {
			byName[tl.Name] = tl
			names = append(names, tl.Name)
		}
		want := []string{"list_verification_tiers", "verify_claim", "verify_claim_deep", "verify_claim_quick", "verify_claim_research"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Fatalf("%s tools (-want +got):\n%s", path, diff)
		}
		if byName["list_verification_tiers"].OutputSchema == nil {
			t.Error("the free tool declares no output schema")
		}
		for _, tier := range claims.Tiers() {
			tl := byName[tierListing(tier.Name).MCPTool]
			if tl.OutputSchema != nil {
				t.Errorf("%s declares an outputSchema (it would reject the PaymentRequired result)", tierListing(tier.Name).MCPTool)
			}
			b, _ := json.Marshal(tl.InputSchema)
			var s struct {
				Type       string                    `json:"type"`
				Required   []string                  `json:"required"`
				Additional bool                      `json:"additionalProperties"`
				Props      map[string]map[string]any `json:"properties"`
			}
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			if s.Type != "object" || s.Additional || !cmp.Equal(s.Required, []string{"claim"}) {
				t.Errorf("%s schema: %s", tierListing(tier.Name).MCPTool, b)
			}
			// maxSources keeps the shape's bound (larger values are clamped
			// to the tier cap, as on HTTP); minimumSources above the cap is
			// refused (and so is one above the pages the tier checks
			// quotes on), so the lower of the two is its maximum.
			if got := s.Props["maxSources"]["maximum"]; got != float64(20) {
				t.Errorf("%s maxSources maximum = %v, want the shape's 20", tierListing(tier.Name).MCPTool, got)
			}
			if d, _ := s.Props["maxSources"]["description"].(string); !strings.Contains(d, fmt.Sprintf("clamped to %d", tier.MaxCitedSources)) {
				t.Errorf("%s maxSources description %q does not say it is clamped to %d", tierListing(tier.Name).MCPTool, d, tier.MaxCitedSources)
			}
			if got := s.Props["minimumSources"]["maximum"]; got != float64(min(10, tier.MaxMinimumSources())) {
				t.Errorf("%s minimumSources maximum = %v, want %d", tierListing(tier.Name).MCPTool, got, min(10, tier.MaxMinimumSources()))
			}
			if got := s.Props["claim"]["minLength"]; got != float64(3) {
				t.Errorf("%s claim minLength = %v", tierListing(tier.Name).MCPTool, got)
			}
			if len(s.Props) != 11 {
				t.Errorf("%s has %d properties, want the 11 of ClaimVerificationRequest", tierListing(tier.Name).MCPTool, len(s.Props))
			}
		}
	}
}

func TestMCPListTiers(t *testing.T) {
	env := newPaidEnv(t, nil)
	r := callTool(t, env.mcpSession("/mcp", nil), "list_verification_tiers", map[string]any{}, nil)
	if r.IsError {
		t.Fatalf("error: %+v", r.Content)
	}
	var got tiersList
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Tiers) != 4 || got.Tiers[0].Tier != "quick" || got.Tiers[0].PriceUSD != "0.02" || got.Tiers[3].PriceMicrousd != 250000 ||
		got.Tiers[1].Tool != "verify_claim" || got.Tiers[2].MaxCitedSources != 15 || got.Tiers[3].SnapshotMode != "all_sources" {
		t.Fatalf("tiers: %s", b)
	}
	if env.countOrders() != 0 {
		t.Fatal("the free tool opened an order")
	}
}

// An unpaid call answers the x402 PaymentRequired object as a tool error:
// nothing is charged, the provider is not called.
func TestMCPUnpaid(t *testing.T) {
	env := newPaidEnv(t, nil)
	cs := env.mcpSession("/claim-verification/mcp", nil)
	r := callTool(t, cs, "verify_claim_deep", map[string]any{"claim": testClaim}, nil)
	if !r.IsError || metaNumber(r, metaStatus) != 402 {
		t.Fatalf("unpaid: isError=%v meta=%v", r.IsError, r.Meta)
	}
	m := structured(t, r)
	if m["x402Version"] != float64(2) || m["accepts"] == nil {
		t.Fatalf("not a PaymentRequired: %v", m)
	}
	if res, _ := m["resource"].(map[string]any); res["url"] != "mcp://api.example.test/verify_claim_deep" {
		t.Fatalf("resource %v", m["resource"])
	}
	acc := m["accepts"].([]any)[0].(map[string]any)
	if acc["amount"] != "120000" {
		t.Fatalf("amount %v", acc["amount"])
	}
	text := r.Content[0].(*mcp.TextContent).Text
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil || !cmp.Equal(fromText, m) {
		t.Fatalf("content[0].text differs from structuredContent: %s", text)
	}
	if env.prov.Calls() != 0 || env.countOrders() != 0 || env.proc.TotalSettled() != 0 {
		t.Fatal("an unpaid call did work")
	}
}

// Invalid arguments and tier rules get the HTTP route's 422 body, never a
// challenge or a charge, even with a payment attached.
func TestMCPInvalidArguments(t *testing.T) {
	env := newPaidEnv(t, nil)
	cs := env.mcpSession("/mcp", nil)
	pay := mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "n-invalid")}
	tests := []struct {
		name, tool, body string
	}{
		{"short claim", "verify_claim", `{"claim":"ab"}`},
		{"extra key", "verify_claim", `{"bogus":1,"claim":"A fine claim."}`},
		{"tier cap", "verify_claim_quick", `{"claim":"Some claim.","minimumSources":4}`},
		{"official_only", "verify_claim", `{"claim":"Some claim.","sourcePolicy":"official_only"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tt.body), &args); err != nil {
				t.Fatal(err)
			}
			r := callTool(t, cs, tt.tool, args, pay)
			if !r.IsError || metaNumber(r, metaStatus) != 422 {
				t.Fatalf("isError=%v meta=%v", r.IsError, r.Meta)
			}
			tier := strings.TrimPrefix(strings.TrimPrefix(tt.tool, "verify_claim"), "_")
			path := "/v1/claims/verify"
			if tier != "" {
				path += "/" + tier
			}
			httpStatus, httpBody := env.post(path, tt.body, nil)
			if httpStatus != 422 {
				t.Fatalf("HTTP answered %d", httpStatus)
			}
			got := r.Content[0].(*mcp.TextContent).Text
			if got != string(httpBody) {
				t.Fatalf("MCP and HTTP refusals differ:\nMCP  %s\nHTTP %s", got, httpBody)
			}
		})
	}
	if env.prov.Calls() != 0 || env.countOrders() != 0 || len(env.proc.Challenges()) != 0 {
		t.Fatalf("invalid input did work: provider %d, orders %d, challenges %d", env.prov.Calls(), env.countOrders(), len(env.proc.Challenges()))
	}
}

// A paid call: verified, reserved, run with progress, settled, receipt
// signed over the exact result bytes; the same payment again is refused.
func TestMCPPaid(t *testing.T) {
	env := newPaidEnv(t, nil)
	prog := &progressLog{}
	cs := env.mcpSession("/claim-verification/mcp", prog)
	payer, nonce := "0xAbC0000000000000000000000000000000000001", "n-paid-1"
	meta := mcp.Meta{metaPayment: gatetest.Credential(payer, nonce), "progressToken": "p1"}
	r := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, meta)
	if r.IsError {
		t.Fatalf("paid call failed: %s", r.Content[0].(*mcp.TextContent).Text)
	}
	m := structured(t, r)
	cm, _ := m["commerce"].(map[string]any)
	orderID, _ := cm["orderId"].(string)
	if !strings.HasPrefix(orderID, "ord_") || !strings.HasPrefix(cm["orderToken"].(string), "ort_") ||
		!strings.HasPrefix(cm["receiptId"].(string), "rcpt_") || cm["status"] != "completed" || cm["orderUrl"] != agentsTestBase+"/v1/orders/"+orderID {
		t.Fatalf("commerce %v", cm)
	}
	if m["status"] != "confirmed" || !strings.HasPrefix(m["verificationId"].(string), "cv_") {
		t.Fatalf("result %v", m)
	}
	pr, ok := r.Meta[metaPaymentResponse].(map[string]any)
	if !ok || pr["success"] != true || pr["transaction"] != "0xtx-"+nonce {
		t.Fatalf("payment response %v", r.Meta)
	}
	if env.proc.Settled(payer, nonce) != 1 {
		t.Fatalf("settled %d times", env.proc.Settled(payer, nonce))
	}
	o := env.order(orderID)
	if o.Status != payment.OrderCompleted || o.Tier != "standard" || o.OfferID != "claims.verify.standard" || o.AmountMicroUSD != 50000 ||
		o.ResultKind != "verification" || o.ResultID != m["verificationId"] {
		t.Fatalf("order %+v", o)
	}
	rc := env.receipt(orderID)
	text := r.Content[0].(*mcp.TextContent).Text
	sum := sha256.Sum256([]byte(text))
	if rc.ResultSHA256 != hex.EncodeToString(sum[:]) || rc.ReceiptID != cm["receiptId"] {
		t.Fatalf("receipt %+v does not hash content[0].text", rc)
	}
	if strings.Contains(text, "commerce") {
		t.Fatal("content[0].text must be the result alone (the receipt hashes it)")
	}
	// The order token reads the order over HTTP.
	st, body := env.get("/v1/orders/"+orderID, map[string]string{"X-Agentic-Order-Token": cm["orderToken"].(string)})
	if st != 200 || !strings.Contains(string(body), `"status":"completed"`) {
		t.Fatalf("order lookup %d %s", st, body)
	}
	// Progress arrived in order.
	want := []string{"started", "searching the web for evidence", "reconciling the evidence with its sources",
		"snapshotting cited sources", "settling the payment", "done"}
	if diff := cmp.Diff(want, prog.wait(len(want))); diff != "" {
		t.Fatalf("progress (-want +got):\n%s", diff)
	}

	// The same payment again, also for another tool: refused, not settled.
	for _, tool := range []string{"verify_claim", "verify_claim_deep"} {
		again := callTool(t, cs, tool, map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential(payer, nonce)})
		am := structured(t, again)
		if !again.IsError || am["x402Version"] == nil || am["error"] != payment.ReasonPaymentUsed {
			t.Fatalf("%s replayed payment: %v", tool, am)
		}
		prob, _ := again.Meta[metaProblem].(map[string]any)
		if prob["detail"] != "Payment already used" {
			t.Fatalf("problem %v", again.Meta)
		}
	}
	if env.proc.Settled(payer, nonce) != 1 || env.prov.Calls() != 1 {
		t.Fatalf("replay: settled %d, provider %d", env.proc.Settled(payer, nonce), env.prov.Calls())
	}
}

// Refused payments: a fresh PaymentRequired with the reason, nothing run.
func TestMCPBadPayments(t *testing.T) {
	env := newPaidEnv(t, nil)
	cs := env.mcpSession("/mcp", nil)
	tests := []struct {
		name   string
		pay    any
		reason string
		status float64
	}{
		{"bad signature", gatetest.Credential("0xaaa", "bad-1"), "invalid_exact_evm_payload_signature", 402},
		{"expired", gatetest.Credential("0xaaa", "expired-1"), "invalid_exact_evm_payload_authorization_valid_before", 402},
		{"wrong amount", "payer=0xaaa;nonce=amt-1;amount=1", "invalid_exact_evm_payload_authorization_value_mismatch", 402},
		{"malformed", "garbage", "invalid_payload", 400},
		{"not a string", map[string]any{"x": 1}, "invalid_payload", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: tt.pay})
			m := structured(t, r)
			if !r.IsError || m["x402Version"] == nil || m["error"] != tt.reason || metaNumber(r, metaStatus) != tt.status {
				t.Fatalf("isError=%v error=%v meta=%v", r.IsError, m["error"], r.Meta)
			}
		})
	}
	// The processor cannot answer: 503, the payment stays usable.
	r := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "down-1")})
	if !r.IsError || metaNumber(r, metaStatus) != 503 {
		t.Fatalf("processor down: %v", r.Meta)
	}
	if env.prov.Calls() != 0 || env.countOrders() != 0 {
		t.Fatal("a refused payment ran the verification")
	}
}

// A provider failure fails the order and settles nothing.
func TestMCPProviderFailure(t *testing.T) {
	prov := claimstest.NewProvider(claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderFailed, Err: errors.New("boom")}})
	env := newPaidEnv(t, &envOptions{provider: prov})
	cs := env.mcpSession("/mcp", nil)
	r := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "n-fail")})
	m := structured(t, r)
	cm, _ := m["commerce"].(map[string]any)
	if !r.IsError || metaNumber(r, metaStatus) != 502 || m["detail"] != "Evidence provider failed" || cm["status"] != "failed" {
		t.Fatalf("failure answer: %v %v", m, r.Meta)
	}
	o := env.order(cm["orderId"].(string))
	if o.Status != payment.OrderFailed || !strings.Contains(o.FailureReason, "502") {
		t.Fatalf("order %+v", o)
	}
	if env.proc.TotalSettled() != 0 || env.proc.Voided("0xaaa", "n-fail") != 1 {
		t.Fatalf("settled %d voided %d", env.proc.TotalSettled(), env.proc.Voided("0xaaa", "n-fail"))
	}
	// The failed order released the payment: the payer may use it again.
	r = callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "n-fail")})
	if structured(t, r)["detail"] != "Evidence provider failed" {
		t.Fatal("the released payment was refused")
	}
}

func TestMCPSettlement(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		env := newPaidEnv(t, nil)
		env.proc.SetSettleError("n-s1", &payment.Problem{Status: 402, Type: "verification-failed", Reason: "insufficient_funds", Detail: "Insufficient funds"})
		r := callTool(t, env.mcpSession("/mcp", nil), "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "n-s1")})
		m := structured(t, r)
		if !r.IsError || m["x402Version"] == nil || m["error"] != "insufficient_funds" || m["conclusion"] != nil {
			t.Fatalf("settlement failure: %v", m)
		}
		prob := r.Meta[metaProblem].(map[string]any)
		if !strings.HasPrefix(prob["detail"].(string), "Settlement failed") {
			t.Fatalf("problem %v", prob)
		}
		if text := r.Content[0].(*mcp.TextContent).Text; strings.Contains(text, "conclusion") {
			t.Fatal("the result was delivered although settlement failed")
		}
	})
	t.Run("pending", func(t *testing.T) {
		env := newPaidEnv(t, nil)
		env.proc.SetSettleError("n-s2", payment.ErrSettlementPending)
		r := callTool(t, env.mcpSession("/mcp", nil), "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "n-s2")})
		m := structured(t, r)
		cm, _ := m["commerce"].(map[string]any)
		if !r.IsError || metaNumber(r, metaStatus) != 202 || cm["status"] != "settling" || m["conclusion"] != nil {
			t.Fatalf("pending: %v", m)
		}
		if o := env.order(cm["orderId"].(string)); o.Status != payment.OrderSettling {
			t.Fatalf("order %s", o.Status)
		}
	})
}

// The same idempotency key and arguments return the first order's result,
// charging nothing; other arguments under the same key are a conflict.
func TestMCPIdempotency(t *testing.T) {
	env := newPaidEnv(t, nil)
	cs := env.mcpSession("/mcp", nil)
	first := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim},
		mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "i-1"), metaIdempotencyKey: "key-1"})
	second := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim},
		mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "i-2"), metaIdempotencyKey: "key-1"})
	if first.IsError || second.IsError {
		t.Fatal("idempotent calls failed")
	}
	a, b := structured(t, first), structured(t, second)
	ca, cb := a["commerce"].(map[string]any), b["commerce"].(map[string]any)
	// The replay carries a fresh token, which replaces the first.
	if a["verificationId"] != b["verificationId"] || ca["orderId"] != cb["orderId"] || cb["replay"] != true ||
		cb["orderToken"] == nil || cb["orderToken"] == ca["orderToken"] {
		t.Fatalf("replay: %v / %v", ca, cb)
	}
	env.checkRotated(ca["orderId"].(string), ca["orderToken"].(string), cb["orderToken"].(string))
	if first.Content[0].(*mcp.TextContent).Text != second.Content[0].(*mcp.TextContent).Text {
		t.Fatal("the replay is not the stored result")
	}
	if env.proc.Settled("0xaaa", "i-1") != 1 || env.proc.Settled("0xaaa", "i-2") != 0 || env.proc.Voided("0xaaa", "i-2") != 1 {
		t.Fatal("the replay was charged")
	}
	r := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim + " Again."},
		mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "i-3"), metaIdempotencyKey: "key-1"})
	if !r.IsError || metaNumber(r, metaStatus) != 409 {
		t.Fatalf("conflict: %v", r.Meta)
	}
	long := strings.Repeat("k", 256)
	r = callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "i-4"), metaIdempotencyKey: long})
	if !r.IsError || metaNumber(r, metaStatus) != 422 {
		t.Fatalf("long key: %v", r.Meta)
	}
}

// otherPaywall is a paywall that is neither a *httpgate.Gate nor
// httpgate.Free: MCP cannot charge through it.
type otherPaywall struct{}

func (otherPaywall) Gate(_ payment.Offer, h http.Handler) http.Handler { return h }

// Without a charging paywall paid tools say so (a server with no paywall
// at all is refused by New); under httpgate.Free they run without charge.
func TestMCPPaywalls(t *testing.T) {
	if _, err := New(Config{Claims: ClaimsConfig{Engine: newPaidEnv(t, nil).eng}}); !errors.Is(err, server.ErrNoPaywall) {
		t.Fatalf("no paywall: %v", err)
	}
	env := newPaidEnv(t, &envOptions{paywall: otherPaywall{}})
	r := callTool(t, env.mcpSession("/mcp", nil), "verify_claim", map[string]any{"claim": testClaim}, nil)
	if !r.IsError || metaNumber(r, metaStatus) != 503 || structured(t, r)["detail"] != "Payments are not configured" {
		t.Fatalf("no paywall: %v", r.Meta)
	}
	env = newPaidEnv(t, &envOptions{paywall: httpgate.Free{}})
	prog := &progressLog{}
	r = callTool(t, env.mcpSession("/mcp", prog), "verify_claim_quick", map[string]any{"claim": testClaim}, mcp.Meta{"progressToken": 7})
	if r.IsError || structured(t, r)["status"] != "confirmed" || env.countOrders() != 0 {
		t.Fatalf("free: %v", r.Content)
	}
	if got := prog.wait(4); len(got) != 4 || got[0] != "started" || got[3] != "done" {
		t.Fatalf("free progress %v", got)
	}
}

// The MCP server works over in-memory transports too.
func TestMCPInMemory(t *testing.T) {
	env := newPaidEnv(t, nil)
	ms, err := newMCPServer(env.srv, MCP{PublicBaseURL: agentsTestBase, ReadCredential: gatetestCredential})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t1, t2 := mcp.NewInMemoryTransports()
	ss, err := ms.srv.Connect(ctx, t1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	prog := &progressLog{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) { prog.add(r.Params.Message) },
	}).Connect(ctx, t2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	r := callTool(t, cs, "verify_claim_deep", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential("0xbbb", "mem-1"), "progressToken": "m"})
	if r.IsError || structured(t, r)["commerce"] == nil || env.proc.Settled("0xbbb", "mem-1") != 1 {
		t.Fatalf("in-memory paid call: %v", r.Content)
	}
	if got := prog.wait(6); len(got) != 6 {
		t.Fatalf("in-memory progress %v", got)
	}
}

// DNS-rebinding and cross-origin protection, and their options.
func TestMCPRequestProtection(t *testing.T) {
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`
	hdr := map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range hdr {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	env := newPaidEnv(t, nil)
	if st, b := env.post("/mcp", initBody, hdr); st != 200 {
		t.Fatalf("plain initialize: %d %s", st, b)
	}
	if st, _ := env.post("/mcp", initBody, with(map[string]string{"Host": "api.example.test"})); st != http.StatusForbidden {
		t.Fatalf("public Host on a loopback connection: %d, want 403", st)
	}
	cross := with(map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if st, _ := env.post("/mcp", initBody, cross); st != http.StatusForbidden {
		t.Fatalf("cross-origin POST: %d, want 403", st)
	}
	env = newPaidEnv(t, &envOptions{config: func(c *Config) {
		c.MCP.DisableLocalhostProtection = true
		c.MCP.TrustedOrigins = []string{"https://evil.example"}
	}})
	if st, b := env.post("/mcp", initBody, with(map[string]string{"Host": "api.example.test"})); st != 200 {
		t.Fatalf("behind a proxy: %d %s", st, b)
	}
	if st, b := env.post("/mcp", initBody, cross); st != 200 {
		t.Fatalf("trusted origin: %d %s", st, b)
	}
}

func TestMCPConfigErrors(t *testing.T) {
	env := newPaidEnv(t, nil)
	cfg := Config{Paywall: env.gate, Claims: ClaimsConfig{Engine: env.eng}}
	cfg.MCP.PublicBaseURL = "ftp://x"
	if _, err := New(cfg); err == nil {
		t.Fatal("bad public base URL accepted")
	}
	cfg.NoMCP = true
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Routes() {
		if r.ID == "mcp" {
			t.Fatal("disabled MCP mounted")
		}
	}
}

// Without a public base URL, resources use the request's Host.
func TestMCPResourceFromHost(t *testing.T) {
	env := newPaidEnv(t, &envOptions{config: func(c *Config) { c.MCP.PublicBaseURL = "" }})
	r := callTool(t, env.mcpSession("/mcp", nil), "verify_claim", map[string]any{"claim": testClaim}, nil)
	m := structured(t, r)
	want := "mcp://" + strings.TrimPrefix(env.hs.URL, "http://") + "/verify_claim"
	if got := m["resource"].(map[string]any)["url"]; got != want {
		t.Fatalf("resource %v, want %s", got, want)
	}
	r = callTool(t, env.mcpSession("/mcp", nil), "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "host-1")})
	if cm := structured(t, r)["commerce"].(map[string]any); r.IsError || cm["orderUrl"] != nil {
		t.Fatalf("paid without base: %v", cm)
	}
	// The server-level public base URL is the fallback.
	env = newPaidEnv(t, &envOptions{config: func(c *Config) { c.MCP.PublicBaseURL, c.PublicBaseURL = "", "https://fallback.example" }})
	r = callTool(t, env.mcpSession("/mcp", nil), "verify_claim", map[string]any{"claim": testClaim}, nil)
	if got := structured(t, r)["resource"].(map[string]any)["url"]; got != "mcp://fallback.example/verify_claim" {
		t.Fatalf("resource %v", got)
	}
}

// tierListing is the default catalogue's listing of a claim tier.
func tierListing(tier string) sell.Listing {
	c, err := sell.NewCatalogue(nil)
	if err != nil {
		panic(err)
	}
	l, _ := c.Tier(tier)
	return l
}
