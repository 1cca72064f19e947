package protocols

import (
	"github.com/assaykit/assay/payment"
	mppseller "github.com/assaykit/assay/payment/mpp/seller"
	x402seller "github.com/assaykit/assay/payment/x402/seller"
)

// IdentifyPayment implements payment.Processor. For EIP-3009 payments
// (x402 v1/v2, MPP evm) the payer is the address the signature recovers to
// (the authorization's from, or an error) and the key the authorization's
// ReservationKey; MPP credentials must also carry a challenge id this
// server issued. Card credentials are identified by their challenge id and
// the hash of their shared payment token (the card payer). Validity
// windows, expiry, amounts and recipients are not checked: that is
// Verify's job.
func (p *Processor) IdentifyPayment(c *payment.Credential) (*payment.PaymentIdentity, error) {
	if c == nil {
		return nil, payment.ErrUnidentified
	}
	switch c.Protocol {
	case payment.ProtocolX402:
		return p.x.IdentifyPayment(c)
	case payment.ProtocolMPP, payment.ProtocolMPPStripe:
		return p.m.IdentifyPayment(c)
	}
	return nil, payment.ErrUnidentified
}

// NamedQuote implements payment.Processor: the x402 v2 payment-identifier
// id when it starts "quo_", or the quoteId in an MPP challenge's opaque.
func (p *Processor) NamedQuote(c *payment.Credential) string {
	if c == nil {
		return ""
	}
	switch c.Protocol {
	case payment.ProtocolX402:
		return x402seller.NamedQuote(c)
	case payment.ProtocolMPP, payment.ProtocolMPPStripe:
		return mppseller.NamedQuote(c)
	}
	return ""
}
