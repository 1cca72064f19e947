package payment

import (
	"strconv"

	"github.com/assaykit/assay/payment/mpp"
)

var _ PaymentOptioner = (*Protocols)(nil)

// PaymentOptions lists the ways to pay offer, as quotes show them: x402
// exact and MPP evm in USDC on the configured network, and MPP stripe in USD
// cents when cards are offered for it.
func (p *Protocols) PaymentOptions(offer Offer) []PaymentOption {
	usdc := strconv.FormatInt(offer.AmountMicroUSD, 10)
	opts := []PaymentOption{{
		Protocol: ProtocolX402, Method: "exact", Network: p.net.CAIP2, Asset: p.net.USDC.String(),
		PayTo: p.payTo.String(), Amount: usdc, AmountMicroUSD: offer.AmountMicroUSD,
	}}
	if p.mppEnabled() {
		opts = append(opts, PaymentOption{
			Protocol: ProtocolMPP, Method: mpp.MethodEVM, Network: p.net.CAIP2, Asset: p.net.USDC.String(),
			PayTo: p.payTo.String(), Amount: usdc, AmountMicroUSD: offer.AmountMicroUSD,
		})
	}
	if p.stripeOffered(offer) {
		cents := cardCents(offer)
		opts = append(opts, PaymentOption{
			Protocol: ProtocolMPPStripe, Method: mpp.MethodStripe, Network: "stripe", Asset: "usd",
			PayTo: p.stripe.ProfileID(), Amount: strconv.FormatInt(cents, 10), AmountMicroUSD: cents * 10_000,
		})
	}
	return opts
}
