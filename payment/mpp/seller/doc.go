// Package seller is the MPP charge intent on the seller's side, for its two
// methods: evm (USDC by EIP-3009, verified and settled as an x402 exact
// payment through payment/x402/seller) and stripe (cards, through a
// CardCharger such as payment/stripecard). It issues the challenges of a
// route, binds their ids statelessly (HMAC over the challenge's fields,
// with secret rotation), checks a credential's echoed challenge against
// what the route issues now, verifies, holds, settles and voids, builds
// the Payment-Receipt, and identifies a credential's payer offline.
//
// The wire codecs are payment/mpp; payment/protocols composes this
// mechanism with x402's into the payment.Processor; payment/httpgate reads
// the Authorization header with HeaderCredential.
//
// Wire choices are documented on payment/protocols.Processor.
package seller
