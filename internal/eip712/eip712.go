// Package eip712 hashes EIP-712 typed data: Keccak-256 (the legacy Keccak,
// not FIPS SHA3-256), type hashes, the ABI encoding of atomic values to 32
// byte words, hashStruct, domain separators and the final signing digest.
//
// It covers what EIP-3009 needs (addresses, uint256, bytes32 and strings in
// flat structs) and nothing more: no arrays, no nested structs.
package eip712

import (
	"errors"
	"math/big"

	"golang.org/x/crypto/sha3"
)

// Word is one 32-byte ABI word.
type Word = [32]byte

// Keccak256 returns the legacy Keccak-256 hash of the concatenated parts.
func Keccak256(parts ...[]byte) Word {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	var out Word
	h.Sum(out[:0])
	return out
}

// TypeHash returns keccak256 of an encoded type, e.g.
// "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)".
func TypeHash(encodedType string) Word {
	return Keccak256([]byte(encodedType))
}

// String encodes a string member: the Keccak-256 of its UTF-8 bytes.
func String(s string) Word {
	return Keccak256([]byte(s))
}

// Address encodes a 20-byte address, left-padded to 32 bytes.
func Address(a [20]byte) Word {
	var w Word
	copy(w[12:], a[:])
	return w
}

// Uint64 encodes a small unsigned integer as a 32-byte big-endian word.
func Uint64(v uint64) Word {
	var w Word
	for i := range 8 {
		w[31-i] = byte(v >> (8 * i))
	}
	return w
}

// ErrRange reports an integer that does not fit in uint256.
var ErrRange = errors.New("eip712: integer out of uint256 range")

// Uint256 encodes v as a 32-byte big-endian word. It fails for negative
// values and values of more than 256 bits.
func Uint256(v *big.Int) (Word, error) {
	var w Word
	if v == nil || v.Sign() < 0 || v.BitLen() > 256 {
		return w, ErrRange
	}
	v.FillBytes(w[:])
	return w, nil
}

// HashStruct returns keccak256(typeHash ‖ encoded members).
func HashStruct(typeHash Word, members ...Word) Word {
	parts := make([][]byte, 0, len(members)+1)
	parts = append(parts, typeHash[:])
	for i := range members {
		parts = append(parts, members[i][:])
	}
	return Keccak256(parts...)
}

// DomainTypeHash is the type hash of
// EIP712Domain(string name,string version,uint256 chainId,address verifyingContract).
// It is written out (TestTypeHashes checks it) rather than hashed at
// every use.
func DomainTypeHash() Word {
	return Word{0x8b, 0x73, 0xc3, 0xc6, 0x9b, 0xb8, 0xfe, 0x3d, 0x51, 0x2e, 0xcc, 0x4c, 0xf7, 0x59, 0xcc, 0x79, 0x23, 0x9f, 0x7b, 0x17, 0x9b, 0x0f, 0xfa, 0xca, 0xa9, 0xa7, 0x5d, 0x52, 0x2b, 0x39, 0x40, 0x0f}
}

// Domain is an EIP-712 domain with the four fields token contracts use.
type Domain struct {
	Name              string
	Version           string
	ChainID           uint64
	VerifyingContract [20]byte
}

// Separator returns the domain separator (hashStruct of the domain).
func (d Domain) Separator() Word {
	return HashStruct(DomainTypeHash(), String(d.Name), String(d.Version), Uint64(d.ChainID), Address(d.VerifyingContract))
}

// Digest returns keccak256(0x19 0x01 ‖ domainSeparator ‖ structHash), the
// value that is signed.
func Digest(domainSeparator, structHash Word) Word {
	return Keccak256([]byte{0x19, 0x01}, domainSeparator[:], structHash[:])
}
