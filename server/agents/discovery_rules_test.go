package agents

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/server"
)

// The cross-field rules of a claim request that no JSON Schema can state
// are published alike, in x-cross-field-rules, by the OpenAPI body of each
// tier route, the MCP verify tools' input schemas and the A2A input schema
// of the manifest — only minimumSources <= maxSources — and each is
// enforced: a request breaking it is refused 422 before any payment, over
// HTTP.
func TestClaimRulesPublishedAndEnforced(t *testing.T) {
	env := newPaidEnv(t, &envOptions{config: func(c *Config) {
		c.Discovery = DiscoveryConfig{Enabled: true, PublicBaseURL: agentsTestBase}
	}})
	ruleIDs := func(where string, schema map[string]any) []string {
		t.Helper()
		rules, _ := schema["x-cross-field-rules"].([]any)
		var ids []string
		for _, r := range rules {
			ids = append(ids, r.(map[string]any)["id"].(string))
		}
		if len(ids) == 0 {
			t.Fatalf("%s states no x-cross-field-rules", where)
		}
		return ids
	}
	var oa struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Schema map[string]any `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	_, b := env.get(server.DefaultClaimsPrefix+discovery.PathOpenAPI, nil)
	if err := json.Unmarshal(b, &oa); err != nil {
		t.Fatal(err)
	}
	want := ruleIDs("OpenAPI /v1/claims/verify", oa.Paths["/v1/claims/verify"]["post"].RequestBody.Content["application/json"].Schema)

	lt, err := env.mcpSession("/claim-verification/mcp", nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if !strings.HasPrefix(tl.Name, "verify_claim") {
			continue
		}
		var s map[string]any
		raw, _ := json.Marshal(tl.InputSchema)
		_ = json.Unmarshal(raw, &s)
		if got := ruleIDs("MCP "+tl.Name, s); !slices.Equal(got, want) {
			t.Errorf("MCP %s rules %v, OpenAPI %v", tl.Name, got, want)
		}
	}
	var m discovery.Manifest
	_, b = env.get(server.DefaultClaimsPrefix+discovery.PathManifest, nil)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, op := range m.Operations {
		if op.ID != "a2a.send-message" {
			continue
		}
		var in struct {
			Properties struct {
				Message struct {
					Properties struct {
						Parts struct {
							Items struct {
								AnyOf []struct {
									Properties map[string]map[string]any `json:"properties"`
								} `json:"anyOf"`
							} `json:"items"`
						} `json:"parts"`
					} `json:"properties"`
				} `json:"message"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(op.InputSchema, &in); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, alt := range in.Properties.Message.Properties.Parts.Items.AnyOf {
			if data, ok := alt.Properties["data"]; ok {
				found = true
				if got := ruleIDs("A2A data part", data); !slices.Equal(got, want) {
					t.Errorf("A2A rules %v, OpenAPI %v", got, want)
				}
			}
		}
		if !found {
			t.Error("the A2A input schema has no data part")
		}
	}

	// Each rule, broken: 422 value_error before any payment (no 402). The
	// rules the schemas state (host names, official_only, the tier caps)
	// are the schemas' own and are not listed: discovery's
	// TestClaimSchemaFuzz breaks each of them on every transport.
	breaking := map[string]string{
		"minimum-sources-within-max": `{"claim":"The Base chain ID is 8453.","minimumSources":5,"maxSources":4}`,
	}
	for _, id := range want {
		body, ok := breaking[id]
		if !ok {
			t.Errorf("no request breaks the published rule %q in this test", id)
			continue
		}
		st, b := env.post("/v1/claims/verify", body, nil)
		if st != 422 || !strings.Contains(string(b), `"type":"value_error"`) {
			t.Errorf("%s: %d %s", id, st, b)
		}
	}
}
