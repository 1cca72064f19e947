package agents

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/server/route"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPConfig configures the MCP endpoints: the Model Context Protocol over
// streamable HTTP (official Go SDK, stateless, answers as server-sent events
// so that progress notifications reach the client). "/mcp" serves every
// tool; each service prefix serves its own ("/claim-verification/mcp" the
// claim tools, "/niche-discovery/mcp" the niche tools), and each endpoint's
// title and instructions describe its tools and how to recover a paid call
// whose answer was lost: repeat it with the same arguments, payment and
// idempotency key (the stored answer, not charged twice), or read the
// order with its token.
//
// # Tools
//
//   - list_verification_tiers (free): the tier table, prices and limits.
//   - verify_claim_quick, verify_claim, verify_claim_deep,
//     verify_claim_research (paid, one per tier): arguments are a
//     ClaimVerificationRequest; the input schema is the request's (from
//     shapes), with the tier's cited-source cap as minimumSources' maximum
//     (above it the call is refused, 422) while maxSources keeps the
//     shape's bound (1–20): a larger value than the cap is accepted and
//     clamped to it, exactly as the HTTP tier route does, and the
//     description says so. The result is the ClaimVerificationResult.
//   - search_niches {q, category, sort, limit, full} and get_niche
//     {niche_id, full} (when niche discovery is configured; their input
//     schemas are the NicheSearchQuery shape and the OpenAPI schema of the
//     {niche_id} path parameter, plus "full"): previews are
//     free; with "full": true they sell full evaluations at the HTTP
//     pay-per-call prices (offers niche.search and niche.evaluation), with
//     the bodies of GET /v1/search/pay-per-call and GET
//     /v1/niches/{niche_id}/pay-per-call (which include the unlock token).
//     They run the niche routes' own handlers, so their validation (422
//     with loc "query"; other arguments loc "arguments") and errors (404
//     "Niche not found", 503 for an empty catalogue) are the HTTP ones,
//     answered before any payment.
//
// # Payment (x402's MCP tool-result binding, and MPP's MCP transport)
//
// Paid tools charge through the same payment.Cashier as the HTTP gate, with
// the same offers (ids, prices) as the HTTP tier routes, so every rule of a
// paid HTTP call holds: invalid arguments and tier rules are refused before
// any payment talk and never charged; the payment is verified, reserved
// atomically (a second use, also concurrent, also through HTTP or A2A, is
// refused) and an order is opened; the verification runs; the payment is
// settled only when it succeeded, and a signed receipt is issued.
//
//   - No payment: a tool result with isError true whose structuredContent
//     is the x402 PaymentRequired object (resource "mcp://<public
//     host>/<tool>") and whose content[0].text is the same object as JSON;
//     its result._meta["org.paymentauth/payment-required"] holds
//     {httpStatus: 402, challenges, problem}: the MPP evm charge
//     challenges as JSON objects (request decoded), bound to the tool.
//     A client that sends neither payment learns both.
//   - Payment: an x402 PaymentPayload (v2 or v1) in
//     params._meta["x402/payment"], or an MPP credential (the challenge
//     echoed as an object, and the payload) in
//     params._meta["org.paymentauth/credential"]; both at once are
//     refused. See mcp_mpp.go for why challenges come as a tool result
//     and not as the JSON-RPC error -32042 (URL elicitation's code in MCP
//     2025-11-25), and how the two are told apart.
//   - A refused payment: the PaymentRequired object again (a fresh
//     challenge) whose error is the refusal's reason code (for example
//     "payment_already_used", "invalid_exact_evm_payload_signature"), with
//     {"type","reason","detail","status"} of the refusal in
//     result._meta["io.assaykit/problem"].
//   - Success: content[0].text is the result JSON — the exact bytes whose
//     SHA-256 is the receipt's resultSha256 — and structuredContent is the
//     same object plus "commerce": {orderId, orderToken, receiptId,
//     orderUrl, status}. result._meta["x402/payment-response"] is the
//     x402 SettleResponse, or result._meta["org.paymentauth/receipt"] the
//     MPP receipt (with the paid challenge's challengeId). Under "no
//     verdict, no charge" a free verdict's commerce status is "voided" and
//     no settlement comes with it. The order token reads the order later at
//     orderUrl (GET /v1/orders/{id} with X-Agentic-Order-Token).
//   - Settlement refused after the work: the PaymentRequired object with
//     error "settlement_failed" (or the processor's reason) and nothing of
//     the result. Settlement pending: an isError result with the detail,
//     and commerce with status "settling": do not pay again, poll the order.
//
// Other errors are tool results with isError true whose structuredContent
// is the HTTP route's error body — {"detail": [...]} (the same Pydantic
// list) for invalid arguments, {"detail": "..."} otherwise — and whose
// result._meta["io.assaykit/status"] is the HTTP status the route would
// have answered (422, 502, 503, 504, ...). Failures after payment carry
// commerce {orderId, orderToken, status: "failed"}: the order is failed and
// the payment was not settled.
//
// Optional inputs of a paid call, as HTTP headers of the MCP request or as
// params._meta members: Idempotency-Key ("io.assaykit/idempotencyKey"),
// X-Agentic-Customer-Key ("io.assaykit/customerKey") and
// X-Agentic-Quote-Id ("io.assaykit/quoteId"), with the HTTP routes'
// meaning. A retry with the same idempotency key and arguments returns the
// stored result of the first order (commerce.replay true, nothing charged).
//
// # Progress
//
// A call with params._meta.progressToken receives notifications/progress
// during the work (total 5): 0 started, 1 searching, 2 reconciling, 3
// snapshotting (tiers that capture sources), 4 settling the payment, 5 done.
//
// # Choices
//
//   - Paid tools declare no outputSchema: the official TypeScript client
//     would reject the PaymentRequired structuredContent against it.
//   - Only the tool-result binding of x402 is served (the experimental
//     org.x402/payment extension binding is not). MPP is offered beside it
//     with the evm method; cards (MPP stripe) are sold over HTTP and A2A
//     only.
//   - Requests whose connection is local but whose Host header is not are
//     refused (403, DNS-rebinding protection) unless
//     DisableLocalhostProtection is set; cross-origin browser POSTs are
//     refused (403) unless their origin is in TrustedOrigins.
type MCP struct {
	// PublicBaseURL is the scheme, host and mount path under which clients
	// reach this server (e.g. "https://api.example.com"). The x402
	// resource of a paid tool is mcp://<its host>/<tool>, and order URLs
	// are built on it. Empty means Config.PublicBaseURL; without either,
	// resources use the Host header of each request (a warning is logged)
	// and results carry no order URL.
	PublicBaseURL string
	// Cashier charges paid tools. Nil means the Cashier of Config.Paywall
	// when it is a *httpgate.Gate. Under httpgate.Free paid tools are free;
	// with any other paywall (or none) they answer "Payments are not
	// configured" (503).
	Cashier *payment.Cashier
	// ReadCredential decodes params._meta["x402/payment"]. Nil means
	// readX402Credential (an x402 PaymentPayload, version 1 or 2).
	ReadCredential func(raw json.RawMessage) (*payment.Credential, error)
	// DisableLocalhostProtection accepts requests that arrive on a
	// loopback connection with a non-local Host header: set it behind a
	// reverse proxy on the same host.
	DisableLocalhostProtection bool
	// TrustedOrigins are browser origins ("https://app.example.com")
	// allowed to call the endpoint cross-origin.
	TrustedOrigins []string
	// DisableCrossOriginProtection accepts cross-origin browser requests
	// from any origin.
	DisableCrossOriginProtection bool

	// conformance, when set, adds to every endpoint's server, after its
	// own tools, what the official MCP conformance suites call: their
	// diagnostic tools, prompts and resources. Only this package's tests
	// set it (it is unexported, so no host, examples/server included, can):
	// the product never serves them.
	conformance func(*mcp.Server)
}

// Routes implements route.Mount: the MCP endpoints (when claim
// verification or niche discovery is configured): POST /mcp, which serves every
// tool, and POST {prefix}/mcp under each service prefix, which serves that
// service's tools, each endpoint with its own title and instructions.
func (cfg MCP) Routes(s route.Host) ([]*route.Route, error) {
	if s.App().Claims == nil && s.App().Niche == nil {
		return nil, nil
	}
	ms, err := newMCPServer(s, cfg)
	if err != nil {
		return nil, err
	}
	handler := func(srv *mcp.Server) (http.Handler, error) {
		var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
			Stateless:                  true,
			JSONResponse:               false, // SSE: progress notifications need it
			DisableLocalhostProtection: cfg.DisableLocalhostProtection,
			Logger:                     mcpLogger(s.Logger()),
		})
		// The request's Host and peer reach the tools through the context
		// (the SDK keeps middleware values): resources fall back to the
		// Host when no public base URL is configured, and free niche
		// searches count against the peer's quota as over HTTP.
		sdk := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := context.WithValue(r.Context(), mcpHostKey{}, r.Host)
			ctx = context.WithValue(ctx, mcpPeerKey{}, mcpPeer{addr: r.RemoteAddr, forwarded: r.Header.Values("X-Forwarded-For")})
			sdk.ServeHTTP(w, r.WithContext(ctx))
		})
		if !cfg.DisableCrossOriginProtection {
			cop := http.NewCrossOriginProtection()
			for _, o := range cfg.TrustedOrigins {
				if err := cop.AddTrustedOrigin(o); err != nil {
					return nil, errorf("mcp: trusted origin %q: %v", o, err)
				}
			}
			h = cop.Handler(h)
		}
		return h, nil
	}
	all, err := handler(ms.srv)
	if err != nil {
		return nil, err
	}
	tools, err := ms.toolInfo()
	if err != nil {
		return nil, err
	}
	routes := []*route.Route{{
		ID:      "mcp",
		Tools:   tools,
		Summary: "MCP endpoint (streamable HTTP) with every tool of this server, paid with x402 or MPP in the tool call's _meta.",
		Status:  "paid-preview",
		Method:  http.MethodPost,
		Path:    "/mcp",
		Handler: all,
	}}
	for _, sv := range ms.services {
		h, err := handler(sv.srv)
		if err != nil {
			return nil, err
		}
		routes = append(routes, &route.Route{
			ID:      "mcp." + strings.Join(sv.keys, "+"),
			Summary: "MCP endpoint (streamable HTTP) of " + sv.name + ": " + strings.Join(sv.toolNames, ", ") + ".",
			Status:  "paid-preview",
			Method:  http.MethodPost,
			Path:    sv.prefix + "/mcp",
			Handler: h,
		})
	}
	return routes, nil
}

// toolInfo describes the registered tools for the discovery documents.
func (ms *mcpServer) toolInfo() ([]route.Tool, error) {
	var out []route.Tool
	for _, mt := range ms.tools {
		in, err := json.Marshal(mt.tool.InputSchema)
		if err != nil {
			return nil, errorf("discovery: input schema of MCP tool %s: %v", mt.tool.Name, err)
		}
		t := route.Tool{Name: mt.tool.Name, Service: mt.service, Summary: mt.summary, InputSchema: in,
			Idempotent: mt.tool.Annotations != nil && mt.tool.Annotations.IdempotentHint, Offer: mt.offer, Timeout: mt.timeout}
		if mt.tool.OutputSchema != nil {
			if t.OutputSchema, err = json.Marshal(mt.tool.OutputSchema); err != nil {
				return nil, errorf("discovery: output schema of MCP tool %s: %v", mt.tool.Name, err)
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// mcpServer holds the MCP servers and what their tools need.
type mcpServer struct {
	s        route.Host
	srv      *mcp.Server // every tool (POST /mcp)
	pay      billing
	base     string // public base URL, no trailing slash ("" when unset)
	host     string // its host, for mcp:// resources
	readCred func(json.RawMessage) (*payment.Credential, error)
	// tools are the registered tools, in order (the discovery documents
	// list them).
	tools []mcpTool
	// services are the endpoints of the services, each with its tools.
	services []*mcpService
}

// mcpService is the MCP endpoint under one service prefix. Services
// mounted under the same prefix share it: keys lists them, and its tools
// are theirs.
type mcpService struct {
	keys         []string
	name, prefix string
	srv          *mcp.Server
	toolNames    []string
}

// Instructions of the MCP endpoints: what each service offers, and how a
// paid call whose answer was lost is recovered — true of every transport.
const (
	mcpClaimsInstructions = "Claim verification: verify a factual claim against current web sources and get a structured, " +
		"cited result (status, conclusion, atomic facts, evidence with excerpts, sources, snapshots with hashes, conflicts, " +
		"limitations). Call list_verification_tiers for prices and limits. verify_claim_quick, verify_claim, " +
		"verify_claim_deep and verify_claim_research are paid per call (USDC) with x402 or MPP: an unpaid call returns the x402 " +
		"payment requirements and the MPP challenges (_meta[\"org.paymentauth/payment-required\"]); pay one and repeat the call " +
		"with the payment in _meta[\"x402/payment\"] or the MPP credential in _meta[\"org.paymentauth/credential\"]. Results are decision support, " +
		"not a guarantee of truth."
	mcpNicheInstructions = "Niche discovery: search_niches searches reviewed, evidence-linked niche market evaluations and " +
		"get_niche reads one; their previews are free. With \"full\": true they sell the full evaluations per call with " +
		"x402 or MPP (USDC): an unpaid call returns both; pay one and repeat the call with the payment in " +
		"_meta[\"x402/payment\"] or _meta[\"org.paymentauth/credential\"]. A full evaluation comes with an unlock token that reads it again for a while."
	mcpRecoveryInstructions = "If the answer of a paid call is lost (a timeout, a dropped connection), do not pay again: " +
		"repeat the call with the same arguments, the same payment and the same idempotency key " +
		"(_meta[\"io.assaykit/idempotencyKey\"] or the Idempotency-Key header) and the stored answer of the first call is " +
		"returned without a second charge; or read the order with its token (commerce.orderId and commerce.orderToken of a " +
		"result): GET /v1/orders/{orderId} with X-Agentic-Order-Token, and its delivered answer at /v1/orders/{orderId}/result."
)

func newMCPServer(s route.Host, cfg MCP) (*mcpServer, error) {
	ms := &mcpServer{s: s, pay: billingFor(s, cfg.Cashier), readCred: cfg.ReadCredential}
	raw := cfg.PublicBaseURL
	if raw == "" {
		raw = s.PublicBaseURL()
	}
	base, u, err := publicBase("mcp", raw)
	if err != nil {
		return nil, err
	}
	if base != "" {
		ms.base, ms.host = base, u.Host
	}
	if ms.pay.cashier != nil && ms.host == "" {
		s.Logger().Warn("mcp: no PublicBaseURL: x402 resources of paid tools use the Host header of each request (mcp://<Host>/<tool>) and results carry no order URL; set MCPConfig.PublicBaseURL")
	}
	if ms.readCred == nil {
		ms.readCred = readX402Credential
	}
	if s.App().Claims != nil {
		ms.addService(route.ClaimsServiceKey, "claim verification", s.ClaimsPrefix())
	}
	if n := s.App().Niche; n != nil && n.Prefix() != "" {
		ms.addService(route.NicheServiceKey, "niche discovery", n.Prefix())
	}
	var names, instructions []string
	for _, sv := range ms.services {
		var texts []string
		for _, k := range sv.keys {
			texts = append(texts, mcpServiceInstructions(k))
		}
		names, instructions = append(names, sv.name), append(instructions, texts...)
		sv.srv = newMCPSDKServer(s, s.Service()+" "+sv.name, strings.Join(append(texts, mcpRecoveryInstructions), " "))
	}
	ms.srv = newMCPSDKServer(s, s.Service()+" "+strings.Join(names, " and "), strings.Join(append(instructions, mcpRecoveryInstructions), " "))
	if err := ms.addTools(); err != nil {
		return nil, err
	}
	if cfg.conformance != nil {
		cfg.conformance(ms.srv)
		for _, sv := range ms.services {
			cfg.conformance(sv.srv)
		}
	}
	return ms, nil
}

// addService adds the endpoint of a service under its prefix, or, when
// another service already has that prefix, joins its endpoint.
func (ms *mcpServer) addService(key, name, prefix string) {
	for _, sv := range ms.services {
		if sv.prefix == prefix {
			sv.keys = append(sv.keys, key)
			sv.name += " and " + name
			return
		}
	}
	ms.services = append(ms.services, &mcpService{keys: []string{key}, name: name, prefix: prefix})
}

// mcpServiceInstructions are the instructions of a service's tools.
func mcpServiceInstructions(key string) string {
	if key == route.NicheServiceKey {
		return mcpNicheInstructions
	}
	return mcpClaimsInstructions
}

// newMCPSDKServer is one MCP server of the SDK with its title and
// instructions; its tools are added by mcpServer.add.
//
// It declares the capabilities whose methods it answers (initialize and
// server/discover): tools, and prompts and resources, whose lists the SDK
// answers (empty: assay publishes none) — protocol 2026-07-28 requires a
// server that handles prompts to say so. No listChanged (the lists never
// change while the server runs), no resource subscriptions, no
// completions (nothing to complete: no prompt or template arguments). It
// does not advertise experimental.payment (a SHOULD of MPP's MCP
// transport): whether MPP is offered depends on the processor, which the
// SDK server is built without; every challenge says it instead.
func newMCPSDKServer(s route.Host, title, instructions string) *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: s.Service(), Title: title, Version: sell.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			Logger:       mcpLogger(s.Logger()),
			Capabilities: &mcp.ServerCapabilities{
				Tools:     &mcp.ToolCapabilities{},
				Prompts:   &mcp.PromptCapabilities{},
				Resources: &mcp.ResourceCapabilities{},
			},
		})
}

// mcpHostKey carries the HTTP request's Host to the tool handlers.
type mcpHostKey struct{}

// mcpPeerKey carries the HTTP request's peer (an mcpPeer) to the tool
// handlers.
type mcpPeerKey struct{}

// mcpPeer is the client address of an MCP request and its
// X-Forwarded-For values (believed only from trusted proxies, as over
// HTTP).
type mcpPeer struct {
	addr      string
	forwarded []string
}
