package seller

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/mpp"
	x402seller "github.com/assaykit/assay/payment/x402/seller"
)

// Hold places what an MPP payment needs once reserved: a card
// authorisation (a manual-capture PaymentIntent confirmed with the shared
// payment token, unless placed already), or the Confirmer's check of an
// evm payment. Declines and unusable or spent credentials are
// *payment.Problem; a charger or facilitator that cannot answer is any
// other error.
func (m *Charge) Hold(ctx context.Context, a *payment.Authorization) error {
	switch st := a.State.(type) {
	case *CardPayment:
		if st.IntentID == "" {
			return m.cards.Authorize(ctx, st)
		}
	case *EVMPayment:
		return m.exact.Confirm(ctx, st.Payment)
	}
	return nil
}

// Settle settles an MPP payment: an evm payment through the x402
// mechanism's Settler (dev mode: a dev reference, nothing sent), a card
// payment by capturing its hold. The settlement's Meta is the MPP
// receipt.
func (m *Charge) Settle(ctx context.Context, a *payment.Authorization) (*payment.Settlement, error) {
	switch st := a.State.(type) {
	case *EVMPayment:
		ref := x402seller.DevReference(a.ReservationKey)
		if !a.Dev {
			sr, err := m.exact.SettlePayment(ctx, a, st.Payment)
			if err != nil {
				return nil, err
			}
			if !sr.Success {
				return nil, x402seller.Refused(sr)
			}
			ref = sr.Transaction
		}
		return m.EVMReceipt(st.ChallengeID, ref, a.Dev)
	case *CardPayment:
		ref, err := m.cards.Capture(ctx, st)
		if err != nil {
			x402seller.LogSettleError(m.log, a, err)
			return nil, err
		}
		return m.receipt(mpp.MethodStripe, st.ChallengeID, ref, "stripe", 0, st.Receipt.ExternalID, false)
	}
	return nil, fmt.Errorf("payment: authorization of protocol %q was not made by this processor", a.Protocol)
}

// Void cancels a card authorisation (or refunds a card captured at
// once); evm authorisations are left to expire (nothing was moved).
func (m *Charge) Void(ctx context.Context, a *payment.Authorization) error {
	if st, ok := a.State.(*CardPayment); ok {
		return m.cards.Void(ctx, st)
	}
	return nil
}

// CaptureAgain captures a card payment again from its record (the
// capture is idempotent at the charger): the settlement, or an error
// matching payment.ErrSettlementPending while it may still succeed.
func (m *Charge) CaptureAgain(ctx context.Context, p *CardPayment) (*payment.Settlement, error) {
	if m.cards == nil || p == nil {
		return nil, fmt.Errorf("%w: cards are not configured", payment.ErrSettlementPending)
	}
	ref, err := m.cards.Capture(ctx, p)
	if err != nil {
		return nil, err
	}
	return m.receipt(mpp.MethodStripe, p.ChallengeID, ref, "stripe", 0, p.Receipt.ExternalID, false)
}

// EVMReceipt is the settlement of an evm payment of challengeID settled by
// transaction ref.
func (m *Charge) EVMReceipt(challengeID, ref string, dev bool) (*payment.Settlement, error) {
	n := m.exact.Network()
	return m.receipt(mpp.MethodEVM, challengeID, ref, n.CAIP2, n.ChainID, "", dev)
}

// receipt builds the settlement whose Meta is the MPP receipt
// {method, challengeId, reference, status "success", timestamp, chainId
// (evm), externalId (stripe, if sent)}.
func (m *Charge) receipt(method, challengeID, ref, network string, chainID uint64, externalID string, dev bool) (*payment.Settlement, error) {
	r := &mpp.Receipt{Method: method, ChallengeID: challengeID, Reference: ref, Status: "success",
		Timestamp: m.now().UTC().Format(time.RFC3339), ChainID: chainID, ExternalID: externalID}
	meta, err := wire.Marshal(r)
	if err != nil {
		return nil, err
	}
	protocol := payment.ProtocolMPP
	if method == mpp.MethodStripe {
		protocol = payment.ProtocolMPPStripe
	}
	return &payment.Settlement{Reference: ref, Network: network, Protocol: protocol, Meta: json.RawMessage(meta), Dev: dev}, nil
}
