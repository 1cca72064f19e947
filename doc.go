// Package assay is an embeddable Go SDK for two paid services that AI agents
// and apps call: niche discovery (a catalogue of reviewed, evidence-linked
// niche-market evaluations) and claim verification (a cited, structured
// verdict on a factual claim, checked against current web sources). Both are
// sold per call over HTTP 402 (x402 and MPP); the verifier is also served
// over MCP and A2A with discovery documents.
//
// # Packages
//
//   - shapes: every request shape of the interface documents, decoded and
//     validated exactly as the existing services (Pydantic v2 lax mode)
//     do, with FastAPI's 422 bodies and JSON Schemas from the same tags.
//   - niche: the niche catalogue engine (evaluations, signals, scores,
//     access levels, subscriptions).
//   - claims: the verification engine (tiers, providers, reconciliation,
//     verdict rules); claims/openai, claims/corpus and claims/claimstest
//     are its providers.
//   - snapshot: SSRF-safe URL capture with reproducible hashes.
//   - payment: prices, x402 and MPP, verification, the 402 Gate, orders,
//     quotes and signed receipts; payment/paymenttest has a dev wallet and
//     fakes.
//   - store: SQLite (embedded default) and PostgreSQL implementations of
//     every Store; store/storetest is the conformance suite.
//   - server: the HTTP handlers, composed by server.New into one
//     http.Handler to mount in any mux.
//
// # Quick start
//
//	db, err := store.Open(ctx, "assay-data/assay.db", nil)
//	if err != nil { ... }
//	h, err := server.New(server.Config{Logger: slog.Default()})
//	if err != nil { ... }
//	mux.Handle("/", h)
//
// The runnable service is examples/server: go run ./examples/server.
package assay
