package evm

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// TestRecoveryBackendsAgree checks this build's recovery (RecoveryBackend:
// decred, or libsecp256k1 with the libsecp256k1 build tag) against decred
// on signatures of random keys and digests, with both recovery ids, and on
// signatures no key made. .ci/run runs it with both backends.
func TestRecoveryBackendsAgree(t *testing.T) {
	t.Logf("recovery backend: %s", RecoveryBackend)
	rng := rand.New(rand.NewChaCha8([32]byte{'r', 'e', 'c', 'o', 'v', 'e', 'r'}))
	random := func(b []byte) {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	for i := range 200 {
		var seed, digest [32]byte
		random(seed[:])
		random(digest[:])
		var k secp256k1.ModNScalar
		k.SetBytes(&seed)
		key := secp256k1.NewPrivateKey(&k)
		c := ecdsa.SignCompact(key, digest[:], false) // [27+v] ‖ r ‖ s
		rs, v := c[1:], c[0]-27
		pub, err := recoverPubkey(digest, rs, v)
		if err != nil || !bytes.Equal(pub, key.PubKey().SerializeUncompressed()) {
			t.Fatalf("signature %d: recovered %x, %v; want the signer's key", i, pub, err)
		}
		sig := append(append([]byte(nil), rs...), 27+v)
		if a, err := RecoverAddress(digest, sig); err != nil || a != pubkeyAddress(key.PubKey()) {
			t.Fatalf("signature %d: RecoverAddress %s, %v", i, a, err)
		}
		// The other recovery id: another key, or none; as decred says.
		other, err := recoverPubkey(digest, rs, 1-v)
		want, werr := recoverDecred(digest, rs, 1-v)
		if (err == nil) != (werr == nil) || !bytes.Equal(other, want) {
			t.Fatalf("signature %d, other recovery id: %x, %v; decred %x, %v", i, other, err, want, werr)
		}
		// A random r ‖ s: an x that is no point of the curve, or a key
		// nobody holds; as decred says.
		junk := make([]byte, 64)
		random(junk)
		got, err := recoverPubkey(digest, junk, v)
		want, werr = recoverDecred(digest, junk, v)
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("signature %d, random r and s: %x, %v; decred %x, %v", i, got, err, want, werr)
		}
	}
	// r = 0 and r ≥ n are refused by both.
	for _, r := range [][]byte{make([]byte, 32), bytes.Repeat([]byte{0xff}, 32)} {
		rs := append(append([]byte(nil), r...), bytes.Repeat([]byte{1}, 32)...)
		if pub, err := recoverPubkey([32]byte{1}, rs, 0); err == nil {
			t.Errorf("r = %x: recovered %x", r[:4], pub)
		}
	}
}
