package evm

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/assaykit/assay/internal/eip712"
	"github.com/assaykit/assay/payment/internal/wire"
)

// Address is a 20-byte EVM account or contract address.
type Address [20]byte

// ErrBadAddress reports a string that is not 0x followed by 40 hex digits.
var ErrBadAddress = errors.New("payment: not an EVM address")

// ParseAddress reads "0x" + 40 hex digits in any letter case. The EIP-55
// checksum is not enforced: wire formats echo addresses in whatever case the
// issuer used, and comparisons are made on the bytes.
func ParseAddress(s string) (Address, error) {
	var a Address
	rest, ok := strings.CutPrefix(s, "0x")
	if !ok {
		rest, ok = strings.CutPrefix(s, "0X")
	}
	if !ok || len(rest) != 40 {
		return a, fmt.Errorf("%w: %q", ErrBadAddress, wire.Clip(s, 64))
	}
	if _, err := hex.Decode(a[:], []byte(rest)); err != nil {
		return a, fmt.Errorf("%w: %q", ErrBadAddress, wire.Clip(s, 64))
	}
	return a, nil
}

// Hex returns the lowercase 0x form (used in reservation keys and as
// Authorization.Payer).
func (a Address) Hex() string {
	return "0x" + hex.EncodeToString(a[:])
}

// String returns the EIP-55 mixed-case checksum form.
func (a Address) String() string {
	lower := hex.EncodeToString(a[:])
	h := eip712.Keccak256([]byte(lower))
	out := []byte("0x" + lower)
	for i := range 40 {
		c := lower[i]
		if c < 'a' {
			continue
		}
		nibble := h[i/2]
		if i%2 == 0 {
			nibble >>= 4
		}
		if nibble&0xf >= 8 {
			out[2+i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

// IsZero reports whether a is the zero address.
func (a Address) IsZero() bool { return a == Address{} }

// Network is an EVM network on which USDC is accepted, with the USDC
// contract and its EIP-712 domain. The domain name differs between Base
// ("USD Coin") and Base Sepolia ("USDC"), so it is fixed per network here
// rather than taken from any payload.
type Network struct {
	// CAIP2 is the x402 v2 network id, e.g. "eip155:8453".
	CAIP2 string
	// ChainID is the EIP-155 chain id (MPP methodDetails.chainId).
	ChainID uint64
	// V1Name is the x402 v1 network name, e.g. "base".
	V1Name string
	// USDC is the token contract.
	USDC Address
	// TokenName and TokenVersion are the EIP-712 domain name and version
	// of the token (x402 extra.name / extra.version).
	TokenName    string
	TokenVersion string
	// Decimals of the token (6 for USDC: atomic units are micro-USD).
	Decimals int
}

// Networks returns the networks the package knows: Base mainnet and Base
// Sepolia.
func Networks() []Network {
	return []Network{
		{CAIP2: "eip155:8453", ChainID: 8453, V1Name: "base", USDC: mustAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
			TokenName: "USD Coin", TokenVersion: "2", Decimals: 6},
		{CAIP2: "eip155:84532", ChainID: 84532, V1Name: "base-sepolia", USDC: mustAddress("0x036CbD53842c5426634e7929541eC2318f3dCF7e"),
			TokenName: "USDC", TokenVersion: "2", Decimals: 6},
	}
}

// BaseMainnet returns the Base mainnet entry of Networks.
func BaseMainnet() Network { return Networks()[0] }

// BaseSepolia returns the Base Sepolia entry of Networks.
func BaseSepolia() Network { return Networks()[1] }

// LookupNetwork finds a network by CAIP-2 id ("eip155:8453"), x402 v1 name
// ("base") or decimal chain id ("8453").
func LookupNetwork(name string) (Network, bool) {
	for _, n := range Networks() {
		if name == n.CAIP2 || name == n.V1Name || name == strconv.FormatUint(n.ChainID, 10) {
			return n, true
		}
	}
	return Network{}, false
}

// DomainSeparator is the EIP-712 domain separator of n's USDC contract,
// the domain every EIP-3009 authorization on n is signed in.
func (n Network) DomainSeparator() [32]byte { return n.domain().Separator() }

// domain returns the EIP-712 domain of the network's USDC contract.
func (n Network) domain() eip712.Domain {
	return eip712.Domain{Name: n.TokenName, Version: n.TokenVersion, ChainID: n.ChainID, VerifyingContract: n.USDC}
}

// mustAddress parses a constant of this file; the constants are valid, so
// the zero address is never returned in practice.
func mustAddress(s string) Address {
	a, _ := ParseAddress(s)
	return a
}
