package evm

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/assaykit/assay/internal/eip712"
	"github.com/assaykit/assay/payment/internal/wire"
)

// TransferAuthorization is an EIP-3009 TransferWithAuthorization message:
// the payer's signed permission for the token contract to move Value from
// From to To between ValidAfter and ValidBefore (unix seconds), once per
// Nonce.
type TransferAuthorization struct {
	From        Address
	To          Address
	Value       *big.Int
	ValidAfter  *big.Int
	ValidBefore *big.Int
	Nonce       [32]byte
}

// transferTypeHash is keccak256 of transferType, written out rather than
// hashed at every use (TestTransferTypeHash checks it).
func transferTypeHash() eip712.Word {
	return eip712.Word{0x7c, 0x7c, 0x6c, 0xdb, 0x67, 0xa1, 0x87, 0x43, 0xf4, 0x9e, 0xc6, 0xfa, 0x9b, 0x35, 0xf5, 0x0d, 0x52, 0xed, 0x05, 0xcb, 0xed, 0x4c, 0xc5, 0x92, 0xe1, 0x3b, 0x44, 0x50, 0x1c, 0x1a, 0x22, 0x67}
}

// transferType is the EIP-712 encoding of the EIP-3009 struct type.
const transferType = "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"

// Digest returns the EIP-712 digest of a on network n (the USDC domain of n).
func (a *TransferAuthorization) Digest(n Network) ([32]byte, error) {
	return a.DigestFor(n.DomainSeparator())
}

// DigestFor returns the EIP-712 digest of a in the domain whose separator
// is given (Network.DomainSeparator): Digest for a caller that verifies
// many authorizations on one network and computes the separator once.
func (a *TransferAuthorization) DigestFor(separator [32]byte) ([32]byte, error) {
	value, err1 := eip712.Uint256(a.Value)
	after, err2 := eip712.Uint256(a.ValidAfter)
	before, err3 := eip712.Uint256(a.ValidBefore)
	if err := errors.Join(err1, err2, err3); err != nil {
		return [32]byte{}, err
	}
	st := eip712.HashStruct(transferTypeHash(), eip712.Address(a.From), eip712.Address(a.To), value, after, before, a.Nonce)
	return eip712.Digest(separator, st), nil
}

// ReservationKey is the single-use key of an EIP-3009 authorization on
// network n: "eip3009:<chainId>:<token>:<from>:<nonce>" (lowercase hex).
// The token contract accepts each (from, nonce) once, so the key is the
// same whichever protocol carries the authorization (x402 v1, x402 v2, MPP
// evm): one signed authorization is one payment, usable once in any of
// them.
func (a *TransferAuthorization) ReservationKey(n Network) string {
	return fmt.Sprintf("eip3009:%d:%s:%s:0x%x", n.ChainID, n.USDC.Hex(), a.From.Hex(), a.Nonce)
}

// EIP3009Authorization is the wire form of TransferAuthorization used by
// x402 ("authorization") and MPP evm: every integer is a decimal string,
// nonce is 0x + 64 hex digits.
type EIP3009Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// Parse converts the wire form, rejecting malformed addresses, integers
// and nonces.
func (w EIP3009Authorization) Parse() (*TransferAuthorization, error) {
	from, err := ParseAddress(w.From)
	if err != nil {
		return nil, fmt.Errorf("authorization.from: %w", err)
	}
	to, err := ParseAddress(w.To)
	if err != nil {
		return nil, fmt.Errorf("authorization.to: %w", err)
	}
	a := &TransferAuthorization{From: from, To: to}
	for _, f := range []struct {
		name string
		s    string
		dst  **big.Int
	}{{"value", w.Value, &a.Value}, {"validAfter", w.ValidAfter, &a.ValidAfter}, {"validBefore", w.ValidBefore, &a.ValidBefore}} {
		v, err := ParseUint256(f.s)
		if err != nil {
			return nil, fmt.Errorf("authorization.%s: %w", f.name, err)
		}
		*f.dst = v
	}
	nonce, err := ParseBytes32(w.Nonce)
	if err != nil {
		return nil, fmt.Errorf("authorization.nonce: %w", err)
	}
	a.Nonce = nonce
	return a, nil
}

// Wire returns the wire form of a (addresses in checksum case).
func (a *TransferAuthorization) Wire() EIP3009Authorization {
	return EIP3009Authorization{
		From: a.From.String(), To: a.To.String(),
		Value: a.Value.String(), ValidAfter: a.ValidAfter.String(), ValidBefore: a.ValidBefore.String(),
		Nonce: "0x" + hex.EncodeToString(a.Nonce[:]),
	}
}

// ParseUint256 reads a canonical decimal string (no sign, no leading zeros
// except "0", at most 78 digits) into a value below 2^256.
func ParseUint256(s string) (*big.Int, error) {
	if s == "" || len(s) > 78 || (len(s) > 1 && s[0] == '0') {
		return nil, fmt.Errorf("not a canonical decimal integer: %q", wire.Clip(s, 80))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return nil, fmt.Errorf("not a canonical decimal integer: %q", wire.Clip(s, 80))
		}
	}
	v, _ := new(big.Int).SetString(s, 10)
	if v.BitLen() > 256 {
		return nil, fmt.Errorf("out of uint256 range: %q", wire.Clip(s, 80))
	}
	return v, nil
}

// ParseBytes32 reads a 0x-prefixed 32-byte hex string.
func ParseBytes32(s string) ([32]byte, error) {
	var out [32]byte
	rest, ok := strings.CutPrefix(s, "0x")
	if !ok || len(rest) != 64 {
		return out, fmt.Errorf("not 0x + 64 hex digits: %q", wire.Clip(s, 80))
	}
	if _, err := hex.Decode(out[:], []byte(rest)); err != nil {
		return out, fmt.Errorf("not 0x + 64 hex digits: %q", wire.Clip(s, 80))
	}
	return out, nil
}

// Signature errors.
var (
	// ErrBadSignature reports a signature that is malformed or does not
	// recover to a public key.
	ErrBadSignature = errors.New("payment: invalid signature")
	// ErrHighS reports a signature whose s is in the upper half of the
	// curve order (malleable; Ethereum rejects it since EIP-2).
	ErrHighS = errors.New("payment: signature s value is not canonical (high s)")
)

// ParseSignature reads "0x" + 130 hex digits (r ‖ s ‖ v).
func ParseSignature(s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, "0x")
	if !ok || len(rest) != 130 {
		return nil, fmt.Errorf("%w: not 0x + 65 bytes", ErrBadSignature)
	}
	b, err := hex.DecodeString(rest)
	if err != nil {
		return nil, fmt.Errorf("%w: not hex", ErrBadSignature)
	}
	return b, nil
}

// RecoverAddress returns the address whose key produced the 65-byte
// signature r ‖ s ‖ v over digest. v may be 27/28 or 0/1; signatures with a
// high s are refused.
func RecoverAddress(digest [32]byte, sig []byte) (Address, error) {
	if len(sig) != 65 {
		return Address{}, fmt.Errorf("%w: %d bytes, want 65", ErrBadSignature, len(sig))
	}
	v := sig[64]
	if v >= 27 {
		v -= 27
	}
	if v > 1 {
		return Address{}, fmt.Errorf("%w: v = %d", ErrBadSignature, sig[64])
	}
	var s secp256k1.ModNScalar
	if overflow := s.SetByteSlice(sig[32:64]); overflow || s.IsZero() {
		return Address{}, fmt.Errorf("%w: s out of range", ErrBadSignature)
	}
	if s.IsOverHalfOrder() {
		return Address{}, ErrHighS
	}
	pub, err := recoverPubkey(digest, sig[:64], v)
	if err != nil {
		return Address{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return uncompressedAddress(pub), nil
}

// recoverDecred is recoverPubkey over decred's secp256k1 (pure Go).
func recoverDecred(digest [32]byte, rs []byte, v byte) ([]byte, error) {
	compact := make([]byte, 65)
	compact[0] = 27 + v
	copy(compact[1:], rs)
	pub, _, err := ecdsa.RecoverCompact(compact, digest[:])
	if err != nil {
		return nil, err
	}
	return pub.SerializeUncompressed(), nil
}

func pubkeyAddress(pub *secp256k1.PublicKey) Address {
	return uncompressedAddress(pub.SerializeUncompressed())
}

// uncompressedAddress is the address of a 65-byte uncompressed public key
// (0x04 ‖ x ‖ y).
func uncompressedAddress(pub []byte) Address {
	h := eip712.Keccak256(pub[1:])
	return Address(h[12:])
}

// SignTransfer signs a with signer on network n and returns the 65-byte
// signature r ‖ s ‖ v (v ∈ {27, 28}).
func SignTransfer(ctx context.Context, signer Signer, n Network, a *TransferAuthorization) ([]byte, error) {
	d, err := a.Digest(n)
	if err != nil {
		return nil, err
	}
	return signer.SignDigest(ctx, d)
}

// FormatSignature returns the 0x hex form of a signature.
func FormatSignature(sig []byte) string { return "0x" + hex.EncodeToString(sig) }
