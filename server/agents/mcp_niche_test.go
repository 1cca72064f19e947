package agents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/assaykit/assay/discovery/inputschema"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// a published niche of the demo catalogue.
func (e *paidEnv) someNiche() niche.Preview {
	e.t.Helper()
	res, err := e.niche.List(context.Background(), niche.ListOptions{Limit: 1})
	if err != nil || len(res.Previews) == 0 {
		e.t.Fatalf("demo catalogue: %v", err)
	}
	return res.Previews[0]
}

func TestMCPNicheTools(t *testing.T) {
	env := newPaidEnv(t, &envOptions{niche: true})
	for _, path := range []string{"/mcp", "/niche-discovery/mcp"} {
		lt, err := env.mcpSession(path, nil).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range lt.Tools {
			names = append(names, tl.Name)
			if strings.Contains(tl.Name, "niche") && tl.OutputSchema != nil {
				t.Errorf("%s declares an outputSchema", tl.Name)
			}
		}
		if !strings.Contains(strings.Join(names, ","), "get_niche") || !strings.Contains(strings.Join(names, ","), "search_niches") {
			t.Fatalf("%s tools %v", path, names)
		}
	}
}

// Previews are free and equal to the HTTP preview; invalid arguments and
// unknown ids get the HTTP answers before any payment.
func TestMCPNicheFree(t *testing.T) {
	env := newPaidEnv(t, &envOptions{niche: true})
	cs := env.mcpSession("/mcp", nil)
	nch := env.someNiche()
	r := callTool(t, cs, "get_niche", map[string]any{"niche_id": nch.ID}, nil)
	if r.IsError {
		t.Fatalf("preview: %s", r.Content[0].(*mcp.TextContent).Text)
	}
	_, httpBody := env.get("/niche-discovery/v1/niches/"+nch.ID+"/preview", nil)
	if got := r.Content[0].(*mcp.TextContent).Text; got != string(httpBody) {
		t.Fatalf("preview differs from HTTP:\nMCP  %s\nHTTP %s", got, httpBody)
	}
	word := strings.Fields(nch.Title)[0]
	r = callTool(t, cs, "search_niches", map[string]any{"q": word}, nil)
	m := structured(t, r)
	if r.IsError || m["access"] != "preview" || m["count"].(float64) < 1 {
		t.Fatalf("search: %v", m)
	}
	for _, it := range m["niches"].([]any) {
		if _, full := it.(map[string]any)["evidence"]; full {
			t.Fatal("a free search returned a full evaluation")
		}
	}
	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		status float64
		want   string
	}{
		{"short query", "search_niches", map[string]any{"q": "ab", "full": true}, 422, ""},
		{"unknown id", "get_niche", map[string]any{"niche_id": "niche_00000000000000000000000000000000", "full": true}, 404, `{"detail":"Niche not found"}`},
		{"bad id", "get_niche", map[string]any{"niche_id": "x", "full": true}, 404, `{"detail":"Niche not found"}`},
		{"extra argument", "get_niche", map[string]any{"niche_id": nch.ID, "color": "red"}, 422, ""},
		{"wrong type", "search_niches", map[string]any{"q": 12345}, 422, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := callTool(t, cs, tt.tool, tt.args, mcp.Meta{metaPayment: gatetest.Credential("0xaaa", "n-"+tt.name)})
			text := r.Content[0].(*mcp.TextContent).Text
			if !r.IsError || metaNumber(r, metaStatus) != tt.status || (tt.want != "" && text != tt.want) {
				t.Fatalf("%v %s", r.Meta, text)
			}
		})
	}
	// The short query is refused with the HTTP route's own body.
	r = callTool(t, cs, "search_niches", map[string]any{"q": "ab", "full": true}, nil)
	_, httpBody = env.get("/niche-discovery/v1/search/pay-per-call?q=ab", nil)
	if got := r.Content[0].(*mcp.TextContent).Text; got != string(httpBody) {
		t.Fatalf("refusal differs from HTTP:\nMCP  %s\nHTTP %s", got, httpBody)
	}
	if env.countOrders() != 0 || len(env.proc.Challenges()) != 0 {
		t.Fatal("free or refused niche calls touched payments")
	}
}

// A free search_niches counts against the caller's daily quota, the same
// one GET /v1/search uses: MCP is no way around the free limit.
func TestMCPNicheSearchQuota(t *testing.T) {
	env := newPaidEnv(t, &envOptions{niche: true, config: func(c *Config) { c.Niche.FreeSearchesPerDay = new(2) }})
	cs := env.mcpSession("/mcp", nil)
	word := strings.Fields(env.someNiche().Title)[0]
	for i := range 2 {
		if r := callTool(t, cs, "search_niches", map[string]any{"q": word}, nil); r.IsError {
			t.Fatalf("search %d: %s", i+1, r.Content[0].(*mcp.TextContent).Text)
		}
	}
	r := callTool(t, cs, "search_niches", map[string]any{"q": word}, nil)
	if !r.IsError || metaNumber(r, metaStatus) != 429 {
		t.Fatalf("third free search over MCP: %v %s", r.Meta, r.Content[0].(*mcp.TextContent).Text)
	}
	if st, body := env.get("/niche-discovery/v1/search?q="+word, nil); st != 429 {
		t.Fatalf("HTTP search after the MCP quota: %d %s", st, body)
	}
	// Without a word there is nothing to count: still answered.
	if r := callTool(t, cs, "get_niche", map[string]any{"niche_id": env.someNiche().ID}, nil); r.IsError {
		t.Fatalf("preview after the quota: %s", r.Content[0].(*mcp.TextContent).Text)
	}
}

// Full evaluations are sold per call: unpaid → PaymentRequired at the HTTP
// price; paid → the pay-per-call body with an unlock token that opens the
// HTTP route, an order, a receipt over the delivered bytes.
func TestMCPNichePaid(t *testing.T) {
	env := newPaidEnv(t, &envOptions{niche: true})
	cs := env.mcpSession("/niche-discovery/mcp", nil)
	nch := env.someNiche()
	r := callTool(t, cs, "get_niche", map[string]any{"niche_id": nch.ID, "full": true}, nil)
	m := structured(t, r)
	acc := m["accepts"].([]any)[0].(map[string]any)
	if !r.IsError || acc["amount"] != "250000" || m["resource"].(map[string]any)["url"] != "mcp://api.example.test/get_niche" {
		t.Fatalf("unpaid: %v", m)
	}
	r = callTool(t, cs, "get_niche", map[string]any{"niche_id": nch.ID, "full": true}, mcp.Meta{metaPayment: gatetest.Credential("0xfff", "niche-1")})
	m = structured(t, r)
	if r.IsError || m["id"] != nch.ID || m["evidence"] == nil {
		t.Fatalf("paid: %v", m)
	}
	access := m["access"].(map[string]any)
	cm := m["commerce"].(map[string]any)
	tok, _ := access["unlockToken"].(string)
	if access["kind"] != "pay_per_call" || tok == "" || access["orderId"] != cm["orderId"] {
		t.Fatalf("access %v commerce %v", access, cm)
	}
	o := env.order(cm["orderId"].(string))
	if o.OfferID != "niche.evaluation" || o.ResultKind != "niche" || o.ResultID != nch.ID || o.Status != payment.OrderCompleted {
		t.Fatalf("order %+v", o)
	}
	sum := sha256.Sum256([]byte(r.Content[0].(*mcp.TextContent).Text))
	if rc := env.receipt(o.ID); rc.ResultSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatal("receipt does not hash the delivered evaluation")
	}
	st, body := env.get("/niche-discovery/v1/niches/"+nch.ID, map[string]string{"X-Niche-Paid-Call": tok})
	var httpEval map[string]any
	if st != 200 || json.Unmarshal(body, &httpEval) != nil || httpEval["id"] != nch.ID {
		t.Fatalf("unlock token on HTTP: %d %s", st, body)
	}
	// The trend is computed at read time.
	for _, ev := range []map[string]any{httpEval, m} {
		delete(ev, "access")
		delete(ev["trend"].(map[string]any), "asOf")
	}
	delete(m, "commerce")
	if diff := cmp.Diff(httpEval, m); diff != "" {
		t.Fatalf("MCP evaluation differs from HTTP (-http +mcp):\n%s", diff)
	}

	word := strings.Fields(nch.Title)[0]
	r = callTool(t, cs, "search_niches", map[string]any{"q": word, "full": true, "limit": 5}, mcp.Meta{metaPayment: gatetest.Credential("0xfff", "niche-2")})
	m = structured(t, r)
	if r.IsError || m["access"] != "pay_per_call" || m["commerce"] == nil {
		t.Fatalf("paid search: %v", m)
	}
	if o := env.order(m["commerce"].(map[string]any)["orderId"].(string)); o.OfferID != "niche.search" || o.AmountMicroUSD != 50000 {
		t.Fatalf("search order %+v", o)
	}
	if env.proc.Settled("0xfff", "niche-1") != 1 || env.proc.Settled("0xfff", "niche-2") != 1 {
		t.Fatal("niche payments not settled once each")
	}
}

// The niche tools' input schemas are the HTTP routes' definitions: every
// query parameter of GET /v1/search with its shape's schema (plus "full"),
// and get_niche's niche_id with the path parameter's schema OpenAPI
// publishes; null optional arguments count as absent.
func TestMCPNicheToolSchemasFollowTheRoutes(t *testing.T) {
	env := newPaidEnv(t, &envOptions{niche: true, config: func(c *Config) {
		c.Discovery = DiscoveryConfig{Enabled: true, PublicBaseURL: agentsTestBase}
	}})
	lt, err := env.mcpSession("/niche-discovery/mcp", nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tl := range lt.Tools {
		b, _ := json.Marshal(tl.InputSchema)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		schemas[tl.Name] = m
	}
	// search_niches: NicheSearchQuery's properties and required list.
	shape, err := inputschema.Inline("NicheSearchQuery")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(shape)
	var want map[string]any
	_ = json.Unmarshal(b, &want)
	got := schemas["search_niches"]
	props := got["properties"].(map[string]any)
	for name, p := range want["properties"].(map[string]any) {
		g, _ := props[name].(map[string]any)
		g = maps.Clone(g)
		delete(g, "description")
		if diff := cmp.Diff(p, any(g)); diff != "" {
			t.Errorf("search_niches %s differs from NicheSearchQuery (-shape +tool):\n%s", name, diff)
		}
	}
	if len(props) != len(want["properties"].(map[string]any))+1 || props["full"] == nil || got["additionalProperties"] != false ||
		!cmp.Equal(got["required"], want["required"]) {
		t.Errorf("search_niches schema %v", got)
	}
	// get_niche: the OpenAPI path parameter of the niche routes.
	_, oa := env.get("/niche-discovery/openapi.json", nil)
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string         `json:"name"`
				Schema map[string]any `json:"schema"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(oa, &doc); err != nil {
		t.Fatal(err)
	}
	param := doc.Paths["/v1/niches/{niche_id}/preview"]["get"].Parameters[0]
	if param.Name != "niche_id" || param.Schema["pattern"] != "^niche_[0-9a-f]{32}$" {
		t.Fatalf("OpenAPI niche_id %+v", param)
	}
	if diff := cmp.Diff(param.Schema, schemas["get_niche"]["properties"].(map[string]any)["niche_id"]); diff != "" {
		t.Errorf("get_niche niche_id differs from the OpenAPI path parameter (-openapi +tool):\n%s", diff)
	}
	// A null optional argument is absent (the free preview search).
	r := callTool(t, env.mcpSession("/mcp", nil), "search_niches", map[string]any{"q": "dental clinics", "category": nil}, nil)
	if r.IsError {
		t.Errorf("null category refused: %v", structured(t, r))
	}
}
