package agents

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// Each MCP endpoint serves its own tools and says so: /mcp every tool,
// each service prefix its service's; every title and instructions name the
// tools served and how to recover a paid call whose answer was lost.
func TestMCPEndpointsDescribeTheirTools(t *testing.T) {
	env := newPaidEnv(t, &envOptions{niche: true})
	claimTools := []string{"list_verification_tiers", "verify_claim", "verify_claim_deep", "verify_claim_quick", "verify_claim_research"}
	nicheTools := []string{"get_niche", "search_niches"}
	for _, tc := range []struct {
		path, title string
		tools       []string
		absent      []string
	}{
		{"/mcp", "claim verification and niche discovery", append(append([]string{}, claimTools...), nicheTools...), nil},
		{"/claim-verification/mcp", "claim verification", claimTools, nicheTools},
		{"/niche-discovery/mcp", "niche discovery", nicheTools, claimTools},
	} {
		cs := env.mcpSession(tc.path, nil)
		init := cs.InitializeResult()
		if !strings.HasSuffix(init.ServerInfo.Title, tc.title) {
			t.Errorf("%s: title %q, want one ending %q", tc.path, init.ServerInfo.Title, tc.title)
		}
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range lt.Tools {
			names = append(names, tl.Name)
		}
		slices.Sort(names)
		want := slices.Sorted(slices.Values(tc.tools))
		if !slices.Equal(names, want) {
			t.Errorf("%s: tools %v, want %v", tc.path, names, want)
		}
		for _, name := range tc.tools {
			if name == "verify_claim_quick" || name == "verify_claim_deep" || name == "verify_claim_research" {
				continue // named as the verify_claim family
			}
			if !strings.Contains(init.Instructions, name) {
				t.Errorf("%s: the instructions do not name %s: %s", tc.path, name, init.Instructions)
			}
		}
		for _, name := range tc.absent {
			if strings.Contains(init.Instructions, name) {
				t.Errorf("%s: the instructions name %s, which it does not serve", tc.path, name)
			}
		}
		for _, recovery := range []string{"same payment", "idempotency key", "X-Agentic-Order-Token", "/v1/orders/{orderId}"} {
			if !strings.Contains(init.Instructions, recovery) {
				t.Errorf("%s: the instructions do not say how to recover a lost answer (%q): %s", tc.path, recovery, init.Instructions)
			}
		}
	}
}
