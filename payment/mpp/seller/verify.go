package seller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/mpp"
	x402seller "github.com/assaykit/assay/payment/x402/seller"
)

// HeaderCredential reads an Authorization or Payment-Authorization header
// value: nil and no error for another scheme, mpp.ErrSeveralCredentials
// for several Payment credentials, a 402 *payment.Problem for a malformed
// one.
func HeaderCredential(name, value string) (*payment.Credential, error) {
	mc, err := mpp.ParseCredential(value)
	switch {
	case errors.Is(err, mpp.ErrSeveralCredentials):
		return nil, err
	case err != nil:
		return nil, &payment.Problem{Status: http.StatusPaymentRequired, Type: "malformed-credential", Reason: "invalid_payload",
			Detail: "The Payment credential is not base64url-encoded JSON: " + err.Error()}
	case mc == nil:
		return nil, nil
	}
	raw, err := wire.Marshal(mc)
	if err != nil {
		return nil, err
	}
	return &payment.Credential{Protocol: payment.ProtocolMPP, Header: name, Method: mc.Challenge.Method, Raw: raw}, nil
}

// EVMPayment is the Authorization.State of an MPP evm payment: the x402
// payment built from its authorization, and its challenge.
type EVMPayment struct {
	ChallengeID string
	*x402seller.Payment
}

// Verify checks an MPP credential against offer and res: its challenge
// must be one this server issued (HMAC-bound id) for this route now
// (realm, method, intent, request, digest, opaque, credential header,
// expiry), and its payload must pay it (evm: the authorization, through
// the x402 mechanism; stripe: a shared payment token). Failures are
// *payment.Problem.
func (m *Charge) Verify(ctx context.Context, offer payment.Offer, res payment.Resource, c *payment.Credential) (*payment.Authorization, error) {
	var cred mpp.Credential
	if err := wire.DecodeObject(c.Raw, &cred); err != nil {
		return nil, payment.NewProblem(http.StatusPaymentRequired, "malformed-credential", "invalid_payload", "The Payment credential is not valid JSON: %v", err)
	}
	ch := cred.Challenge
	if !m.Enabled() {
		return nil, payment.NewProblem(http.StatusBadRequest, "method-unsupported", "unsupported_scheme", "MPP payments are not accepted here.")
	}
	switch {
	case ch.Method == mpp.MethodEVM:
	case ch.Method == mpp.MethodStripe && m.CardsOffered(offer):
	default:
		return nil, payment.NewProblem(http.StatusBadRequest, "method-unsupported", "unsupported_scheme", "Payment method %q is not accepted for this route.", wire.Clip(ch.Method, 40))
	}
	if ch.Intent != mpp.IntentCharge {
		return nil, payment.NewProblem(http.StatusBadRequest, "method-unsupported", "unsupported_scheme", "Payment intent %q is not accepted; use charge.", wire.Clip(ch.Intent, 40))
	}
	if !m.bound(ch) {
		return nil, payment.NewProblem(http.StatusPaymentRequired, "invalid-challenge", "invalid_challenge", "The challenge id was not issued by this server.")
	}
	expires, err := time.Parse(time.RFC3339, ch.Expires)
	if err != nil {
		return nil, payment.NewProblem(http.StatusPaymentRequired, "invalid-challenge", "invalid_challenge", "The challenge has no valid expires.")
	}
	if m.now().After(expires) {
		return nil, payment.NewProblem(http.StatusPaymentRequired, "payment-expired", "challenge_expired", "The challenge expired at %s.", ch.Expires)
	}
	wantReq, err := m.request(ch.Method, offer)
	if err != nil {
		return nil, err
	}
	switch {
	case ch.Realm != m.realm:
		return nil, payment.NewProblem(http.StatusPaymentRequired, "invalid-challenge", "challenge_mismatch", "The challenge is for realm %q, not %q.", wire.Clip(ch.Realm, 80), m.realm)
	case ch.Request != wantReq:
		return nil, payment.NewProblem(http.StatusPaymentRequired, "invalid-challenge", "challenge_mismatch", "The challenge request is not what this route charges.")
	case ch.Digest != res.BodyDigest:
		return nil, payment.NewProblem(http.StatusPaymentRequired, "invalid-challenge", "challenge_mismatch", "The challenge was issued for another request body.")
	case checkOpaque(ch.Opaque, res) != "":
		return nil, payment.NewProblem(http.StatusPaymentRequired, "invalid-challenge", "challenge_mismatch", "%s", checkOpaque(ch.Opaque, res))
	case ch.Header != "" && !strings.EqualFold(ch.Header, mpp.HeaderAuthorization):
		return nil, payment.NewProblem(http.StatusPaymentRequired, "invalid-challenge", "challenge_mismatch", "The challenge names a credential header this server did not issue.")
	}
	if ch.Method == mpp.MethodStripe {
		return m.verifyStripe(offer, res, &cred)
	}
	return m.verifyEVM(ctx, offer, res, &cred, c.Identity)
}

// verifyEVM verifies an evm credential; id is what IdentifyPayment proved
// of it (nil when not identified), which spares a second signature
// recovery (x402seller.Exact.Proven).
func (m *Charge) verifyEVM(ctx context.Context, offer payment.Offer, res payment.Resource, cred *mpp.Credential, id *payment.PaymentIdentity) (*payment.Authorization, error) {
	var pl mpp.EVMPayload
	if err := wire.DecodeObject(cred.Payload, &pl); err != nil {
		return nil, payment.NewProblem(http.StatusPaymentRequired, "malformed-credential", "invalid_payload", "The evm payload is not valid: %v", err)
	}
	if pl.Type != "authorization" {
		return nil, payment.NewProblem(http.StatusBadRequest, "method-unsupported", "unsupported_scheme", "Credential type %q is not accepted; use authorization.", wire.Clip(pl.Type, 40))
	}
	auth, err := pl.EIP3009Authorization.Parse()
	if err != nil {
		return nil, payment.NewProblem(http.StatusPaymentRequired, "malformed-credential", "invalid_payload", "%v", err)
	}
	_, err = evm.ParseSignature(pl.Signature)
	if err != nil {
		return nil, payment.NewProblem(http.StatusPaymentRequired, "malformed-credential", "invalid_payload", "%v", err)
	}
	ch := cred.Challenge
	if pr := m.exact.CheckTerms(auth, offer.AmountMicroUSD); pr != nil {
		return nil, pr
	}
	if got := fmt.Sprintf("0x%x", auth.Nonce); got != mpp.Nonce(ch.ID, ch.Realm) {
		return nil, payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_nonce",
			"The authorization nonce is not keccak256(challenge id ‖ realm).")
	}
	// validBefore must outlast the work and the settlement.
	if pr := m.exact.CheckWindow(auth, offer); pr != nil {
		return nil, pr
	}
	p, err := m.exact.Wrap(offer, auth, pl.EIP3009Authorization, pl.Signature)
	if err != nil {
		return nil, err
	}
	if !m.exact.Proven(id, auth) {
		if err := m.exact.Check(ctx, p); err != nil {
			return nil, err
		}
	}
	n := m.exact.Network()
	if cred.Source != "" {
		want := fmt.Sprintf("did:pkh:eip155:%d:%s", n.ChainID, auth.From.Hex())
		if !strings.EqualFold(cred.Source, want) {
			return nil, payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "source_mismatch", "The credential source is not the signer.")
		}
	}
	return &payment.Authorization{
		Protocol: payment.ProtocolMPP, Method: mpp.MethodEVM, Payer: auth.From.Hex(), ReservationKey: auth.ReservationKey(n),
		ExtraReservationKeys: []string{"mpp:" + ch.ID},
		AmountMicroUSD:       offer.AmountMicroUSD, Network: n.CAIP2, ValidUntil: x402seller.ValidBefore(auth),
		QuoteID: res.QuoteID, Dev: m.exact.Dev(),
		State: &EVMPayment{ChallengeID: ch.ID, Payment: p},
	}, nil
}

func (m *Charge) verifyStripe(offer payment.Offer, res payment.Resource, cred *mpp.Credential) (*payment.Authorization, error) {
	var pl mpp.StripePayload
	if err := wire.DecodeObject(cred.Payload, &pl); err != nil || pl.SPT == "" || len(pl.SPT) > 512 {
		return nil, payment.NewProblem(http.StatusPaymentRequired, "malformed-credential", "invalid_payload", "The stripe payload must carry an spt.")
	}
	cents := CardCents(offer)
	meta := map[string]string{"challenge_id": cred.Challenge.ID, "offer": offer.ID}
	if res.QuoteID != "" {
		meta["quote_id"] = res.QuoteID
	}
	st := &CardPayment{ChallengeID: cred.Challenge.ID, SPT: pl.SPT, Cents: cents, Metadata: meta}
	st.Receipt.ExternalID = pl.ExternalID
	expires, _ := time.Parse(time.RFC3339, cred.Challenge.Expires)
	return &payment.Authorization{
		Protocol: payment.ProtocolMPPStripe, Method: mpp.MethodStripe, Payer: stripePayer(pl.SPT), ReservationKey: "mpp:" + cred.Challenge.ID,
		AmountMicroUSD: cents * 10000, Network: "stripe", ValidUntil: expires,
		QuoteID: res.QuoteID, State: st,
	}, nil
}
