package agents

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mppCredentialFor pays the evm challenge of an MCP payment-required
// _meta object with the dev wallet and returns the credential in the form
// of MPP's MCP transport (challenge echoed as an object, request decoded).
func mppCredentialFor(t *testing.T, pr map[string]any) map[string]any {
	t.Helper()
	chs, _ := pr["challenges"].([]any)
	for _, c := range chs {
		o := c.(map[string]any)
		if o["method"] != mpp.MethodEVM {
			continue
		}
		req, err := mpp.EncodeJCSBase64URL(o["request"])
		if err != nil {
			t.Fatal(err)
		}
		str := func(k string) string { s, _ := o[k].(string); return s }
		ch := mpp.Challenge{ID: str("id"), Realm: str("realm"), Method: str("method"), Intent: str("intent"), Request: req,
			Expires: str("expires"), Digest: str("digest"), Opaque: str("opaque"), Description: str("description")}
		hdr := paymenttest.MPPEVMFor(t, paymenttest.DevWallet(), ch)
		cred, err := mpp.ParseCredential(hdr)
		if err != nil {
			t.Fatal(err)
		}
		var payload any
		if err := json.Unmarshal(cred.Payload, &payload); err != nil {
			t.Fatal(err)
		}
		wire := map[string]any{"challenge": o, "payload": payload}
		if cred.Source != "" {
			wire["source"] = cred.Source
		}
		return wire
	}
	t.Fatalf("no evm challenge in %v", pr)
	return nil
}

// MPP over MCP: an unpaid call offers x402 (the tool result) and MPP
// (challenges as objects in _meta["org.paymentauth/payment-required"]);
// an MPP credential in _meta["org.paymentauth/credential"] pays, and the
// receipt comes back in _meta["org.paymentauth/receipt"] with the paid
// challenge's id; the credential again for another call is refused with
// fresh challenges of both; both payments at once are refused.
func TestMCPPaysWithMPP(t *testing.T) {
	env := newDevEnv(t)
	cs := env.mcpSession("/claim-verification/mcp", nil)
	unpaid := callTool(t, cs, "verify_claim_quick", map[string]any{"claim": testClaim}, nil)
	pr, _ := unpaid.Meta[metaMPPPaymentRequired].(map[string]any)
	if !unpaid.IsError || structured(t, unpaid)["x402Version"] == nil || pr == nil || pr["httpStatus"] != float64(402) {
		t.Fatalf("unpaid: %v %v", structured(t, unpaid), unpaid.Meta)
	}
	if _, ok := pr["elicitations"]; ok {
		t.Fatal("payment-required data carries elicitations")
	}
	methods := map[string]bool{}
	for _, c := range pr["challenges"].([]any) {
		o := c.(map[string]any)
		methods[o["method"].(string)] = true
		if _, ok := o["request"].(map[string]any); !ok {
			t.Fatalf("challenge request is not an object: %v", o)
		}
	}
	if !methods[mpp.MethodEVM] {
		t.Fatalf("no evm challenge: %v", pr)
	}
	cred := mppCredentialFor(t, pr)
	paid := callTool(t, cs, "verify_claim_quick", map[string]any{"claim": testClaim}, mcp.Meta{metaMPPCredential: cred})
	if paid.IsError {
		t.Fatalf("paid: %s", paid.Content[0].(*mcp.TextContent).Text)
	}
	rc, _ := paid.Meta[metaMPPReceipt].(map[string]any)
	chID := cred["challenge"].(map[string]any)["id"]
	if rc == nil || rc["status"] != "success" || rc["method"] != mpp.MethodEVM || rc["challengeId"] != chID || rc["reference"] == "" {
		t.Fatalf("receipt %v (challenge %v)", paid.Meta, chID)
	}
	if _, ok := paid.Meta[metaPaymentResponse]; ok {
		t.Error("an MPP payment answered with an x402 settlement")
	}
	cm := structured(t, paid)["commerce"].(map[string]any)
	o := env.order(cm["orderId"].(string))
	if o.Protocol != payment.ProtocolMPP || o.Status != payment.OrderCompleted || o.Tier != "quick" || env.receipt(o.ID).SettlementReference != rc["reference"] {
		t.Fatalf("order %+v, receipt %v", o, rc)
	}
	other := callTool(t, cs, "verify_claim_quick", map[string]any{"claim": testClaim + " Really."}, mcp.Meta{metaMPPCredential: cred})
	opr, _ := other.Meta[metaMPPPaymentRequired].(map[string]any)
	if !other.IsError || opr == nil || !strings.Contains(opr["problem"].(map[string]any)["detail"].(string), "already used") ||
		structured(t, other)["error"] != payment.ReasonPaymentUsed {
		t.Fatalf("the credential for another call: %v %v", structured(t, other), other.Meta)
	}
	both := callTool(t, cs, "verify_claim_quick", map[string]any{"claim": testClaim}, mcp.Meta{metaMPPCredential: mppCredentialFor(t, pr),
		metaPayment: map[string]any{"x402Version": 2}})
	if !both.IsError || !strings.Contains(both.Content[0].(*mcp.TextContent).Text, "invalid_payload") {
		t.Fatalf("two payments: %s", both.Content[0].(*mcp.TextContent).Text)
	}
	bad := callTool(t, cs, "verify_claim_quick", map[string]any{"claim": testClaim}, mcp.Meta{metaMPPCredential: map[string]any{"challenge": "x"}})
	if !bad.IsError || bad.Meta[metaMPPPaymentRequired] == nil {
		t.Fatalf("a malformed MPP credential: %v %v", structured(t, bad), bad.Meta)
	}
}

// mppx's official MCP client (mppx/mcp/client, McpClient.wrap with the evm
// charge method) pays verify_claim_quick and get_niche on a server with the
// real payment processor in dev mode, learning the MPP challenges from the
// unpaid tool result, and receives each receipt; the orders are MPP ones,
// completed, and their receipts name the settlement the MPP receipt names.
func TestInteropMPPXMCPClient(t *testing.T) {
	node := testenv.Node(t, agentsDir, "mppx", "@modelcontextprotocol/sdk")
	env := newDevEnvWith(t, devOptions{niche: true})
	nch := env.someNiche()
	out := runAgent(t, node, "mppx-mcp.mjs", env.hs.URL+"/mcp", nch.ID, "--claim", testClaim)
	unpaid, _ := out["unpaid"].(map[string]any)
	if unpaid["isError"] != true || unpaid["x402"] != true || !slices.Contains(toStrings(unpaid["mpp"]), "evm.charge") {
		t.Fatalf("an unpaid call offers %v; want x402 and the MPP evm charge", unpaid)
	}
	for _, name := range []string{"verify", "niche"} {
		r, _ := out[name].(map[string]any)
		rc, _ := r["receipt"].(map[string]any)
		cm, _ := r["commerce"].(map[string]any)
		if rc["status"] != "success" || rc["method"] != "evm" || r["x402Settlement"] != false || cm == nil {
			t.Fatalf("%s: %v", name, r)
		}
		o := env.order(cm["orderId"].(string))
		if o.Protocol != payment.ProtocolMPP || o.Status != payment.OrderCompleted || !strings.EqualFold(o.Payer, paymenttest.DevAddress) ||
			env.receipt(o.ID).SettlementReference != rc["reference"] {
			t.Errorf("%s: order %+v, MPP receipt %v", name, o, rc)
		}
	}
	if v, _ := out["verify"].(map[string]any); v["status"] != "confirmed" {
		t.Errorf("verdict %v", v["status"])
	}
	if n, _ := out["niche"].(map[string]any); n["id"] != nch.ID {
		t.Errorf("niche %v, want %s", n["id"], nch.ID)
	}
	if a := toStrings(out["approvals"]); len(a) != 2 {
		t.Errorf("payments approved: %v; want two", a)
	}
}

func toStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
