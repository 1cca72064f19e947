package agents

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/assaykit/assay/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A host can mount the MCP endpoint of a server on its own mux, and the
// A2A endpoint needs claim verification.
func TestMCPHandlerOnTheHostsMux(t *testing.T) {
	env := newPaidEnv(t, nil)
	s, err := server.New(server.Config{Paywall: env.gate, Claims: server.ClaimsConfig{Engine: env.eng, Tiers: []string{"quick"}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := MCPHandler(s, MCP{PublicBaseURL: agentsTestBase})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "assay-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"list_verification_tiers", "verify_claim_quick"}) {
		t.Fatalf("tools %v", names)
	}
	if _, err := A2AHandler(s, A2A{}); err != nil {
		t.Fatalf("A2A of a quick-only server: %v", err)
	}
	bare, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := A2AHandler(bare, A2A{}); !errors.Is(err, ErrNothingToServe) {
		t.Fatalf("A2A without claims: %v", err)
	}
}
