// Package httpgate is the HTTP adapter of the sale: the 402 Gate that
// turns a handler into a paid one. It reads the request into a
// payment.Purchase (the credential from the x402 and MPP headers,
// ReadCredential; the customer key, idempotency key, quote and body
// digest), has payment.Cashier.Sell make the sale, and renders the
// Outcome as status, headers and body: the challenge in PAYMENT-REQUIRED,
// WWW-Authenticate and an application/problem+json body
// (ChallengeHeader), the settlement in PAYMENT-RESPONSE,
// X-PAYMENT-RESPONSE or Payment-Receipt (SettlementHeader), the order in
// the X-Agentic-* headers. Free is the Paywall that charges nothing.
//
// # The shape chosen for "payment.Gate(offer, *Options)
// func(http.Handler) http.Handler"
//
// The middleware is a method, not a package function: a gate is built
// once (with its ledger, keys and processor) and then applied to many
// routes with different offers. New(processor, ledger, *Options) builds
// it; gate.Middleware(offer) is the func(http.Handler) http.Handler, and
// gate.Gate(offer, next) the same thing applied directly (the Paywall
// interface that server uses). The credential reader is an option
// (Options.ReadCredential) because reading headers is the HTTP binding of
// the protocols, not the Processor's: a processor with credentials of its
// own form (payment/gatetest's) comes with its own reader.
//
// Handlers opt into two behaviours by interface, as http.Handler
// capabilities such as http.Flusher are: Prechecker (validate before any
// payment talk) and Streamer (write as they go, settle at the end).
//
// # Order of events of a paid HTTP call (Gate)
//
//  1. The request body is read, at most Options.MaxRequestBytes
//     (default 1 MiB; 413 above), and stays readable for the handler.
//  2. If the handler is a Prechecker, its Precheck runs: validation (422)
//     and existence (404) errors are answered before any payment talk and
//     are never charged.
//  3. X-Agentic-Customer-Key, when present, must name an active customer,
//     else 401 {"detail":"A valid X-Agentic-Customer-Key is required"}.
//  4. No credential: 402 with payment.Processor.Challenge for the resource (the
//     configured public base URL plus the request path and query, never
//     the Host or X-Forwarded-* headers unless TrustForwardedHeaders), the
//     RFC 9530 body digest for requests with a body, Cache-Control:
//     no-store, priced by the quote named in X-Agentic-Quote-Id (an
//     unknown, expired, used or other-tier quote is refused with 402, a
//     fresh challenge without the quote, and a problem detail that says
//     why). A credential that cannot be read (Options.ReadCredential): 400
//     problem body (or the reader's 402), never 500.
//  5. When the processor identifies the credential offline
//     (payment.Processor.IdentifyPayment; payment/protocols does: the
//     payer proved by its signature, recovered locally): a payment that names its quote
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
//     challenge. When the payment needs a hold (cards: Processor.Hold), it is
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
// HEAD requests on paid GET routes are always answered with the
// challenge: a response without a body is never charged.
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
package httpgate
