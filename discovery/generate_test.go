package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimsmem"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/discovery/discoverytest"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const testPublicBase = "https://api.example.com"

type discoveryEnv struct {
	srv  *Server
	paid bool
	base string // the configured public base URL
	db   *store.DB
	// params are example values of path parameters, by name (a published
	// niche id for niche_id).
	params map[string]string
}

// newDiscoveryEnv builds a server with claim verification (scripted
// provider), commerce and the discovery documents: paid (a real payment
// gate in front of a fake processor) or unpaid (httpgate.Free).
func newDiscoveryEnv(t *testing.T, paid bool, mod func(*Config)) *discoveryEnv {
	t.Helper()
	var proc payment.Processor
	if paid {
		proc = &gatetest.Processor{}
	}
	return newDiscoveryEnvWith(t, proc, testPublicBase, mod)
}

// newDiscoveryEnvWith builds the server paid through proc (nil: unpaid)
// with base as its public base URL.
func newDiscoveryEnvWith(t *testing.T, proc payment.Processor, base string, mod func(*Config)) *discoveryEnv {
	t.Helper()
	ctx := context.Background()
	paid := proc != nil
	db, eng, neng := demoEngines(t)
	list, err := neng.List(ctx, niche.ListOptions{Limit: 1})
	if err != nil || len(list.Previews) == 0 {
		t.Fatalf("demo catalogue: %v", err)
	}
	cfg := Config{AdminKey: testAdminKey, Claims: ClaimsConfig{Engine: eng}, Niche: NicheConfig{Engine: neng},
		Discovery: DiscoveryConfig{Enabled: true, PublicBaseURL: base}}
	if paid {
		keys, err := payment.LoadKeyring(ctx, db, "")
		if err != nil {
			t.Fatal(err)
		}
		opts := &httpgate.Options{PublicBaseURL: base, CashierOptions: payment.CashierOptions{Keys: keys}}
		if _, fake := proc.(*gatetest.Processor); fake {
			opts.ReadCredential = gatetest.ReadCredential
		}
		gate, err := httpgate.New(proc, paymentstore.New(db), opts)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Paywall = gate
		cfg.Commerce = CommerceConfig{Cashier: gate.Cashier()}
	} else {
		cfg.Paywall = httpgate.Free{}
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &discoveryEnv{srv: s, paid: paid, base: base, db: db, params: map[string]string{"niche_id": list.Previews[0].ID}}
}

// docRoutes are the discovery routes of the table.
func (e *discoveryEnv) docRoutes() []*Route {
	var out []*Route
	for _, r := range e.srv.Routes() {
		if strings.HasPrefix(r.ID, "discovery.") {
			out = append(out, r)
		}
	}
	return out
}

func (e *discoveryEnv) get(t *testing.T, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, e.srv, "GET", path, "", hdr...)
}

// docKind is the kind of document a discovery route serves.
func docKind(id string) string {
	i := strings.LastIndex(id, ".")
	return id[i+1:]
}

func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	raw, ok := Schema(name)
	if !ok {
		t.Fatalf("no schema %s", name)
	}
	s, err := discoverytest.CompileSchema("file:///"+name, raw)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return s
}

func TestDiscoveryDocumentsValidate(t *testing.T) {
	for _, paid := range []bool{true, false} {
		t.Run(fmt.Sprintf("paid=%v", paid), func(t *testing.T) {
			e := newDiscoveryEnv(t, paid, nil)
			want := []string{"discovery.claim-verification.openapi", "discovery.claim-verification.manifest", "discovery.openapi", "discovery.manifest"}
			if paid {
				want = append(want, "discovery.claim-verification.x402", "discovery.x402")
			}
			validateDocuments(t, e, want)
		})
	}
	t.Run("real processor", func(t *testing.T) {
		e := newDiscoveryEnvWith(t, devProcessor(t, "api.example.com"), testPublicBase, nil)
		validateDocuments(t, e, []string{"discovery.claim-verification.x402", "discovery.niche-discovery.manifest"})
		var m Manifest
		if err := json.Unmarshal(e.get(t, "/claim-verification/.well-known/agent-service.json").Body.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		pm := m.Offers[0].PaymentMethods
		if len(pm) != 2 || pm[0].Protocol != "x402" || pm[0].Network != "eip155:8453" || pm[0].Asset != "USDC" ||
			pm[0].PayTo != paymenttest.DevPayee || pm[1].Protocol != "mpp" {
			t.Errorf("payment methods from the live challenge: %+v", pm)
		}
	})
}

// validateDocuments checks that the routes want exist and that every
// document validates: the manifest, server.json, agent card and x402
// document against our schemas, server.json also against the MCP
// registry's published schema and the card against the A2A 1.0 proto
// (vendored in discoverytest), openapi.json with the structural check.
func validateDocuments(t *testing.T, e *discoveryEnv, want []string) {
	t.Helper()
	schemas := map[string]*jsonschema.Schema{
		docManifest:  compileSchema(t, SchemaManifest),
		docMCP:       compileSchema(t, SchemaMCPServer),
		docAgentCard: compileSchema(t, SchemaAgentCard),
		docX402:      compileSchema(t, SchemaX402Legacy),
	}
	routes := e.docRoutes()
	var ids []string
	for _, r := range routes {
		ids = append(ids, r.ID)
	}
	for _, w := range want {
		if !slices.Contains(ids, w) {
			t.Errorf("no route %s in %v", w, ids)
		}
	}
	for _, r := range routes {
		rec := e.get(t, r.Path)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", r.Path, rec.Code, rec.Body)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(rec.Body.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", r.Path, err)
		}
		kind := docKind(r.ID)
		if kind == docOpenAPI {
			checkOpenAPI(t, rec.Body.Bytes(), e, r.Path)
			continue
		}
		if err := schemas[kind].Validate(inst); err != nil {
			t.Errorf("%s does not validate: %v", r.Path, err)
		}
		// And against the definitions their publishers ship.
		switch kind {
		case docMCP:
			if err := discoverytest.ValidateServerJSON(rec.Body.Bytes()); err != nil {
				t.Errorf("%s does not validate against the MCP registry's schema: %v", r.Path, err)
			}
		case docAgentCard:
			if err := discoverytest.CheckAgentCard(rec.Body.Bytes()); err != nil {
				t.Errorf("%s does not match the A2A 1.0 AgentCard: %v", r.Path, err)
			}
		}
	}
}

// newTransportEnv serves the real MCP and A2A endpoints (A2A paid at the
// standard tier's price through the paywall) under the claims prefix, then
// mounts the documents.
func newTransportEnv(t *testing.T, paid bool) *discoveryEnv {
	t.Helper()
	var proc payment.Processor
	if paid {
		proc = &gatetest.Processor{}
	}
	return newDiscoveryEnvWith(t, proc, testPublicBase, nil)
}

// TestDiscoveryWithMCPAndA2A checks server.json and the agent card (and
// the MCP/A2A parts of the manifest) once the endpoints exist: they
// validate, and the walker reaches both endpoints with their protocol
// (the paid A2A endpoint answers an unpaid call 402 at the advertised
// price).
func TestDiscoveryWithMCPAndA2A(t *testing.T) {
	for _, paid := range []bool{true, false} {
		t.Run(fmt.Sprintf("paid=%v", paid), func(t *testing.T) {
			e := newTransportEnv(t, paid)
			validateDocuments(t, e, []string{"discovery.claim-verification.mcp-server", "discovery.claim-verification.agent-card",
				"discovery.mcp-server", "discovery.agent-card"})
			var m Manifest
			if err := json.Unmarshal(e.get(t, "/claim-verification/.well-known/agent-service.json").Body.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tr := range m.Transports {
				got = append(got, tr.Type+"="+tr.Authorization)
			}
			want := []string{"http=signed-request", "mcp=x402-or-mpp", "a2a=x402-or-mpp"}
			if !paid {
				want = []string{"http=none", "mcp=none", "a2a=none"}
			}
			if !slices.Equal(got, want) {
				t.Errorf("transports %v, want %v", got, want)
			}
			tools := map[string]bool{}
			for _, op := range m.Operations {
				if op.Tool != "" {
					tools[op.Tool] = true
				}
			}
			for _, tr := range claims.Tiers() {
				if !tools[tierListing(tr.Name).MCPTool] {
					t.Errorf("MCP tool %s of tier %s not in the manifest", tierListing(tr.Name).MCPTool, tr.Name)
				}
			}
			var card AgentCard
			if err := json.Unmarshal(e.get(t, "/.well-known/agent-card.json").Body.Bytes(), &card); err != nil {
				t.Fatal(err)
			}
			if card.SupportedInterfaces[0].URL != testPublicBase+"/claim-verification/a2a" || (len(card.Capabilities.Extensions) == 2) != paid {
				t.Errorf("agent card %+v", card)
			}
			if paid && card.Capabilities.Extensions[0].Params["priceUsd"] != payment.MicroUSD(tierListing(claims.Standard).AmountMicroUSD).Decimal() {
				t.Errorf("agent card price %v", card.Capabilities.Extensions[0].Params)
			}
			ts := httptest.NewServer(e.srv)
			defer ts.Close()
			walkDocuments(t, e, ts)
		})
	}
}

// openAPIDoc is the part of an OpenAPI document the structural check reads.
type openAPIDoc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Title   string `json:"title"`
		Version string `json:"version"`
	} `json:"info"`
	Servers    []struct{ URL string } `json:"servers"`
	Paths      map[string]map[string]openAPIOp
	Components struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

type openAPIOp struct {
	OperationID string `json:"operationId"`
	Parameters  []struct {
		Name     string `json:"name"`
		In       string `json:"in"`
		Required bool   `json:"required"`
	} `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Schema map[string]any `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses   map[string]json.RawMessage `json:"responses"`
	PaymentInfo *struct {
		Price struct {
			Mode, Currency, Amount string
		} `json:"price"`
		Protocols []map[string]map[string]string `json:"protocols"`
		Offers    []struct {
			Intent, Method, Amount, Currency string
		} `json:"offers"`
	} `json:"x-payment-info"`
	Tier map[string]any `json:"x-verification-tier"`
}

// checkOpenAPI is the structural Go check of an OpenAPI 3.1 document: the
// version and info, every path is a served pattern (server URL path +
// path) of a public route with that method, every operation has an id,
// responses, its path parameters, resolvable schema references, and — on a
// paid server — a 402 and x-payment-info on exactly the priced routes.
func checkOpenAPI(t *testing.T, body []byte, e *discoveryEnv, docPath string) *openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Title == "" || doc.Info.Version == "" || len(doc.Servers) != 1 {
		t.Fatalf("%s: header %s", docPath, body[:min(300, len(body))])
	}
	su, err := url.Parse(doc.Servers[0].URL)
	if err != nil || !strings.HasPrefix(doc.Servers[0].URL, e.base) {
		t.Fatalf("%s: server URL %q", docPath, doc.Servers[0].URL)
	}
	served := map[string]*Route{}
	for _, r := range e.srv.Routes() {
		for _, p := range r.Patterns() {
			served[r.Method+" "+p] = r
		}
	}
	refRe := regexp.MustCompile(`"\$ref":"#/components/schemas/([^"]+)"`)
	for _, m := range refRe.FindAllSubmatch(body, -1) {
		if _, ok := doc.Components.Schemas[string(m[1])]; !ok {
			t.Errorf("%s: unresolved reference %s", docPath, m[1])
		}
	}
	seen := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			key := strings.ToUpper(method) + " " + su.Path + path
			r := served[key]
			if r == nil {
				t.Errorf("%s: %s is not a served pattern", docPath, key)
				continue
			}
			seen[op.OperationID] = true
			if r.Admin || op.OperationID != r.ID || len(op.Responses) == 0 || op.Responses["200"] == nil {
				t.Errorf("%s: %s: operation %+v for route %s", docPath, key, op, r.ID)
			}
			var params []string
			for _, p := range op.Parameters {
				if p.In == "path" {
					params = append(params, p.Name)
					if !p.Required {
						t.Errorf("%s: %s: optional path parameter %s", docPath, key, p.Name)
					}
				}
			}
			if d := slices.Compare(params, pathParamNames(path)); d != 0 {
				t.Errorf("%s: %s: path parameters %v", docPath, key, params)
			}
			if (r.Body != "") != (op.RequestBody != nil) {
				t.Errorf("%s: %s: request body %v for shape %q", docPath, key, op.RequestBody, r.Body)
			}
			priced := r.Offer != nil && e.paid
			if priced != (op.Responses["402"] != nil) || priced != (op.PaymentInfo != nil) {
				t.Errorf("%s: %s: priced=%v but 402=%v x-payment-info=%v", docPath, key, priced, op.Responses["402"] != nil, op.PaymentInfo != nil)
			}
		}
	}
	if len(seen) == 0 {
		t.Errorf("%s: no operations", docPath)
	}
	return &doc
}

func pathParamNames(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if strings.HasPrefix(s, "{") {
			out = append(out, strings.Trim(s, "{}"))
		}
	}
	return out
}

func TestDiscoveryAdminRoutesNeverAppear(t *testing.T) {
	e := newDiscoveryEnv(t, true, nil)
	var admin []string
	for _, r := range e.srv.Routes() {
		if r.Admin {
			admin = append(admin, r.ID)
		}
	}
	if len(admin) == 0 {
		t.Fatal("the test server has no admin route to leave out")
	}
	for _, r := range e.docRoutes() {
		body := e.get(t, r.Path).Body.String()
		if strings.Contains(body, "/admin") {
			t.Errorf("%s mentions an admin path", r.Path)
		}
		for _, id := range admin {
			if strings.Contains(body, `"`+id+`"`) {
				t.Errorf("%s names admin route %s", r.Path, id)
			}
		}
	}
}

func TestDiscoveryCachingAndETags(t *testing.T) {
	e := newDiscoveryEnv(t, true, nil)
	for _, r := range e.docRoutes() {
		rec := e.get(t, r.Path)
		etag := rec.Header().Get("ETag")
		maxAge := "300"
		if docKind(r.ID) == docAgentCard {
			maxAge = "3600"
		}
		if rec.Code != 200 || !strings.HasPrefix(etag, `"`) || rec.Header().Get("Cache-Control") != "public, max-age="+maxAge {
			t.Fatalf("%s: %d etag %q cache %q", r.Path, rec.Code, etag, rec.Header().Get("Cache-Control"))
		}
		for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
			nm := e.get(t, r.Path, "If-None-Match", inm)
			if nm.Code != http.StatusNotModified || nm.Body.Len() != 0 || nm.Header().Get("ETag") != etag {
				t.Errorf("%s If-None-Match %s: %d %q", r.Path, inm, nm.Code, nm.Body)
			}
		}
		if other := e.get(t, r.Path, "If-None-Match", `"stale"`); other.Code != 200 || other.Body.String() != rec.Body.String() {
			t.Errorf("%s: stale tag answered %d", r.Path, other.Code)
		}
		head := do(t, e.srv, "HEAD", r.Path, "")
		if head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("ETag") != etag {
			t.Errorf("%s HEAD: %d %d bytes", r.Path, head.Code, head.Body.Len())
		}
	}
}

func TestDiscoveryBaseURL(t *testing.T) {
	manifestURL := "/claim-verification" + PathManifest
	serviceID := func(t *testing.T, rec *httptest.ResponseRecorder) string {
		t.Helper()
		var m Manifest
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		return m.Service.ID
	}
	fwd := []string{"X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https"}

	configured := newDiscoveryEnv(t, true, nil)
	rec := do(t, configured.srv, "GET", manifestURL, "", fwd...)
	if got := serviceID(t, rec); got != testPublicBase+manifestURL {
		t.Errorf("configured base: %s", got)
	}

	fromRequest := newDiscoveryEnv(t, true, func(c *Config) { c.Discovery.PublicBaseURL = "" })
	req := httptest.NewRequest("GET", manifestURL, nil)
	req.Host = "api.internal:8080"
	for i := 0; i < len(fwd); i += 2 {
		req.Header.Set(fwd[i], fwd[i+1])
	}
	w := httptest.NewRecorder()
	fromRequest.srv.ServeHTTP(w, req)
	if got := serviceID(t, w); got != "http://api.internal:8080"+manifestURL {
		t.Errorf("untrusted forwarded headers were used: %s", got)
	}
	if w.Header().Get("Cache-Control") != "private, max-age=300" || w.Header().Get("Vary") != "Host" {
		t.Errorf("request-derived base cached publicly: %q %q", w.Header().Get("Cache-Control"), w.Header().Get("Vary"))
	}
	req.Host = `bad"host`
	w = httptest.NewRecorder()
	fromRequest.srv.ServeHTTP(w, req)
	if w.Code != http.StatusBadRequest {
		t.Errorf("forged Host answered %d", w.Code)
	}

	trusted := newDiscoveryEnv(t, true, func(c *Config) {
		c.Discovery.PublicBaseURL = ""
		c.Discovery.TrustForwardedHeaders = true
	})
	if got := serviceID(t, do(t, trusted.srv, "GET", manifestURL, "", fwd...)); got != "https://evil.example"+manifestURL {
		t.Errorf("trusted forwarded headers: %s", got)
	}

	if _, err := New(Config{Claims: configured.srv.Config().Claims, Paywall: httpgate.Free{}, Discovery: DiscoveryConfig{Enabled: true, PublicBaseURL: "ftp://x"}}); err == nil {
		t.Error("ftp base URL accepted")
	}
}

func TestDiscoveryDisabledAndCustomTexts(t *testing.T) {
	off := newDiscoveryEnv(t, true, func(c *Config) { c.Discovery = DiscoveryConfig{} })
	if len(off.docRoutes()) != 0 {
		t.Error("zero DiscoveryConfig mounted documents")
	}
	if rec := off.get(t, "/openapi.json"); rec.Code != 404 {
		t.Errorf("/openapi.json answered %d", rec.Code)
	}
	custom := newDiscoveryEnv(t, true, func(c *Config) {
		c.Claims.Prefix = "/web-evidence"
		c.Commerce.Prefixes = []string{"/web-evidence"}
		c.Discovery.Provider = Provider{ID: "https://example.com", Name: "Example LLC", Contact: "ops@example.com", URL: "https://example.com"}
		c.Discovery.Services = map[string]ServiceText{"claim-verification": {Name: "Web Evidence"}}
		c.Discovery.Homepage = "https://example.com/web-evidence/"
	})
	var m Manifest
	rec := custom.get(t, "/web-evidence/.well-known/agent-service.json")
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if m.Service.Name != "Web Evidence" || m.Provider.Contact != "ops@example.com" || m.Service.Homepage != "https://example.com/web-evidence/" ||
		m.Provider.SigningKey != "" && !strings.HasPrefix(m.Provider.SigningKey, testPublicBase+"/web-evidence/") {
		t.Errorf("custom manifest: %+v %+v", m.Service, m.Provider)
	}
	if m.Service.Version != "0.3.1" || m.Extensions["lifecycle"] != "paid-preview" || m.Policies.DataRetentionDays != 30 {
		t.Errorf("version/lifecycle/retention: %s %v %d", m.Service.Version, m.Extensions["lifecycle"], m.Policies.DataRetentionDays)
	}
	if custom.get(t, "/claim-verification/openapi.json").Code != 404 {
		t.Error("documents served under the default prefix too")
	}
	if _, err := New(Config{Claims: custom.srv.Config().Claims, Paywall: httpgate.Free{},
		Discovery: DiscoveryConfig{Enabled: true, Schemas: func() (map[string]json.RawMessage, error) { return nil, nil }}}); err == nil {
		t.Error("routes naming shapes without schemas were accepted")
	}
}

// TestDiscoveryFreeResponsesMatchSchemas checks the documented response
// schema against a real response (unpaid server).
func TestDiscoveryFreeResponsesMatchSchemas(t *testing.T) {
	e := newDiscoveryEnv(t, false, nil)
	schema, _ := componentSchemas(t, e.srv, "/claim-verification/openapi.json")
	sch := schema("ClaimVerificationResult")
	rec := do(t, e.srv, "POST", "/claim-verification/v1/claims/verify", goodBody)
	if rec.Code != 200 {
		t.Fatalf("verify: %d %s", rec.Code, rec.Body)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("the result does not match its documented schema: %v", err)
	}
	var broken map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &broken)
	broken["status"] = "true"
	b, _ := json.Marshal(broken)
	inst, _ = jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if sch.Validate(inst) == nil {
		t.Error("the documented schema accepts an unknown status")
	}
}

// advertised is one URL a document names.
type advertised struct {
	doc    string
	method string
	url    string
	// amounts expected in the 402 (x402 and MPP evm base units), when
	// the document prices the operation.
	price   int64
	tier    string
	example string
	// proto is "mcp" or "a2a" for transport endpoints: the walker speaks
	// the protocol to them.
	proto string
	// mustPay is set for URLs listed as paid resources (x402 list).
	mustPay bool
	// tool is the MCP tool a manifest operation names (proto "mcp"),
	// with the input schema the manifest gives it: tools/list must list
	// the tool with the same schema.
	tool   string
	schema json.RawMessage
}

// protocol probes: an MCP initialize and an A2A 1.0 SendMessage.
const (
	mcpProbe = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"discovery-walk","version":"0"}}}`
	a2aProbe = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"The Base mainnet chain ID is 8453."}]}}}`
)

// collectAdvertised walks every document and lists every URL it names
// that lives on this server.
func collectAdvertised(t *testing.T, e *discoveryEnv) []advertised {
	t.Helper()
	var out []advertised
	add := func(a advertised) {
		if strings.HasPrefix(a.url, e.base) {
			out = append(out, a)
		}
	}
	tierByPath := map[string]claims.Tier{}
	for _, tr := range claims.Tiers() {
		tierByPath[tierListing(tr.Name).HTTPPath] = tr
	}
	tiersChecked := 0
	defer func() {
		if tiersChecked == 0 {
			t.Error("no x-verification-tier was checked")
		}
	}()
	for _, r := range e.docRoutes() {
		body := e.get(t, r.Path).Body.Bytes()
		add(advertised{doc: r.Path, method: "GET", url: e.base + r.Path})
		switch docKind(r.ID) {
		case docOpenAPI:
			doc := checkOpenAPI(t, body, e, r.Path)
			for p, ops := range doc.Paths {
				for m, op := range ops {
					a := advertised{doc: r.Path, method: strings.ToUpper(m), url: doc.Servers[0].URL + p}
					if op.PaymentInfo != nil {
						a.price = usdMicro(t, op.PaymentInfo.Price.Amount)
						for _, o := range op.PaymentInfo.Offers {
							if o.Method == "evm" {
								if n, _ := strconv.ParseInt(o.Amount, 10, 64); n != a.price {
									t.Errorf("%s %s: MPP offer %s != price %d", r.Path, p, o.Amount, a.price)
								}
							}
						}
					}
					if op.Tier != nil {
						// By name, so that the root document (whose paths
						// carry the service prefix) is checked too.
						a.tier, _ = op.Tier["name"].(string)
						tr, ok := claims.TierByName(a.tier)
						switch {
						case !ok:
							t.Errorf("%s %s: x-verification-tier names no tier: %v", r.Path, p, op.Tier)
						case op.Tier["priceUsd"] != payment.MicroUSD(tierListing(tr.Name).AmountMicroUSD).Decimal() || !strings.HasSuffix(p, tierListing(tr.Name).HTTPPath):
							t.Errorf("%s %s: x-verification-tier %v, the tier table says %s at %s", r.Path, p, op.Tier, payment.MicroUSD(tierListing(tr.Name).AmountMicroUSD).Decimal(), tierListing(tr.Name).HTTPPath)
						case op.PaymentInfo != nil && a.price != tierListing(tr.Name).AmountMicroUSD:
							t.Errorf("%s %s: x-payment-info price %d µUSD, the %s tier costs %d", r.Path, p, a.price, tr.Name, tierListing(tr.Name).AmountMicroUSD)
						}
						tiersChecked++
					}
					if op.RequestBody != nil {
						a.example = `{"claim":"The Base mainnet chain ID is 8453.","minimumSources":1}`
					}
					add(a)
				}
			}
		case docManifest:
			var m Manifest
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			add(advertised{doc: r.Path, method: "GET", url: m.Service.ID})
			add(advertised{doc: r.Path, method: "GET", url: m.Service.Homepage})
			add(advertised{doc: r.Path, method: "GET", url: m.Provider.SigningKey})
			prices := map[string]int64{}
			for _, o := range m.Offers {
				if strings.HasSuffix(o.ID, "-call") {
					prices[o.Operation] = usdMicro(t, o.Amount)
				} else if o.Amount != payment.MicroUSD(sell.DefaultClaimsCard).Decimal() {
					t.Errorf("%s: card offer %s at %s", r.Path, o.ID, o.Amount)
				}
			}
			for _, tr := range m.Transports {
				if tr.Specification != "" {
					add(advertised{doc: r.Path, method: "GET", url: tr.Specification})
				}
				switch tr.Type {
				case "mcp":
					add(advertised{doc: r.Path, method: "POST", url: tr.URL, proto: "mcp", example: mcpProbe})
				case "a2a":
					add(advertised{doc: r.Path, method: "POST", url: tr.URL, proto: "a2a", example: a2aProbe, price: prices["a2a.send-message"]})
				}
			}
			transports := map[string]ManifestTransport{}
			for _, tr := range m.Transports {
				transports[tr.ID] = tr
			}
			for _, op := range m.Operations {
				switch tr := transports[op.Transport]; tr.Type {
				case "mcp":
					// The tool must be listed by the endpoint, with the
					// schema the manifest gives it.
					add(advertised{doc: r.Path, method: "POST", url: tr.URL, proto: "mcp", example: mcpProbe, tool: op.Tool, schema: op.InputSchema})
					continue
				case "a2a":
					add(advertised{doc: r.Path, method: "POST", url: tr.URL, proto: "a2a", example: a2aProbe, price: prices[op.ID]})
					continue
				case "http":
				default:
					t.Errorf("%s: operation %s names transport %q, which the manifest does not define", r.Path, op.ID, op.Transport)
					continue
				}
				a := advertised{doc: r.Path, method: op.Method, url: e.base + op.Path, price: prices[op.ID]}
				if strings.Contains(string(op.InputSchema), "ClaimVerificationRequest") {
					a.example = `{"claim":"The Base mainnet chain ID is 8453.","minimumSources":1}`
				}
				add(a)
			}
			if tiers, ok := m.Extensions["verificationTiers"].(map[string]any); ok {
				for name, v := range tiers {
					tr, _ := claims.TierByName(name)
					info := v.(map[string]any)
					if info["priceUsd"] != payment.MicroUSD(tierListing(tr.Name).AmountMicroUSD).Decimal() {
						t.Errorf("%s: verificationTiers.%s.priceUsd %v", r.Path, name, info["priceUsd"])
					}
					add(advertised{doc: r.Path, method: "POST", url: e.base + info["path"].(string), price: tierListing(tr.Name).AmountMicroUSD,
						example: `{"claim":"The Base mainnet chain ID is 8453.","minimumSources":1}`})
				}
			}
			if commerce, ok := m.Extensions["commerce"].(map[string]any); ok {
				for _, u := range commerce {
					add(advertised{doc: r.Path, method: "", url: u.(string)})
				}
			}
			if u, ok := m.Extensions["paymentDiscovery"].(string); ok {
				add(advertised{doc: r.Path, method: "GET", url: u})
			}
		case docMCP:
			var d MCPServer
			if err := json.Unmarshal(body, &d); err != nil {
				t.Fatal(err)
			}
			for _, rm := range d.Remotes {
				add(advertised{doc: r.Path, method: "POST", url: rm.URL, proto: "mcp", example: mcpProbe})
			}
		case docAgentCard:
			var c AgentCard
			if err := json.Unmarshal(body, &c); err != nil {
				t.Fatal(err)
			}
			var price int64
			for _, ext := range c.Capabilities.Extensions {
				if p, ok := ext.Params["priceUsd"].(string); ok {
					price = usdMicro(t, p)
				}
			}
			if len(c.Skills) == 0 {
				t.Errorf("%s lists no skill", r.Path)
			}
			// Every tier the card prices must be accepted by the endpoint
			// (params.metadata.<key>) and charged at that price.
			for _, ext := range c.Capabilities.Extensions {
				tiers, _ := ext.Params["tiers"].(map[string]any)
				key, _ := ext.Params["tierMetadataKey"].(string)
				if len(tiers) > 0 && key == "" {
					t.Errorf("%s: %s prices tiers but names no metadata key", r.Path, ext.URI)
				}
				for name, p := range tiers {
					tr, ok := claims.TierByName(name)
					if !ok || p != payment.MicroUSD(tierListing(tr.Name).AmountMicroUSD).Decimal() {
						t.Errorf("%s: %s prices tier %s at %v, the tier table says %s", r.Path, ext.URI, name, p, payment.MicroUSD(tierListing(tr.Name).AmountMicroUSD).Decimal())
					}
					probe, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{
						"metadata": map[string]any{key: name},
						"message":  map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "The Base mainnet chain ID is 8453."}}}}})
					for _, in := range c.SupportedInterfaces {
						add(advertised{doc: r.Path, method: "POST", url: in.URL, proto: "a2a", example: string(probe), price: tierListing(tr.Name).AmountMicroUSD, tier: name})
					}
				}
			}
			for _, ext := range c.Capabilities.Extensions {
				for _, k := range []string{"discoveryUrl", "endpoint"} {
					if u, ok := ext.Params[k].(string); ok && strings.HasSuffix(u, "/a2a") {
						add(advertised{doc: r.Path, method: "POST", url: u, proto: "a2a", example: a2aProbe, price: price})
					} else if ok {
						add(advertised{doc: r.Path, method: "GET", url: u})
					}
				}
			}
			for _, in := range c.SupportedInterfaces {
				add(advertised{doc: r.Path, method: "POST", url: in.URL, proto: "a2a", example: a2aProbe, price: price})
			}
		case docX402:
			var d X402Legacy
			if err := json.Unmarshal(body, &d); err != nil {
				t.Fatal(err)
			}
			if len(d.Resources) == 0 {
				t.Errorf("%s lists no resource", r.Path)
			}
			for _, u := range append(d.Resources, d.ResourceTemplates...) {
				tr := tierByPath[strings.TrimPrefix(strings.TrimPrefix(u, e.base), "/claim-verification")]
				// The list does not say which method: try both. Templates
				// get the walker's example identifiers.
				add(advertised{doc: r.Path, method: "", url: u, price: tierListing(tr.Name).AmountMicroUSD, mustPay: true,
					example: `{"claim":"The Base mainnet chain ID is 8453.","minimumSources":1}`})
			}
		}
	}
	return out
}

func usdMicro(t *testing.T, s string) int64 {
	t.Helper()
	whole, frac, _ := strings.Cut(s, ".")
	frac = (frac + "000000")[:6]
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("bad USD amount %q", s)
	}
	return w*1_000_000 + f
}

// TestDiscoveryNamesOnlyRoutesThatExist walks every document of a paid
// server on loopback and calls every URL it advertises: documents answer
// 200, priced operations answer an unpaid call with 402 whose amounts equal
// the document's and the tier table's, every other operation reaches a
// handler (not the router's 404 or 405).
func TestDiscoveryNamesOnlyRoutesThatExist(t *testing.T) {
	for _, paid := range []bool{true, false} {
		t.Run(fmt.Sprintf("paid=%v", paid), func(t *testing.T) {
			e := newDiscoveryEnv(t, paid, nil)
			ts := httptest.NewServer(e.srv)
			defer ts.Close()
			walkDocuments(t, e, ts)
		})
	}
}

// walkDocuments calls every URL the documents of e advertise, on ts.
func walkDocuments(t *testing.T, e *discoveryEnv, ts *httptest.Server) {
	t.Helper()
	paid := e.paid
	ads := collectAdvertised(t, e)
	if len(ads) < 10 {
		t.Fatalf("only %d URLs advertised", len(ads))
	}
	tierPrices := map[int64]bool{}
	for _, tr := range claims.Tiers() {
		tierPrices[tierListing(tr.Name).AmountMicroUSD] = true
	}
	checked := 0
	listed := map[string]map[string]*mcp.Tool{}
	for _, a := range ads {
		u, _ := url.Parse(a.url)
		path := strings.ReplaceAll(strings.ReplaceAll(u.EscapedPath(), "%7B", "{"), "%7D", "}")
		path = strings.TrimPrefix(path, strings.TrimPrefix(e.base, "http://"+u.Host))
		path = regexp.MustCompile(`\{[a-z_]+\}`).ReplaceAllStringFunc(path, func(p string) string {
			if v, ok := e.params[strings.Trim(p, "{}")]; ok {
				return v
			}
			return "ord_00000000000000000000000000000000"
		})
		methods := []string{a.method}
		if a.method == "" {
			methods = []string{"GET", "POST"}
		}
		found := false
		for _, m := range methods {
			var body io.Reader
			if m == "POST" {
				b := a.example
				if b == "" {
					b = "{}"
				}
				body = strings.NewReader(b)
			}
			target := ts.URL + path
			if q := exampleQuery(e, m, path); q != "" {
				target += "?" + q
			}
			req, _ := http.NewRequest(m, target, body)
			req.Header.Set("Content-Type", "application/json")
			switch a.proto {
			case "mcp":
				req.Header.Set("Accept", "application/json, text/event-stream")
			case "a2a":
				req.Header.Set("A2A-Version", "1.0")
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			rb, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if routerMiss(resp.StatusCode, rb) {
				continue
			}
			found = true
			switch {
			case a.price > 0 && paid:
				if resp.StatusCode != http.StatusPaymentRequired {
					t.Errorf("%s advertises %s %s at %d µUSD; unpaid call answered %d %s", a.doc, m, a.url, a.price, resp.StatusCode, rb)
					break
				}
				if !tierPrices[a.price] && a.tier != "" {
					t.Errorf("%s: %s priced %d, not in the tier table", a.doc, a.url, a.price)
				}
				methods, err := ChallengeMethods(resp.Header, rb)
				if err != nil {
					t.Fatalf("%s: %v", a.url, err)
				}
				priced := 0
				for _, pm := range methods {
					if pm.Scheme == "stripe" || pm.Amount == "" {
						continue // cards have their own price; the fake's MPP challenge carries none
					}
					priced++
					if pm.AmountInt() != a.price {
						t.Errorf("%s says %d µUSD for %s; the 402 asks %s (%s)", a.doc, a.price, a.url, pm.Amount, pm.Protocol)
					}
				}
				if priced == 0 {
					t.Errorf("%s: the 402 of %s states no amount", a.doc, a.url)
				}
			case a.mustPay && paid && resp.StatusCode != http.StatusPaymentRequired:
				t.Errorf("%s lists %s as a paid resource; an unpaid %s answered %d %s", a.doc, a.url, m, resp.StatusCode, rb)
			case a.proto != "":
				// The endpoint answers its protocol: a JSON-RPC 2.0 result.
				if resp.StatusCode != 200 || !bytes.Contains(rb, []byte(`"jsonrpc":"2.0"`)) || !bytes.Contains(rb, []byte(`"result"`)) {
					t.Errorf("%s advertises %s endpoint %s; it answered %d %s", a.doc, a.proto, a.url, resp.StatusCode, rb)
				}
				if a.tool != "" {
					checkTool(t, listed, ts.URL+path, a)
				}
			case strings.Contains(a.url, "/.well-known/") || strings.HasSuffix(a.url, "/openapi.json"):
				if resp.StatusCode != 200 {
					t.Errorf("%s advertises %s; it answered %d", a.doc, a.url, resp.StatusCode)
				}
			case resp.StatusCode >= 500:
				t.Errorf("%s advertises %s %s; it answered %d %s", a.doc, m, a.url, resp.StatusCode, rb)
			}
		}
		if !found {
			t.Errorf("%s advertises %s %s, which no route serves", a.doc, a.method, a.url)
		}
		checked++
	}
	t.Logf("called %d advertised URLs", checked)
}

// checkTool checks that the MCP endpoint at url lists the tool a manifest
// operation names, with the input schema the manifest gives it.
func checkTool(t *testing.T, listed map[string]map[string]*mcp.Tool, url string, a advertised) {
	t.Helper()
	tools, ok := listed[url]
	if !ok {
		c := mcp.NewClient(&mcp.Implementation{Name: "discovery-walk", Version: "0"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		defer cs.Close()
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("%s tools/list: %v", url, err)
		}
		tools = map[string]*mcp.Tool{}
		for _, tl := range lt.Tools {
			tools[tl.Name] = tl
		}
		listed[url] = tools
	}
	tl, ok := tools[a.tool]
	if !ok {
		t.Errorf("%s names MCP tool %s; %s does not list it", a.doc, a.tool, a.url)
		return
	}
	got, _ := json.Marshal(tl.InputSchema)
	var x, y any
	_ = json.Unmarshal(got, &x)
	_ = json.Unmarshal(a.schema, &y)
	if !cmp.Equal(x, y) {
		t.Errorf("%s gives tool %s the input schema %s; tools/list says %s", a.doc, a.tool, a.schema, got)
	}
}

// exampleQueries are valid query strings for the query shapes, so that a
// call reaches the payment step instead of a 422.
func exampleQueries() map[string]string {
	return map[string]string{"NicheSearchQuery": "q=dental+clinics", "NicheListQuery": "limit=1"}
}

// exampleQuery finds the route serving method and path and returns an
// example query for its query shape.
func exampleQuery(e *discoveryEnv, method, path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, r := range e.srv.Routes() {
		if r.Method != method || r.Query == "" {
			continue
		}
		for _, p := range r.Patterns() {
			if matchPattern(p, parts) {
				return exampleQueries()[r.Query]
			}
		}
	}
	return ""
}

// routerMiss reports the router's own answers for unknown paths and wrong
// methods (handlers' 404s carry their own detail).
func routerMiss(status int, body []byte) bool {
	var d struct {
		Detail string `json:"detail"`
	}
	_ = json.Unmarshal(body, &d)
	return (status == 404 && d.Detail == "Not Found") || (status == 405 && d.Detail == "Method Not Allowed")
}

// TestDiscoveryNamesTheProviders: the claims manifest says which search
// providers answer, and that the others corroborate on deep and research.
func TestDiscoveryNamesTheProviders(t *testing.T) {
	f, err := claimstest.LoadFixture("confirmed")
	if err != nil {
		t.Fatal(err)
	}
	coverage := func(t *testing.T, mod func(*Config)) string {
		t.Helper()
		e := newDiscoveryEnv(t, false, mod)
		rec := e.get(t, "/claim-verification"+PathManifest)
		var m Manifest
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		return m.Provenance.Coverage
	}
	if got := coverage(t, nil); !strings.HasSuffix(got, " Search provider: scripted.") {
		t.Errorf("one provider: %q", got)
	}
	two := func(c *Config) {
		first, second := f.Provider(), f.Provider()
		first.ProviderName, second.ProviderName = "openai_web_search", "anthropic_web_search"
		eng, err := claims.New(first, claimsmem.New(nil), f.Snapshotter(), &claims.Options{Providers: []claims.SearchProvider{second}})
		if err != nil {
			t.Fatal(err)
		}
		c.Claims.Engine = eng
	}
	want := " Search providers: openai_web_search (every tier), corroborated by anthropic_web_search on the deep and research tiers."
	if got := coverage(t, two); !strings.HasSuffix(got, want) {
		t.Errorf("two providers: %q", got)
	}
}

// tierListing is the default catalogue's listing of a claim tier.
func tierListing(tier string) sell.Listing {
	c, err := sell.NewCatalogue(nil)
	if err != nil {
		panic(err)
	}
	l, _ := c.Tier(tier)
	return l
}
