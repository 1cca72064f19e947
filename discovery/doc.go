// Package discovery generates the documents a paid agent service publishes
// so that agents, crawlers and registries can find, price and call it, and
// ships the JSON Schemas they are checked against.
//
// A Service describes one service: its texts, its public HTTP operations
// (with the JSON Schemas of their inputs and outputs as OpenAPI
// components), its prices as the live 402 challenge states them (see
// ChallengeMethods), its MCP and A2A endpoints, provenance and policies.
// The server package fills it from its routing table, the tier table and
// the request shapes; nothing here holds a price of its own. From a
// Service:
//
//   - OpenAPI: OpenAPI 3.1 (servers = the service base, paths relative to
//     it, components from the shapes plus reflected response schemas, path
//     and query parameters, request bodies, 200/402/422 responses) with
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
//   - NewAgentCard: the A2A 1.0 AgentCard.
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
//     x402 or MPP, in its HTTP headers), x402 (x402 only, e.g. MCP
//     _meta["x402/payment"]), mpp (an MPP Payment credential only),
//     x402-or-mpp (either, at the HTTP layer, as for A2A).
//   - mcp-server.schema.json: the registry's rules for server.json (name
//     with exactly one "/", description of 1–100 characters, an exact
//     version — no ranges, no "latest" —, remotes).
//   - a2a-agent-card-1.0.schema.json: the required 1.0 members
//     (supportedInterfaces instead of the 0.3 url/preferredTransport/
//     additionalInterfaces, which it refuses), skills, capabilities and
//     extensions.
//   - x402-discovery-legacy.schema.json: the legacy x402 list.
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
//   - Operations also served as MCP tools are listed again on the MCP
//     transport ("<id>.mcp", with the tool name) with an x402-only offer;
//     the A2A endpoint is one operation, "a2a.send-message".
//   - Per-operation extras go under the manifest's extensions.operations,
//     because the schema forbids unknown members on operations.
//   - An unpaid service (Service.Paid false: nothing is charged) still
//     lists its prices as offers (the manifest requires one), with the
//     protocols but no network or payee, transport authorization "none",
//     extensions.payments "disabled", no 402 responses or x-payment-info,
//     no resources in the x402 list and no payment extensions on the card.
//   - The x402 list names only operations callable as they are; those
//     with path parameters need an identifier first and are described in
//     OpenAPI only.
//   - The agent card declares two informal payment extensions
//     (https://www.x402.org/ and https://paymentauth.org/, both required,
//     with the price, the network and the x402 discovery URL), since no
//     registry defines them.
//   - Response schemas are reflected from the Go types that write the
//     responses (Reflect): closed objects, members without omitempty
//     required, pointers nullable.
package discovery
