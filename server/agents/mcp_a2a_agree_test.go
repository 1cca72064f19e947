package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// verdict is what must not depend on the transport.
type verdict struct {
	Claim       string
	Status      claims.Status
	Conclusion  string
	Facts       []string
	Evidence    []string
	Conflicts   int
	Limitations []string
	Snapshots   int
}

func verdictOf(t *testing.T, raw []byte) verdict {
	t.Helper()
	var r claims.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("not a result: %s", raw)
	}
	v := verdict{Claim: r.Claim, Status: r.Status, Conclusion: r.Conclusion, Conflicts: len(r.Conflicts), Limitations: r.Limitations, Snapshots: len(r.Snapshots)}
	for _, f := range r.AtomicFacts {
		v.Facts = append(v.Facts, fmt.Sprintf("%s|%s|%.2f", f.Statement, f.Status, f.Confidence))
	}
	for _, e := range r.Evidence {
		v.Evidence = append(v.Evidence, fmt.Sprintf("%s|%s|cited=%v|matched=%v", e.URL, e.Relationship, e.Cited, e.ProviderSourceMatched))
	}
	return v
}

// trail is what the ledger and the receipt say about a paid call,
// without what differs per call.
type trail struct {
	OrderStatus, OfferID, Tier, Protocol, Method, Payer, ResultKind string
	Amount                                                          int64
	ReceiptOffer, ReceiptTier, ReceiptProtocol, ReceiptCurrency     string
	ReceiptAmount                                                   int64
}

// delivery is one paid call's outcome through one transport.
type delivery struct {
	result    []byte // the ClaimVerificationResult JSON
	delivered []byte // the bytes the receipt hashes
	orderID   string
}

func (e *paidEnv) trailOf(d delivery) trail {
	e.t.Helper()
	o := e.order(d.orderID)
	rc := e.receipt(d.orderID)
	sum := sha256.Sum256(d.delivered)
	if rc.ResultSHA256 != hex.EncodeToString(sum[:]) {
		e.t.Fatalf("order %s: the receipt does not hash the delivered bytes", d.orderID)
	}
	var r claims.Result
	_ = json.Unmarshal(d.result, &r)
	if o.ResultID != r.VerificationID || rc.ResultID != r.VerificationID {
		e.t.Fatalf("order %s names %s, receipt %s, result %s", d.orderID, o.ResultID, rc.ResultID, r.VerificationID)
	}
	return trail{OrderStatus: string(o.Status), OfferID: o.OfferID, Tier: o.Tier, Protocol: o.Protocol, Method: o.Method, Payer: o.Payer,
		ResultKind: o.ResultKind, Amount: o.AmountMicroUSD, ReceiptOffer: rc.OfferID, ReceiptTier: rc.Tier,
		ReceiptProtocol: rc.PaymentProtocol, ReceiptCurrency: rc.Currency, ReceiptAmount: rc.AmountMicroUSD}
}

// viaHTTP, viaMCP and viaA2A pay for one standard verification.
func (e *paidEnv) viaHTTP(claim, cred string) delivery {
	e.t.Helper()
	st, hd, b := e.do("POST", "/claim-verification/v1/claims/verify", string(mustJSON(map[string]string{"claim": claim})), map[string]string{gatetest.Header: cred})
	if st != 200 {
		e.t.Fatalf("HTTP: %d %s", st, b)
	}
	return delivery{result: b, delivered: b, orderID: hd.Get(httpgate.HeaderOrderID)}
}

func (e *paidEnv) viaMCP(cs *mcp.ClientSession, claim, cred string) delivery {
	e.t.Helper()
	r := callTool(e.t, cs, "verify_claim", map[string]any{"claim": claim}, mcp.Meta{metaPayment: cred})
	text := r.Content[0].(*mcp.TextContent).Text
	if r.IsError {
		e.t.Fatalf("MCP: %s", text)
	}
	cm := structured(e.t, r)["commerce"].(map[string]any)
	return delivery{result: []byte(text), delivered: []byte(text), orderID: cm["orderId"].(string)}
}

func (e *paidEnv) viaA2A(claim, cred string) delivery {
	e.t.Helper()
	st, hd, b := e.do("POST", a2aPath, sendBody("SendMessage", claim, nil), a2aHeaders(gatetest.Header, cred))
	if st != 200 {
		e.t.Fatalf("A2A: %d %s", st, b)
	}
	task := decodeRPC(e.t, b).task(e.t)
	return delivery{result: task.Artifacts[0].Parts[1].Data, delivered: b, orderID: hd.Get(httpgate.HeaderOrderID)}
}

// One claim through HTTP, MCP and A2A with the same payment setup: the
// same verdict, the same order and receipt trail.
func TestTransportsAgree(t *testing.T) {
	env := newPaidEnv(t, nil)
	cs := env.mcpSession("/claim-verification/mcp", nil)
	payer := "0x1111111111111111111111111111111111111111"
	runs := map[string]delivery{
		"http": env.viaHTTP(testClaim, gatetest.Credential(payer, "agree-http")),
		"mcp":  env.viaMCP(cs, testClaim, gatetest.Credential(payer, "agree-mcp")),
		"a2a":  env.viaA2A(testClaim, gatetest.Credential(payer, "agree-a2a")),
	}
	wantVerdict := verdictOf(t, runs["http"].result)
	wantTrail := env.trailOf(runs["http"])
	if wantVerdict.Status != "confirmed" || wantTrail.OrderStatus != string(payment.OrderCompleted) || wantTrail.Amount != 50000 {
		t.Fatalf("HTTP baseline: %+v %+v", wantVerdict, wantTrail)
	}
	for _, name := range []string{"mcp", "a2a"} {
		if diff := cmp.Diff(wantVerdict, verdictOf(t, runs[name].result)); diff != "" {
			t.Errorf("%s verdict differs from HTTP (-http +%s):\n%s", name, name, diff)
		}
		if diff := cmp.Diff(wantTrail, env.trailOf(runs[name])); diff != "" {
			t.Errorf("%s trail differs from HTTP (-http +%s):\n%s", name, name, diff)
		}
	}
	for _, nonce := range []string{"agree-http", "agree-mcp", "agree-a2a"} {
		if env.proc.Settled(payer, nonce) != 1 {
			t.Errorf("%s settled %d times", nonce, env.proc.Settled(payer, nonce))
		}
	}
}

// The same bad inputs get the same 422 detail through all three, and are
// never charged.
func TestTransportsRefuseBadInputAlike(t *testing.T) {
	env := newPaidEnv(t, nil)
	cs := env.mcpSession("/mcp", nil)
	cred := gatetest.Credential("0xaaa", "never")
	for _, claim := range []string{"ab", strings.Repeat("x", 4001), "  "} {
		body := string(mustJSON(map[string]string{"claim": strings.TrimSpace(claim)}))
		st, hb := env.post("/v1/claims/verify", body, map[string]string{gatetest.Header: cred})
		var httpDetail struct{ Detail any }
		if st != 422 || json.Unmarshal(hb, &httpDetail) != nil {
			t.Fatalf("HTTP %q: %d %s", claim, st, hb)
		}
		r := callTool(t, cs, "verify_claim", map[string]any{"claim": strings.TrimSpace(claim)}, mcp.Meta{metaPayment: cred})
		mcpDetail := structured(t, r)["detail"]
		if diff := cmp.Diff(httpDetail.Detail, mcpDetail); diff != "" || metaNumber(r, metaStatus) != 422 {
			t.Errorf("MCP refusal of %q differs (-http +mcp):\n%s", claim, diff)
		}
		if strings.TrimSpace(claim) == "" {
			// A2A has no empty claim to send: a message without text is
			// refused as such (still -32602, still unpaid).
			_, b := env.post(a2aPath, sendBody("SendMessage", claim, nil), a2aHeaders(gatetest.Header, cred))
			if a := decodeRPC(t, b); a.Error == nil || a.Error.Code != -32602 {
				t.Errorf("A2A empty claim: %s", b)
			}
			continue
		}
		_, b := env.post(a2aPath, sendBody("SendMessage", claim, nil), a2aHeaders(gatetest.Header, cred))
		a := decodeRPC(t, b)
		if diff := cmp.Diff(httpDetail.Detail, a.errorDetail()); diff != "" || a.Error.Code != -32602 {
			t.Errorf("A2A refusal of %q differs (-http +a2a):\n%s", claim, diff)
		}
	}
	if env.prov.Calls() != 0 || env.countOrders() != 0 || env.proc.TotalSettled() != 0 {
		t.Fatal("bad input was charged or run")
	}
}

// The same bad payments get the same refusal reason through all three.
func TestTransportsRefuseBadPaymentAlike(t *testing.T) {
	env := newPaidEnv(t, nil)
	cs := env.mcpSession("/mcp", nil)
	// A payment used once over HTTP is used up for every transport.
	env.viaHTTP(testClaim, gatetest.Credential("0xddd", "used-1"))
	tests := []struct {
		name, cred, reason string
	}{
		{"bad signature", gatetest.Credential("0xddd", "bad-sig"), "invalid_exact_evm_payload_signature"},
		{"expired", gatetest.Credential("0xddd", "expired-x"), "invalid_exact_evm_payload_authorization_valid_before"},
		{"underpaid", "payer=0xddd;nonce=low;amount=10", "invalid_exact_evm_payload_authorization_value_mismatch"},
		{"used", gatetest.Credential("0xddd", "used-1"), payment.ReasonPaymentUsed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reasons := map[string]string{}
			st, b := env.post("/v1/claims/verify", string(mustJSON(map[string]string{"claim": testClaim})), map[string]string{gatetest.Header: tt.cred})
			var pb struct{ Error string }
			_ = json.Unmarshal(b, &pb)
			if st != 402 {
				t.Fatalf("HTTP %d %s", st, b)
			}
			reasons["http"] = pb.Error
			r := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: tt.cred})
			reasons["mcp"], _ = structured(t, r)["error"].(string)
			for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
				st, b = env.post(a2aPath, sendBody(method, testClaim, nil), a2aHeaders(gatetest.Header, tt.cred))
				pb.Error = ""
				_ = json.Unmarshal(b, &pb)
				if st != 402 {
					t.Fatalf("A2A %s %d %s", method, st, b)
				}
				reasons["a2a "+method] = pb.Error
			}
			want := map[string]string{"http": tt.reason, "mcp": tt.reason, "a2a SendMessage": tt.reason, "a2a SendStreamingMessage": tt.reason}
			if diff := cmp.Diff(want, reasons); diff != "" {
				t.Fatalf("refusal reasons (-want +got):\n%s", diff)
			}
		})
	}
	if env.prov.Calls() != 1 || env.countOrders() != 1 || env.proc.TotalSettled() != 1 {
		t.Fatalf("bad payments did work: provider %d orders %d settled %d", env.prov.Calls(), env.countOrders(), env.proc.TotalSettled())
	}
}

// A provider failure fails the order and settles nothing, whatever the
// transport, with the same status.
func TestTransportsFailAlike(t *testing.T) {
	prov := claimstest.NewProvider(claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderFailed, Err: errors.New("boom")}})
	env := newPaidEnv(t, &envOptions{provider: prov})
	cs := env.mcpSession("/mcp", nil)
	statuses := map[string]int{}
	orders := map[string]string{}
	st, hd, _ := env.do("POST", "/v1/claims/verify", string(mustJSON(map[string]string{"claim": testClaim})), map[string]string{gatetest.Header: gatetest.Credential("0xeee", "f-http")})
	statuses["http"], orders["http"] = st, hd.Get(httpgate.HeaderOrderID)
	r := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential("0xeee", "f-mcp")})
	statuses["mcp"], orders["mcp"] = int(metaNumber(r, metaStatus)), structured(t, r)["commerce"].(map[string]any)["orderId"].(string)
	st, hd, _ = env.do("POST", a2aPath, sendBody("SendMessage", testClaim, nil), a2aHeaders(gatetest.Header, gatetest.Credential("0xeee", "f-a2a")))
	statuses["a2a"], orders["a2a"] = st, hd.Get(httpgate.HeaderOrderID)
	if diff := cmp.Diff(map[string]int{"http": 502, "mcp": 502, "a2a": 502}, statuses); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s", diff)
	}
	for name, id := range orders {
		o := env.order(id)
		if o.Status != payment.OrderFailed || o.FailureReason != "handler answered 502: Evidence provider failed" || o.ReceiptID != "" {
			t.Errorf("%s order %+v", name, o)
		}
	}
	if env.proc.TotalSettled() != 0 {
		t.Fatal("a failed verification was settled")
	}
}
