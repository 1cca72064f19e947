package discovery_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/discovery/discoverytest"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// compile loads one of the shipped schemas with format assertions on.
func compile(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	raw, ok := discovery.Schema(name)
	if !ok {
		t.Fatalf("no schema %s", name)
	}
	s, err := discoverytest.CompileSchema("file:///"+name, raw)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, v any) error {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

const payTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

func usdcMethods(amount string) []discovery.Method {
	return []discovery.Method{
		{Protocol: "x402", Scheme: "exact", Network: "eip155:8453", Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", AssetSymbol: "USDC", PayTo: payTo, Amount: amount},
		{Protocol: "mpp", Scheme: "evm", Intent: "charge", Network: "eip155:8453", Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", AssetSymbol: "USDC", PayTo: payTo, Amount: amount},
		{Protocol: "mpp", Scheme: "stripe", Intent: "charge", Network: "stripe", Asset: "usd", AssetSymbol: "USD", PayTo: "profile_1", Amount: "50"},
	}
}

// testService is a claims-like service with MCP and A2A.
func testService(paid bool) *discovery.Service {
	price := func(micro int64, amount string) *discovery.Price {
		return &discovery.Price{AmountMicroUSD: micro, CardMicroUSD: 500_000, Methods: usdcMethods(amount)}
	}
	s := &discovery.Service{
		Key: "web-evidence", Name: "Web Evidence", Description: "Time-stamped verification of factual claims against current web evidence.",
		Summary: "Paid claim verification with cited web evidence.", Version: "0.3.1", Lifecycle: "paid-preview",
		Homepage: "https://example.com/web-evidence/", Tags: []string{"web", "evidence"}, Categories: []string{"search"},
		Base: "https://api.example.com/web-evidence", Prefix: "/web-evidence",
		Provider: discovery.Provider{ID: "https://example.com", Name: "Example LLC", Contact: "support@example.com",
			URL: "https://example.com", SigningKey: "https://api.example.com/web-evidence/.well-known/jwks.json"},
		Capabilities: []discovery.Capability{{ID: "web.evidence.verify-claim", Summary: "Verify a claim."}},
		Components: map[string]json.RawMessage{
			"Req":    json.RawMessage(`{"type":"object","required":["claim"],"properties":{"claim":{"type":"string","minLength":3},"sub":{"$ref":"#/components/schemas/Sub"}}}`),
			"Sub":    json.RawMessage(`{"type":"object"}`),
			"Query":  json.RawMessage(`{"type":"object","required":["q"],"properties":{"q":{"type":"string","description":"Words"},"limit":{"type":"integer"}}}`),
			"Result": json.RawMessage(`{"type":"object","properties":{"status":{"type":"string"}}}`),
		},
		Operations: []discovery.Operation{
			{ID: "claims.verify.standard", Capability: "web.evidence.verify-claim", Summary: "Standard verification.", Method: "POST",
				Path: "/v1/claims/verify", Body: "Req", Output: "Result", Price: price(50_000, "50000"), TimeoutSeconds: 120, Idempotent: true,
				Extra: map[string]any{"verification-tier": map[string]any{"name": "standard"}}},
			{ID: "claims.verify.quick", Capability: "web.evidence.verify-claim", Summary: "Quick verification.", Method: "POST",
				Path: "/v1/claims/verify/quick", Body: "Req", Output: "Result", Price: price(20_000, "20000"), TimeoutSeconds: 120, Idempotent: true},
			{ID: "orders.get", Capability: "web.evidence.verify-claim", Summary: "Read an order.", Method: "GET", Path: "/v1/orders/{order_id}", Idempotent: true},
			{ID: "search", Capability: "web.evidence.verify-claim", Summary: "Search.", Method: "GET", Path: "/v1/search", Query: "Query", Idempotent: true},
		},
		MCP: &discovery.MCP{Path: "/mcp", Tools: []discovery.Tool{
			{Name: "verify_claim", Summary: "Standard verification (MCP tool verify_claim).", Price: price(50_000, "50000"), TimeoutSeconds: 120, Idempotent: true,
				InputSchema: json.RawMessage(`{"type":"object","required":["claim"],"properties":{"claim":{"type":"string","minLength":3},"maxSources":{"type":"integer","maximum":20}}}`)},
			{Name: "list_tiers", Summary: "List the tiers (MCP tool list_tiers).", Idempotent: true,
				InputSchema:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"tiers":{"type":"array"}}}`)},
		}},
		A2A: &discovery.A2A{Path: "/a2a", Price: price(50_000, "50000"), TierKey: "tier",
			Tiers:  []discovery.A2ATier{{Name: "quick", Price: price(20_000, "20000")}, {Name: "standard", Price: price(50_000, "50000"), Default: true}},
			Skills: []discovery.Skill{{ID: "verify", Name: "Verify", Description: "Verify a claim.", Tags: []string{"facts"}}}},
		Provenance:      discovery.Provenance{Summary: "Sources returned.", Freshness: "Caller-controlled."},
		Policies:        discovery.Policies{Terms: "https://example.com/terms", Privacy: "https://example.com/privacy", DataRetentionDays: 30},
		Paid:            paid,
		OwnershipProofs: []string{payTo},
		MCPName:         "io.github.example/web-evidence",
		Repository:      "https://github.com/example/web-evidence",
	}
	return s
}

func TestDocumentsValidateAgainstOurSchemas(t *testing.T) {
	manifest := compile(t, discovery.SchemaManifest)
	mcp := compile(t, discovery.SchemaMCPServer)
	card := compile(t, discovery.SchemaAgentCard)
	x402 := compile(t, discovery.SchemaX402Legacy)
	for _, paid := range []bool{true, false} {
		s := testService(paid)
		m, err := discovery.NewManifest(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, manifest, m); err != nil {
			t.Errorf("paid=%v manifest: %v", paid, err)
		}
		ms, err := discovery.NewMCPServer(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, mcp, ms); err != nil {
			t.Errorf("paid=%v server.json: %v", paid, err)
		}
		c, err := discovery.NewAgentCard(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, card, c); err != nil {
			t.Errorf("paid=%v agent card: %v", paid, err)
		}
		if paid != (len(c.Capabilities.Extensions) == 2) {
			t.Errorf("paid=%v: card extensions %+v", paid, c.Capabilities.Extensions)
		}
		if err := validate(t, x402, discovery.NewX402Legacy(s)); err != nil {
			t.Errorf("paid=%v x402: %v", paid, err)
		}
	}
}

func TestManifestOffersAndTransports(t *testing.T) {
	m, err := discovery.NewManifest(testService(true))
	if err != nil {
		t.Fatal(err)
	}
	type offer struct{ ID, Op, Amount, Protocols string }
	var got []offer
	for _, o := range m.Offers {
		var p []string
		for _, pm := range o.PaymentMethods {
			p = append(p, pm.Protocol+"/"+pm.Network+"/"+pm.Asset)
		}
		got = append(got, offer{o.ID, o.Operation, o.Amount, strings.Join(p, ",")})
	}
	usdc := "x402/eip155:8453/USDC,mpp/eip155:8453/USDC"
	want := []offer{
		{"claims-verify-standard-call", "claims.verify.standard", "0.05", usdc},
		{"claims-verify-standard-card", "claims.verify.standard", "0.5", "mpp/stripe/USD"},
		{"claims-verify-quick-call", "claims.verify.quick", "0.02", usdc},
		{"claims-verify-quick-card", "claims.verify.quick", "0.5", "mpp/stripe/USD"},
		{"mcp-verify-claim-call", "mcp.verify_claim", "0.05", "x402/eip155:8453/USDC,mpp/eip155:8453/USDC"},
		{"a2a-send-message-call", "a2a.send-message", "0.05", usdc},
		{"a2a-send-message-card", "a2a.send-message", "0.5", "mpp/stripe/USD"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("offers (-want +got):\n%s", d)
	}
	var auth []string
	for _, tr := range m.Transports {
		auth = append(auth, tr.Type+"="+tr.Authorization)
	}
	if d := cmp.Diff([]string{"http=signed-request", "mcp=x402-or-mpp", "a2a=x402-or-mpp"}, auth); d != "" {
		t.Errorf("transports (-want +got):\n%s", d)
	}
	if m.Operations[0].Path != "/web-evidence/v1/claims/verify" {
		t.Errorf("path %q", m.Operations[0].Path)
	}
	var in map[string]any
	if err := json.Unmarshal(m.Operations[0].InputSchema, &in); err != nil {
		t.Fatal(err)
	}
	if in["$ref"] != "#/$defs/Req" || in["$defs"].(map[string]any)["Sub"] == nil {
		t.Errorf("input schema not self-contained: %s", m.Operations[0].InputSchema)
	}
	if m.Extensions["operations"].(map[string]any)["claims.verify.standard"] == nil {
		t.Errorf("per-operation extras missing: %v", m.Extensions)
	}

	unpaid, err := discovery.NewManifest(testService(false))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range unpaid.Transports {
		if tr.Authorization != discovery.AuthNone {
			t.Errorf("unpaid transport %s: %s", tr.ID, tr.Authorization)
		}
	}
	for _, o := range unpaid.Offers {
		for _, pm := range o.PaymentMethods {
			if pm.PayTo != "" {
				t.Errorf("unpaid offer %s names a payee", o.ID)
			}
		}
		if strings.HasSuffix(o.ID, "-card") {
			t.Errorf("unpaid manifest offers cards: %s", o.ID)
		}
	}
}

func TestX402LegacyListsPaidResources(t *testing.T) {
	s := testService(true)
	s.Operations[2].Price = s.Operations[0].Price // GET /v1/orders/{order_id}: needs an id
	s.Operations[3].Price = s.Operations[0].Price // GET /v1/search: needs q
	d := discovery.NewX402Legacy(s)
	want := []string{"https://api.example.com/web-evidence/v1/claims/verify", "https://api.example.com/web-evidence/v1/claims/verify/quick"}
	if diff := cmp.Diff(want, d.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	// Without an example query, the search is a template too.
	wantT := []string{"https://api.example.com/web-evidence/v1/orders/{order_id}", "https://api.example.com/web-evidence/v1/search{?q}"}
	if diff := cmp.Diff(wantT, d.ResourceTemplates); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}
	if d.Version != 1 || d.OwnershipProofs[0] != payTo || !strings.Contains(d.Instructions, "(GET or POST, JSON") || !strings.Contains(d.Instructions, "RFC 6570") {
		t.Errorf("document %+v", d)
	}
	// With an example query, the search is callable as listed.
	s.Operations[3].ExampleQuery = "q=dental+clinics"
	d = discovery.NewX402Legacy(s)
	if got := d.Resources[len(d.Resources)-1]; got != "https://api.example.com/web-evidence/v1/search?q=dental+clinics" {
		t.Errorf("resource with example query: %s", got)
	}
	if len(d.ResourceTemplates) != 1 {
		t.Errorf("templates %v", d.ResourceTemplates)
	}
	if got := discovery.NewX402Legacy(testService(false)); !got.Empty() {
		t.Errorf("unpaid service lists %+v", got)
	}
	if u := s.PaymentDiscoveryURL(); u != "https://api.example.com/web-evidence/.well-known/x402" {
		t.Errorf("payment discovery %s", u)
	}
	// Only operations that need an identifier are priced: the list still
	// names them (as templates) and is where payers look.
	s.Operations = s.Operations[2:3]
	if d := discovery.NewX402Legacy(s); len(d.Resources) != 0 || len(d.ResourceTemplates) != 1 || s.PaymentDiscoveryURL() != s.URL(discovery.PathX402) {
		t.Errorf("templates only: %+v %s", d, s.PaymentDiscoveryURL())
	}
	m, err := discovery.NewManifest(s)
	if err != nil {
		t.Fatal(err)
	}
	if m.Extensions["paymentDiscovery"] != "https://api.example.com/web-evidence/.well-known/x402" {
		t.Errorf("manifest paymentDiscovery %v", m.Extensions["paymentDiscovery"])
	}
	// Nothing priced: OpenAPI instead.
	s.Operations[0].Price = nil
	if u := s.PaymentDiscoveryURL(); u != "https://api.example.com/web-evidence/openapi.json" {
		t.Errorf("payment discovery without priced operations %s", u)
	}
}

func TestManifestSchemaRejectsTheReferenceMistakes(t *testing.T) {
	s := compile(t, discovery.SchemaManifest)
	m, err := discovery.NewManifest(testService(true))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	mutate := func(f func(map[string]any)) map[string]any {
		var v map[string]any
		_ = json.Unmarshal(b, &v)
		f(v)
		return v
	}
	bad := map[string]map[string]any{
		"contact is a URL": mutate(func(v map[string]any) {
			v["provider"].(map[string]any)["contact"] = "https://example.com/contact"
		}),
		"unknown authorization": mutate(func(v map[string]any) {
			v["transports"].([]any)[0].(map[string]any)["authorization"] = "paid"
		}),
		"extra key on an operation": mutate(func(v map[string]any) {
			v["operations"].([]any)[0].(map[string]any)["extensions"] = map[string]any{}
		}),
		"method without path": mutate(func(v map[string]any) {
			delete(v["operations"].([]any)[0].(map[string]any), "path")
		}),
		"amount not decimal": mutate(func(v map[string]any) {
			v["offers"].([]any)[0].(map[string]any)["amount"] = "0.050 USD"
		}),
		"http transport url": mutate(func(v map[string]any) {
			v["transports"].([]any)[0].(map[string]any)["url"] = "http://api.example.com"
		}),
		"wrong version": mutate(func(v map[string]any) { v["manifestVersion"] = "0.2" }),
		"no offers":     mutate(func(v map[string]any) { v["offers"] = []any{} }),
	}
	for name, v := range bad {
		if err := validate(t, s, v); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, a := range []string{"none", "oauth2", "bearer", "signed-request", "x402", "mpp", "x402-or-mpp"} {
		v := mutate(func(v map[string]any) { v["transports"].([]any)[0].(map[string]any)["authorization"] = a })
		if err := validate(t, s, v); err != nil {
			t.Errorf("authorization %s refused: %v", a, err)
		}
	}
	v := mutate(func(v map[string]any) { v["extensions"].(map[string]any)["anything"] = map[string]any{"goes": true} })
	if err := validate(t, s, v); err != nil {
		t.Errorf("extensions must stay open: %v", err)
	}
}

func TestMCPServerRules(t *testing.T) {
	s := compile(t, discovery.SchemaMCPServer)
	svc := testService(true)
	svc.Summary = strings.Repeat("x", 101)
	if _, err := discovery.NewMCPServer(svc); err == nil {
		t.Error("101-character description accepted")
	}
	svc = testService(true)
	svc.MCPName = "no-slash"
	if _, err := discovery.NewMCPServer(svc); err == nil {
		t.Error("name without / accepted")
	}
	svc = testService(true)
	svc.MCP = nil
	if _, err := discovery.NewMCPServer(svc); err != discovery.ErrNoMCP {
		t.Errorf("no MCP: %v", err)
	}
	for name, doc := range map[string]string{
		"two slashes":   `{"name":"a/b/c","description":"d","version":"1.0.0"}`,
		"long desc":     `{"name":"a/b","description":"` + strings.Repeat("d", 101) + `","version":"1.0.0"}`,
		"range version": `{"name":"a/b","description":"d","version":"^1.0.0"}`,
		"x version":     `{"name":"a/b","description":"d","version":"1.x"}`,
		"no version":    `{"name":"a/b","description":"d"}`,
	} {
		var v any
		_ = json.Unmarshal([]byte(doc), &v)
		if err := validate(t, s, v); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestAgentCardSchemaRefusesV03Shapes(t *testing.T) {
	s := compile(t, discovery.SchemaAgentCard)
	c, err := discovery.NewAgentCard(testService(true))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	for _, key := range []string{"url", "preferredTransport", "additionalInterfaces"} {
		var v map[string]any
		_ = json.Unmarshal(b, &v)
		v[key] = "x"
		if err := validate(t, s, v); err == nil {
			t.Errorf("0.3 key %s accepted", key)
		}
	}
	var v map[string]any
	_ = json.Unmarshal(b, &v)
	delete(v, "supportedInterfaces")
	if err := validate(t, s, v); err == nil {
		t.Error("card without supportedInterfaces accepted")
	}
	ext := c.Capabilities.Extensions[0]
	if ext.URI != "https://www.x402.org/" || ext.Params["priceUsd"] != "0.05" || ext.Params["discoveryUrl"] != "https://api.example.com/web-evidence/.well-known/x402" {
		t.Errorf("x402 extension %+v", ext)
	}
}

func TestOpenAPIOperations(t *testing.T) {
	b, err := discovery.OpenAPI(testService(true))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Servers []map[string]string                  `json:"servers"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
		XDisc   map[string][]string                  `json:"x-discovery"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Servers[0]["url"] != "https://api.example.com/web-evidence" || doc.XDisc["ownershipProofs"][0] != payTo {
		t.Fatalf("header: %s", b[:200])
	}
	std := doc.Paths["/v1/claims/verify"]["post"]
	pi, _ := json.Marshal(std["x-payment-info"])
	want := `{"offers":[{"amount":"50000","currency":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","description":"USDC on Base","intent":"charge","method":"evm"},` +
		`{"amount":"50","currency":"usd","description":"Card; USD 0.5 minimum","intent":"charge","method":"stripe"}],` +
		`"price":{"amount":"0.05","currency":"USD","mode":"fixed"},` +
		`"protocols":[{"x402":{}},{"mpp":{"currency":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","intent":"charge","method":"evm"}},{"mpp":{"currency":"usd","intent":"charge","method":"stripe"}}]}`
	if string(pi) != want {
		t.Errorf("x-payment-info\n got %s\nwant %s", pi, want)
	}
	if std["responses"].(map[string]any)["402"] == nil || std["x-verification-tier"] == nil {
		t.Errorf("standard: %v", std)
	}
	order := doc.Paths["/v1/orders/{order_id}"]["get"]
	if p := order["parameters"].([]any)[0].(map[string]any); p["name"] != "order_id" || p["in"] != "path" || p["required"] != true {
		t.Errorf("path parameter %v", p)
	}
	if order["responses"].(map[string]any)["402"] != nil {
		t.Error("free operation has a 402")
	}
	q := doc.Paths["/v1/search"]["get"]["parameters"].([]any)
	if len(q) != 2 || q[0].(map[string]any)["name"] != "limit" || q[1].(map[string]any)["required"] != true || q[1].(map[string]any)["description"] != "Words" {
		t.Errorf("query parameters %v", q)
	}

	unpaid, err := discovery.OpenAPI(testService(false))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(unpaid, []byte("x-payment-info")) || bytes.Contains(unpaid, []byte(`"402"`)) || bytes.Contains(unpaid, []byte("x-discovery")) {
		t.Error("unpaid document advertises payment")
	}
	s := testService(true)
	s.Operations[0].Body = "Missing"
	if _, err := discovery.OpenAPI(s); err == nil {
		t.Error("unknown body schema accepted")
	}
}

func TestChallengeMethods(t *testing.T) {
	pr := `{"x402Version":2,"resource":{"url":"https://api.example.com/x"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"250000",` +
		`"asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"` + payTo + `","maxTimeoutSeconds":300,"extra":{"name":"USD Coin","version":"2"}}]}`
	evmReq := "eyJhbW91bnQiOiIyNTAwMDAiLCJjdXJyZW5jeSI6IjB4ODMzNTg5ZkNENmVEYjZFMDhmNGM3QzMyRDRmNzFiNTRiZEEwMjkxMyIsIm1ldGhvZERldGFpbHMiOnsiY2hhaW5JZCI6ODQ1MywiY3JlZGVudGlhbFR5cGVzIjpbImF1dGhvcml6YXRpb24iXSwiZGVjaW1hbHMiOjZ9LCJyZWNpcGllbnQiOiIweDIwOTY5M0JjNmFmYzBDNTMyOGJBMzZGYUYwM0M1MTRFRjMxMjI4N0MifQ"
	stripeReq := base64.RawURLEncoding.EncodeToString([]byte(`{"amount":"50","currency":"usd","methodDetails":{"networkId":"profile_1","paymentMethodTypes":["card"]}}`))
	h := http.Header{}
	h.Set("Payment-Required", base64.StdEncoding.EncodeToString([]byte(pr)))
	h.Add("Www-Authenticate", `Payment id="B_kD", realm="api.example.com", method="evm", intent="charge", expires="2026-11-22T08:45:14Z", request="`+evmReq+`"`)
	h.Add("Www-Authenticate", `Bearer realm="x", Payment id="s\"1", realm="api.example.com", method="stripe", intent="charge", request=`+stripeReq)
	got, err := discovery.ChallengeMethods(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	usdc := "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	want := []discovery.Method{
		{Protocol: "x402", Scheme: "exact", Network: "eip155:8453", Asset: usdc, AssetSymbol: "USDC", PayTo: payTo, Amount: "250000"},
		{Protocol: "mpp", Scheme: "evm", Intent: "charge", Network: "eip155:8453", Asset: usdc, AssetSymbol: "USDC", PayTo: payTo, Amount: "250000"},
		{Protocol: "mpp", Scheme: "stripe", Intent: "charge", Network: "stripe", Asset: "usd", AssetSymbol: "USD", PayTo: "profile_1", Amount: "50"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("methods (-want +got):\n%s", d)
	}
	v1 := []byte(`{"x402Version":1,"accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"20000","asset":"` + usdc + `","payTo":"` + payTo + `"}]}`)
	got, err = discovery.ChallengeMethods(http.Header{}, v1)
	if err != nil || len(got) != 1 || got[0].Network != "eip155:8453" || got[0].AmountInt() != 20000 {
		t.Errorf("v1 body: %+v %v", got, err)
	}
	for name, h := range map[string]http.Header{
		"nothing":          {},
		"bad base64":       {"Payment-Required": {"%%%"}},
		"bad mpp request":  {"Www-Authenticate": {`Payment method="evm", request="!!"`}},
		"unterminated":     {"Www-Authenticate": {`Payment method="evm`}},
		"not json x402":    {"Payment-Required": {base64.StdEncoding.EncodeToString([]byte("nope"))}},
		"only other types": {"Www-Authenticate": {`Bearer realm="x"`}},
	} {
		if _, err := discovery.ChallengeMethods(h, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

type inner struct {
	N  *int     `json:"n"`
	Xs []string `json:"xs,omitempty"`
	M  map[string]bool
	_  string
	E  enumT `json:"e"`
}

type enumT string

type outer struct {
	inner
	ID    string          `json:"id"`
	In    inner           `json:"in"`
	Raw   json.RawMessage `json:"raw"`
	Skip  int             `json:"-"`
	Float float64         `json:"f"`
}

func TestReflect(t *testing.T) {
	defs := map[string]json.RawMessage{}
	name, err := discovery.Reflect(defs, &outer{}, &discovery.ReflectOptions{Enums: map[reflect.Type][]string{reflect.TypeFor[enumT](): {"a", "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if name != "outer" {
		t.Errorf("name %q", name)
	}
	want := `{"additionalProperties":false,"properties":{"M":{"additionalProperties":{"type":"boolean"},"type":"object"},"e":{"enum":["a","b"],"type":"string"},"f":{"type":"number"},"id":{"type":"string"},"in":{"$ref":"#/components/schemas/inner"},"n":{"anyOf":[{"type":"integer"},{"type":"null"}]},"raw":{},"xs":{"items":{"type":"string"},"type":"array"}},"required":["n","M","e","id","in","raw","f"],"type":"object"}`
	if string(defs["outer"]) != want {
		t.Errorf("outer\n got %s\nwant %s", defs["outer"], want)
	}
	if _, ok := defs["inner"]; !ok {
		t.Error("inner not defined")
	}
	if _, err := discovery.Reflect(defs, 3, nil); err == nil {
		t.Error("non-struct accepted")
	}
	if _, err := discovery.Reflect(map[string]json.RawMessage{"outer": nil}, outer{}, nil); err == nil {
		t.Error("redefinition accepted")
	}
	if _, err := discovery.Reflect(map[string]json.RawMessage{}, struct{ C chan int }{}, nil); err == nil {
		t.Error("channel accepted")
	}
}

// The documents validate against the definitions their publishers ship
// (vendored verbatim in discoverytest/testdata): server.json against the
// MCP registry's schema, the agent card against the A2A 1.0 proto.
func TestDocumentsValidateAgainstPublishedDefinitions(t *testing.T) {
	for _, paid := range []bool{true, false} {
		s := testService(paid)
		ms, err := discovery.NewMCPServer(s)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(ms)
		if ms.Schema != discoverytest.MCPServerSchemaID {
			t.Errorf("server.json declares $schema %s, vendored is %s", ms.Schema, discoverytest.MCPServerSchemaID)
		}
		if err := discoverytest.ValidateServerJSON(b); err != nil {
			t.Errorf("paid=%v server.json against the registry schema: %v", paid, err)
		}
		c, err := discovery.NewAgentCard(s)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(c)
		if err := discoverytest.CheckAgentCard(b); err != nil {
			t.Errorf("paid=%v agent card against a2a.proto v1.0.0: %v", paid, err)
		}
	}
}

// leaves flattens a validation error into its innermost causes.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// The manifest schema requires https URLs for service.id, homepage and
// the transport URLs: a manifest built on an https base validates, one on
// an http base (the example server's default) fails exactly there.
func TestManifestBaseURLScheme(t *testing.T) {
	sch := compile(t, discovery.SchemaManifest)
	build := func(base string) *discovery.Manifest {
		s := testService(true)
		s.Base = base + s.Prefix
		s.Homepage = s.URL(discovery.PathOpenAPI)
		s.Provider.SigningKey = s.URL("/.well-known/jwks.json")
		m, err := discovery.NewManifest(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if err := validate(t, sch, build("https://api.example.com")); err != nil {
		t.Fatalf("https base: %v", err)
	}
	err := validate(t, sch, build("http://127.0.0.1:8080"))
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("http base validated (%v)", err)
	}
	var where []string
	for _, l := range leaves(ve) {
		p, ok := l.ErrorKind.(*kind.Pattern)
		if !ok || p.Want != "^https://" {
			t.Errorf("http base fails on something else than the https pattern: %v at /%s", l.ErrorKind, strings.Join(l.InstanceLocation, "/"))
			continue
		}
		where = append(where, "/"+strings.Join(l.InstanceLocation, "/"))
	}
	want := []string{"/service/homepage", "/service/id", "/transports/0/url", "/transports/1/url", "/transports/2/url"}
	slices.Sort(where)
	if diff := cmp.Diff(want, where); diff != "" {
		t.Errorf("https pattern failures (-want +got):\n%s", diff)
	}
}

// Every MCP tool is a manifest operation on the MCP transport with the
// tool's own schemas; a charging tool has an x402-only offer, a free one
// none.
func TestManifestListsMCPTools(t *testing.T) {
	s := testService(true)
	m, err := discovery.NewManifest(s)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]discovery.ManifestOperation{}
	for _, op := range m.Operations {
		ops[op.ID] = op
	}
	for _, tl := range s.MCP.Tools {
		op, ok := ops["mcp."+tl.Name]
		if !ok {
			t.Errorf("tool %s not in the manifest", tl.Name)
			continue
		}
		if op.Transport != discovery.TransportMCP || op.Tool != tl.Name || op.Summary != tl.Summary || op.Capability != "web.evidence.verify-claim" {
			t.Errorf("operation %+v", op)
		}
		if !jsonEqual(t, op.InputSchema, tl.InputSchema) {
			t.Errorf("%s input schema %s, the tool's is %s", tl.Name, op.InputSchema, tl.InputSchema)
		}
		if tl.OutputSchema != nil && !jsonEqual(t, op.OutputSchema, tl.OutputSchema) {
			t.Errorf("%s output schema %s", tl.Name, op.OutputSchema)
		}
	}
	var offers []string
	for _, o := range m.Offers {
		if strings.HasPrefix(o.Operation, "mcp.") {
			offers = append(offers, o.Operation+"="+o.Amount)
		}
	}
	if diff := cmp.Diff([]string{"mcp.verify_claim=0.05"}, offers); diff != "" {
		t.Errorf("MCP offers (-want +got):\n%s", diff)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return cmp.Equal(x, y)
}

// The card states the price of every tier and the metadata member that
// chooses it, in the payment extensions and the skills.
func TestAgentCardTiers(t *testing.T) {
	c, err := discovery.NewAgentCard(testService(true))
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range c.Capabilities.Extensions {
		if diff := cmp.Diff(map[string]string{"quick": "0.02", "standard": "0.05"}, ext.Params["tiers"]); diff != "" {
			t.Errorf("%s tiers (-want +got):\n%s", ext.URI, diff)
		}
		if ext.Params["tierMetadataKey"] != "tier" || ext.Params["defaultTier"] != "standard" || !strings.Contains(ext.Description, "params.metadata.tier") {
			t.Errorf("%s: %+v", ext.URI, ext)
		}
	}
	if got := c.Capabilities.Extensions[0].Description; !strings.Contains(got, "quick (USD 0.02), standard (USD 0.05, default)") {
		t.Errorf("x402 extension description %q", got)
	}
	if got := c.Skills[0].Description; got != "Verify a claim. Choose the tier with params.metadata.tier: quick (USD 0.02), standard (USD 0.05, default)." {
		t.Errorf("skill description %q", got)
	}
	unpaid, err := discovery.NewAgentCard(testService(false))
	if err != nil {
		t.Fatal(err)
	}
	if got := unpaid.Skills[0].Description; got != "Verify a claim. Choose the tier with params.metadata.tier: quick, standard (default)." {
		t.Errorf("unpaid skill description %q", got)
	}
}

type shadowed struct {
	Items any    `json:"items"`
	Count int    `json:"count"`
	Note  string `json:"note,omitempty"`
}

type item interface{}

// refined documents shadowed's items as encoding/json would encode them:
// the shallower member hides the embedded one.
type refined struct {
	shadowed
	Items []item `json:"items"`
}

func TestReflectShadowingAndUnions(t *testing.T) {
	defs := map[string]json.RawMessage{}
	o := &discovery.ReflectOptions{Unions: map[reflect.Type][]any{reflect.TypeFor[item](): {inner{}, ""}}}
	if _, err := discovery.Reflect(defs, refined{}, o); err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"count":{"type":"integer"},"items":{"items":{"anyOf":[{"$ref":"#/components/schemas/inner"},{"type":"string"}]},"type":"array"},"note":{"type":"string"}},"required":["items","count"],"type":"object"}`
	if string(defs["refined"]) != want {
		t.Errorf("refined\n got %s\nwant %s", defs["refined"], want)
	}
	// encoding/json agrees on which member wins.
	b, _ := json.Marshal(refined{shadowed: shadowed{Items: "hidden", Count: 1}, Items: []item{"shown"}})
	if string(b) != `{"count":1,"items":["shown"]}` {
		t.Errorf("encoding/json: %s", b)
	}
}
