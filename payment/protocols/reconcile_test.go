package protocols_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/assaykit/assay/payment/protocols"
	x402seller "github.com/assaykit/assay/payment/x402/seller"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
)

func TestCheckSettlement(t *testing.T) {
	p, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dev := &payment.Order{Protocol: payment.ProtocolX402, Dev: true, ReservationKey: "x402:8453:0xa:0x11", Network: "eip155:8453"}
	s, err := p.CheckSettlement(ctx, dev)
	if err != nil || !s.Dev || !strings.HasPrefix(s.Reference, x402seller.DevReferencePrefix) {
		t.Fatalf("dev x402: %+v %v", s, err)
	}
	again, _ := p.CheckSettlement(ctx, dev)
	if again.Reference != s.Reference {
		t.Fatal("dev reference is not deterministic")
	}
	for _, o := range []*payment.Order{
		{Protocol: payment.ProtocolX402, Dev: false, ReservationKey: "k"},
		{Protocol: payment.ProtocolMPPStripe, Dev: true, ReservationKey: "k"},
	} {
		if _, err := p.CheckSettlement(ctx, o); !errors.Is(err, payment.ErrSettlementPending) {
			t.Errorf("%+v: %v, want pending (undecidable here)", o, err)
		}
	}
}
