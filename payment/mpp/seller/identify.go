package seller

import (
	"encoding/json"
	"fmt"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/mpp"
)

// IdentifyPayment identifies an MPP credential offline. Its challenge id
// must be one this server issued. An evm payment is identified by the
// signer its signature recovers to (the authorization's from, or an
// error), whose nonce must be bound to the challenge; a card payment by
// its challenge id and the hash of its shared payment token (the card
// payer). The quote is the one its challenge names. Validity windows,
// expiry, amounts and recipients are not checked: that is Verify's job.
func (m *Charge) IdentifyPayment(c *payment.Credential) (*payment.PaymentIdentity, error) {
	var cred mpp.Credential
	if err := wire.DecodeObject(c.Raw, &cred); err != nil {
		return nil, err
	}
	if !m.Enabled() || !m.bound(cred.Challenge) {
		return nil, fmt.Errorf("%w: challenge not issued here", payment.ErrUnidentified)
	}
	var id *payment.PaymentIdentity
	switch cred.Challenge.Method {
	case mpp.MethodEVM:
		var pl mpp.EVMPayload
		if err := wire.DecodeObject(cred.Payload, &pl); err != nil {
			return nil, err
		}
		a, err := pl.EIP3009Authorization.Parse()
		if err != nil {
			return nil, err
		}
		if fmt.Sprintf("0x%x", a.Nonce) != mpp.Nonce(cred.Challenge.ID, cred.Challenge.Realm) {
			return nil, fmt.Errorf("%w: nonce not bound to the challenge", payment.ErrUnidentified)
		}
		if id, err = m.exact.Identify(pl.EIP3009Authorization, pl.Signature); err != nil {
			return nil, err
		}
	case mpp.MethodStripe:
		var pl mpp.StripePayload
		if err := wire.DecodeObject(cred.Payload, &pl); err != nil || pl.SPT == "" {
			return nil, fmt.Errorf("%w: no spt", payment.ErrUnidentified)
		}
		id = &payment.PaymentIdentity{Payer: stripePayer(pl.SPT), ReservationKey: "mpp:" + cred.Challenge.ID}
	default:
		return nil, payment.ErrUnidentified
	}
	id.QuoteID = opaqueQuote(cred.Challenge.Opaque)
	return id, nil
}

// NamedQuote returns the quote an MPP credential names: the quoteId in
// its challenge's opaque parameter.
func NamedQuote(c *payment.Credential) string {
	var cred mpp.Credential
	if json.Unmarshal(c.Raw, &cred) == nil {
		return opaqueQuote(cred.Challenge.Opaque)
	}
	return ""
}
