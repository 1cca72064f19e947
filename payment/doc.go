// Package payment is the seller core of paid calls: offers, the one sale
// (Cashier.Sell), orders and their life cycle, the Ledger that records
// them, settlement on success only, the resolution of settlements whose
// outcome is unknown, quotes, customers and signed receipts. It knows no
// transport and no payment protocol: it links no net/http (a test keeps it
// so), and protocols and transports import it, never the other way round.
//
// # Pieces
//
// A Processor speaks the payment protocols: it issues a Challenge,
// identifies and verifies a Credential, and holds, settles or voids the
// Authorization it returns. payment/protocols implements it for x402 and
// MPP, composed from one seller mechanism per protocol
// (payment/x402/seller, payment/mpp/seller); payment/gatetest is a fake
// for tests. The wire codecs are payment/x402 and payment/mpp, the EVM
// cryptography payment/evm, and the buyer's http.RoundTripper
// payment/paying, which needs none of this package.
//
// A Ledger records reservations, orders, receipts, quotes and customers
// (store/paymentstore on SQLite and PostgreSQL, payment/paymentmem in
// memory; paymenttest.TestLedger is its conformance suite). An order's status is
// an OrderStatus whose transitions OrderStatus.Next states once: the
// Cashier reports only those moves and the conformance suite checks that
// a Ledger makes exactly those.
//
// The Cashier is built on both. Cashier.Sell is the one sale every
// transport makes: a transport reads what the payer sent into a Purchase
// and renders the Outcome it gets back (challenged, refused, delivered,
// replayed, pending, deferred, work failed, failed). payment/httpgate is
// the HTTP adapter (the 402 Gate); server/agents renders outcomes for MCP
// and A2A. Underneath, Begin verifies and reserves a payment and opens an
// order, Charge.Run runs the work and settles or voids. Prices are integer
// micro-USD and are never defined here: the host passes them in on each
// Offer.
//
// # Settlement and resolution
//
// Records of finished work are written in a grace period of their own
// (CashierOptions.CommitTimeout, 30 s) that the caller's deadline and
// disconnection do not cut short, and a write whose outcome is unknown (a
// COMMIT cut short) is read back: an order is never left failed while its
// result was stored, nor completed without it. A settlement whose outcome
// is unknown leaves the order settling, its answer kept, until the
// resolver (RunResolver, Reconcile) learns it through
// Processor.CheckSettlement: see resolve.go.
//
// Reconcile, run at start and periodically, fails orders left processing
// longer than StaleAfter as "interrupted" and releases their reservations
// (never settles them: the payer may present the credential again and is
// charged once), resolves settling orders that are due (completing them,
// so that the credential then recovers the answer), and purges consumed
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
// The receipt of an answer delivered without charge (a waiver: "no
// verdict, no charge") also has "voided": true, amountMicrousd 0 and an
// empty settlementReference; its order is voided (OrderVoided).
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
// (LoadKeyring with a MetaStore such as store.DB) so that every instance
// signs with the same key. To rotate, configure the new key first and keep the old one's
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
//   - The credential is the purchase: a credential the processor
//     identifies offline that already opened an order is answered from
//     that order (see Cashier.Begin).
//   - Card (MPP stripe) payers are identified by a hash of their shared
//     payment token ("stripe:spt_…"), known before Stripe is called, so
//     that the payment is reserved before the card is authorised.
//   - Card (MPP stripe) orders record the card amount in micro-USD.
//   - Usage-based cost accounting uses CostPrices; it is shown only in the
//     admin views, never to payers.
//   - A waived answer (Offer.Waiver, Call.Waive) voids the payment after
//     the work, in one ledger write with its answer and receipt, instead
//     of settling it; its reservation stays consumed (the credential
//     bought this answer and cannot buy another), and the payer's daily
//     waivers are counted in that same write, so the bound holds across
//     instances. Beyond the bound, or when that write fails, the answer
//     is charged as usual: a payer is never refused an answer it paid for.
//
// # Written by hand
//
// The receipt's canonical JSON (RFC 8785) is written by hand for its
// members (SignReceipt): every paid call signs one, and the
// generic way (encoding/json, then github.com/gowebpki/jcs) cost about a
// tenth of the gate's overhead. What the hand encoder cannot write
// exactly goes the generic way; a test checks the two agree byte for
// byte.
package payment
