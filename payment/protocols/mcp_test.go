package protocols_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
	x402seller "github.com/assaykit/assay/payment/x402/seller"
)

func TestMCPBinding(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	res := testRes
	res.URL = x402seller.MCPResourceURL("api.example.com", "verify_claim_deep")
	res.Method, res.BodyDigest = "", ""
	ch := mustChallenge(t, f.p, testOffer, res)
	pr, err := x402seller.MCPPaymentRequired(ch, "")
	if err != nil {
		t.Fatal(err)
	}
	var doc x402.PaymentRequired
	if err := json.Unmarshal(pr, &doc); err != nil || doc.Resource.URL != "mcp://api.example.com/verify_claim_deep" || doc.X402Version != 2 {
		t.Fatalf("PaymentRequired %s: %v", pr, err)
	}
	failed, _ := x402seller.MCPPaymentRequired(ch, "Settlement failed")
	if err := json.Unmarshal(failed, &doc); err != nil || doc.Error != "Settlement failed" || len(doc.Accepts) != 1 {
		t.Fatalf("failed %s", failed)
	}
	// The client's payload arrives as a JSON object in _meta.
	raw, _ := base64.StdEncoding.DecodeString(paymenttest.X402V2(t, f.wallet, ch, testNow))
	var obj map[string]any
	_ = json.Unmarshal(raw, &obj)
	for name, meta := range map[string]map[string]any{
		"object":      {"x402/payment": obj, "progressToken": "t1"},
		"raw message": {"x402/payment": json.RawMessage(raw)},
		"header form": {"x402/payment": base64.StdEncoding.EncodeToString(raw)},
	} {
		c, err := x402seller.CredentialFromMCPMeta(meta)
		if err != nil || c == nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := f.p.Verify(t.Context(), testOffer, res, c); err != nil {
			t.Errorf("%s: verify %v", name, err)
		}
	}
	if c, err := x402seller.CredentialFromMCPMeta(map[string]any{"progressToken": 1}); c != nil || err != nil {
		t.Errorf("absent: %v %v", c, err)
	}
	_, err = x402seller.CredentialFromMCPMeta(map[string]any{"x402/payment": []any{1}})
	checkProblem(t, "array payment", err, wantProblem{400, "malformed-credential", "invalid_payload"})
}

func TestBazaarExtension(t *testing.T) {
	ext, err := x402seller.BazaarExtension(x402seller.BazaarHTTP{Method: "post", Body: map[string]any{"claim": "The Eiffel Tower is in Paris"},
		BodySchema: json.RawMessage(`{"type":"object","properties":{"maxSources":{"type":"integer","maximum":20}}}`), OutputExample: map[string]any{"status": "confirmed"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"info":{"input":{"type":"http","method":"POST","bodyType":"json","body":{"claim":"The Eiffel Tower is in Paris"}},"output":{"type":"json","example":{"status":"confirmed"}}},
	"schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["input"],"properties":{
	"input":{"type":"object","required":["type","method"],"properties":{"type":{"type":"string","const":"http"},"method":{"type":"string","enum":["POST"]},"bodyType":{"type":"string","const":"json"},"body":{"type":"object","properties":{"maxSources":{"type":"integer","maximum":20}}}}},
	"output":{"type":"object","properties":{"type":{"type":"string","const":"json"},"example":{}}}}}}`
	if diff := jsonDiff(t, want, string(ext)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	get, _ := x402seller.BazaarExtension(x402seller.BazaarHTTP{Method: "GET", QueryParams: map[string]string{"limit": "10"}})
	var g map[string]map[string]map[string]any
	_ = json.Unmarshal(get, &g)
	if g["info"]["input"]["queryParams"] == nil || g["info"]["input"]["body"] != nil {
		t.Errorf("GET: %s", get)
	}
	if _, err := x402seller.BazaarExtension(x402seller.BazaarHTTP{}); err == nil {
		t.Error("no method accepted")
	}
	if _, err := x402seller.BazaarExtension(x402seller.BazaarHTTP{Method: "POST", BodySchema: json.RawMessage(`{`)}); err == nil {
		t.Error("bad schema accepted")
	}
}
