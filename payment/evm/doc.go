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
//
// Signature recovery, the costliest step of verifying a payment, has two
// backends (RecoveryBackend): decred's pure Go by default, and, built with
// the libsecp256k1 tag (and cgo), libsecp256k1, the library Bitcoin Core
// keeps, about three times faster here (bench/payment prints both
// figures). Its binding is a few hand-written cgo lines over Debian's
// libsecp256k1-dev (parse a compact recoverable signature, recover,
// serialise) rather than a module: the Go modules that wrap it either
// vendor their own copy of the C library or come with go-ethereum.
// TestRecoveryBackendsAgree checks the tagged build against decred.
package evm
