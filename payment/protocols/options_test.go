package protocols_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/protocols"
)

func TestProtocolsPaymentOptions(t *testing.T) {
	p, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true,
		MPPSecret: []byte("0123456789abcdef0123456789abcdef"), Realm: "api.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	got := p.PaymentOptions(payment.Offer{AmountMicroUSD: 120_000, CardMicroUSD: 500_000})
	usdc := "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	payee := p.PayTo().String()
	want := []payment.PaymentOption{
		{Protocol: "x402", Method: "exact", Network: "eip155:8453", Asset: usdc, PayTo: payee, Amount: "120000", AmountMicroUSD: 120_000},
		{Protocol: "mpp", Method: "evm", Network: "eip155:8453", Asset: usdc, PayTo: payee, Amount: "120000", AmountMicroUSD: 120_000},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("options (-want +got):\n%s", diff)
	}
}
