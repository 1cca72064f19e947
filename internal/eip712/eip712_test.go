package eip712

import (
	"encoding/hex"
	"math/big"
	"testing"
)

func addr(t *testing.T, s string) [20]byte {
	t.Helper()
	b, err := hex.DecodeString(s[2:])
	if err != nil || len(b) != 20 {
		t.Fatalf("bad address %s", s)
	}
	return [20]byte(b)
}

// Vectors from payments.md §3 (cross-checked with viem).
func TestVectors(t *testing.T) {
	tests := []struct {
		name string
		got  Word
		want string
	}{
		{"domain typehash", DomainTypeHash(), "0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f"},
		{"transfer typehash", TypeHash("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"), "0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267"},
		{"base domain", Domain{"USD Coin", "2", 8453, addr(t, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")}.Separator(), "0x02fa7265e7c5d81118673727957699e4d68f74cd74b7db77da710fe8a2c7834f"},
		{"base sepolia domain", Domain{"USDC", "2", 84532, addr(t, "0x036CbD53842c5426634e7929541eC2318f3dCF7e")}.Separator(), "0x71f17a3b2ff373b803d70a5a07c046c1a2bc8e89c09ef722fcb047abe94c9818"},
		{"keccak abc‖realm", Keccak256([]byte("abc"), []byte("api.example.com")), "0xe1adfd8f031bdf83646eee741bda35015ff27366153d3ec246a28e6d3960b516"},
		{"keccak empty", Keccak256(), "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"},
	}
	for _, tc := range tests {
		if got := "0x" + hex.EncodeToString(tc.got[:]); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestUint256Range(t *testing.T) {
	max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	if _, err := Uint256(max); err != nil {
		t.Errorf("2^256-1: %v", err)
	}
	for _, v := range []*big.Int{nil, big.NewInt(-1), new(big.Int).Lsh(big.NewInt(1), 256)} {
		if _, err := Uint256(v); err == nil {
			t.Errorf("Uint256(%v) accepted", v)
		}
	}
	w, _ := Uint256(big.NewInt(250000))
	if w != Uint64(250000) {
		t.Errorf("Uint256 and Uint64 disagree")
	}
}

// TestTypeHashes checks the written-out type hashes against their types.
func TestTypeHashes(t *testing.T) {
	if got, want := DomainTypeHash(), TypeHash("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"); got != want {
		t.Errorf("DomainTypeHash %x, want %x", got, want)
	}
}
