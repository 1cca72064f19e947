// Package stripecard charges card payments made with Stripe Shared Payment
// Tokens, MPP's "stripe" method: it implements mppseller.CardCharger on
// stripe-go. It is its own package so that the seller core, and the stores
// an engine-only application links, do not link stripe-go.
package stripecard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/assaykit/assay/internal/stripeclient"
	"github.com/assaykit/assay/payment"
	mppseller "github.com/assaykit/assay/payment/mpp/seller"
	"github.com/assaykit/assay/payment/x402"
	"github.com/stripe/stripe-go/v85"
)

// Options configures card payments through MPP's stripe method:
// the payer's agent mints a Shared Payment Token (SPT) with its own Stripe
// account and the seller charges it.
type Options struct {
	// SecretKey is the seller's Stripe secret key (sk_live_… or sk_test_…).
	SecretKey string
	// ProfileID is the seller's Stripe business-network profile id, sent
	// as methodDetails.networkId in challenges.
	ProfileID string
	// TokenParam is the PaymentIntent create parameter that carries the
	// SPT (default "shared_payment_granted_token"; Stripe's changelog also
	// names "payment_method_data[shared_payment_granted_token]").
	TokenParam string
	// StripeVersion overrides the Stripe-Version header on SPT calls
	// (default "2026-07-29.preview", what mppx 0.11.0 sends; SPTs are a
	// preview feature). "-" keeps the SDK's pinned version.
	StripeVersion string
	// BackendURL points the client at another API base (a fake in tests).
	BackendURL string
	// HTTPClient is the HTTP client for Stripe calls (nil: stripe-go's).
	HTTPClient *http.Client
	// Client, when set, is used as is (SecretKey, BackendURL and
	// HTTPClient are then ignored).
	Client *stripe.Client
}

// Charger authorises, captures and cancels card payments made with
// Shared Payment Tokens. The hold (payment.Processor.Hold, called by the Cashier
// once the payment is reserved) authorises with manual capture,
// settlement captures and voiding cancels, so a call that fails is never
// charged and a refused (already used) credential never places a hold.
type Charger struct {
	sc         *stripe.Client
	profileID  string
	tokenParam string
	version    string
}

// New returns a charger.
func New(opts *Options) (*Charger, error) {
	if opts == nil {
		return nil, errors.New("stripecard: Stripe options are required")
	}
	if opts.ProfileID == "" {
		return nil, errors.New("stripecard: Stripe profile id (networkId) is required")
	}
	c := &Charger{sc: opts.Client, profileID: opts.ProfileID, tokenParam: opts.TokenParam, version: opts.StripeVersion}
	if c.tokenParam == "" {
		c.tokenParam = "shared_payment_granted_token"
	}
	switch c.version {
	case "":
		c.version = "2026-07-29.preview"
	case "-":
		c.version = ""
	}
	if c.sc == nil {
		if opts.SecretKey == "" {
			return nil, errors.New("stripecard: Stripe secret key is required")
		}
		c.sc = stripeclient.New(opts.SecretKey, stripeclient.Options{HTTPClient: opts.HTTPClient, URL: opts.BackendURL,
			Logger: &stripe.LeveledLogger{Level: stripe.LevelNull}})
	}
	return c, nil
}

// ProfileID returns the seller's business-network profile id.
func (c *Charger) ProfileID() string { return c.profileID }

func (c *Charger) params(p *stripe.Params, idem string) {
	if idem != "" {
		if len(idem) > 255 {
			sum := sha256.Sum256([]byte(idem))
			idem = idem[:180] + "_" + hex.EncodeToString(sum[:])
		}
		p.SetIdempotencyKey(idem)
	}
	if c.version != "" {
		p.Headers = http.Header{"Stripe-Version": {c.version}}
	}
}

// stripeIdempotencyKey is mpp_<challengeId>_<spt>: a retried or
// concurrent credential authorises once.
func stripeIdempotencyKey(challengeID, spt string) string {
	return "mpp_" + challengeID + "_" + spt
}

// Authorize creates and confirms a manual-capture PaymentIntent with the
// SPT and records it in st. Card declines and unusable tokens are
// *Problem; other failures are errors.
//
// The idempotency key makes a second authorisation of the same credential
// return the first PaymentIntent, with the status it had then (Stripe
// replays the first answer, marked Idempotent-Replayed). Such a replay is
// checked against the intent's current state: an intent that an earlier
// attempt cancelled (a failed call is voided) or refunded cannot be
// captured any more, so the credential is refused before any work runs.
func (c *Charger) Authorize(ctx context.Context, st *mppseller.CardPayment) error {
	p := &stripe.PaymentIntentCreateParams{
		Amount:        stripe.Int64(st.Cents),
		Currency:      stripe.String(string(stripe.CurrencyUSD)),
		Confirm:       stripe.Bool(true),
		CaptureMethod: stripe.String(string(stripe.PaymentIntentCaptureMethodManual)),
		AutomaticPaymentMethods: &stripe.PaymentIntentCreateAutomaticPaymentMethodsParams{
			Enabled: stripe.Bool(true), AllowRedirects: stripe.String("never"),
		},
		Metadata: st.Metadata,
	}
	p.AddExtra(c.tokenParam, st.SPT)
	c.params(&p.Params, stripeIdempotencyKey(st.ChallengeID, st.SPT))
	pi, err := c.sc.V1PaymentIntents.Create(ctx, p)
	if err != nil {
		return stripeProblem(err)
	}
	if pi.LastResponse != nil && pi.LastResponse.Header.Get("Idempotent-Replayed") == "true" {
		return c.checkReplayed(ctx, st, pi)
	}
	switch pi.Status {
	case stripe.PaymentIntentStatusRequiresCapture:
	case stripe.PaymentIntentStatusSucceeded:
		st.Captured = true
	default:
		// requires_action, requires_payment_method, processing, canceled…
		// Release whatever was created; the call will not run.
		_ = c.cancel(context.WithoutCancel(ctx), pi.ID)
		return &payment.Problem{Status: http.StatusPaymentRequired, Type: "verification-failed", Reason: "card_" + string(pi.Status),
			Detail: fmt.Sprintf("The card payment was not authorised (PaymentIntent status %s).", pi.Status)}
	}
	if pi.Amount != st.Cents || !strings.EqualFold(string(pi.Currency), "usd") {
		_ = c.cancel(context.WithoutCancel(ctx), pi.ID)
		return &payment.Problem{Status: http.StatusPaymentRequired, Type: "payment-insufficient", Reason: "card_amount_mismatch",
			Detail: fmt.Sprintf("The card authorisation is for %d %s, not %d usd.", pi.Amount, pi.Currency, st.Cents)}
	}
	st.IntentID = pi.ID
	return nil
}

// checkReplayed accepts the PaymentIntent of an earlier authorisation of
// the same credential only if it can still be captured (or was captured
// at once and not refunded). It never cancels it: it may be another
// request's.
func (c *Charger) checkReplayed(ctx context.Context, st *mppseller.CardPayment, replayed *stripe.PaymentIntent) error {
	rp := &stripe.PaymentIntentRetrieveParams{}
	rp.AddExpand("latest_charge")
	c.params(&rp.Params, "")
	pi, err := c.sc.V1PaymentIntents.Retrieve(ctx, replayed.ID, rp)
	if err != nil {
		return stripeProblem(err)
	}
	if pi.Amount != st.Cents || !strings.EqualFold(string(pi.Currency), "usd") {
		return &payment.Problem{Status: http.StatusPaymentRequired, Type: "payment-insufficient", Reason: "card_amount_mismatch",
			Detail: fmt.Sprintf("The card authorisation is for %d %s, not %d usd.", pi.Amount, pi.Currency, st.Cents)}
	}
	refunded := pi.LatestCharge != nil && (pi.LatestCharge.Refunded || pi.LatestCharge.AmountRefunded > 0)
	switch {
	case pi.Status == stripe.PaymentIntentStatusRequiresCapture:
	case pi.Status == stripe.PaymentIntentStatusSucceeded && !refunded:
		st.Captured = true
	default:
		state := string(pi.Status)
		if refunded {
			state = "refunded"
		}
		return &payment.Problem{Status: http.StatusPaymentRequired, Type: "invalid-challenge", Reason: "card_" + state,
			Detail: fmt.Sprintf("This card credential was authorised before and the authorisation was released (PaymentIntent %s); pay again with a fresh challenge.", state)}
	}
	st.IntentID = pi.ID
	return nil
}

// Capture captures an authorised intent (authorising it first when that
// was not done). Timeouts and server errors are ErrSettlementPending (the
// capture is idempotent and can be retried).
func (c *Charger) Capture(ctx context.Context, st *mppseller.CardPayment) (string, error) {
	if st.IntentID == "" {
		if err := c.Authorize(ctx, st); err != nil {
			return "", err
		}
	}
	if st.Captured {
		return st.IntentID, nil
	}
	p := &stripe.PaymentIntentCaptureParams{}
	c.params(&p.Params, "capture_"+st.IntentID)
	pi, err := c.sc.V1PaymentIntents.Capture(ctx, st.IntentID, p)
	if err != nil {
		var se *stripe.Error
		if errors.As(err, &se) && se.HTTPStatusCode >= 400 && se.HTTPStatusCode < 500 && se.HTTPStatusCode != http.StatusTooManyRequests {
			return "", &payment.Problem{Status: http.StatusPaymentRequired, Type: "verification-failed", Reason: "card_capture_failed",
				Detail: "The card payment could not be captured: " + se.Msg}
		}
		return "", &x402.PendingError{Transaction: st.IntentID, Cause: err}
	}
	if pi.Status != stripe.PaymentIntentStatusSucceeded {
		if pi.Status == stripe.PaymentIntentStatusProcessing {
			return "", &x402.PendingError{Transaction: st.IntentID}
		}
		return "", &payment.Problem{Status: http.StatusPaymentRequired, Type: "verification-failed", Reason: "card_" + string(pi.Status),
			Detail: fmt.Sprintf("The card payment was not captured (PaymentIntent status %s).", pi.Status)}
	}
	return pi.ID, nil
}

// cancel releases an uncaptured intent.
func (c *Charger) cancel(ctx context.Context, intentID string) error {
	p := &stripe.PaymentIntentCancelParams{}
	c.params(&p.Params, "cancel_"+intentID)
	_, err := c.sc.V1PaymentIntents.Cancel(ctx, intentID, p)
	return err
}

// Void cancels an authorisation, or refunds an intent that was captured at
// authorisation. Nothing to do when no authorisation was made.
func (c *Charger) Void(ctx context.Context, st *mppseller.CardPayment) error {
	if st.IntentID == "" {
		return nil
	}
	if !st.Captured {
		return c.cancel(ctx, st.IntentID)
	}
	p := &stripe.RefundCreateParams{PaymentIntent: stripe.String(st.IntentID)}
	c.params(&p.Params, "refund_"+st.IntentID)
	_, err := c.sc.V1Refunds.Create(ctx, p)
	return err
}

// stripeProblem turns a Stripe API error into a *Problem when the payer can
// act on it (card declined, bad token), else returns it wrapped.
func stripeProblem(err error) error {
	var se *stripe.Error
	if errors.As(err, &se) {
		switch {
		case se.Type == stripe.ErrorTypeCard || se.HTTPStatusCode == http.StatusPaymentRequired:
			reason := "card_declined"
			if se.Code != "" {
				reason = "card_" + string(se.Code)
			}
			return &payment.Problem{Status: http.StatusPaymentRequired, Type: "verification-failed", Reason: reason,
				Detail: "The card payment was declined: " + se.Msg}
		case se.Type == stripe.ErrorTypeInvalidRequest && se.HTTPStatusCode == http.StatusBadRequest:
			return &payment.Problem{Status: http.StatusPaymentRequired, Type: "verification-failed", Reason: "invalid_payment_token",
				Detail: "The shared payment token was refused: " + se.Msg}
		}
	}
	return fmt.Errorf("stripecard: %w", err)
}

var _ mppseller.CardCharger = (*Charger)(nil)
