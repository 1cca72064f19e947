package agents

import (
	"encoding/json"
	"testing"

	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/server"
)

// One service version everywhere: /v1/capabilities, the MCP serverInfo
// and every discovery document.
func TestOneServiceVersion(t *testing.T) {
	env := newPaidEnv(t, &envOptions{niche: true, config: func(c *Config) {
		c.Discovery = DiscoveryConfig{Enabled: true, PublicBaseURL: agentsTestBase}
	}})
	got := map[string]string{}
	_, b := env.get("/v1/capabilities", nil)
	var caps struct{ Version string }
	if err := json.Unmarshal(b, &caps); err != nil {
		t.Fatal(err)
	}
	got["capabilities"] = caps.Version
	cs := env.mcpSession("/niche-discovery/mcp", nil)
	got["mcp serverInfo"] = cs.InitializeResult().ServerInfo.Version
	for _, p := range []string{"/claim-verification", "/niche-discovery"} {
		var m discovery.Manifest
		_, b = env.get(p+discovery.PathManifest, nil)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %s", p, b)
		}
		got[p+" manifest"] = m.Service.Version
		var oa struct{ Info struct{ Version string } }
		_, b = env.get(p+discovery.PathOpenAPI, nil)
		_ = json.Unmarshal(b, &oa)
		got[p+" openapi"] = oa.Info.Version
		var ms discovery.MCPServer
		_, b = env.get(p+discovery.PathMCPServer, nil)
		_ = json.Unmarshal(b, &ms)
		got[p+" server.json"] = ms.Version
	}
	var card discovery.AgentCard
	_, b = env.get("/claim-verification"+discovery.PathAgentCard, nil)
	_ = json.Unmarshal(b, &card)
	got["agent card"] = card.Version
	var oa struct{ Info struct{ Version string } }
	_, b = env.get(discovery.PathOpenAPI, nil)
	_ = json.Unmarshal(b, &oa)
	got["root openapi"] = oa.Info.Version
	for k, v := range got {
		if v != server.Version {
			t.Errorf("%s says version %q, want %q", k, v, server.Version)
		}
	}
	if server.Version != "0.3.1" {
		t.Errorf("Version %q: the interface documents' service version is 0.3.1", server.Version)
	}
}
