// Package seller is the x402 "exact" EVM mechanism on the seller's side
// (the x402 reference SDK's server role, mechanisms/evm/exact/server):
// the payment requirements a route issues (v2 and v1), the checks of a
// credential against them, the verification and settlement of its
// EIP-3009 authorization through an x402.Verifier and x402.Settler (a
// facilitator, or x402.LocalVerifier), the offline identification of its
// payer, and the MCP binding of x402 payments.
//
// The other roles live elsewhere: the buyer's is payment/paying, a
// facilitator's /verify and /settle are x402.Facilitator (over HTTP) and
// x402.LocalVerifier (offline). MPP's evm charge (payment/mpp/seller)
// verifies and settles its EIP-3009 authorization through this mechanism,
// as the x402 v2 payload built from it. payment/protocols composes both
// into the payment.Processor; payment/httpgate reads the credential
// headers with HeaderCredential.
//
// Wire choices are documented on payment/protocols.Processor.
package seller
