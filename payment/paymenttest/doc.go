// Package paymenttest helps test code that takes or makes payments: a dev
// wallet, helpers that sign x402 v1/v2 and MPP credentials for a challenge
// (honest ones and deliberately broken ones), a fake x402 facilitator, a
// fake Stripe PaymentIntents API, and TestLedger and TestLedgerShared,
// the conformance suites every payment.Ledger passes (internal/conformance
// runs them on paymentmem.Ledger, SQLite and PostgreSQL).
//
// Everything here runs on loopback httptest servers and public test keys;
// nothing moves real money.
//
// # Where the facilitator payloads come from
//
// The answers under recorded/ (see Recorded) were not captured from a live
// facilitator: this repository's tests never reach the network. They are
// transcribed from the documented examples of the x402 specification, as
// summarised in the project's payments reference:
//
//   - supported: the GET /supported example ({"kinds":[…],"extensions":[],
//     "signers":{"eip155:*":[…]}}), listing Base and Base Sepolia for x402
//     v1 and v2;
//   - verify_valid and verify_insufficient_funds: the /verify examples
//     ({"isValid":true,"payer":…} and {"isValid":false,"invalidReason":
//     "insufficient_funds","payer":…});
//   - settle_success and settle_failure: the SettleResponse examples
//     ({"success":true,"transaction":…,"network":…,"payer":…} and the
//     success:false one with errorReason "insufficient_funds" and an empty
//     transaction);
//   - settle_pending: a SettleResponse with the non-terminal errorReason
//     "settlement_pending" and the transaction hash, which newer SDKs send
//     (its exact shape is inferred from that description, not from an
//     example);
//   - verify_nonce_used and settle_nonce_used: the same shapes with the
//     reason the x402 reference implementation gives a reused EIP-3009
//     nonce, "invalid_exact_evm_nonce_already_used".
//
// The request bodies the fake receives are the documented
// {"x402Version","paymentPayload","paymentRequirements"} shape that
// payment.Facilitator sends.
package paymenttest
