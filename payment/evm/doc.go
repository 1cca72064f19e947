// Package evm holds the EVM cryptography of USDC payments: addresses, the
// supported networks (Base mainnet and Base Sepolia with their USDC
// contracts), EIP-3009 transferWithAuthorization digests (EIP-712 typed
// data), secp256k1 signature recovery and signing, and the Signer a buyer
// pays with.
//
// It is hand-written over decred's secp256k1 and a small EIP-712 encoder
// (internal/eip712) instead of go-ethereum: only one typed-data struct is
// ever hashed, and go-ethereum would link a whole node into every
// embedder. Errors keep the "payment:" prefix they had before this package
// was split out of payment.
package evm
