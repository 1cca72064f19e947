// Package discovery generates the documents a paid agent service publishes
// so that agents, crawlers and registries can find, price and call it, and
// ships the JSON Schemas they are checked against.
//
// A Service describes one service: its texts, its public HTTP operations
// (with the JSON Schemas of their inputs and outputs as OpenAPI
// components), its prices as the payment processor describes them
// (payment.Cashier.PaymentOptions: the methods a 402 offers), its MCP and
// A2A endpoints, provenance and policies. Documents fills it from the
// server's routing table, the tier table and the request shapes; nothing
// here holds a price of its own. ChallengeMethods reads the same methods
// back from a live 402 (clients and tests compare the two). From a
// Service:
//
//   - OpenAPI: OpenAPI 3.1 (servers = the service base, paths relative to
//     it, components from the shapes plus reflected response schemas, path,
//     query and header parameters, security schemes and requirements,
//     request bodies, 200, 402 (application/problem+json), 422 and every
//     other status the server states per operation) with
//     x-payment-info in both published dialects side by side — the
//     x402scan/agentcash one ({"price":{"mode":"fixed","currency":"USD",
//     "amount":"0.05"},"protocols":[{"x402":{}},{"mpp":{…}}]}) and the MPP
//     discovery draft's ({"offers":[{"intent":"charge","method":"evm",
//     "amount":"50000","currency":"0x8335…"}]}, amounts in base units) —
//     plus x-service-info and, when paid, x-discovery.ownershipProofs.
//     Operation extras (e.g. the verification tier) appear as x-<key>.
//   - NewManifest: the agent-service manifest 0.1.
//   - NewX402Legacy: the legacy /.well-known/x402 list.
//   - NewMCPServer: the MCP registry server.json entry.
//   - NewAgentCard: the A2A 1.0 AgentCard. When the commerce routes are
//     mounted, the served card is signed (A2A 1.0's optional
//     AgentCardSignature, SignAgentCard): a JWS (RFC 7515, alg EdDSA) over
//     its canonical form (CanonicalAgentCard: RFC 8785, without signatures
//     and empty members), by the receipt key, whose kid and JWKS
//     (/.well-known/jwks.json, "jku") the protected header names. The JWS is
//     written here, not with a JOSE library: one fixed algorithm, a
//     detached payload and a key that only signs (payment.Keyring never
//     hands out its private key) are a few lines, and a general library's
//     algorithm choice is what a verifier must not let the document pick;
//     the official A2A JS SDK (jose) verifies the result in the tests.
//
// # Base URL
//
// Every URL in every document is absolute, built on Service.Base. The
// manifest schema (the published 0.1 schema) requires https for
// service.id, service.homepage and transports[].url: documents built on an
// http base (a local server, the example server's default
// http://127.0.0.1:8080) are served as they are but do not validate
// against it, and fail exactly on those three patterns. Publish behind
// https (server.New logs a warning for a configured http base).
//
// # Schemas
//
// Schema returns the JSON Schemas (draft 2020-12) this package ships, all
// written by the project from the published descriptions (none is a copy
// of another project's file):
//
//   - agent-service-manifest-0.1.schema.json: manifest 0.1 with
//     additionalProperties false at every object level except extensions
//     (and except the embedded inputSchema/outputSchema, which are JSON
//     Schemas themselves). The transports[].authorization enum is extended
//     additively; manifestVersion stays "0.1". Values: none (no credential),
//     oauth2 (an OAuth 2 access token), bearer (a static bearer token),
//     signed-request (every paid call carries a signed payment credential,
//     x402 or MPP, in its HTTP headers), x402 (x402 only), mpp (an MPP
//     Payment credential only), x402-or-mpp (either: at the HTTP layer,
//     as for A2A, or in the MCP call's _meta, "x402/payment" or
//     "org.paymentauth/credential").
//   - mcp-server.schema.json: the registry's rules for server.json (name
//     with exactly one "/", description of 1–100 characters, an exact
//     version — no ranges, no "latest" —, remotes).
//   - a2a-agent-card-1.0.schema.json: the required 1.0 members
//     (supportedInterfaces instead of the 0.3 url/preferredTransport/
//     additionalInterfaces, which it refuses), skills, capabilities and
//     extensions.
//   - x402-discovery-legacy.schema.json: the legacy x402 list.
//
// The tests also check the documents against the definitions their
// publishers ship, vendored verbatim by package discoverytest: server.json
// against the MCP registry's published schema of 2025-12-11 (the $schema
// it declares), and the agent card against the A2A 1.0 proto (no 1.0 JSON
// Schema is published in a repository; see discoverytest).
//
// # Choices
//
// Where the published descriptions leave a choice, this package chooses:
//
//   - Each paid operation gets one per-call USD offer with the USDC
//     methods of its challenge (x402 and MPP evm); cards (MPP stripe) get a
//     separate offer at the card price with only the stripe method, so that
//     no card method is listed at a price it cannot honour. Offer ids are
//     "<operation slug>-call" and "-card".
//   - Every MCP tool of the service (MCP.Tools, what tools/list publishes)
//     is an operation on the MCP transport, "mcp.<tool>", with the tool's
//     own input and output schemas (so the tier-capped schema of a verify
//     tool, not the HTTP body's) and, when it charges, an offer with x402
//     and MPP evm (no card: cards are sold over HTTP and A2A), on a
//     transport whose authorization is x402-or-mpp;
//     the A2A endpoint is one operation, "a2a.send-message", priced at its
//     default tier.
//   - Per-operation extras go under the manifest's extensions.operations,
//     because the schema forbids unknown members on operations.
//   - An unpaid service (Service.Paid false: nothing is charged) still
//     lists its prices as offers (the manifest requires one), with the
//     protocols but no network or payee, transport authorization "none",
//     extensions.payments "disabled", no 402 responses or x-payment-info,
//     no resources in the x402 list and no payment extensions on the card.
//   - The x402 list names every paid operation: in resources, absolute
//     URLs that answer 402 as they are (an operation with required query
//     parameters with its Operation.ExampleQuery); operations that need an
//     identifier in their path first (and required query parameters
//     without an example) as RFC 6570 URL templates in an extra member,
//     resourceTemplates, which readers of the legacy shape ignore. So a
//     service whose paid operations all need an id (niche discovery) still
//     has a list.
//   - The agent card declares two informal payment extensions
//     (https://www.x402.org/ and https://paymentauth.org/, with the price,
//     the network and the x402 discovery URL), since no registry defines
//     them. They are alternatives (a call is paid with one or the other),
//     so neither is required (A2A's required means a client must support
//     that extension); each lists both in params.alternatives. With A2A.Tiers, their params also carry
//     "tiers" (tier name → USD price), "defaultTier" and
//     "tierMetadataKey" (the params.metadata member that chooses the
//     tier), and every skill's description ends with the same choice.
//   - Response schemas are reflected from the Go types that write the
//     responses (Reflect): closed objects, members without omitempty
//     required, pointers nullable.
package discovery
