package server

import (
	"encoding/json"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxSources above the tier cap is accepted and clamped by HTTP and MCP
// alike (the tool's schema advertises the shape's bound, not the cap), and
// both give the same verdict with at most the cap of cited sources.
func TestTransportsClampMaxSourcesAlike(t *testing.T) {
	env := newPaidEnv(t, nil)
	cs := env.mcpSession("/mcp", nil)
	quick, _ := claims.TierByName(claims.Quick)
	args := map[string]any{"claim": testClaim, "maxSources": quick.MaxCitedSources + 7, "minimumSources": 1}
	body := string(mustJSON(args))
	st, hd, hb := env.do("POST", "/claim-verification/v1/claims/verify/quick", body, map[string]string{gatetest.Header: gatetest.Credential("0xabc", "clamp-http")})
	if st != 200 {
		t.Fatalf("HTTP: %d %s", st, hb)
	}
	r := callTool(t, cs, quick.Tool, args, mcp.Meta{metaPayment: gatetest.Credential("0xabc", "clamp-mcp")})
	text := r.Content[0].(*mcp.TextContent).Text
	if r.IsError {
		t.Fatalf("MCP refused maxSources %d on %s: %s", quick.MaxCitedSources+7, quick.Name, text)
	}
	if diff := cmp.Diff(verdictOf(t, hb), verdictOf(t, []byte(text))); diff != "" {
		t.Errorf("verdicts differ (-http +mcp):\n%s", diff)
	}
	for name, raw := range map[string][]byte{"http": hb, "mcp": []byte(text)} {
		var res claims.Result
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		cited := 0
		for _, e := range res.Evidence {
			if e.Cited {
				cited++
			}
		}
		if cited > quick.MaxCitedSources {
			t.Errorf("%s: %d cited sources on the %s tier (cap %d)", name, cited, quick.Name, quick.MaxCitedSources)
		}
	}
	if o := env.order(hd.Get("X-Agentic-Order-Id")); o.Tier != claims.Quick {
		t.Errorf("HTTP order tier %s", o.Tier)
	}
}
