package discovery_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"sort"

	"github.com/assaykit/assay/discovery"
)

// exampleService is a small paid service: one verification operation
// priced at USD 0.05 (USDC through x402 or MPP), one free read, and an MCP
// endpoint. The server package fills a Service like this from its routing
// table; here it is written out.
func exampleService() *discovery.Service {
	const usdc = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	const payee = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	price := &discovery.Price{AmountMicroUSD: 50_000, Description: "One claim verification",
		Methods: []discovery.Method{
			{Protocol: "x402", Scheme: "exact", Network: "eip155:8453", Asset: usdc, AssetSymbol: "USDC", PayTo: payee, Amount: "50000"},
			{Protocol: "mpp", Scheme: "evm", Intent: "charge", Network: "eip155:8453", Asset: usdc, AssetSymbol: "USDC", PayTo: payee, Amount: "50000"},
		}}
	return &discovery.Service{
		Key: "claim-verification", Name: "Claim verification",
		Description: "Checks a factual claim against current web sources and returns a cited verdict.",
		Version:     "0.1.0", Lifecycle: "paid-preview", Homepage: "https://example.com/",
		Base: "https://api.example.com/claim-verification", Prefix: "/claim-verification",
		Provider: discovery.Provider{ID: "https://example.com", Name: "Example LLC", Contact: "ops@example.com",
			URL: "https://example.com", SigningKey: "https://api.example.com/.well-known/jwks.json"},
		Capabilities: []discovery.Capability{{ID: "claims.verify", Summary: "Verify a factual claim."}},
		Components: map[string]json.RawMessage{
			"ClaimVerificationRequest": json.RawMessage(`{"type":"object","required":["claim"],"properties":{"claim":{"type":"string","minLength":3}}}`),
		},
		Operations: []discovery.Operation{
			{ID: "claims.verify.standard", Capability: "claims.verify", Summary: "Verify a claim (standard tier).",
				Method: "POST", Path: "/v1/claims/verify", Body: "ClaimVerificationRequest", Price: price,
				TimeoutSeconds: 120, Idempotent: true},
			{ID: "orders.get", Capability: "claims.verify", Summary: "Read an order with its token.",
				Method: "GET", Path: "/v1/orders/{order_id}", Idempotent: true},
		},
		MCP: &discovery.MCP{Path: "/mcp", Tools: []discovery.Tool{{Name: "verify_claim",
			Summary: "Verify a claim (standard tier).", Price: price,
			InputSchema: json.RawMessage(`{"type":"object","required":["claim"],"properties":{"claim":{"type":"string","minLength":3}}}`)}}},
		Provenance: discovery.Provenance{Summary: "Sources the search provider returned.", Freshness: "Caller-controlled."},
		Policies: discovery.Policies{Terms: "https://example.com/terms", Privacy: "https://example.com/privacy",
			DataRetentionDays: 30},
		Paid:            true,
		OwnershipProofs: []string{payee},
		MCPName:         "com.example/claim-verification",
	}
}

// ChallengeMethods reads the payment methods a live 402 answer offers, so
// that documents price operations exactly as the challenge does.
func ExampleChallengeMethods() {
	required := `{"x402Version":2,"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"50000",` +
		`"asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C",` +
		`"extra":{"name":"USD Coin","version":"2"}}]}`
	h := http.Header{}
	h.Set("Payment-Required", base64.StdEncoding.EncodeToString([]byte(required)))
	methods, err := discovery.ChallengeMethods(h, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range methods {
		fmt.Println(m.Protocol, m.Scheme, m.Network, m.AssetSymbol, m.Amount, m.AmountInt())
	}
	// Output:
	// x402 exact eip155:8453 USDC 50000 50000
}

// OpenAPI describes the service's HTTP operations, with x-payment-info on
// the paid ones.
func ExampleOpenAPI() {
	doc, err := discovery.OpenAPI(exampleService())
	if err != nil {
		log.Fatal(err)
	}
	var d struct {
		OpenAPI string `json:"openapi"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Paths map[string]map[string]struct {
			OperationID string         `json:"operationId"`
			Payment     map[string]any `json:"x-payment-info"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.OpenAPI, d.Servers[0].URL)
	var paths []string
	for p := range d.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for method, op := range d.Paths[p] {
			fmt.Println(method, p, op.OperationID, "paid:", op.Payment != nil)
		}
	}
	// Output:
	// 3.1.0 https://api.example.com/claim-verification
	// post /v1/claims/verify claims.verify.standard paid: true
	// get /v1/orders/{order_id} orders.get paid: false
}

// NewManifest builds the agent-service manifest 0.1 of
// /.well-known/agent-service.json; it validates against the schema this
// package ships (Schema). The paid operation is listed for each transport
// that offers it (HTTP and its MCP tool), each with its own offer.
func ExampleNewManifest() {
	m, err := discovery.NewManifest(exampleService())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.ManifestVersion, m.Service.ID, len(m.Operations), "operations")
	for _, t := range m.Transports {
		fmt.Println("transport", t.ID)
	}
	for _, o := range m.Offers {
		fmt.Println("offer", o.ID)
	}
	// Output:
	// 0.1 https://api.example.com/claim-verification/.well-known/agent-service.json 3 operations
	// transport public-http
	// transport public-mcp
	// offer claims-verify-standard-call
	// offer mcp-verify-claim-call
}

// Schema returns the JSON Schemas the documents are checked against.
func ExampleSchema() {
	raw, ok := discovery.Schema(discovery.SchemaManifest)
	if !ok {
		log.Fatal("no schema")
	}
	var s struct {
		Schema string `json:"$schema"`
		Title  string `json:"title"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Schema)
	fmt.Println(s.Title)
	// Output:
	// https://json-schema.org/draft/2020-12/schema
	// Agent-service manifest 0.1 (assay edition)
}
