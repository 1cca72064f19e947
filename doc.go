// Package assay is an embeddable Go SDK for two paid services that AI agents
// and apps call: niche discovery (a catalogue of reviewed, evidence-linked
// niche-market evaluations) and claim verification (a cited, structured
// verdict on a factual claim, checked against current web sources). Both are
// sold per call over HTTP 402 (x402 and MPP); the verifier is also served
// over MCP and A2A with discovery documents.
//
// The module needs Go 1.26 or later. Add it to a module with
//
//	go get github.com/assaykit/assay@latest
//
// and import the packages below (github.com/assaykit/assay/claims, …).
//
// This root package holds no code: it documents the module. The packages:
//
//   - shapes: the request shapes of the interface documents, decoded and
//     validated exactly as the existing services (Pydantic v2 lax mode)
//     do, with FastAPI's 422 bodies and JSON Schemas from the same tags.
//     A shape with a domain twin is the domain type (claims.Request,
//     niche.Draft, niche.SearchOptions, …): its bounds are its validate
//     tags, which the engines check on Go values with validator/v10.
//   - field: the value types those requests share (field.Date, and
//     field.Nullable for a field that may be unset, null or a value).
//   - niche: the niche catalogue engine (evaluations, signals, scores,
//     access levels, unlock tokens, subscriptions); niche/nichedemo is the
//     demo catalogue, niche/stripebilling sells subscriptions through
//     Stripe, niche/nichetest (in-memory stores and the conformance
//     suites of niche.Store and niche.SubscriptionStore) and
//     niche/stripebilling/stripebillingtest are test helpers.
//   - claims: the verification engine (tiers, providers, reconciliation,
//     verdict rules); claims/openai, claims/anthropic and claims/corpus
//     are its providers (OpenAI web search and Anthropic web search, both
//     on the official SDKs; an offline corpus), claims/claimstest has
//     scripted providers, fixtures, an in-memory claims.Store and its
//     conformance suite.
//   - snapshot: SSRF-safe URL capture with reproducible hashes;
//     snapshot/warc exports WARC records, snapshot/snapshottest has
//     in-memory stores and their conformance suites.
//   - payment: the seller core, without net/http: offers (prices passed
//     in), the transport-neutral Cashier and its one sale (Cashier.Sell),
//     the Processor interface, orders and their typed life cycle
//     (OrderStatus), quotes, signed receipts; payment/httpgate is the HTTP
//     adapter of the sale (the 402 Gate, Free); payment/protocols the
//     Processor speaking x402 and MPP, composed from one seller mechanism
//     per protocol (payment/x402/seller, payment/mpp/seller);
//     payment/x402 and payment/mpp are the wire codecs (with the
//     facilitator client and verifiers), payment/evm the EVM cryptography,
//     payment/paying the buyer's paying Transport, payment/stripecard card
//     payments on Stripe (the only package linking stripe-go for cards);
//     payment/paymenttest has
//     a dev wallet, fakes (the one Stripe fake among them), an in-memory
//     ledger and its conformance suite, payment/gatetest a scripted
//     processor.
//   - store: the SQL implementation of every store interface, shared by
//     SQLite and PostgreSQL; store/sqlite (the embedded default) and
//     store/postgres open it, each linking only its own driver, and
//     store/anydb opens either from a DSN; store/storetest gives tests a
//     database.
//   - server: the HTTP handlers of each service (REST, health, readiness,
//     capabilities) and their exported response types, composed by
//     server.New into one *server.Server, an http.Handler to mount in any
//     mux; every optional surface is a server.Mount in Config.Mounts.
//   - server/agents: the MCP and A2A endpoints over the engines (mounts
//     agents.MCP and agents.A2A, or MCPHandler and A2AHandler for a host's
//     own mux).
//   - discovery: the index at / and at each service prefix and the
//     discovery documents (OpenAPI, agent-service manifest, x402 list, MCP
//     server.json, A2A agent card), generated from the routing table (the
//     mount discovery.Documents), and the JSON Schemas they are checked
//     against; discovery/inputschema holds the request schemas every
//     transport publishes.
//   - metrics: Prometheus collectors and the adapters that plug them into
//     the server's observers and the engines' hooks.
//
// The examples are programs: examples/server (the whole service),
// examples/embed (mount the services in your own mux, behind your own
// authentication), examples/client (a paying agent) and examples/verify
// (the engine without HTTP). Every package also has runnable Example
// functions (this one's is the quick start below): go test -run Example
// ./... runs them, and pkg.go.dev shows them with each package's
// documentation; go doc does not print them.
//
// # Quick start
//
// One store holds everything; the engines are built on it and server.New
// composes them (Example runs this with the offline corpus):
//
//	db, err := sqlite.Open(ctx, "assay-data/assay.db", nil) // or postgres.Open(ctx, "postgres://…", nil)
//	if err != nil { ... }
//	catalogue, err := niche.New(db, nil)
//	if err != nil { ... }
//	snaps, err := snapshot.NewService(db, db, nil)
//	if err != nil { ... }
//	provider, err := openai.New(&openai.Options{APIKey: os.Getenv("OPENAI_API_KEY")})
//	if err != nil { ... }
//	engine, err := claims.New(provider, db, snaps, nil)
//	if err != nil { ... }
//	h, err := server.New(server.Config{
//		Logger:    slog.Default(),
//		Paywall:   httpgate.Free{}, // or a *httpgate.Gate over db: 402 with x402 and MPP
//		Niche:     server.NicheConfig{Engine: catalogue},
//		Claims:    server.ClaimsConfig{Engine: engine},
//		Snapshots: server.SnapshotsConfig{Service: snaps, Prefixes: []string{server.DefaultClaimsPrefix}},
//		Ready:     map[string]func(context.Context) error{"store": db.Ping},
//		// Optional, opt-in: MCP, A2A, then the index and discovery documents.
//		Mounts: []server.Mount{agents.MCP{}, agents.A2A{}, discovery.Documents{}},
//	})
//	if err != nil { ... }
//	mux.Handle("/", h)
//
// The runnable service is examples/server: go run ./examples/server.
package assay
