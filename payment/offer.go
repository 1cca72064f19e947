// Package payment sells HTTP calls for a price: 402 challenges for x402
// (v1, v2) and MPP, verification of payment credentials, atomic
// reservation, orders, settlement on success only, and signed receipts.
//
// # Pieces
//
// This package is the seller core. The wire codecs are in x402 and mpp,
// the EVM cryptography (addresses, networks, EIP-3009, signers) in evm,
// and the buyer's http.RoundTripper in paying, which needs none of this
// package.
//
// A Processor speaks the payment protocols (challenges, credentials,
// verification, settlement). A Ledger (store/paymentstore) records reservations,
// orders, receipts, quotes and customers. The Cashier is the
// transport-neutral core built on both: Begin verifies and reserves a
// payment and opens an order, Charge.Complete settles and signs a receipt,
// Charge.Fail voids; Charge.Run is the one run-then-settle-or-void step
// that every transport calls. The Gate is the HTTP Paywall built on the
// Cashier; the MCP and A2A transports (server/agents) use the Cashier
// directly. Prices are integer
// micro-USD and are never defined here: the host passes them in on each
// Offer (server builds its offers from the tier table, claims.Tiers).
//
// # The shape chosen for "a Verifier interface" and "payment.Gate(offer,
// *Options) func(http.Handler) http.Handler"
//
// Verification of USDC payments (x402 v1/v2 and MPP evm, all EIP-3009
// authorizations) sits behind x402.Verifier, with the x402 facilitator's
// /verify signature; settlement behind x402.Settler, with /settle's.
// x402.Facilitator implements both over HTTP, x402.LocalVerifier verifies
// offline (EIP-712 digest, secp256k1 recovery), and x402.VerifyAll chains
// verifiers. Protocols —
// the Processor that speaks x402 and MPP — takes them in
// ProcessorOptions.Verifier and .Settler: by default the local verifier and
// then the facilitator (the local verifier alone in dev mode), and the
// facilitator to settle; a host plugs facilitator-only or local-only
// verification by setting Verifier. The checks that depend on what a route
// issues (pinned requirements, recipient, price, validity window, MPP
// challenge binding) stay in Protocols and always run. Cards (MPP stripe)
// are not EIP-3009 payments and go through a CardCharger (payment/stripecard).
//
// The middleware is a method, not a package function: a function named
// Gate would clash with the Gate type, and a gate is built once (with its
// ledger, keys and processor) and then applied to many routes with
// different offers. NewGate(processor, ledger, *GateOptions) builds it;
// gate.Middleware(offer) is the func(http.Handler) http.Handler, and
// gate.Gate(offer, next) the same thing applied directly (the Paywall
// interface that server uses).
//
// # Order of events of a paid HTTP call (Gate)
//
//  1. The request body is read, at most GateOptions.MaxRequestBytes
//     (default 1 MiB; 413 above), and stays readable for the handler.
//  2. If the handler is a Prechecker, its Precheck runs: validation (422)
//     and existence (404) errors are answered before any payment talk and
//     are never charged.
//  3. X-Agentic-Customer-Key, when present, must name an active customer,
//     else 401 {"detail":"A valid X-Agentic-Customer-Key is required"}.
//  4. No credential: 402 with Processor.Challenge for the resource (the
//     configured public base URL plus the request path and query, never
//     the Host or X-Forwarded-* headers unless TrustForwardedHeaders), the
//     RFC 9530 body digest for requests with a body, Cache-Control:
//     no-store, priced by the quote named in X-Agentic-Quote-Id (an
//     unknown, expired, used or other-tier quote is refused with 402, a
//     fresh challenge without the quote, and a problem detail that says
//     why). A credential the processor cannot read: 400 problem body (or
//     the processor's 402), never 500.
//  5. When the processor is a PaymentIdentifier (Protocols is), the
//     credential is identified offline (the payer proved by its
//     signature, recovered locally): a payment that names its quote
//     (x402 payment-identifier "quo_…", MPP opaque) is priced with it
//     even without X-Agentic-Quote-Id; and the credential is the
//     purchase — a payment that already opened an order is answered from
//     that order, with or without Idempotency-Key, before any expiry or
//     facilitator check: for the same request (method, path, query and
//     body) a completed order replays its stored response with the same
//     order id and receipt id, X-Agentic-Idempotent-Replay: true and a
//     fresh X-Agentic-Order-Token (the previous token stops working); a
//     settling order answers 202 as in step 11, with a fresh token; a
//     processing order answers 409 with Retry-After (its first request is
//     still running); for another request the payment is used: 402
//     "Payment already used". A payment whose order failed was released
//     and is charged normally.
//  6. The quote prices the offer; Processor.Verify checks the payment. A
//     refusal is 402 with a fresh challenge and the reason; a processor
//     that cannot answer is 503 (payment not used).
//  7. With an Idempotency-Key: a completed order of the same payer for
//     the same request replays its stored response with the same order id
//     and receipt id, a fresh order token and X-Agentic-Idempotent-Replay:
//     true; the new credential (a different payment) is neither reserved
//     nor settled, voided and stays usable elsewhere until it expires. The
//     same key for a different request is 409; while the first order is
//     in flight, 409 with Retry-After.
//  8. The payment's ReservationKey (and ExtraReservationKeys) is reserved
//     atomically with the order (status processing), the quote claim and
//     the idempotency claim, in one transaction on a unique key: a second
//     use, also concurrent, also from another instance on the same
//     PostgreSQL database, is 402 "Payment already used" with a fresh
//     challenge. When the processor is a Holder (cards), the hold is
//     placed only now: a refused credential never places one, and a hold
//     that fails fails the order and releases the reservation.
//  9. The handler runs with the Call in its context and the offer's
//     WorkTimeout as deadline; its response is buffered (at most
//     MaxResponseBytes; larger responses fail the order with 500 and are
//     not settled). Handlers that implement Streamer opt out of buffering:
//     their output reaches the payer before settlement, and the receipt id
//     and settlement header follow as HTTP trailers.
//  10. Status >= 400 (or a panic, or the timeout): the payment is voided,
//     never settled, the reservation and quote are released (the payer may
//     retry with the same credential — except a card credential, whose
//     released authorisation cannot be used again) and the order is failed
//     with the reason; the handler's error response is returned with the
//     order id and token.
//  11. Otherwise the order moves to settling (with the SHA-256 of the
//     exact response bytes, the provider usage and cost, and the stored
//     response) and the processor settles. A refusal fails the order and
//     answers 402 with "Settlement failed: <why>" and a fresh challenge
//     for this same request (resource, body digest, quote), plus the
//     processor's failure header (x402: PAYMENT-RESPONSE {"success":
//     false,…}): nothing is delivered. ErrSettlementPending (or a timeout)
//     leaves the order settling and answers 202 {"detail","orderId",
//     "status":"settling","orderUrl"} with Retry-After: the payer must not
//     pay again but poll GET /v1/orders/{id} and then read GET
//     /v1/orders/{id}/result (or retry with the same Idempotency-Key once
//     the order is completed).
//  12. Settled: the order is completed, its receipt signed and stored, its
//     reservation marked consumed, and the response is sent with
//     X-Agentic-Order-Id, X-Agentic-Order-Token, X-Agentic-Receipt-Id, the
//     processor's settlement header (PAYMENT-RESPONSE, X-PAYMENT-RESPONSE
//     or Payment-Receipt), Cache-Control: private and, for browsers,
//     Access-Control-Expose-Headers.
//
// The order id and token are sent on every answer after step 8, errors
// included, so that a buyer can look a failed order up. The order token
// (ort_…) is shown once; only its SHA-256 is stored and it is compared in
// constant time. A replay (step 5 or 7) hands out a fresh token and the
// previous one stops working (for the order and for its stored result): a
// payer whose first answer was lost gets a token nobody else holds.
//
// Records of finished work are written in a grace period of their own
// (CashierOptions.CommitTimeout, 30 s) that the caller's deadline and
// disconnection do not cut short, and a write whose outcome is unknown (a
// COMMIT cut short) is read back: an order is never left failed while its
// result was stored, nor completed without it.
//
// # Payments bound to their route
//
// MPP challenges name the resource they were issued for inside their
// HMAC-bound fields, and an evm authorization's nonce is derived from the
// challenge id: an MPP payment made for one route is refused at any other
// (challenge_mismatch). An x402 v2 payment must echo this route's
// resource (a payload without one, or with another route's, is refused:
// invalid_payment_requirements); the EIP-3009 signature does not cover
// that field, so it binds what honest clients send, not what a payer could
// edit. x402 v1 payloads carry no resource at all: a fresh v1 payment for
// one route is accepted at another route of the same price. That is a
// limit of x402 v1. No payment buys twice in any protocol: one that
// opened an order is refused for every other request.
//
// Reconcile, run at start and optionally periodically, fails orders left
// processing longer than StaleAfter as "interrupted" and releases their
// reservations (never settles them: the payer may present the credential
// again and is charged once), re-checks settling orders through the
// processor when it implements SettlementChecker (completing them, so that
// the credential then recovers the answer), and purges consumed
// reservations past their validity.
//
// # Receipts
//
// A receipt is a JSON object (format "assay-receipt/1") with the members
// format, receiptId, orderId, offerId, tier ("" for untiered offers),
// amountMicrousd (integer micro-USD actually paid), currency ("USD"),
// paymentProtocol (x402, mpp, mpp-stripe), paymentMethod (exact, evm,
// stripe), network, payer, settlementReference (transaction hash or
// PaymentIntent id), dev (true when settled in dev mode: no funds moved),
// resultKind and resultId (what the call produced, e.g. "verification" and
// "cv_…", or "niche" and "niche_…"), resultSha256 (lowercase hex SHA-256 of
// the exact response body bytes delivered with the receipt), issuedAt (RFC
// 3339 UTC, seconds), keyId, signatureAlgorithm ("Ed25519") and signature.
//
// To verify a receipt offline:
//
//  1. Fetch the JWKS at /.well-known/jwks.json (also under the service
//     prefixes). Keys are OKP/Ed25519; kid is the RFC 7638 thumbprint of
//     the key, so a key whose kid is not its thumbprint is ignored.
//  2. Take the key whose kid equals the receipt's keyId.
//  3. Remove the signature member and serialise the rest with RFC 8785
//     (JCS): members sorted by UTF-16 code units, no whitespace, integers
//     as plain numbers.
//  4. Decode signature (unpadded base64url, 64 bytes) and check it with
//     Ed25519 over those bytes.
//  5. Check that resultSha256 is the SHA-256 of the response body you
//     received.
//
// VerifyReceipt does steps 2–4 plus a contents check; POST
// /v1/receipts/{order_id}/verify does the same and also compares the
// receipt with the order on record. Test vector (testdata/receipt_vector.json):
// the seed 0x00 0x01 … 0x1f ("ed25519:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
// has public key x "A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg" and kid
// "1IG2tMH7J2wbJZnOf8LJzQitKf7LMvoAElsuDMVM54Y"; signing the vector's
// receipt (order ord_000…001, deep tier, 120000 µUSD) gives the signature
// "FlMZ65MB9ON5SA5lXFBeTb-uK1z8fUn9hd0AnQOV2eKAPHuS_KeW4qAYMtD9tcz4TvYm0wXaLGYHlIWerprjBA".
//
// Keys: one signing key and any number of verification keys, from
// configuration (ParseKeyring: "ed25519:<seed>, ed25519-pub:<old key>")
// or, when none is configured, generated once and kept in the database
// (LoadKeyring with store.DB) so that every instance signs with the same
// key. To rotate, configure the new key first and keep the old one's
// public key after it; receipts name their key, so old receipts still
// verify.
//
// # Choices where the interface documents are silent
//
//   - Idempotency-Key is scoped by payer and offer, never global.
//   - A quote is single use: the first order that names it claims it, and
//     a failed order gives it back.
//   - A credential that names a quote (MPP opaque, x402 payment-identifier
//     "quo_…") is priced with it; when X-Agentic-Quote-Id is sent too, the
//     two must match.
//   - Card (MPP stripe) payers are identified by a hash of their shared
//     payment token ("stripe:spt_…"), known before Stripe is called, so
//     that the payment is reserved before the card is authorised.
//   - Card (MPP stripe) orders record the card amount in micro-USD.
//   - HEAD requests on paid GET routes are always answered with the
//     challenge: a response without a body is never charged.
//   - Usage-based cost accounting uses CostPrices; it is shown only in the
//     admin views, never to payers.
package payment

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Offer is what one paid route sells. Amounts are integer micro-USD, equal
// to USDC atomic units (6 decimals).
type Offer struct {
	// ID names the offer, e.g. "claims.verify.deep", "niche.evaluation".
	ID string
	// Description is shown to payers (x402 resource description).
	Description string
	// AmountMicroUSD is the USDC price (x402 and MPP evm).
	AmountMicroUSD int64
	// CardMicroUSD is the card price (MPP stripe); 0 means cards are not
	// offered for this route.
	CardMicroUSD int64
	// MimeType of the paid response, e.g. "application/json".
	MimeType string
	// WorkTimeout is the longest the paid work may take; challenges allow
	// this plus settlement time.
	WorkTimeout time.Duration
	// Product names what the offer sells within the offers that share
	// quotes (a quote made for one product prices only that product); the
	// host chooses it (server uses the claim tier's name). It is recorded
	// on orders, quotes and receipts, in their "tier" field. Empty means
	// the offer cannot be quoted.
	Product string
}

// Paywall turns a handler into a paid one. The payment issue's Gate is the
// real implementation; Free serves without charging.
type Paywall interface {
	Gate(offer Offer, next http.Handler) http.Handler
}

// Prechecker is implemented by paid handlers whose request must be
// validated (and whose resource must exist) before any payment is asked
// for, so that a 422 or 404 is never charged.
type Prechecker interface {
	// Precheck validates r. When the request is acceptable it returns the
	// request to continue with (for example carrying the decoded body in
	// its context) and true. Otherwise it has written the error response
	// and returns false.
	Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool)
}

// Call describes the payment behind the request being served. The gate
// creates it; the paid handler reads it and reports what it produced.
type Call struct {
	// Payer identifies who paid: a lowercase 0x address for USDC, or a
	// processor customer reference for cards. Idempotency keys and
	// customer views are scoped by it.
	Payer string
	// Protocol is one of the Protocol* constants ("free" under Free).
	Protocol string
	// OrderID is the order opened for this call ("" under Free).
	OrderID string
	// OrderTokenHash is the SHA-256 (hex) of the order token handed to the
	// payer; handlers store it to let the payer read the result later.
	OrderTokenHash string
	// CustomerID is the registered customer, when the payer presented a
	// customer key.
	CustomerID string
	// Offer is the offer being paid.
	Offer Offer

	mu         sync.Mutex
	resultKind string
	resultID   string
	usage      Usage
}

// Usage is cost-relevant work a paid handler did, for the order's cost
// accounting.
type Usage struct {
	Provider          string
	Model             string
	InputTokens       int
	CachedInputTokens int
	OutputTokens      int
	SearchCalls       int
}

// SetResult records what the call produced, e.g. ("verification", "cv_…")
// or ("niche", "niche_…"); receipts name it.
func (c *Call) SetResult(kind, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resultKind, c.resultID = kind, id
}

// Result returns what SetResult recorded.
func (c *Call) Result() (kind, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resultKind, c.resultID
}

// AddUsage adds provider usage to the call.
func (c *Call) AddUsage(u Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u.Provider != "" {
		c.usage.Provider = u.Provider
	}
	if u.Model != "" {
		c.usage.Model = u.Model
	}
	c.usage.InputTokens += u.InputTokens
	c.usage.CachedInputTokens += u.CachedInputTokens
	c.usage.OutputTokens += u.OutputTokens
	c.usage.SearchCalls += u.SearchCalls
}

// Usage returns the usage added so far.
func (c *Call) Usage() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usage
}

type callKey struct{}

// WithCall returns a context carrying c.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom returns the payment of the request being served, if any.
func CallFrom(ctx context.Context) (*Call, bool) {
	c, ok := ctx.Value(callKey{}).(*Call)
	return c, ok
}

// Free is a Paywall that charges nothing: it runs the handler's Precheck
// and then the handler, with a Call whose Protocol is "free". For tests and
// for hosts that bill by other means.
type Free struct{}

// Gate implements Paywall.
func (Free) Gate(offer Offer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pc, ok := next.(Prechecker); ok {
			var proceed bool
			if r, proceed = pc.Precheck(w, r); !proceed {
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(WithCall(r.Context(), &Call{Payer: "free", Protocol: ProtocolFree, Offer: offer})))
	})
}
