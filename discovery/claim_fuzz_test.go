package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// claimFuzzCases is how many schema-valid requests the fuzzer sends to each
// target (a tier over HTTP, MCP and A2A; ASSAY_CLAIM_FUZZ_CASES overrides
// it).
const claimFuzzCases = 120

// TestClaimSchemaFuzz is a schema-driven fuzzer of the claim operations on
// every transport. From each schema the server publishes for a claim
// request — the OpenAPI body of each tier route, the input schema of each
// MCP verify tool (tools/list), and the A2A SendMessage params of the
// manifest with each tier chosen in metadata.tier — it generates seeded
// requests that the published schema accepts, sends them unpaid, and
// fails on any refusal except the one rule the schemas can only state in
// prose (minimumSources > maxSources, which must be refused, and with
// that rule's message): a schema-valid request must reach the payment
// step (402, or the MCP PaymentRequired result). In the other direction,
// it breaks each rule the schemas state (a domain that is not a host name,
// official_only without allowedDomains, minimumSources above the tier's
// cap), checks that the published schema refuses the request, and that
// the server refuses it too (422, before any payment).
func TestClaimSchemaFuzz(t *testing.T) {
	cases := claimFuzzCases
	if v, err := strconv.Atoi(os.Getenv("ASSAY_CLAIM_FUZZ_CASES")); err == nil && v > 0 {
		cases = v
	}
	f := newClaimFuzz(t)
	rng := rand.New(rand.NewPCG(30, 2026))
	for _, tg := range f.targets(t) {
		gen := &schemaGen{rng: rng, comps: tg.comps}
		valid := 0
		for range cases * 4 {
			if valid == cases {
				break
			}
			v, ok := normalizeJSON(gen.valid(tg.request, 0)).(map[string]any)
			if ok && rng.IntN(4) == 0 {
				overlap(v) // random names rarely meet: make some lists share one
			}
			if !ok || tg.validate(v) != nil {
				continue
			}
			valid++
			prose := numberOf(v["minimumSources"], claims.DefaultMinimumSources) > numberOf(v["maxSources"], claims.DefaultMaxSources)
			f.expect(t, tg, v, prose, "")
			if valid%4 == 0 {
				f.breakRules(t, tg, v, rng)
			}
		}
		if valid < cases {
			t.Errorf("%s: only %d schema-valid requests generated", tg.name, valid)
		}
	}
	t.Logf("%d requests: %d schema-valid (%d of them breaking minimumSources <= maxSources), %d breaking a rule the schema states",
		f.sent, f.valid, f.prose, f.broken)
	if f.prose == 0 || f.broken == 0 {
		t.Error("the fuzzer exercised no prose rule or no schema-stated rule")
	}
}

// claimFuzz is the server under the fuzzer and its counters.
type claimFuzz struct {
	base                       string
	mcp                        *mcp.ClientSession
	sent, valid, prose, broken int
	failures                   int
}

func newClaimFuzz(t *testing.T) *claimFuzz {
	t.Helper()
	ctx := context.Background()
	db, eng, _ := demoEngines(t)
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	gate := devGate(t, db, hs)
	srv, err := New(Config{PublicBaseURL: base, Paywall: gate, Claims: ClaimsConfig{Engine: eng},
		Commerce: CommerceConfig{Cashier: gate.Cashier()}, Discovery: DiscoveryConfig{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = srv
	hs.Start()
	t.Cleanup(hs.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claim-fuzzer", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + DefaultClaimsPrefix + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &claimFuzz{base: base, mcp: cs}
}

// fuzzTarget is one published schema of a claim request and how a request
// reaches the server.
type fuzzTarget struct {
	name     string
	tier     claims.Tier
	comps    map[string]any // components.schemas ($ref targets of request)
	request  any            // the schema of the request, to generate from
	validate func(request map[string]any) error
	send     func(t *testing.T, request map[string]any) (payment bool, refusal string)
}

// targets reads the published schemas: the OpenAPI document of the claim
// service, the MCP tools, and the manifest's A2A operation.
func (f *claimFuzz) targets(t *testing.T) []fuzzTarget {
	t.Helper()
	var out []fuzzTarget
	// OpenAPI: each tier route's body.
	doc := f.get(t, DefaultClaimsPrefix+PathOpenAPI)
	var oa walkDoc
	if err := json.Unmarshal(doc, &oa); err != nil {
		t.Fatal(err)
	}
	c := schemaCompiler(t, "file:///openapi.json", doc)
	for _, tier := range claims.Tiers() {
		var op walkOp
		if err := json.Unmarshal(oa.Paths[tierListing(tier.Name).HTTPPath]["post"], &op); err != nil || op.RequestBody == nil {
			t.Fatalf("OpenAPI: no body of POST %s (%v)", tierListing(tier.Name).HTTPPath, err)
		}
		sch, err := c.Compile("file:///openapi.json#/paths/" + jsonPointerEscape(tierListing(tier.Name).HTTPPath) + "/post/requestBody/content/application~1json/schema")
		if err != nil {
			t.Fatal(err)
		}
		path := DefaultClaimsPrefix + tierListing(tier.Name).HTTPPath
		out = append(out, fuzzTarget{name: "HTTP " + path, tier: tier, comps: oa.Components.Schemas,
			request:  op.RequestBody.Content["application/json"].Schema,
			validate: func(v map[string]any) error { return sch.Validate(v) },
			send:     func(t *testing.T, v map[string]any) (bool, string) { return f.sendHTTP(t, path, v) }})
	}
	// MCP: each verify tool's input schema.
	lt, err := f.mcp.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tier := range claims.Tiers() {
		var raw json.RawMessage
		for _, tl := range lt.Tools {
			if tl.Name == tierListing(tier.Name).MCPTool {
				raw, _ = json.Marshal(tl.InputSchema)
			}
		}
		if raw == nil {
			t.Fatalf("MCP: no tool %s", tierListing(tier.Name).MCPTool)
		}
		sch := compileStandalone(t, "file:///"+tierListing(tier.Name).MCPTool+".json", raw)
		var gen map[string]any
		_ = json.Unmarshal(raw, &gen)
		tool := tierListing(tier.Name).MCPTool
		out = append(out, fuzzTarget{name: "MCP " + tool, tier: tier, comps: nil, request: gen,
			validate: func(v map[string]any) error { return sch.Validate(v) },
			send:     func(t *testing.T, v map[string]any) (bool, string) { return f.sendMCP(t, tool, v) }})
	}
	// A2A: the SendMessage params of the manifest, the request in a data
	// part, each tier chosen in metadata.tier (the standard tier also by
	// leaving it out, the default).
	var m Manifest
	if err := json.Unmarshal(f.get(t, DefaultClaimsPrefix+PathManifest), &m); err != nil {
		t.Fatal(err)
	}
	var params json.RawMessage
	for _, op := range m.Operations {
		if op.ID == "a2a.send-message" {
			params = op.InputSchema
		}
	}
	if params == nil {
		t.Fatal("the manifest has no a2a.send-message operation")
	}
	sch := compileStandalone(t, "file:///a2a-send-message.json", params)
	data := a2aDataSchema(t, params)
	for _, tier := range claims.Tiers() {
		for _, named := range []bool{true, false} {
			if !named && tier.Name != claims.Standard {
				continue
			}
			wrap := func(v map[string]any) map[string]any {
				p := map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"data": v}}}}
				if named {
					p["metadata"] = map[string]any{"tier": tier.Name}
				}
				return p
			}
			name := "A2A SendMessage tier " + tier.Name
			if !named {
				name = "A2A SendMessage without a tier"
			}
			out = append(out, fuzzTarget{name: name, tier: tier, request: data,
				validate: func(v map[string]any) error { return sch.Validate(normalizeJSON(wrap(v))) },
				send:     func(t *testing.T, v map[string]any) (bool, string) { return f.sendA2A(t, wrap(v)) }})
		}
	}
	return out
}

// expect sends a schema-valid request (breaking the prose rule when
// prose), or one breaking a schema-stated rule (broken names it), and
// checks the answer.
func (f *claimFuzz) expect(t *testing.T, tg fuzzTarget, v map[string]any, prose bool, broken string) {
	t.Helper()
	paid, refusal := tg.send(t, v)
	f.sent++
	body, _ := json.Marshal(v)
	fail := func(format string, args ...any) {
		if f.failures++; f.failures <= 20 {
			t.Errorf("%s: %s\nrequest: %s", tg.name, fmt.Sprintf(format, args...), body)
		}
	}
	switch {
	case broken != "":
		f.broken++
		if refusal == "" {
			fail("a request breaking the stated rule %q was not refused (payment asked: %v)", broken, paid)
		}
	case prose:
		f.valid++
		f.prose++
		if !strings.Contains(refusal, "must not exceed maxSources") {
			fail("minimumSources > maxSources: want that rule's refusal, got payment %v, refusal %q", paid, refusal)
		}
	default:
		f.valid++
		if !paid {
			fail("a request the published schema accepts was refused: %q", refusal)
		}
	}
}

// badDomains are entries that are not host names: each must be refused by
// the published pattern and by the server.
var badDomains = []string{"", " ", "exa mple.com", "example.com ", "https://example.com", "example.com/path", "example.com:443",
	"user@example.com", "10.0.0.1", "[::1]", "-example.com", "example-.com", "exa_mple.com", "bücher.de", "example..com",
	".example.com", "*.", "*", "example.123", strings.Repeat("a", 64) + ".com", strings.Repeat("abcdefgh.", 28) + "com"}

// overlap puts an allowed domain, in upper case, into the blocked list
// too (a request the schema accepts: blocking wins, nothing is refused).
func overlap(v map[string]any) {
	allowed, _ := v["allowedDomains"].([]any)
	if len(allowed) == 0 {
		return
	}
	d, _ := allowed[0].(string)
	blocked, _ := v["blockedDomains"].([]any)
	v["blockedDomains"] = append([]any{strings.ToUpper(d)}, blocked...)
}

// breakRules sends v broken in each rule the published schema states.
func (f *claimFuzz) breakRules(t *testing.T, tg fuzzTarget, v map[string]any, rng *rand.Rand) {
	t.Helper()
	clone := func() map[string]any {
		out := map[string]any{}
		for k, x := range v {
			out[k] = x
		}
		return out
	}
	var mutants []struct {
		rule string
		v    map[string]any
	}
	add := func(rule string, m map[string]any) {
		mutants = append(mutants, struct {
			rule string
			v    map[string]any
		}{rule, m})
	}
	list := []string{"allowedDomains", "blockedDomains"}[rng.IntN(2)]
	m := clone()
	m[list] = []any{"example.org", badDomains[rng.IntN(len(badDomains))]}
	add("domain-is-a-host-name", m)
	m = clone()
	m["sourcePolicy"] = claims.PolicyOfficialOnly
	if rng.IntN(2) == 0 {
		delete(m, "allowedDomains")
	} else {
		m["allowedDomains"] = []any{}
	}
	add("official-only-needs-allowed-domains", m)
	if c := tg.tier.MaxMinimumSources(); c < 10 {
		m = clone()
		m["minimumSources"], m["maxSources"] = json.Number(strconv.Itoa(c+1)), json.Number("20")
		add("minimum-sources-within-tier-cap", m)
	}
	for _, mu := range mutants {
		if tg.validate(normalizeJSON(mu.v).(map[string]any)) == nil {
			body, _ := json.Marshal(mu.v)
			t.Errorf("%s: the published schema accepts a request breaking %q: %s", tg.name, mu.rule, body)
			continue
		}
		f.expect(t, tg, mu.v, false, mu.rule)
	}
}

func (f *claimFuzz) get(t *testing.T, path string) []byte {
	t.Helper()
	res, err := http.Get(f.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	return b
}

// sendHTTP posts the body unpaid: 402 is the payment step, 422 a refusal.
func (f *claimFuzz) sendHTTP(t *testing.T, path string, v map[string]any) (bool, string) {
	t.Helper()
	body, _ := json.Marshal(v)
	res, err := http.Post(f.base+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	switch res.StatusCode {
	case http.StatusPaymentRequired:
		return true, ""
	case http.StatusUnprocessableEntity:
		return false, string(b)
	}
	t.Fatalf("POST %s: unexpected %d %s", path, res.StatusCode, b)
	return false, ""
}

// sendMCP calls the tool unpaid: the PaymentRequired result is the payment
// step, an error result with status 422 a refusal.
func (f *claimFuzz) sendMCP(t *testing.T, tool string, v map[string]any) (bool, string) {
	t.Helper()
	res, err := f.mcp.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: v})
	if err != nil {
		t.Fatalf("MCP %s: %v", tool, err)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if res.IsError && bytes.Contains(sc, []byte(`"x402Version"`)) {
		return true, ""
	}
	if st, _ := res.Meta["io.assaykit/status"].(float64); res.IsError && st == 422 {
		return false, string(sc)
	}
	t.Fatalf("MCP %s: unexpected result %s", tool, sc)
	return false, ""
}

// sendA2A sends SendMessage unpaid: 402 is the payment step, the JSON-RPC
// error "invalid params" a refusal.
func (f *claimFuzz) sendA2A(t *testing.T, params map[string]any) (bool, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params})
	req, _ := http.NewRequest(http.MethodPost, f.base+DefaultClaimsPrefix+"/a2a", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusPaymentRequired {
		return true, ""
	}
	var rpc struct {
		Error *struct {
			Code int             `json:"code"`
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if res.StatusCode == 200 && json.Unmarshal(b, &rpc) == nil && rpc.Error != nil && rpc.Error.Code == -32602 {
		return false, string(b)
	}
	t.Fatalf("A2A SendMessage: unexpected %d %s", res.StatusCode, b)
	return false, ""
}

// compileStandalone compiles a JSON Schema document on its own.
func compileStandalone(t *testing.T, id string, raw []byte) *jsonschema.Schema {
	t.Helper()
	s, err := schemaCompiler(t, id, raw).Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// a2aDataSchema is the schema of the data part's request within the A2A
// params schema.
func a2aDataSchema(t *testing.T, params json.RawMessage) map[string]any {
	t.Helper()
	var p struct {
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
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatal(err)
	}
	for _, alt := range p.Properties.Message.Properties.Parts.Items.AnyOf {
		if d, ok := alt.Properties["data"]; ok {
			return d
		}
	}
	t.Fatal("the A2A params schema has no data part")
	return nil
}
