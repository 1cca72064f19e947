package payment

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/assaykit/assay/payment/x402"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/mpp"
)

// PaymentIdentity is which payment a credential carries and who made it,
// as the credential alone shows: no clock, no network.
type PaymentIdentity struct {
	// Payer is the payer as Verify would report it (Authorization.Payer).
	Payer string
	// ReservationKey is the payment's single-use key
	// (Authorization.ReservationKey).
	ReservationKey string
	// QuoteID is the quote the credential names, if any.
	QuoteID string
}

// PaymentIdentifier is implemented by processors that can identify a
// payment from its credential offline. The Cashier uses it for two things
// before verification:
//
//   - A retry with the same payment (with or without Idempotency-Key)
//     finds the order that payment opened first — the credential is the
//     purchase —, so that a retry whose authorization has since expired
//     (or whose MPP challenge has) still gets the bytes it paid for instead
//     of a 402, and no facilitator is asked about a payment already used.
//     The payer must be proved, not claimed: IdentifyPayment recovers the
//     signer of an EIP-3009 authorization.
//   - A payment that names a quote (MPP opaque, x402 payment-identifier
//     "quo_…") prices the call with it when the request names none.
type PaymentIdentifier interface {
	// IdentifyPayment returns the payer (proved by the credential, e.g.
	// the recovered signer) and reservation key of c, or an error when c
	// cannot be identified offline.
	IdentifyPayment(c *Credential) (*PaymentIdentity, error)
	// NamedQuote returns the quote id c names, "" when none. It checks
	// nothing.
	NamedQuote(c *Credential) string
}

var _ PaymentIdentifier = (*Protocols)(nil)

// errUnidentified reports a credential that IdentifyPayment cannot tell.
var errUnidentified = errors.New("payment: credential cannot be identified offline")

// IdentifyPayment implements PaymentIdentifier. For EIP-3009 payments
// (x402 v1/v2, MPP evm) the payer is the address the signature recovers to
// (the authorization's from, or an error) and the key the authorization's
// ReservationKey; MPP credentials must also carry a challenge id this
// server issued. Card credentials are identified by their challenge id and
// the hash of their shared payment token (the card payer). Validity
// windows, expiry, amounts and recipients are not checked: that is
// Verify's job.
func (p *Protocols) IdentifyPayment(c *Credential) (*PaymentIdentity, error) {
	if c == nil {
		return nil, errUnidentified
	}
	switch c.Protocol {
	case ProtocolX402:
		var pl x402.PaymentPayload
		if err := wire.DecodeObject(c.Raw, &pl); err != nil {
			return nil, err
		}
		var ex x402.ExactEVMPayload
		if err := wire.DecodeObject(pl.Payload, &ex); err != nil {
			return nil, err
		}
		id, err := p.identifyEIP3009(ex.Authorization, ex.Signature)
		if err != nil {
			return nil, err
		}
		if q := p.NamedQuote(c); q != "" {
			id.QuoteID = q
		}
		return id, nil
	case ProtocolMPP, ProtocolMPPStripe:
		var cred mpp.Credential
		if err := wire.DecodeObject(c.Raw, &cred); err != nil {
			return nil, err
		}
		if !p.mppEnabled() || !p.bound(cred.Challenge) {
			return nil, fmt.Errorf("%w: challenge not issued here", errUnidentified)
		}
		var id *PaymentIdentity
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
				return nil, fmt.Errorf("%w: nonce not bound to the challenge", errUnidentified)
			}
			if id, err = p.identifyEIP3009(pl.EIP3009Authorization, pl.Signature); err != nil {
				return nil, err
			}
		case mpp.MethodStripe:
			var pl mpp.StripePayload
			if err := wire.DecodeObject(cred.Payload, &pl); err != nil || pl.SPT == "" {
				return nil, fmt.Errorf("%w: no spt", errUnidentified)
			}
			id = &PaymentIdentity{Payer: stripePayer(pl.SPT), ReservationKey: "mpp:" + cred.Challenge.ID}
		default:
			return nil, errUnidentified
		}
		id.QuoteID = opaqueQuote(cred.Challenge.Opaque)
		return id, nil
	}
	return nil, errUnidentified
}

// identifyEIP3009 recovers the signer of an authorization on the
// configured network.
func (p *Protocols) identifyEIP3009(w evm.EIP3009Authorization, signature string) (*PaymentIdentity, error) {
	a, err := w.Parse()
	if err != nil {
		return nil, err
	}
	sig, err := evm.ParseSignature(signature)
	if err != nil {
		return nil, err
	}
	d, err := a.Digest(p.net)
	if err != nil {
		return nil, err
	}
	from, err := evm.RecoverAddress(d, sig)
	if err != nil {
		return nil, err
	}
	if from != a.From {
		return nil, fmt.Errorf("%w: the signature was not made by %s", evm.ErrBadSignature, a.From.String())
	}
	return &PaymentIdentity{Payer: a.From.Hex(), ReservationKey: a.ReservationKey(p.net)}, nil
}

// NamedQuote implements PaymentIdentifier: the x402 v2 payment-identifier
// id when it starts "quo_", or the quoteId in an MPP challenge's opaque.
func (p *Protocols) NamedQuote(c *Credential) string {
	if c == nil {
		return ""
	}
	switch c.Protocol {
	case ProtocolX402:
		var pl struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		}
		if json.Unmarshal(c.Raw, &pl) != nil {
			return ""
		}
		if id, err := x402.PaymentIdentifierOf(pl.Extensions); err == nil && strings.HasPrefix(id, "quo_") {
			return id
		}
	case ProtocolMPP, ProtocolMPPStripe:
		var cred mpp.Credential
		if json.Unmarshal(c.Raw, &cred) == nil {
			return opaqueQuote(cred.Challenge.Opaque)
		}
	}
	return ""
}

// opaqueQuote returns the quoteId of an MPP opaque parameter, if any.
func opaqueQuote(opaque string) string {
	raw, err := mpp.DecodeBase64URL(opaque)
	if err != nil {
		return ""
	}
	var o map[string]string
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	return o["quoteId"]
}
