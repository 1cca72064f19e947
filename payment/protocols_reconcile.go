package payment

import "context"

var _ SettlementChecker = (*Protocols)(nil)

// CheckSettlement implements SettlementChecker for orders a crash left in
// the settling state. A dev-mode USDC settlement (x402 or MPP evm) moves no
// funds and cannot fail, so it is reported settled with the same
// deterministic reference Settle gives. Anything else — a facilitator
// settlement or a card capture whose outcome was not recorded — cannot be
// decided from here (no chain access, no stored PaymentIntent), so it stays
// ErrSettlementPending: the order remains settling, visible in the admin
// order views, for the operator to resolve; it is never settled twice and
// never reported failed while funds may have moved.
func (p *Protocols) CheckSettlement(_ context.Context, o *Order) (*Settlement, error) {
	if o.Dev && (o.Protocol == ProtocolX402 || o.Protocol == ProtocolMPP) {
		network := o.Network
		if network == "" {
			network = p.net.CAIP2
		}
		return &Settlement{Reference: devReference(o.ReservationKey), Network: network, Dev: true}, nil
	}
	return nil, ErrSettlementPending
}
