package paymenttest

import (
	"testing"

	"github.com/assaykit/assay/payment/evm"
)

// DevPrivateKey is the public Hardhat/Anvil test key #0. Everyone knows it:
// use it only where no real funds exist.
const DevPrivateKey = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

// DevAddress is the address of DevPrivateKey.
const DevAddress = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"

// DevPayee is the payee address used in the payments reference examples.
const DevPayee = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

// DevWallet returns a signer for DevPrivateKey.
func DevWallet() *evm.KeySigner {
	s, err := evm.NewKeySigner(DevPrivateKey)
	if err != nil {
		// The constant is a valid key; this cannot happen.
		return nil
	}
	return s
}

// NewWallet returns a signer over a fresh random key.
func NewWallet(t testing.TB) *evm.KeySigner {
	t.Helper()
	s, err := evm.GenerateKeySigner()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
