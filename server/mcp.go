package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/assaykit/assay/payment"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPConfig configures the MCP endpoint: the Model Context Protocol over
// streamable HTTP (official Go SDK, stateless, answers as server-sent events
// so that progress notifications reach the client), served at "/mcp" and
// under the service prefixes ("/claim-verification/mcp",
// "/niche-discovery/mcp"); every mount point serves every tool.
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
// # Payment (x402 MCP transport, tool-result binding)
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
//     host>/<tool>") and whose content[0].text is the same object as JSON.
//   - Payment: an x402 PaymentPayload (v2 or v1) in
//     params._meta["x402/payment"].
//   - A refused payment: the PaymentRequired object again (a fresh
//     challenge) whose error is the refusal's reason code (for example
//     "payment_already_used", "invalid_exact_evm_payload_signature"), with
//     {"type","reason","detail","status"} of the refusal in
//     result._meta["io.assaykit/problem"].
//   - Success: content[0].text is the result JSON — the exact bytes whose
//     SHA-256 is the receipt's resultSha256 — and structuredContent is the
//     same object plus "commerce": {orderId, orderToken, receiptId,
//     orderUrl, status}. result._meta["x402/payment-response"] is the
//     x402 SettleResponse. The order token reads the order later at
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
//     org.x402/payment extension binding is not); MPP is not offered over
//     MCP (the interface document's MCP authorization label is x402).
//   - Requests whose connection is local but whose Host header is not are
//     refused (403, DNS-rebinding protection) unless
//     DisableLocalhostProtection is set; cross-origin browser POSTs are
//     refused (403) unless their origin is in TrustedOrigins.
type MCPConfig struct {
	// Disabled turns the endpoint off. It is mounted whenever claim
	// verification or niche discovery is configured.
	Disabled bool
	// PublicBaseURL is the scheme, host and mount path under which clients
	// reach this server (e.g. "https://api.example.com"). The x402
	// resource of a paid tool is mcp://<its host>/<tool>, and order URLs
	// are built on it. Empty means Config.PublicBaseURL; without either,
	// resources use the Host header of each request (a warning is logged)
	// and results carry no order URL.
	PublicBaseURL string
	// Cashier charges paid tools. Nil means the Cashier of Config.Paywall
	// when it is a *payment.Gate. Under payment.Free paid tools are free;
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
}

// mcpRoutes returns the MCP endpoint: POST /mcp and POST {prefix}/mcp.
func (s *Server) mcpRoutes() ([]*Route, error) {
	cfg := s.cfg.MCP
	if cfg.Disabled || (s.cfg.Claims.Engine == nil && s.cfg.Niche.Engine == nil) {
		return nil, nil
	}
	ms, err := s.newMCPServer()
	if err != nil {
		return nil, err
	}
	s.mcp = ms
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms.srv }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               false, // SSE: progress notifications need it
		DisableLocalhostProtection: cfg.DisableLocalhostProtection,
		Logger:                     mcpLogger(s.log),
	})
	// The request's Host and peer reach the tools through the context (the
	// SDK keeps middleware values): resources fall back to the Host when no
	// public base URL is configured, and free niche searches count against
	// the peer's quota as over HTTP.
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
	var prefixes []string
	if s.cfg.Claims.Engine != nil {
		prefixes = append(prefixes, s.claimsPrefix())
	}
	if n, _, _ := s.nicheForMCP(); n != nil && n.prefix != "" && !slices.Contains(prefixes, n.prefix) { // the services may share a prefix
		prefixes = append(prefixes, n.prefix)
	}
	return []*Route{{
		ID:       "mcp",
		Summary:  "MCP endpoint (streamable HTTP): claim verification and niche discovery tools, paid with x402 in the tool call's _meta.",
		Status:   "paid-preview",
		Method:   http.MethodPost,
		Path:     "/mcp",
		Prefixes: prefixes,
		Handler:  h,
	}}, nil
}

// mcpServer holds the MCP server and what its tools need.
type mcpServer struct {
	s        *Server
	srv      *mcp.Server
	pay      billing
	base     string // public base URL, no trailing slash ("" when unset)
	host     string // its host, for mcp:// resources
	readCred func(json.RawMessage) (*payment.Credential, error)
	// tools are the registered tools, in order (the discovery documents
	// list them).
	tools []mcpTool
}

// mcpInstructions tell a model what the server offers.
const mcpInstructions = "Claim verification: verify a factual claim against current web sources and get a structured, " +
	"cited result (status, conclusion, atomic facts, evidence with excerpts, sources, snapshots with hashes, conflicts, " +
	"limitations). Call list_verification_tiers for prices and limits. verify_claim_quick, verify_claim, " +
	"verify_claim_deep and verify_claim_research are paid per call with x402 (USDC): an unpaid call returns the payment " +
	"requirements; pay and repeat the call with the payment in _meta[\"x402/payment\"]. Results are decision support, " +
	"not a guarantee of truth."

func (s *Server) newMCPServer() (*mcpServer, error) {
	cfg := s.cfg.MCP
	ms := &mcpServer{s: s, pay: s.billingFor(cfg.Cashier), readCred: cfg.ReadCredential}
	raw := cfg.PublicBaseURL
	if raw == "" {
		raw = s.cfg.PublicBaseURL
	}
	base, u, err := publicBase("mcp", raw)
	if err != nil {
		return nil, err
	}
	if base != "" {
		ms.base, ms.host = base, u.Host
	}
	if ms.pay.cashier != nil && ms.host == "" {
		s.log.Warn("mcp: no PublicBaseURL: x402 resources of paid tools use the Host header of each request (mcp://<Host>/<tool>) and results carry no order URL; set MCPConfig.PublicBaseURL")
	}
	if ms.readCred == nil {
		ms.readCred = readX402Credential
	}
	ms.srv = mcp.NewServer(&mcp.Implementation{Name: s.cfg.Service, Title: s.cfg.Service + " claim verification", Version: Version},
		&mcp.ServerOptions{
			Instructions: mcpInstructions,
			Logger:       mcpLogger(s.log),
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		})
	if err := ms.addTools(); err != nil {
		return nil, err
	}
	return ms, nil
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
