package x402

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
)

// ValidBeforeMargin is the validity left on validBefore that verification
// requires (the official facilitator's).
const ValidBeforeMargin = 6 * time.Second

// Verifier checks an x402 "exact" EVM payment — an EIP-3009
// transferWithAuthorization signed by the payer — against the payment
// requirements it answers, as a facilitator's POST /verify does. payload
// is the x402 PaymentPayload and requirements the PaymentRequirements of
// that version (v1 or v2), both as JSON. A refusal is a VerifyResponse with
// IsValid false and an x402 invalidReason; an error means the verifier
// could not decide (the payment was not used and may be presented again).
//
// Facilitator (over HTTP) and LocalVerifier (offline) implement it, and
// VerifyAll chains several. protocols.Processor calls its Verifier for x402 and MPP
// evm payments alike (MPP evm as the x402 v2 payload built from its
// authorization), after its own checks of what the route issues.
type Verifier interface {
	Verify(ctx context.Context, version int, payload, requirements json.RawMessage) (*VerifyResponse, error)
}

// Settler executes a verified x402 "exact" EVM payment, as a
// facilitator's POST /settle does. A refused settlement is a
// SettleResponse with Success false; an outcome that cannot be known yet
// is an error matching ErrSettlementPending (see Facilitator.Settle).
// Facilitator implements it.
type Settler interface {
	Settle(ctx context.Context, version int, payload, requirements json.RawMessage) (*SettleResponse, error)
}

var (
	_ Verifier = (*Facilitator)(nil)
	_ Settler  = (*Facilitator)(nil)
	_ Verifier = (*LocalVerifier)(nil)
)

// LocalVerifier verifies EIP-3009 payments offline, with no facilitator
// and no chain: the requirements must name a network this package knows
// (Base, Base Sepolia) and its USDC contract, whose EIP-712 domain is fixed
// here per network (never taken from the payload); the scheme must be
// exact; the authorization must pay requirements' payTo exactly the
// required amount, be valid now (validAfter ≤ now, validBefore ≥ now + 6 s,
// the official facilitator's margin); and its signature must recover to
// its from address (secp256k1 public-key recovery over the EIP-712
// Keccak-256 digest; high-s signatures are refused). It cannot see the
// payer's balance or whether the nonce was used on-chain: single use is the
// ledger's reservation, and funds are only known at settlement.
//
// The zero value is ready to use and safe for concurrent use.
type LocalVerifier struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Verify implements Verifier.
func (v *LocalVerifier) Verify(_ context.Context, version int, payload, requirements json.RawMessage) (*VerifyResponse, error) {
	now := time.Now
	if v != nil && v.Now != nil {
		now = v.Now
	}
	var req struct {
		Scheme            string `json:"scheme"`
		Network           string `json:"network"`
		Amount            string `json:"amount"`
		MaxAmountRequired string `json:"maxAmountRequired"`
		Asset             string `json:"asset"`
		PayTo             string `json:"payTo"`
	}
	if err := wire.DecodeObject(requirements, &req); err != nil {
		return invalid("invalid_payment_requirements", "", "The payment requirements are not valid JSON: %v", err), nil
	}
	amount := req.Amount
	if version == 1 {
		amount = req.MaxAmountRequired
	}
	var pl struct {
		X402Version int             `json:"x402Version"`
		Payload     json.RawMessage `json:"payload"`
	}
	if err := wire.DecodeObject(payload, &pl); err != nil {
		return invalid("invalid_payload", "", "The payment payload is not valid JSON: %v", err), nil
	}
	var ex ExactEVMPayload
	if err := wire.DecodeObject(pl.Payload, &ex); err != nil {
		return invalid("invalid_payload", "", "The exact payload is not valid: %v", err), nil
	}
	a, err := ex.Authorization.Parse()
	if err != nil {
		return invalid("invalid_payload", "", "%v", err), nil
	}
	payer := a.From.String()
	sig, err := evm.ParseSignature(ex.Signature)
	if err != nil {
		return invalid("invalid_exact_evm_payload_signature", payer, "%v", err), nil
	}
	n, ok := evm.LookupNetwork(req.Network)
	want, werr := evm.ParseUint256(amount)
	payTo, perr := evm.ParseAddress(req.PayTo)
	switch {
	case pl.X402Version != version || (version != 1 && version != 2):
		return invalid("invalid_x402_version", payer, "x402Version %d is not %d.", pl.X402Version, version), nil
	case req.Scheme != SchemeExact:
		return invalid("unsupported_scheme", payer, "Scheme %q is not supported; use exact.", wire.Clip(req.Scheme, 40)), nil
	case !ok || (version == 1 && req.Network != n.V1Name) || (version == 2 && req.Network != n.CAIP2):
		return invalid("invalid_network", payer, "Network %q is not supported.", wire.Clip(req.Network, 40)), nil
	}
	if asset, err := evm.ParseAddress(req.Asset); err != nil || asset != n.USDC {
		return invalid("invalid_payment_requirements", payer, "Asset %q is not USDC on %s.", wire.Clip(req.Asset, 60), n.CAIP2), nil
	}
	switch {
	case werr != nil || perr != nil:
		return invalid("invalid_payment_requirements", payer, "The requirements' amount or payTo is malformed."), nil
	case a.To != payTo:
		return invalid("invalid_exact_evm_payload_recipient_mismatch", payer, "The authorization pays %s, not %s.", a.To.String(), payTo.String()), nil
	case a.Value.Cmp(want) != 0:
		return invalid("invalid_exact_evm_payload_authorization_value_mismatch", payer, "The authorization is for %s, not %s.", wire.Clip(a.Value.String(), 80), want.String()), nil
	}
	t := now()
	if a.ValidAfter.Cmp(big.NewInt(t.Unix())) > 0 {
		return invalid("invalid_exact_evm_payload_authorization_valid_after", payer, "The authorization is not valid before %s.", wire.Clip(a.ValidAfter.String(), 40)), nil
	}
	if a.ValidBefore.Cmp(big.NewInt(t.Add(ValidBeforeMargin).Unix())) < 0 {
		return invalid("invalid_exact_evm_payload_authorization_valid_before", payer, "The authorization expires at %s.", wire.Clip(a.ValidBefore.String(), 40)), nil
	}
	d, err := a.Digest(n)
	if err != nil {
		return invalid("invalid_payload", payer, "%v", err), nil
	}
	from, err := evm.RecoverAddress(d, sig)
	if err != nil {
		return invalid("invalid_exact_evm_payload_signature", payer, "%v", err), nil
	}
	if from != a.From {
		return invalid("invalid_exact_evm_payload_signature", payer, "The signature was not made by %s.", payer), nil
	}
	return &VerifyResponse{IsValid: true, Payer: payer}, nil
}

func invalid(reason, payer, format string, args ...any) *VerifyResponse {
	return &VerifyResponse{InvalidReason: reason, InvalidMessage: fmt.Sprintf(format, args...), Payer: payer}
}

// VerifyAll returns a Verifier that asks each of vs in turn and accepts a
// payment only when every one accepts it: the first refusal or error is
// the answer. VerifyAll of nothing is an error, never an acceptance.
// VerifyAll(&LocalVerifier{}, facilitator) checks the
// signature locally before spending a facilitator call on it (the default
// of protocols.Processor outside dev mode).
func VerifyAll(vs ...Verifier) Verifier { return verifierChain(vs) }

type verifierChain []Verifier

func (c verifierChain) Verify(ctx context.Context, version int, payload, requirements json.RawMessage) (*VerifyResponse, error) {
	if len(c) == 0 {
		return nil, errors.New("payment: VerifyAll of no verifier accepts nothing")
	}
	last := &VerifyResponse{IsValid: true}
	for _, v := range c {
		vr, err := v.Verify(ctx, version, payload, requirements)
		if err != nil {
			return nil, err
		}
		if vr == nil {
			return nil, fmt.Errorf("payment: verifier %T returned no answer", v)
		}
		if !vr.IsValid {
			return vr, nil
		}
		if vr.Payer != "" || last.Payer == "" {
			last = vr
		}
	}
	return last, nil
}
