package protocols

import (
	"strconv"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/mpp"
	mppseller "github.com/assaykit/assay/payment/mpp/seller"
)

// PaymentOptions implements payment.Processor: the ways to pay offer, as
// quotes show them: x402 exact and MPP evm in USDC on the configured
// network, and MPP stripe in USD cents when cards are offered for it.
func (p *Processor) PaymentOptions(offer payment.Offer) []payment.PaymentOption {
	usdc := strconv.FormatInt(offer.AmountMicroUSD, 10)
	opts := []payment.PaymentOption{{
		Protocol: payment.ProtocolX402, Method: "exact", Network: p.net.CAIP2, Asset: p.net.USDC.String(),
		PayTo: p.payTo.String(), Amount: usdc, AmountMicroUSD: offer.AmountMicroUSD,
	}}
	if p.m.Enabled() {
		opts = append(opts, payment.PaymentOption{
			Protocol: payment.ProtocolMPP, Method: mpp.MethodEVM, Network: p.net.CAIP2, Asset: p.net.USDC.String(),
			PayTo: p.payTo.String(), Amount: usdc, AmountMicroUSD: offer.AmountMicroUSD,
		})
	}
	if p.m.CardsOffered(offer) {
		cents := mppseller.CardCents(offer)
		opts = append(opts, payment.PaymentOption{
			Protocol: payment.ProtocolMPPStripe, Method: mpp.MethodStripe, Network: "stripe", Asset: "usd",
			PayTo: p.m.CardProfile(), Amount: strconv.FormatInt(cents, 10), AmountMicroUSD: cents * 10_000,
		})
	}
	return opts
}
