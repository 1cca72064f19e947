// Package sell is the application layer between the engines (claims,
// niche, snapshot) and the transports (HTTP in package server, MCP and A2A
// in server/agents, the discovery documents): what is sold, at what price,
// where, and under which product rules.
//
// The catalogue (Catalogue, NewCatalogue) states every offer once: its
// product and tier, its USDC and card prices, its HTTP route and its MCP
// tool. Every price is configurable (Prices), defaulting to the published
// ones (DefaultPrices). Domains know nothing of it: a claims.Tier says what
// a verification checks, never how it is sold.
//
// The sale itself is payment.Cashier.Sell: every transport passes in the
// purchase it read and renders the outcome it gets back.
//
// Choices where the interface documents are silent: the standard tier is
// sold at the plain verify route and the plain verify_claim tool; every
// claim tier has one card price (Stripe's USD 0.50 minimum by default);
// niche offers have no card price and cannot be quoted (they have no
// product).
package sell
