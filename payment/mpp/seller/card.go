package seller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/assaykit/assay/payment/mpp"
)

// CardCharger authorises, captures and voids card payments made with
// Shared Payment Tokens (MPP's stripe method). The hold (Charge.Hold,
// called by the Cashier once the payment is reserved) authorises with
// manual capture, settlement captures and voiding cancels, so a call that
// fails is never charged and a refused (already used) credential never
// places a hold. payment/stripecard implements it on Stripe; it lives
// there so that this package links no stripe-go.
type CardCharger interface {
	// ProfileID is the seller's business-network profile id, sent as
	// methodDetails.networkId in challenges.
	ProfileID() string
	// Authorize places the hold and records it in p (IntentID, Captured).
	// Declines and unusable or spent tokens are *payment.Problem.
	Authorize(ctx context.Context, p *CardPayment) error
	// Capture captures the hold (authorising first when that was not
	// done) and returns the settlement reference; a capture that may
	// still succeed is an error matching payment.ErrSettlementPending.
	Capture(ctx context.Context, p *CardPayment) (string, error)
	// Void releases the hold, or refunds a payment captured at
	// authorisation; nothing to do when no hold was placed.
	Void(ctx context.Context, p *CardPayment) error
}

// CardPayment is one card payment, carried from verification to Hold,
// Settle and Void.
type CardPayment struct {
	// ChallengeID and SPT identify the credential (their pair keys the
	// charger's idempotency).
	ChallengeID, SPT string
	// Cents is the amount in US cents.
	Cents int64
	// Metadata is attached to the charge (challenge, offer, quote).
	Metadata map[string]string
	// IntentID is the charger's id of the hold once placed.
	IntentID string
	// Captured is true when the payment succeeded at authorisation (no
	// manual capture).
	Captured bool
	// Receipt is the MPP receipt's stripe part (externalId).
	Receipt mpp.Receipt
}

// stripePayer names the card payer before Stripe is called (so that the
// payment can be reserved before the card is authorised, and an
// idempotent retry can be recognised offline): a hash of the shared
// payment token, stable for retries of one token.
func stripePayer(spt string) string {
	sum := sha256.Sum256([]byte(spt))
	return "stripe:spt_" + hex.EncodeToString(sum[:8])
}
