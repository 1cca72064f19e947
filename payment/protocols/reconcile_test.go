package protocols_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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

// TestNetworkVerdictOutlastsAnOutage: a facilitator that said it lacks
// our network stops paid routes (no challenge), and a /supported probe it
// does not answer afterwards (an outage, a timeout) does not start them
// again: only an answer listing the network does.
func TestNetworkVerdictOutlastsAnOutage(t *testing.T) {
	f := newFixture(t, fixtureOpts{production: true})
	ctx := context.Background()
	f.fac.SetNetworks([]string{"eip155:84532"})
	if err := f.p.Ready(ctx); !errors.Is(err, payment.ErrNetworkUnsupported) {
		t.Fatalf("ready without our network: %v", err)
	}
	if _, err := f.p.Challenge(ctx, testOffer, testRes); !errors.Is(err, payment.ErrNetworkUnsupported) {
		t.Fatalf("challenge without our network: %v", err)
	}
	if err := f.fac.SetOutage(true); err != nil {
		t.Fatal(err)
	}
	f.clock.t = f.clock.t.Add(6 * time.Second) // past the failure's 5 s freshness
	if err := f.p.Ready(ctx); err == nil || errors.Is(err, payment.ErrNetworkUnsupported) || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("ready during an outage: %v", err)
	}
	if _, err := f.p.Challenge(ctx, testOffer, testRes); !errors.Is(err, payment.ErrNetworkUnsupported) {
		t.Fatalf("challenge during an outage after the network was refused: %v, want still unsupported", err)
	}
	if err := f.fac.SetOutage(false); err != nil {
		t.Fatal(err)
	}
	f.fac.SetNetworks(nil)
	f.clock.t = f.clock.t.Add(6 * time.Second)
	if err := f.p.Ready(ctx); err != nil {
		t.Fatalf("ready with our network listed again: %v", err)
	}
	if _, err := f.p.Challenge(ctx, testOffer, testRes); err != nil {
		t.Fatalf("challenge with our network listed again: %v", err)
	}
}
