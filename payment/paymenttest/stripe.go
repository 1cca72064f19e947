package paymenttest

import (
	"testing"

	"github.com/assaykit/assay/internal/stripefake"
)

// Shared payment tokens with scripted outcomes at the fake Stripe. Any
// other "spt_…" token authorises normally (requires_capture).
const (
	SPTDeclined       = stripefake.SPTDeclined       // 402 card_error card_declined
	SPTRequiresAction = stripefake.SPTRequiresAction // status requires_action
	SPTInvalid        = stripefake.SPTInvalid        // 400 invalid_request_error
	SPTCaptured       = stripefake.SPTCaptured       // succeeds at once (no manual capture)
)

// Stripe is the one fake of the Stripe API (PaymentIntents for cards and
// the subscription endpoints), on a loopback httptest server. Point
// stripe-go at URL (stripecard.Options.BackendURL).
type Stripe = stripefake.Server

// StripeRequest is one request the fake Stripe received.
type StripeRequest = stripefake.Request

// Intent is the fake's view of a PaymentIntent.
type Intent = stripefake.Intent

// NewStripe starts a fake Stripe, closed at the end of the test.
func NewStripe(t testing.TB) *Stripe {
	s := stripefake.Start()
	t.Cleanup(s.Close)
	return s
}
