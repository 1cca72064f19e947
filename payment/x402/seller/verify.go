package seller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/x402"
)

// Payment is a verified EIP-3009 payment as a facilitator takes it: the
// x402 PaymentPayload and PaymentRequirements of Version (MPP evm: the
// x402 v2 payload built from its authorization), and the authorization.
// It is the Authorization.State of an x402 payment, carried from Verify to
// Hold and Settle.
type Payment struct {
	Version      int
	Payload      json.RawMessage
	Requirements json.RawMessage
	Auth         *evm.TransferAuthorization
}

// Verify checks an x402 credential against offer and res: the echoed
// requirements and resource (v2) or scheme and network (v1), the
// authorization's recipient, amount and validity window, then the
// Verifier. Failures are *payment.Problem; a verifier that cannot answer is
// any other error.
func (e *Exact) Verify(ctx context.Context, offer payment.Offer, res payment.Resource, c *payment.Credential) (*payment.Authorization, error) {
	d := decodedOf(c)
	if err := d.payloadErr; err != nil {
		return nil, payment.NewProblem(http.StatusBadRequest, "malformed-credential", "invalid_payload", "The payment payload is not valid JSON: %v", err)
	}
	pl := &d.payload
	want := map[string]int{x402.HeaderPaymentSignature: 2, x402.HeaderXPayment: 1}[c.Header]
	if (pl.X402Version != 1 && pl.X402Version != 2) || (want != 0 && pl.X402Version != want) {
		return nil, payment.NewProblem(http.StatusBadRequest, "malformed-credential", "invalid_x402_version",
			"x402Version %d does not match the %s header (want %d).", pl.X402Version, c.Header, want)
	}
	issued := e.Requirements(offer)
	amount := offer.AmountMicroUSD
	var reqRaw json.RawMessage
	var paymentID string
	if pl.X402Version == 2 {
		if len(pl.Accepted) == 0 {
			return nil, payment.NewProblem(http.StatusBadRequest, "malformed-credential", "invalid_payload", "The payment payload does not echo the accepted requirements.")
		}
		var acc x402.PaymentRequirements
		if err := wire.DecodeObject(pl.Accepted, &acc); err != nil {
			return nil, payment.NewProblem(http.StatusBadRequest, "malformed-credential", "invalid_payload", "accepted is not a requirements object: %v", err)
		}
		reqRaw, _ = issued.Raw()
		if pr := e.checkAccepted(&acc, &issued, pl.Accepted, reqRaw); pr != nil {
			return nil, pr
		}
		// The echoed resource names the route the payment was made for;
		// one made for another route (or without a resource) is refused.
		switch want := resourceInfo(offer, res); {
		case pl.Resource == nil || pl.Resource.URL == "":
			return nil, payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_payment_requirements",
				"The payment does not echo the resource it pays for; send the PaymentPayload with the resource of this route's PAYMENT-REQUIRED.")
		case pl.Resource.URL != want.URL:
			return nil, payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_payment_requirements",
				"The payment is for resource %q, not this one.", wire.Clip(pl.Resource.URL, 200))
		case *pl.Resource != want:
			return nil, payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_payment_requirements",
				"The payment's resource does not equal the one this route issues (description or mimeType differ).")
		}
		id, err := x402.PaymentIdentifierOf(pl.Extensions)
		if err != nil {
			return nil, payment.NewProblem(http.StatusBadRequest, "malformed-credential", "invalid_payload", "%v", err)
		}
		if e.requireID && id == "" {
			return nil, payment.NewProblem(http.StatusBadRequest, "malformed-credential", "payment_identifier_required",
				"This route requires the payment-identifier extension with an id.")
		}
		paymentID = id
	} else {
		if pl.Scheme != x402.SchemeExact {
			return nil, payment.NewProblem(http.StatusPaymentRequired, "method-unsupported", "unsupported_scheme", "Scheme %q is not accepted; use exact.", wire.Clip(pl.Scheme, 40))
		}
		if pl.Network != e.net.V1Name {
			return nil, payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_network", "Network %q is not accepted; use %s.", wire.Clip(pl.Network, 40), e.net.V1Name)
		}
		reqRaw, _ = wire.Marshal(e.RequirementsV1(offer, res))
	}
	ex, err := d.exact()
	if err != nil {
		return nil, payment.NewProblem(http.StatusBadRequest, "malformed-credential", "invalid_payload", "The exact payload is not valid: %v", err)
	}
	auth, err := ex.Authorization.Parse()
	if err != nil {
		return nil, payment.NewProblem(http.StatusBadRequest, "malformed-credential", "invalid_payload", "%v", err)
	}
	_, err = evm.ParseSignature(ex.Signature)
	if err != nil {
		return nil, payment.NewProblem(http.StatusBadRequest, "malformed-credential", "invalid_payload", "%v", err)
	}
	if pr := e.CheckTerms(auth, amount); pr != nil {
		return nil, pr
	}
	// validBefore must outlast the work and the settlement.
	if pr := e.CheckWindow(auth, offer); pr != nil {
		return nil, pr
	}
	p := &Payment{Version: pl.X402Version, Payload: c.Raw, Requirements: reqRaw, Auth: auth}
	if !e.Proven(c.Identity, auth) {
		if err := e.check(ctx, e.verifier, p); err != nil {
			return nil, err
		}
	}
	a := &payment.Authorization{
		Protocol: payment.ProtocolX402, Method: x402.SchemeExact, Payer: auth.From.Hex(),
		ReservationKey: auth.ReservationKey(e.net),
		AmountMicroUSD: amount, Network: e.net.CAIP2, ValidUntil: ValidBefore(auth),
		PaymentID: paymentID, Dev: e.dev, State: p,
	}
	if strings.HasPrefix(paymentID, "quo_") {
		a.QuoteID = paymentID
	}
	return a, nil
}

// checkAccepted compares the echoed requirements with the issued ones,
// field by field for precise reasons, then as whole objects (issuedRaw is
// issued's JSON).
func (e *Exact) checkAccepted(acc, issued *x402.PaymentRequirements, accRaw, issuedRaw json.RawMessage) *payment.Problem {
	if acc.Scheme != x402.SchemeExact {
		return payment.NewProblem(http.StatusPaymentRequired, "method-unsupported", "unsupported_scheme", "Scheme %q is not accepted; use exact.", wire.Clip(acc.Scheme, 40))
	}
	if acc.Network != issued.Network {
		return payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_network", "Network %q is not accepted; use %s.", wire.Clip(acc.Network, 40), issued.Network)
	}
	if a, err := evm.ParseAddress(acc.Asset); err != nil || a != e.net.USDC {
		return payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_payment_requirements", "Asset %q is not accepted; pay USDC (%s).", wire.Clip(acc.Asset, 60), issued.Asset)
	}
	if a, err := evm.ParseAddress(acc.PayTo); err != nil || a != e.payTo {
		return payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_exact_evm_payload_recipient_mismatch", "payTo %q is not this seller (%s).", wire.Clip(acc.PayTo, 60), issued.PayTo)
	}
	if acc.Amount != issued.Amount {
		v, err := evm.ParseUint256(acc.Amount)
		if err != nil {
			return payment.NewProblem(http.StatusBadRequest, "malformed-credential", "invalid_payload", "accepted.amount: %v", err)
		}
		want, _ := strconv.ParseInt(issued.Amount, 10, 64)
		return amountProblem("invalid_exact_evm_payload_authorization_value_mismatch", v, want)
	}
	// The same bytes (the common case: a client echoes what it parsed,
	// keys in their order) are the same object; other bytes are compared
	// as JSON values.
	if bytes.Equal(accRaw, issuedRaw) {
		return nil
	}
	var got, want any
	if json.Unmarshal(accRaw, &got) != nil || json.Unmarshal(issuedRaw, &want) != nil || !reflect.DeepEqual(got, want) {
		return payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_payment_requirements",
			"accepted does not equal the requirements this route issues (maxTimeoutSeconds, extra or other fields differ).")
	}
	return nil
}

// amountProblem reports a value that is not exactly the price.
func amountProblem(reason string, got *big.Int, want int64) *payment.Problem {
	typ := "verification-failed"
	if got.Cmp(big.NewInt(want)) < 0 {
		typ = "payment-insufficient"
	}
	return payment.NewProblem(http.StatusPaymentRequired, typ, reason, "The payment is for %s atomic units; this route costs exactly %d.", wire.Clip(got.String(), 40), want)
}

// CheckTerms checks that an authorization pays this seller exactly
// amount (atomic units).
func (e *Exact) CheckTerms(a *evm.TransferAuthorization, amount int64) *payment.Problem {
	if a.To != e.payTo {
		return payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_exact_evm_payload_recipient_mismatch",
			"The authorization pays %s, not %s.", a.To.String(), e.payTo.String())
	}
	if a.Value.Cmp(big.NewInt(amount)) != 0 {
		return amountProblem("invalid_exact_evm_payload_authorization_value_mismatch", a.Value, amount)
	}
	return nil
}

// CheckWindow checks validAfter <= now and that validBefore outlasts the
// offer's work and settlement (ValidFor).
func (e *Exact) CheckWindow(a *evm.TransferAuthorization, offer payment.Offer) *payment.Problem {
	now, margin := e.now(), e.ValidFor(offer)
	if a.ValidAfter.Cmp(big.NewInt(now.Unix())) > 0 {
		return payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_exact_evm_payload_authorization_valid_after",
			"The authorization is not valid before %s.", wire.Clip(a.ValidAfter.String(), 40))
	}
	if a.ValidBefore.Cmp(big.NewInt(now.Add(margin).Unix())) < 0 {
		return payment.NewProblem(http.StatusPaymentRequired, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before",
			"The authorization expires at %s, too soon: this route needs it valid for %s more (the work and the settlement); sign a new one.",
			validBeforeText(a.ValidBefore), margin)
	}
	return nil
}

// validBeforeText renders validBefore as an RFC 3339 time when it is one.
func validBeforeText(v *big.Int) string {
	if v.IsInt64() && v.Int64() > 0 && v.Int64() < 1<<40 {
		return time.Unix(v.Int64(), 0).UTC().Format(time.RFC3339)
	}
	return wire.Clip(v.String(), 40)
}

// ValidBefore is the authorization's validBefore as a time (clamped to
// 2^40 seconds).
func ValidBefore(a *evm.TransferAuthorization) time.Time {
	v := a.ValidBefore
	if !v.IsInt64() || v.Int64() > 1<<40 {
		return time.Unix(1<<40, 0).UTC()
	}
	return time.Unix(v.Int64(), 0).UTC()
}

// Wrap builds the x402 v2 payment of an EIP-3009 authorization presented
// outside x402 (MPP evm), against this route's requirements for offer.
func (e *Exact) Wrap(offer payment.Offer, auth *evm.TransferAuthorization, w evm.EIP3009Authorization, signature string) (*Payment, error) {
	issued := e.Requirements(offer)
	reqRaw, _ := issued.Raw()
	ex, err := wire.Marshal(x402.ExactEVMPayload{Signature: signature, Authorization: w})
	if err != nil {
		return nil, err
	}
	payload, err := wire.Marshal(x402.PaymentPayload{X402Version: 2, Accepted: reqRaw, Payload: ex})
	if err != nil {
		return nil, err
	}
	return &Payment{Version: 2, Payload: payload, Requirements: reqRaw, Auth: auth}, nil
}

// Proven reports whether id, what Processor.IdentifyPayment returned for
// the very credential that carries auth (payment.Credential.Identity, set
// by the Cashier), leaves the verifier nothing to check: the verifier is
// the default LocalVerifier, whose only check beyond the route's own
// (CheckTerms, CheckWindow, the requirements) is the signature, and id
// recovered that signature to auth's from for auth's reservation key. A
// sale then recovers the secp256k1 signature once, not twice.
func (e *Exact) Proven(id *payment.PaymentIdentity, auth *evm.TransferAuthorization) bool {
	return e.localOnly && id != nil && id.Payer == auth.From.Hex() && id.ReservationKey == auth.ReservationKey(e.net)
}

// Check has the Verifier check p (whose route checks passed). A refusal is
// a 402 *payment.Problem with the verifier's reason.
func (e *Exact) Check(ctx context.Context, p *Payment) error { return e.check(ctx, e.verifier, p) }

// check asks v about p. A refusal is a 402 *payment.Problem with the
// verifier's reason.
func (e *Exact) check(ctx context.Context, v x402.Verifier, p *Payment) error {
	vr, err := v.Verify(ctx, p.Version, p.Payload, p.Requirements)
	if err != nil {
		return err
	}
	if vr == nil {
		return errors.New("payment: the verifier returned no answer")
	}
	if !vr.IsValid {
		reason := vr.InvalidReason
		if reason == "" {
			reason = "unexpected_verify_error"
		}
		detail := vr.InvalidMessage
		if detail == "" {
			detail = "The payment was refused: " + reason + "."
		}
		typ := "verification-failed"
		if reason == "invalid_exact_evm_payload_authorization_valid_before" {
			typ = "payment-expired"
		}
		return &payment.Problem{Status: http.StatusPaymentRequired, Type: typ, Reason: reason, Detail: detail}
	}
	if vr.Payer != "" {
		if got, err := evm.ParseAddress(vr.Payer); err != nil || got != p.Auth.From {
			return payment.NewProblem(http.StatusPaymentRequired, "verification-failed", "invalid_exact_evm_payload_signature",
				"The verifier names payer %q, not the authorization's %s.", wire.Clip(vr.Payer, 60), p.Auth.From.String())
		}
	}
	return nil
}
