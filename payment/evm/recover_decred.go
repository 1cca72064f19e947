//go:build !libsecp256k1 || !cgo

package evm

// RecoveryBackend names the implementation of secp256k1 public-key
// recovery this build uses: "decred" (pure Go, the default) or
// "libsecp256k1" (cgo, with the libsecp256k1 build tag).
const RecoveryBackend = "decred"

// recoverPubkey returns the 65-byte uncompressed public key that signed
// digest with the signature rs (r ‖ s, 64 bytes) and recovery id v (0 or
// 1).
func recoverPubkey(digest [32]byte, rs []byte, v byte) ([]byte, error) {
	return recoverDecred(digest, rs, v)
}
