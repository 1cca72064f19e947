//go:build libsecp256k1 && cgo

package evm

/*
#cgo LDFLAGS: -lsecp256k1
#include <secp256k1.h>
#include <secp256k1_recovery.h>

// assay_recover recovers the uncompressed public key (65 bytes into out)
// of a compact recoverable signature; 1 on success, 0 otherwise.
static int assay_recover(unsigned char *out, const unsigned char *rs, int v, const unsigned char *digest) {
	secp256k1_ecdsa_recoverable_signature sig;
	secp256k1_pubkey pub;
	size_t n = 65;
	if (!secp256k1_ecdsa_recoverable_signature_parse_compact(secp256k1_context_static, &sig, rs, v)) {
		return 0;
	}
	if (!secp256k1_ecdsa_recover(secp256k1_context_static, &pub, &sig, digest)) {
		return 0;
	}
	return secp256k1_ec_pubkey_serialize(secp256k1_context_static, out, &n, &pub, SECP256K1_EC_UNCOMPRESSED) && n == 65;
}
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"
)

// RecoveryBackend names the implementation of secp256k1 public-key
// recovery this build uses: "decred" (pure Go, the default) or
// "libsecp256k1" (cgo, with the libsecp256k1 build tag).
const RecoveryBackend = "libsecp256k1"

// selftest runs libsecp256k1's self test once, as its documentation asks
// before the static context is used; a failed self test aborts the process
// (libsecp256k1's illegal-callback default), never recovers wrongly.
var selftest sync.Once

// recoverPubkey returns the 65-byte uncompressed public key that signed
// digest with the signature rs (r ‖ s, 64 bytes) and recovery id v (0 or
// 1).
func recoverPubkey(digest [32]byte, rs []byte, v byte) ([]byte, error) {
	selftest.Do(func() { C.secp256k1_selftest() })
	if len(rs) != 64 || v > 1 {
		return nil, errors.New("invalid signature")
	}
	out := make([]byte, 65)
	if C.assay_recover((*C.uchar)(unsafe.Pointer(&out[0])), (*C.uchar)(unsafe.Pointer(&rs[0])), C.int(v),
		(*C.uchar)(unsafe.Pointer(&digest[0]))) != 1 {
		return nil, errors.New("invalid signature: no public key recovers from it")
	}
	return out, nil
}
