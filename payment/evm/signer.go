package evm

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// Signer holds a payer's key: it names the address and signs EIP-712
// digests. Implementations may keep the key elsewhere (a hardware wallet, a
// KMS); KeySigner keeps it in memory.
type Signer interface {
	// Address is the account that pays.
	Address() Address
	// SignDigest signs a 32-byte digest and returns r ‖ s ‖ v with
	// v ∈ {27, 28} and a low s.
	SignDigest(ctx context.Context, digest [32]byte) ([]byte, error)
}

// KeySigner is a Signer over an in-memory secp256k1 private key.
// Signatures are deterministic (RFC 6979).
type KeySigner struct {
	key  *secp256k1.PrivateKey
	addr Address
}

// ErrBadKey reports a private key that is not 32 bytes of hex in range.
var ErrBadKey = errors.New("payment: invalid secp256k1 private key")

// NewKeySigner reads a hex private key ("0x" prefix optional).
func NewKeySigner(hexKey string) (*KeySigner, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(hexKey), "0x"))
	if err != nil || len(b) != 32 {
		return nil, ErrBadKey
	}
	var s secp256k1.ModNScalar
	if overflow := s.SetByteSlice(b); overflow || s.IsZero() {
		return nil, ErrBadKey
	}
	return newKeySigner(secp256k1.NewPrivateKey(&s)), nil
}

// GenerateKeySigner makes a fresh random key.
func GenerateKeySigner() (*KeySigner, error) {
	k, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		return nil, err
	}
	return newKeySigner(k), nil
}

func newKeySigner(k *secp256k1.PrivateKey) *KeySigner {
	return &KeySigner{key: k, addr: pubkeyAddress(k.PubKey())}
}

// Address implements Signer.
func (k *KeySigner) Address() Address { return k.addr }

// PrivateKeyHex returns the key as 0x + 64 hex digits (for test wallets;
// never log it).
func (k *KeySigner) PrivateKeyHex() string {
	b := k.key.Serialize()
	return "0x" + hex.EncodeToString(b)
}

// SignDigest implements Signer.
func (k *KeySigner) SignDigest(_ context.Context, digest [32]byte) ([]byte, error) {
	c := ecdsa.SignCompact(k.key, digest[:], false) // [27+recid] ‖ r ‖ s
	sig := make([]byte, 65)
	copy(sig, c[1:])
	sig[64] = c[0]
	return sig, nil
}
