// Package x402 is the wire form of x402 (v1 and v2, scheme "exact" on EVM
// networks): payment requirements, payloads and settlement responses,
// their base64 JSON headers, the payment-identifier and bazaar
// extensions, the facilitator client (/verify, /settle, /supported) and
// the offline Verifier.
//
// It knows nothing of offers, orders or ledgers: payment (the seller core)
// builds requirements from its offers and checks what the payer accepted;
// paying (the buyer) reads them and pays. ErrMalformedHeader and
// ErrSettlementPending are the same values as payment's, so errors.Is
// matches either name.
package x402
