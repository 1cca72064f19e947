package agents

import (
	"encoding/json"
	"testing"

	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// With evidence bundles served, a paid MCP result links the
// verification's bundle (a resource link after the result, which stays
// content[0]) and the A2A result artifact carries it as a file part.
func TestAgentsLinkTheEvidenceBundle(t *testing.T) {
	spec, _ := evidence.GenerateKeySpec()
	keys, err := evidence.ParseKeys(spec)
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := snapshot.NewService(snapshotmem.New(), snapshotmem.NewBlobs(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidence.New(snaps, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := newPaidEnv(t, &envOptions{config: func(c *Config) { c.Evidence = server.EvidenceConfig{Builder: b} }})
	cs := env.mcpSession("/claim-verification/mcp", nil)
	r := callTool(t, cs, "verify_claim", map[string]any{"claim": testClaim}, mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "ev-1")})
	id, _ := structured(t, r)["verificationId"].(string)
	want := agentsTestBase + "/claim-verification/v1/claims/verifications/" + id + "/evidence.wacz"
	if r.IsError || len(r.Content) != 2 {
		t.Fatalf("content: %+v", r.Content)
	}
	if l, ok := r.Content[1].(*mcp.ResourceLink); !ok || l.URI != want || l.MIMEType != "application/wacz" {
		t.Fatalf("resource link: %+v", r.Content[1])
	}

	st, _, body := env.do("POST", a2aPath, sendBody("SendMessage", testClaim, nil), a2aHeaders("X-Test-Payment", gatetest.Credential("0xaaa", "ev-2")))
	if st != 200 {
		t.Fatalf("a2a: %d %s", st, body)
	}
	task := decodeRPC(t, body).task(t)
	parts := task.Artifacts[0].Parts
	var res struct {
		VerificationID string `json:"verificationId"`
	}
	if len(parts) != 3 || json.Unmarshal(parts[1].Data, &res) != nil || parts[2].URL == nil ||
		*parts[2].URL != agentsTestBase+"/claim-verification/v1/claims/verifications/"+res.VerificationID+"/evidence.wacz" ||
		parts[2].MediaType != "application/wacz" {
		t.Fatalf("artifact: %+v", task.Artifacts[0])
	}
}
