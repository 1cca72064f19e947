package paying

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/x402"
)

// ErrUnpayable reports requirements or a challenge the paying client
// cannot or will not pay (unknown network or asset, malformed fields).
var ErrUnpayable = errors.New("payment: cannot pay these requirements")

// knownUSDC checks that network/asset name USDC on a known network and that
// the EIP-712 domain the issuer announces is the token's real one.
func knownUSDC(network, asset, name, version string) (evm.Network, error) {
	n, ok := evm.LookupNetwork(network)
	if !ok {
		return evm.Network{}, fmt.Errorf("%w: unknown network %q", ErrUnpayable, wire.Clip(network, 40))
	}
	a, err := evm.ParseAddress(asset)
	if err != nil || a != n.USDC {
		return evm.Network{}, fmt.Errorf("%w: asset %q is not USDC on %s", ErrUnpayable, wire.Clip(asset, 60), n.CAIP2)
	}
	if (name != "" && name != n.TokenName) || (version != "" && version != n.TokenVersion) {
		return evm.Network{}, fmt.Errorf("%w: token domain %q/%q is not %q/%q", ErrUnpayable, wire.Clip(name, 40), wire.Clip(version, 10), n.TokenName, n.TokenVersion)
	}
	return n, nil
}

func randomNonce() ([32]byte, error) {
	var n [32]byte
	_, err := rand.Read(n[:])
	return n, err
}

// signExact builds and signs an exact/EVM payload.
func signExact(ctx context.Context, signer evm.Signer, n evm.Network, payTo, amount string, validAfter, validBefore int64, nonce [32]byte) (json.RawMessage, error) {
	to, err := evm.ParseAddress(payTo)
	if err != nil {
		return nil, fmt.Errorf("%w: payTo: %v", ErrUnpayable, err)
	}
	value, err := evm.ParseUint256(amount)
	if err != nil {
		return nil, fmt.Errorf("%w: amount: %v", ErrUnpayable, err)
	}
	a := &evm.TransferAuthorization{From: signer.Address(), To: to, Value: value,
		ValidAfter: big.NewInt(validAfter), ValidBefore: big.NewInt(validBefore), Nonce: nonce}
	sig, err := evm.SignTransfer(ctx, signer, n, a)
	if err != nil {
		return nil, err
	}
	return wire.Marshal(x402.ExactEVMPayload{Signature: evm.FormatSignature(sig), Authorization: a.Wire()})
}

// PayX402V2 signs a payment for req, one of pr.Accepts, as @x402/evm does:
// validAfter 0, validBefore now + maxTimeoutSeconds, a random nonce; the
// requirements and resource are echoed verbatim and the extensions are
// copied. Only exact USDC on a known network is paid.
func PayX402V2(ctx context.Context, signer evm.Signer, pr *x402.PaymentRequired, req *x402.PaymentRequirements, now time.Time) (*x402.PaymentPayload, error) {
	if req.Scheme != x402.SchemeExact {
		return nil, fmt.Errorf("%w: scheme %q", ErrUnpayable, wire.Clip(req.Scheme, 40))
	}
	n, err := knownUSDC(req.Network, req.Asset, req.ExtraString("name"), req.ExtraString("version"))
	if err != nil {
		return nil, err
	}
	nonce, err := randomNonce()
	if err != nil {
		return nil, err
	}
	timeout := req.MaxTimeoutSeconds
	if timeout <= 0 {
		timeout = 60
	}
	payload, err := signExact(ctx, signer, n, req.PayTo, req.Amount, 0, now.Unix()+timeout, nonce)
	if err != nil {
		return nil, err
	}
	accepted, err := req.Raw()
	if err != nil {
		return nil, err
	}
	return &x402.PaymentPayload{X402Version: 2, Resource: pr.Resource, Accepted: accepted, Payload: payload, Extensions: pr.Extensions}, nil
}

// PayX402V1 signs a v1 payment for req as ExactEvmSchemeV1 does
// (validAfter now − 600 s, validBefore now + maxTimeoutSeconds).
func PayX402V1(ctx context.Context, signer evm.Signer, req *x402.PaymentRequirementsV1, now time.Time) (*x402.PaymentPayload, error) {
	if req.Scheme != x402.SchemeExact {
		return nil, fmt.Errorf("%w: scheme %q", ErrUnpayable, wire.Clip(req.Scheme, 40))
	}
	name, _ := req.Extra["name"].(string)
	version, _ := req.Extra["version"].(string)
	n, err := knownUSDC(req.Network, req.Asset, name, version)
	if err != nil {
		return nil, err
	}
	if n.V1Name != req.Network {
		return nil, fmt.Errorf("%w: v1 network %q", ErrUnpayable, wire.Clip(req.Network, 40))
	}
	nonce, err := randomNonce()
	if err != nil {
		return nil, err
	}
	timeout := req.MaxTimeoutSeconds
	if timeout <= 0 {
		timeout = 60
	}
	payload, err := signExact(ctx, signer, n, req.PayTo, req.MaxAmountRequired, max(now.Unix()-600, 0), now.Unix()+timeout, nonce)
	if err != nil {
		return nil, err
	}
	return &x402.PaymentPayload{X402Version: 1, Scheme: x402.SchemeExact, Network: req.Network, Payload: payload}, nil
}

// MPPEVMRequest is the decoded request of an MPP evm charge challenge.
type MPPEVMRequest struct {
	Amount        string `json:"amount"`
	Currency      string `json:"currency"`
	Recipient     string `json:"recipient"`
	Description   string `json:"description,omitempty"`
	ExternalID    string `json:"externalId,omitempty"`
	MethodDetails struct {
		ChainID         uint64   `json:"chainId"`
		CredentialTypes []string `json:"credentialTypes"`
		Decimals        int      `json:"decimals"`
	} `json:"methodDetails"`
}

// PayMPPEVM answers an evm charge challenge as mppx does: an EIP-3009
// authorization with nonce keccak256(id ‖ realm), validAfter 0 and
// validBefore the challenge's expiry, and source did:pkh:eip155:<chain>:<address>.
func PayMPPEVM(ctx context.Context, signer evm.Signer, ch mpp.Challenge, now time.Time) (*mpp.Credential, error) {
	if ch.Method != mpp.MethodEVM || ch.Intent != mpp.IntentCharge {
		return nil, fmt.Errorf("%w: %s/%s", ErrUnpayable, wire.Clip(ch.Method, 20), wire.Clip(ch.Intent, 20))
	}
	var req MPPEVMRequest
	if err := ch.MPPRequest(&req); err != nil {
		return nil, fmt.Errorf("%w: request: %v", ErrUnpayable, err)
	}
	n, ok := evm.LookupNetwork(fmt.Sprint(req.MethodDetails.ChainID))
	if !ok {
		return nil, fmt.Errorf("%w: chain %d", ErrUnpayable, req.MethodDetails.ChainID)
	}
	if _, err := knownUSDC(n.CAIP2, req.Currency, "", ""); err != nil {
		return nil, err
	}
	if !containsString(req.MethodDetails.CredentialTypes, "authorization") {
		return nil, fmt.Errorf("%w: the challenge does not accept EIP-3009 authorizations", ErrUnpayable)
	}
	validBefore := now.Unix() + 300
	if ch.Expires != "" {
		t, err := time.Parse(time.RFC3339, ch.Expires)
		if err != nil {
			return nil, fmt.Errorf("%w: expires %q", ErrUnpayable, wire.Clip(ch.Expires, 40))
		}
		validBefore = t.Unix()
	}
	nonce, _ := evm.ParseBytes32(mpp.Nonce(ch.ID, ch.Realm))
	raw, err := signExact(ctx, signer, n, req.Recipient, req.Amount, 0, validBefore, nonce)
	if err != nil {
		return nil, err
	}
	var ex x402.ExactEVMPayload
	if err := json.Unmarshal(raw, &ex); err != nil {
		return nil, err
	}
	payload, err := wire.Marshal(mpp.EVMPayload{Type: "authorization", EIP3009Authorization: ex.Authorization, Signature: ex.Signature})
	if err != nil {
		return nil, err
	}
	return &mpp.Credential{Challenge: ch, Source: fmt.Sprintf("did:pkh:eip155:%d:%s", n.ChainID, signer.Address().String()), Payload: payload}, nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
