package niche

import (
	"context"
	"encoding/json"
	"time"
)

// MaxWebhookBytes bounds a webhook payload (Stripe's are far smaller).
const MaxWebhookBytes = 256 << 10

// DefaultWebhookTolerance is how far a webhook's signed timestamp may be
// from our clock, in either direction.
const DefaultWebhookTolerance = 300 * time.Second

// CheckoutSessionPlaceholder in CheckoutParams.SuccessURL is replaced by the
// processor with the checkout session id (Stripe's own placeholder).
const CheckoutSessionPlaceholder = "{CHECKOUT_SESSION_ID}"

// Billing is the payment-processor side of subscriptions: it sells the
// monthly subscription through a hosted checkout, opens the processor's
// billing portal for a subscriber, and turns the processor's signed
// webhooks into SubscriptionChanges. It keeps no state of its own:
// de-duplication, ordering and tokens are SubscriptionService's job.
//
// Implementations: stripebilling.Billing (Stripe) and LocalBilling (a
// development backend that moves no money).
type Billing interface {
	// Provider names the backend ("stripe", "local"). It is stored with
	// every subscription and event id.
	Provider() string
	// Offer checks that checkout can be offered and returns the price.
	// An error means checkout is not available (ErrBillingUnavailable).
	Offer(ctx context.Context) (*BillingOffer, error)
	// CreateCheckout starts a hosted checkout in subscription mode.
	CreateCheckout(ctx context.Context, p CheckoutParams) (*CheckoutSession, error)
	// CreatePortal opens the processor's billing portal for a customer.
	CreatePortal(ctx context.Context, p PortalParams) (*PortalSession, error)
	// WebhookHeader is the request header carrying the webhook signature.
	WebhookHeader() string
	// VerifyWebhook checks a delivery's signature and timestamp and decodes
	// the event envelope. Failures wrap ErrWebhookSignature,
	// ErrWebhookStale or ErrWebhookMalformed.
	VerifyWebhook(ctx context.Context, payload []byte, signature string) (*WebhookEvent, error)
	// ResolveWebhook turns a verified event into subscription changes. It
	// may ask the processor for the current state of the objects involved
	// (so that out-of-order deliveries converge on the truth). Events it
	// does not act on give no changes and no error.
	ResolveWebhook(ctx context.Context, ev *WebhookEvent) ([]SubscriptionChange, error)
}

// BillingOffer is what checkout sells.
type BillingOffer struct {
	// PriceRef is the processor's price id.
	PriceRef string
	// AmountMicroUSD is the monthly price in micro-USD (9.99 → 9_990_000).
	AmountMicroUSD int64
	// Currency is "USD".
	Currency string
	// Interval is "month".
	Interval string
	// Livemode is true when real money moves (Stripe live keys).
	Livemode bool
	// Development is true for a backend that moves no money (LocalBilling).
	Development bool
}

// CheckoutParams are the URLs a checkout needs.
type CheckoutParams struct {
	// SuccessURL is where the processor sends the payer afterwards; it
	// contains CheckoutSessionPlaceholder. It grants nothing by itself.
	SuccessURL string
	// CancelURL is where the processor sends a payer who gives up.
	CancelURL string
	// BaseURL is the absolute URL under which the subscription routes are
	// served (for example "https://api.example.com/niche-discovery"); the
	// development backend builds its own checkout page URL from it.
	BaseURL string
}

// CheckoutSession is a started checkout.
type CheckoutSession struct {
	// ID is the processor's session id; after payment it is exchanged once
	// for the subscriber token (SubscriptionService.Claim).
	ID string
	// URL is the hosted checkout page to send the payer to.
	URL string
	// ExpiresAt is when the session can no longer be paid (zero when
	// unknown).
	ExpiresAt time.Time
}

// PortalParams identify the subscriber whose portal is opened.
type PortalParams struct {
	CustomerRef     string
	SubscriptionRef string
	// ReturnURL is where the portal sends the subscriber back to.
	ReturnURL string
	// BaseURL is as in CheckoutParams.
	BaseURL string
}

// PortalSession is an opened billing portal. Its URL is short-lived and
// single-use: do not log or cache it.
type PortalSession struct {
	URL string
}

// WebhookEvent is a verified webhook envelope.
type WebhookEvent struct {
	// ID is the processor's event id (the de-duplication key).
	ID string
	// Type is the processor's event type, e.g. "invoice.paid".
	Type string
	// Created is when the processor created the event.
	Created time.Time
	// Livemode is true for events about real money.
	Livemode bool
	// Object is the event's data object as sent.
	Object json.RawMessage
}

// WebhookResult reports what a webhook delivery did.
type WebhookResult struct {
	EventID string
	Type    string
	// Duplicate is true when the event had already been processed: the
	// delivery changed nothing.
	Duplicate bool
	// Changes is the number of subscription changes the event carried.
	Changes int
}
