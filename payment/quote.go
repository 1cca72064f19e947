package payment

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

// PaymentOptions lists the ways to pay offer, as the processor describes
// them (Processor.PaymentOptions).
func (c *Cashier) PaymentOptions(offer Offer) []PaymentOption { return c.p.PaymentOptions(offer) }
