// Package paying is the buyer side: an http.RoundTripper (Transport) that
// answers a 402 by paying it with an evm.Signer — x402 v2, then v1, then
// MPP evm unless PreferMPP — within per-call and total budgets, and the
// functions that build those payments (PayX402V2, PayX402V1, PayMPPEVM).
//
// It depends only on the wire packages (x402, mpp, evm), never on the
// seller core, so a client links no ledger, processor or Stripe code.
package paying
