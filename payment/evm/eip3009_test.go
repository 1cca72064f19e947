package evm

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/assaykit/assay/internal/eip712"
)

const (
	vectorKey       = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
	vectorPayer     = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
	vectorPayee     = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	vectorDigest    = "0xd0eb0a8fa179178e8da3f17ff9e62016478672c178ab39df3622efee3141bbfa"
	vectorSignature = "0x2381a7e0982bf923e57c2a3fe4a8b3a62d47d91680eb93932a17b4b845eaf64706c58784700304ef4183fce5590a81453230609beebb5466f35866797e5edf771b"
)

func vectorAuthorization(t testing.TB) *TransferAuthorization {
	t.Helper()
	a, err := EIP3009Authorization{
		From: vectorPayer, To: vectorPayee, Value: "250000", ValidAfter: "0", ValidBefore: "1900000000",
		Nonce: "0x" + strings.Repeat("11", 32),
	}.Parse()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The payments.md §3 vectors: digest, deterministic signature, recovery.
func TestEIP3009Vectors(t *testing.T) {
	signer, err := NewKeySigner(vectorKey)
	if err != nil {
		t.Fatal(err)
	}
	if got := signer.Address().String(); got != vectorPayer {
		t.Fatalf("address = %s, want %s", got, vectorPayer)
	}
	a := vectorAuthorization(t)
	d, err := a.Digest(BaseMainnet())
	if err != nil {
		t.Fatal(err)
	}
	if got := "0x" + hex.EncodeToString(d[:]); got != vectorDigest {
		t.Fatalf("digest = %s, want %s", got, vectorDigest)
	}
	sig, err := SignTransfer(context.Background(), signer, BaseMainnet(), a)
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatSignature(sig); got != vectorSignature {
		t.Fatalf("signature = %s, want %s", got, vectorSignature)
	}
	from, err := RecoverAddress(d, sig)
	if err != nil || from.String() != vectorPayer {
		t.Fatalf("recover = %s, %v", from, err)
	}
	// The same message on Base Sepolia has another domain, so another signer.
	ds, _ := a.Digest(BaseSepolia())
	if other, err := RecoverAddress(ds, sig); err == nil && other == from {
		t.Fatal("signature recovered to the payer under the Base Sepolia domain")
	}
}

func TestRecoverAddressForms(t *testing.T) {
	d, _ := vectorAuthorization(t).Digest(BaseMainnet())
	sig, _ := ParseSignature(vectorSignature)
	want, _ := ParseAddress(vectorPayer)

	v01 := append([]byte(nil), sig...)
	v01[64] -= 27
	if got, err := RecoverAddress(d, v01); err != nil || got != want {
		t.Errorf("v ∈ {0,1}: %s, %v", got, err)
	}

	// High s: s' = n - s with the other parity recovers the same key in
	// naive implementations; it must be refused.
	var s secp256k1.ModNScalar
	s.SetByteSlice(sig[32:64])
	s.Negate()
	hs := s.Bytes()
	high := append([]byte(nil), sig...)
	copy(high[32:64], hs[:])
	high[64] = 27 + (1 - (sig[64] - 27))
	if _, err := RecoverAddress(d, high); !errors.Is(err, ErrHighS) {
		t.Errorf("high s: err = %v, want ErrHighS", err)
	}

	bad := []struct {
		name string
		sig  []byte
	}{
		{"short", sig[:64]},
		{"v = 29", append(append([]byte(nil), sig[:64]...), 29)},
		{"zero s", append(append(append([]byte(nil), sig[:32]...), make([]byte, 32)...), 27)},
		{"zero r", append(append(make([]byte, 32), sig[32:64]...), 27)},
	}
	for _, tc := range bad {
		if _, err := RecoverAddress(d, tc.sig); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	// A flipped bit recovers some other address, never the payer.
	flipped := append([]byte(nil), sig...)
	flipped[5] ^= 1
	if got, err := RecoverAddress(d, flipped); err == nil && got == want {
		t.Error("tampered signature recovered to the payer")
	}
}

func TestParseAuthorizationRejects(t *testing.T) {
	good := EIP3009Authorization{From: vectorPayer, To: vectorPayee, Value: "1", ValidAfter: "0", ValidBefore: "1", Nonce: "0x" + strings.Repeat("ab", 32)}
	if _, err := good.Parse(); err != nil {
		t.Fatal(err)
	}
	mut := []func(*EIP3009Authorization){
		func(a *EIP3009Authorization) { a.From = "0x1234" },
		func(a *EIP3009Authorization) { a.To = "209693Bc6afc0C5328bA36FaF03C514EF312287C" },
		func(a *EIP3009Authorization) { a.Value = "-1" },
		func(a *EIP3009Authorization) { a.Value = "01" },
		func(a *EIP3009Authorization) { a.Value = "1e6" },
		func(a *EIP3009Authorization) { a.Value = "" },
		func(a *EIP3009Authorization) { a.ValidAfter = " 0" },
		func(a *EIP3009Authorization) { a.ValidBefore = strings.Repeat("9", 79) },
		func(a *EIP3009Authorization) {
			a.ValidBefore = "115792089237316195423570985008687907853269984665640564039457584007913129639936"
		},
		func(a *EIP3009Authorization) { a.Nonce = "0x11" },
		func(a *EIP3009Authorization) { a.Nonce = "0x" + strings.Repeat("zz", 32) },
	}
	for i, m := range mut {
		a := good
		m(&a)
		if _, err := a.Parse(); err == nil {
			t.Errorf("mutation %d accepted: %+v", i, a)
		}
	}
}

func TestAddressChecksum(t *testing.T) {
	for _, s := range []string{vectorPayer, vectorPayee, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "0x036CbD53842c5426634e7929541eC2318f3dCF7e"} {
		a, err := ParseAddress(strings.ToLower(s))
		if err != nil {
			t.Fatal(err)
		}
		if a.String() != s {
			t.Errorf("checksum(%s) = %s", s, a.String())
		}
		if a.Hex() != strings.ToLower(s) {
			t.Errorf("Hex = %s", a.Hex())
		}
	}
	for _, s := range []string{"", "0x", "0x123", "0xZZ9693Bc6afc0C5328bA36FaF03C514EF312287C", vectorPayee + "00"} {
		if _, err := ParseAddress(s); err == nil {
			t.Errorf("ParseAddress(%q) accepted", s)
		}
	}
}

func TestLookupNetwork(t *testing.T) {
	for _, name := range []string{"eip155:8453", "base", "8453"} {
		if n, ok := LookupNetwork(name); !ok || n.ChainID != 8453 || n.TokenName != "USD Coin" {
			t.Errorf("%s: %+v %v", name, n, ok)
		}
	}
	for _, name := range []string{"eip155:84532", "base-sepolia", "84532"} {
		if n, ok := LookupNetwork(name); !ok || n.ChainID != 84532 || n.TokenName != "USDC" {
			t.Errorf("%s: %+v %v", name, n, ok)
		}
	}
	if _, ok := LookupNetwork("eip155:1"); ok {
		t.Error("mainnet Ethereum accepted")
	}
}

// TestTransferTypeHash checks the written-out type hash against its type.
func TestTransferTypeHash(t *testing.T) {
	if got, want := transferTypeHash(), eip712.TypeHash(transferType); got != want {
		t.Errorf("transferTypeHash %x, want %x", got, want)
	}
}
