package paymenttest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
)

// The dev wallet is the public Hardhat/Anvil test key #0: it signs real
// EIP-3009 authorisations that a dev-mode server verifies, and must never
// hold funds. Here it answers an x402 v2 challenge by hand, as
// payment.Transport does for a client.
func ExampleDevWallet() {
	w := paymenttest.DevWallet()
	fmt.Println(w.Address() == must(evm.ParseAddress(paymenttest.DevAddress)))

	challenge := &x402.PaymentRequired{
		X402Version: 2,
		Resource:    &x402.ResourceInfo{URL: "https://api.example.com/v1/claims/verify/quick"},
		Accepts: []x402.PaymentRequirements{{
			Scheme: "exact", Network: evm.BaseMainnet().CAIP2, Amount: "20000",
			Asset: evm.BaseMainnet().USDC.String(), PayTo: paymenttest.DevPayee, MaxTimeoutSeconds: 210,
			Extra: map[string]any{"name": "USD Coin", "version": "2"},
		}},
	}
	pl, err := paying.PayX402V2(context.Background(), w, challenge, &challenge.Accepts[0], time.Now())
	if err != nil {
		log.Fatal(err)
	}
	var evm x402.ExactEVMPayload
	if err := json.Unmarshal(pl.Payload, &evm); err != nil {
		log.Fatal(err)
	}
	a := evm.Authorization
	fmt.Println(a.From == paymenttest.DevAddress, a.To == paymenttest.DevPayee, a.Value)
	header, err := x402.EncodeHeader(pl) // the PAYMENT-SIGNATURE header value
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(header) > 0)
	// Output:
	// true
	// true true 20000
	// true
}

func must(a evm.Address, err error) evm.Address {
	if err != nil {
		log.Fatal(err)
	}
	return a
}
