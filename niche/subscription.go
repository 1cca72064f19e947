package niche

import (
	"context"
	"errors"
	"time"
)

// Subscription statuses. They are the processor's names (Stripe's
// subscription statuses); a Billing implementation maps its own states onto
// them.
const (
	SubscriptionTrialing          = "trialing"
	SubscriptionActive            = "active"
	SubscriptionPastDue           = "past_due"
	SubscriptionUnpaid            = "unpaid"
	SubscriptionCanceled          = "canceled"
	SubscriptionIncomplete        = "incomplete"
	SubscriptionIncompleteExpired = "incomplete_expired"
	SubscriptionPaused            = "paused"
)

// SubscriptionIDPrefix starts the identifiers of subscriptions in our
// store ("nsub_" + 32 hex). Processor references (Stripe's "sub_…") are kept
// separately, so an identifier never says which processor is used.
const SubscriptionIDPrefix = "nsub_"

// DefaultPastDueGrace is how long a past_due subscription keeps access when
// SubscriptionOptions.PastDueGrace is zero.
const DefaultPastDueGrace = 7 * 24 * time.Hour

// Errors of the subscription service. The server maps them to statuses.
var (
	// ErrBillingUnavailable reports that checkout or the portal cannot be
	// offered: no billing backend, or the backend is misconfigured (for
	// Stripe: the price is not an active monthly USD price) or unreachable
	// while checking it.
	ErrBillingUnavailable = errors.New("niche: subscription billing is not available")
	// ErrBillingFailed reports a processor request that failed (the
	// processor answered an error or could not be reached).
	ErrBillingFailed = errors.New("niche: payment processor request failed")
	// ErrWebhookSignature reports a webhook whose signature is missing,
	// malformed or wrong (a forged delivery).
	ErrWebhookSignature = errors.New("niche: webhook signature is missing or invalid")
	// ErrWebhookStale reports a correctly signed webhook whose timestamp is
	// outside the tolerance (a replayed delivery).
	ErrWebhookStale = errors.New("niche: webhook timestamp is outside the tolerance")
	// ErrWebhookMalformed reports a signed webhook whose payload cannot be
	// understood, or one larger than MaxWebhookBytes.
	ErrWebhookMalformed = errors.New("niche: webhook payload is malformed")
	// ErrCheckoutNotFound reports a checkout or portal session identifier
	// that is malformed, forged or expired.
	ErrCheckoutNotFound = errors.New("niche: checkout session not found")
	// ErrClaimPending reports a checkout whose completion has not reached
	// us yet (the processor's webhook has not arrived): retry shortly.
	ErrClaimPending = errors.New("niche: checkout is not confirmed yet")
	// ErrClaimUsed reports a checkout whose token was already issued (or
	// voided by an operator reissue): tokens are shown once.
	ErrClaimUsed = errors.New("niche: the token for this checkout was already issued")
	// ErrClaimExpired reports a completed checkout whose claim window has
	// passed; an operator can reissue a token.
	ErrClaimExpired = errors.New("niche: the claim window for this checkout has passed")
	// ErrSubscriptionTokenInvalid reports a subscriber token that is
	// malformed, unknown or revoked.
	ErrSubscriptionTokenInvalid = errors.New("niche: subscription token is unknown or revoked")
	// ErrSubscriptionNotFound reports an unknown subscription identifier.
	ErrSubscriptionNotFound = errors.New("niche: subscription not found")
	// ErrSubscriptionState reports an operation that the subscription's
	// current status does not allow (for example resuming a canceled
	// subscription in the development billing portal).
	ErrSubscriptionState = errors.New("niche: operation not allowed in the subscription's current state")
)

// Subscription is one subscriber's subscription as we last learned it from
// the processor.
type Subscription struct {
	// ID is our identifier (SubscriptionIDPrefix + 32 hex).
	ID string
	// Provider is the Billing.Provider that manages it ("stripe", "local").
	Provider string
	// ProviderRef is the processor's subscription id (Stripe "sub_…").
	ProviderRef string
	// CustomerRef is the processor's customer id (Stripe "cus_…"), used to
	// open the billing portal.
	CustomerRef string
	// PriceRef is the processor's price id the subscription was bought at.
	PriceRef string
	// Status is one of the Subscription* status constants.
	Status string
	// CurrentPeriodEnd is when the paid period ends (zero when unknown).
	CurrentPeriodEnd time.Time
	// CancelAtPeriodEnd is true when the subscriber cancelled and keeps
	// access until CurrentPeriodEnd.
	CancelAtPeriodEnd bool
	// PastDueSince is when the subscription last entered past_due (zero
	// unless Status is past_due).
	PastDueSince time.Time
	// SyncedAt is the time of the processor state the row reflects; older
	// states are never applied over newer ones.
	SyncedAt  time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SubscriptionChange is one subscription's new state, produced by a Billing
// implementation from a verified webhook (or, for the development backend,
// from a local confirmation). Empty fields leave the stored value unchanged.
type SubscriptionChange struct {
	// ProviderRef identifies the subscription at the processor. Required.
	ProviderRef string
	// Create allows the change to create the subscription when we do not
	// know it yet. Only a completed checkout that we started sets it: events
	// about other subscriptions of the same processor account are ignored.
	Create bool
	// CheckoutSession is the processor's checkout session id when the change
	// comes from a completed checkout, so that the session can be exchanged
	// once for a subscriber token. SubscriptionService replaces it with its
	// SHA-256 hex before the change reaches the store: stores only ever see
	// the hash.
	CheckoutSession string
	// CustomerRef, PriceRef: processor references ("" keeps the stored one).
	CustomerRef string
	PriceRef    string
	// Status is the new status ("" keeps the stored one; required when
	// creating).
	Status string
	// CurrentPeriodEnd is the end of the paid period (zero keeps the stored
	// one).
	CurrentPeriodEnd time.Time
	// CancelAtPeriodEnd replaces the stored flag when Status is set.
	CancelAtPeriodEnd bool
	// ObservedAt is the time of the processor state this change reflects.
	// A change older than the stored state updates nothing but its checkout
	// link (out-of-order deliveries cannot roll a subscription back).
	ObservedAt time.Time
}

// BillingEvent is a verified processor event and the changes it causes,
// applied atomically by SubscriptionStore.ApplySubscriptionEvent.
type BillingEvent struct {
	// Provider and ID identify the event; an event is applied at most once.
	Provider string
	ID       string
	// Type is the processor's event type, kept for the record.
	Type string
	// ReceivedAt is when we processed it (also the completion time of a
	// checkout it links, which starts the claim window).
	ReceivedAt time.Time
	// Changes may be empty (an event we record but do not act on).
	Changes []SubscriptionChange
}

// SubscriptionStore keeps subscriptions, subscriber tokens (as SHA-256 hex
// hashes only), completed checkouts awaiting their one-time token claim, and
// the ids of processed billing events. It is the union of
// SubscriptionEvents, SubscriptionReader and SubscriberTokens.
// store/nichestore implements it on SQLite and PostgreSQL,
// nichemem.Subscriptions in memory; the conformance suite is nichetest.TestSubscriptionStore.
//
// Every method is safe for concurrent use, also across processes sharing
// one database.
type SubscriptionStore interface {
	SubscriptionEvents
	SubscriptionReader
	SubscriberTokens
}

// SubscriptionEvents applies processor events to subscriptions, each at
// most once.
type SubscriptionEvents interface {
	// SubscriptionEventSeen reports whether the event was already applied. It is
	// an optimisation only: ApplySubscriptionEvent decides.
	SubscriptionEventSeen(ctx context.Context, provider, eventID string) (bool, error)
	// ApplySubscriptionEvent records the event id and applies its changes in one
	// transaction. When the event was already recorded, even by a
	// concurrent call in another process, it changes nothing and returns
	// false. Changes for unknown subscriptions without Create are skipped.
	ApplySubscriptionEvent(ctx context.Context, ev BillingEvent) (applied bool, err error)
	// PruneSubscriptionEvents forgets event ids recorded before t and returns how
	// many were removed.
	PruneSubscriptionEvents(ctx context.Context, before time.Time) (int64, error)
}

// SubscriptionReader reads subscriptions.
type SubscriptionReader interface {
	// Subscription returns the subscription with our id, or
	// ErrSubscriptionNotFound.
	Subscription(ctx context.Context, id string) (*Subscription, error)
	// SubscriptionByRef returns the subscription with the processor's
	// reference, or ErrSubscriptionNotFound.
	SubscriptionByRef(ctx context.Context, provider, providerRef string) (*Subscription, error)
	// SubscriptionByToken returns the subscription a live (unrevoked) token
	// hash belongs to, or ErrSubscriptionTokenInvalid.
	SubscriptionByToken(ctx context.Context, tokenHash string) (*Subscription, error)
}

// SubscriberTokens issues, rotates and revokes subscriber tokens. A
// subscription has at most one live token.
type SubscriberTokens interface {
	// ClaimSubscriptionCheckout exchanges a completed checkout for a token, once: it
	// stores tokenHash for the checkout's subscription, revokes the
	// subscription's other tokens and marks the checkout claimed. It fails
	// with ErrClaimPending when the checkout is unknown, ErrClaimUsed when
	// it was already claimed and ErrClaimExpired when it completed before
	// completedAfter (nothing is changed then).
	ClaimSubscriptionCheckout(ctx context.Context, provider, sessionHash, tokenHash string, at, completedAfter time.Time) (*Subscription, error)
	// ReplaceSubscriberToken stores newHash for the subscription of the live token
	// oldHash and revokes every other token of that subscription (rotation).
	// ErrSubscriptionTokenInvalid when oldHash is unknown or revoked; of two
	// concurrent rotations of one token, one fails that way.
	ReplaceSubscriberToken(ctx context.Context, oldHash, newHash string, at time.Time) (*Subscription, error)
	// IssueSubscriberToken stores newHash for the subscription, revokes its other
	// tokens and voids its unclaimed checkouts (an operator reissue).
	// ErrSubscriptionNotFound for an unknown id.
	IssueSubscriberToken(ctx context.Context, subscriptionID, newHash string, at time.Time) (*Subscription, error)
	// RevokeSubscriberToken revokes a live token, or fails with
	// ErrSubscriptionTokenInvalid.
	RevokeSubscriberToken(ctx context.Context, tokenHash string, at time.Time) error
}

// Entitled reports whether sub grants full access at now, and until when
// access is certain without further news from the processor (zero when
// unknown or not entitled).
//
// Policy: trialing and active entitle. past_due entitles for pastDueGrace
// after the subscription entered past_due (the processor is retrying the
// payment; a negative grace refuses past_due at once). unpaid, canceled,
// incomplete, incomplete_expired, paused and unknown statuses do not.
func (sub *Subscription) Entitled(now time.Time, pastDueGrace time.Duration) (bool, time.Time) {
	if sub == nil {
		return false, time.Time{}
	}
	switch sub.Status {
	case SubscriptionActive, SubscriptionTrialing:
		return true, sub.CurrentPeriodEnd
	case SubscriptionPastDue:
		if pastDueGrace < 0 || sub.PastDueSince.IsZero() {
			return false, time.Time{}
		}
		until := sub.PastDueSince.Add(pastDueGrace)
		if now.Before(until) {
			return true, until
		}
	}
	return false, time.Time{}
}
