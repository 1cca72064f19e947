package payment

import "strconv"

// PaymentOption is one way to pay an offer, as quotes list them.
type PaymentOption struct {
	Protocol       string `json:"protocol"`          // x402, mpp
	Method         string `json:"method"`            // exact, evm, stripe
	Network        string `json:"network,omitempty"` // eip155:8453, ...
	Asset          string `json:"asset,omitempty"`   // token contract or currency
	PayTo          string `json:"payTo,omitempty"`   // payee address or profile
	Amount         string `json:"amount"`            // atomic units of Asset, as a decimal string
	AmountMicroUSD int64  `json:"amountMicrousd"`
}

// PaymentOptioner is implemented by processors that can describe the
// payment options of an offer (network, asset, payee). Quotes list them.
type PaymentOptioner interface {
	PaymentOptions(offer Offer) []PaymentOption
}

// PaymentOptions lists the ways to pay offer: the processor's own
// description when it has one, otherwise USDC over x402 and MPP (evm),
// and cards over MPP (stripe) when the offer has a card price.
func (c *Cashier) PaymentOptions(offer Offer) []PaymentOption {
	if po, ok := c.p.(PaymentOptioner); ok {
		return po.PaymentOptions(offer)
	}
	usdc := strconv.FormatInt(offer.AmountMicroUSD, 10)
	out := []PaymentOption{
		{Protocol: ProtocolX402, Method: "exact", Amount: usdc, AmountMicroUSD: offer.AmountMicroUSD},
		{Protocol: ProtocolMPP, Method: "evm", Amount: usdc, AmountMicroUSD: offer.AmountMicroUSD},
	}
	if offer.CardMicroUSD > 0 {
		out = append(out, PaymentOption{Protocol: ProtocolMPP, Method: "stripe", Asset: "usd",
			Amount: strconv.FormatInt(offer.CardMicroUSD/10_000, 10), AmountMicroUSD: offer.CardMicroUSD})
	}
	return out
}
