package niche

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/assaykit/assay/internal/ids"
)

// DefaultClaimWindow is how long after a completed checkout its token can be
// claimed when SubscriptionOptions.ClaimWindow is zero.
const DefaultClaimWindow = 7 * 24 * time.Hour

// DefaultEventRetention is how long processed webhook event ids are kept for
// de-duplication when SubscriptionOptions.EventRetention is zero (Stripe
// retries a delivery for up to three days).
const DefaultEventRetention = 30 * 24 * time.Hour

// SubscriptionOptions configure NewSubscriptionService. A nil *Options means
// defaults.
type SubscriptionOptions struct {
	// Logger receives webhook outcomes and failures. Nil discards them.
	Logger *slog.Logger
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// PastDueGrace is how long a past_due subscription keeps access after
	// it entered past_due. Zero means DefaultPastDueGrace (7 days); a
	// negative value refuses past_due at once.
	PastDueGrace time.Duration
	// ClaimWindow is how long after a completed checkout its token can be
	// claimed. Zero means DefaultClaimWindow (7 days).
	ClaimWindow time.Duration
	// EventRetention is how long processed event ids are kept. Zero means
	// DefaultEventRetention (30 days).
	EventRetention time.Duration
	// Sessions keeps the sessions of subscribers signed in with a browser
	// (SignIn). Nil means no sign-in (ErrSessionsUnavailable).
	Sessions SubscriberSessions
	// SessionTTL is how long a session lasts. Zero means
	// DefaultSessionTTL (30 days).
	SessionTTL time.Duration
}

// SubscriptionService sells and checks niche-discovery subscriptions. It
// implements Subscribers for the catalogue: "Authorization: Bearer nd_…"
// grants full access while the token's subscription is entitled.
//
// Where the interface documents leave the choice, it chooses:
//
//   - Access is granted only from verified, de-duplicated processor
//     webhooks, never from the checkout's success redirect. Each webhook is
//     signature-checked with a ±300 s tolerance, bounded to 256 KiB, applied
//     at most once per event id (also under concurrent deliveries to several
//     instances), and the Stripe backend re-reads the subscription from
//     Stripe, so deliveries in any order converge on Stripe's current state;
//     a state older than the stored one never overwrites it.
//   - Entitlement: trialing and active grant access; past_due keeps access
//     for a grace period (PastDueGrace, 7 days by default) counted from when
//     the subscription entered past_due, while the processor retries the
//     payment; unpaid, canceled, incomplete, incomplete_expired and paused
//     do not (see Subscription.Entitled).
//   - Tokens are "nd_" + 32 random bytes (base64url), never derived from the
//     subscription and never e-mailed. Only their SHA-256 is stored. A
//     token is shown exactly once: the payer exchanges the checkout session
//     id for it (Claim) after the webhook confirmed the checkout, within
//     ClaimWindow; a second claim fails. The subscriber can rotate it (the
//     old one stops working at once) or revoke it; an operator can reissue
//     one (which also voids an unclaimed checkout). A subscription has at
//     most one live token.
//   - A token stays valid while the subscription is inactive (so a past_due
//     subscriber can open the billing portal to fix the payment); Active
//     refuses it until the subscription is entitled again.
//   - The status endpoint reports the caller's own subscription when a
//     token is given (Lookup).
type SubscriptionService struct {
	store      SubscriptionStore
	billing    Billing
	log        *slog.Logger
	now        func() time.Time
	grace      time.Duration
	window     time.Duration
	retention  time.Duration
	lastPrune  atomic.Int64
	sessions   SubscriberSessions
	sessionTTL time.Duration
}

// NewSubscriptionService returns a service over store. billing may be nil:
// tokens are then still checked, but checkout, portal and webhooks answer
// ErrBillingUnavailable.
func NewSubscriptionService(store SubscriptionStore, billing Billing, opts *SubscriptionOptions) (*SubscriptionService, error) {
	if store == nil {
		return nil, errors.New("niche: NewSubscriptionService: nil store")
	}
	var o SubscriptionOptions
	if opts != nil {
		o = *opts
	}
	s := &SubscriptionService{store: store, billing: billing, log: o.Logger, now: o.Now,
		grace: o.PastDueGrace, window: o.ClaimWindow, retention: o.EventRetention, sessions: o.Sessions, sessionTTL: o.SessionTTL}
	if s.sessionTTL <= 0 {
		s.sessionTTL = DefaultSessionTTL
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.grace == 0 {
		s.grace = DefaultPastDueGrace
	}
	if s.window <= 0 {
		s.window = DefaultClaimWindow
	}
	if s.retention <= 0 {
		s.retention = DefaultEventRetention
	}
	return s, nil
}

// Billing returns the billing backend (nil when none is configured).
func (s *SubscriptionService) Billing() Billing { return s.billing }

// Active implements Subscribers: it returns the subscriber identified by
// token when the token is live and its subscription is entitled, and
// ErrNotSubscribed otherwise (malformed, unknown, revoked or rotated-out
// token; inactive subscription).
func (s *SubscriptionService) Active(ctx context.Context, token string) (*Subscriber, error) {
	if !ValidSubscriberToken(token) {
		return nil, ErrNotSubscribed
	}
	sub, err := s.store.SubscriptionByToken(ctx, ids.Hash(token))
	if errors.Is(err, ErrSubscriptionTokenInvalid) {
		return nil, ErrNotSubscribed
	}
	if err != nil {
		return nil, err
	}
	return s.entitled(sub)
}

// entitled returns sub's subscriber when sub grants full access now, else
// ErrNotSubscribed.
func (s *SubscriptionService) entitled(sub *Subscription) (*Subscriber, error) {
	if ok, _ := s.Entitlement(sub); !ok {
		return nil, ErrNotSubscribed
	}
	return &Subscriber{ID: sub.ID, Status: sub.Status, CurrentPeriodEnd: sub.CurrentPeriodEnd}, nil
}

// Entitlement applies the service's policy and clock to sub (see
// Subscription.Entitled).
func (s *SubscriptionService) Entitlement(sub *Subscription) (bool, time.Time) {
	return sub.Entitled(s.now(), s.grace)
}

// SubscriberStatus is a caller's own subscription status.
type SubscriberStatus struct {
	// TokenValid is false for a malformed, unknown or revoked token.
	TokenValid bool
	// Entitled reports whether the token grants full access now.
	Entitled bool
	// EntitledUntil is when access is certain to last until (the period
	// end, or the end of the past_due grace); zero when unknown.
	EntitledUntil time.Time
	// Subscription is nil when the token is not valid.
	Subscription *Subscription
}

// Lookup returns the status of the token's subscription. An invalid token
// is a status (TokenValid false), not an error.
func (s *SubscriptionService) Lookup(ctx context.Context, token string) (*SubscriberStatus, error) {
	if !ValidSubscriberToken(token) {
		return &SubscriberStatus{}, nil
	}
	sub, err := s.store.SubscriptionByToken(ctx, ids.Hash(token))
	if errors.Is(err, ErrSubscriptionTokenInvalid) {
		return &SubscriberStatus{}, nil
	}
	if err != nil {
		return nil, err
	}
	ok, until := s.Entitlement(sub)
	return &SubscriberStatus{TokenValid: true, Entitled: ok, EntitledUntil: until, Subscription: sub}, nil
}

// Offer returns what checkout sells, or an error wrapping
// ErrBillingUnavailable.
func (s *SubscriptionService) Offer(ctx context.Context) (*BillingOffer, error) {
	if s.billing == nil {
		return nil, ErrBillingUnavailable
	}
	o, err := s.billing.Offer(ctx)
	if err != nil {
		if errors.Is(err, ErrBillingUnavailable) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrBillingUnavailable, err)
	}
	return o, nil
}

// Checkout starts a checkout for a new subscription. It fails with
// ErrBillingUnavailable when the offer cannot be checked and with
// ErrBillingFailed when the processor refuses the session.
func (s *SubscriptionService) Checkout(ctx context.Context, p CheckoutParams) (*CheckoutSession, *BillingOffer, error) {
	offer, err := s.Offer(ctx)
	if err != nil {
		return nil, nil, err
	}
	cs, err := s.billing.CreateCheckout(ctx, p)
	if err != nil {
		return nil, nil, billingErr(err)
	}
	return cs, offer, nil
}

// Portal opens the billing portal for the subscriber holding token. The
// subscription need not be entitled (a past_due subscriber fixes the
// payment there), but the token must be live.
func (s *SubscriptionService) Portal(ctx context.Context, token string, p PortalParams) (*PortalSession, error) {
	if !ValidSubscriberToken(token) {
		return nil, ErrSubscriptionTokenInvalid
	}
	sub, err := s.store.SubscriptionByToken(ctx, ids.Hash(token))
	if err != nil {
		return nil, err
	}
	return s.portal(ctx, sub, p)
}

// portal opens the billing portal for sub.
func (s *SubscriptionService) portal(ctx context.Context, sub *Subscription, p PortalParams) (*PortalSession, error) {
	if s.billing == nil || s.billing.Provider() != sub.Provider {
		return nil, fmt.Errorf("%w: the subscription is managed by billing backend %q", ErrBillingUnavailable, sub.Provider)
	}
	p.CustomerRef, p.SubscriptionRef = sub.CustomerRef, sub.ProviderRef
	ps, err := s.billing.CreatePortal(ctx, p)
	if err != nil {
		return nil, billingErr(err)
	}
	return ps, nil
}

// HandleWebhook verifies a processor webhook, and applies the subscription
// changes it carries once per event id. A forged, stale or malformed
// delivery fails (ErrWebhookSignature, ErrWebhookStale,
// ErrWebhookMalformed) and changes nothing; a duplicate succeeds with
// Duplicate set and changes nothing; a processor failure while resolving
// the event fails with ErrBillingFailed and records nothing, so the
// processor's retry can succeed.
func (s *SubscriptionService) HandleWebhook(ctx context.Context, payload []byte, signature string) (*WebhookResult, error) {
	if s.billing == nil {
		return nil, ErrBillingUnavailable
	}
	if len(payload) > MaxWebhookBytes {
		return nil, fmt.Errorf("%w: payload of %d bytes exceeds %d", ErrWebhookMalformed, len(payload), MaxWebhookBytes)
	}
	ev, err := s.billing.VerifyWebhook(ctx, payload, signature)
	if err != nil {
		return nil, err
	}
	if ev.ID == "" || len(ev.ID) > 255 {
		return nil, fmt.Errorf("%w: event id missing or too long", ErrWebhookMalformed)
	}
	provider := s.billing.Provider()
	res := &WebhookResult{EventID: ev.ID, Type: ev.Type}
	seen, err := s.store.SubscriptionEventSeen(ctx, provider, ev.ID)
	if err != nil {
		return nil, err
	}
	if seen {
		res.Duplicate = true
		s.log.InfoContext(ctx, "subscription webhook: duplicate event ignored", "event", ev.ID, "type", ev.Type)
		return res, nil
	}
	changes, err := s.billing.ResolveWebhook(ctx, ev)
	if err != nil {
		return nil, billingErr(err)
	}
	valid := changes[:0:0]
	for _, c := range changes {
		if c.ProviderRef == "" || (c.Create && c.Status == "") {
			s.log.WarnContext(ctx, "subscription webhook: incomplete change skipped", "event", ev.ID, "ref", c.ProviderRef)
			continue
		}
		if c.ObservedAt.IsZero() {
			c.ObservedAt = ev.Created
		}
		if c.CheckoutSession != "" {
			c.CheckoutSession = ids.Hash(c.CheckoutSession)
		}
		valid = append(valid, c)
	}
	applied, err := s.store.ApplySubscriptionEvent(ctx, BillingEvent{
		Provider: provider, ID: ev.ID, Type: ev.Type, ReceivedAt: s.now(), Changes: valid,
	})
	if err != nil {
		return nil, err
	}
	res.Duplicate = !applied
	res.Changes = len(valid)
	s.log.InfoContext(ctx, "subscription webhook processed", "event", ev.ID, "type", ev.Type,
		"changes", len(valid), "duplicate", res.Duplicate)
	s.maybePrune(ctx)
	return res, nil
}

// maybePrune forgets old event ids, at most once an hour per process.
func (s *SubscriptionService) maybePrune(ctx context.Context) {
	now := s.now()
	last := s.lastPrune.Load()
	if now.UnixMicro()-last < time.Hour.Microseconds() || !s.lastPrune.CompareAndSwap(last, now.UnixMicro()) {
		return
	}
	if n, err := s.store.PruneSubscriptionEvents(ctx, now.Add(-s.retention)); err != nil {
		s.log.WarnContext(ctx, "subscription webhook: pruning event ids failed", "err", err)
	} else if n > 0 {
		s.log.InfoContext(ctx, "subscription webhook: pruned old event ids", "count", n)
	}
}

// IssuedToken is a subscriber token shown once, with its subscription.
type IssuedToken struct {
	Token        string
	Subscription *Subscription
}

// Claim exchanges a completed checkout's session id for the subscriber
// token, exactly once. It fails with ErrCheckoutNotFound for a malformed
// id, ErrClaimPending until the processor's webhook confirmed the checkout,
// ErrClaimUsed after the first claim and ErrClaimExpired after ClaimWindow.
func (s *SubscriptionService) Claim(ctx context.Context, sessionID string) (*IssuedToken, error) {
	if s.billing == nil {
		return nil, ErrBillingUnavailable
	}
	if !validSessionID(sessionID) {
		return nil, ErrCheckoutNotFound
	}
	tok := ids.Token(ids.Subscriber)
	now := s.now()
	sub, err := s.store.ClaimSubscriptionCheckout(ctx, s.billing.Provider(), ids.Hash(sessionID), ids.Hash(tok), now, now.Add(-s.window))
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "subscriber token issued for checkout", "subscription", sub.ID)
	return &IssuedToken{Token: tok, Subscription: sub}, nil
}

// Rotate issues a new token for the subscription of token; token stops
// working at once. ErrSubscriptionTokenInvalid when token is not live.
func (s *SubscriptionService) Rotate(ctx context.Context, token string) (*IssuedToken, error) {
	if !ValidSubscriberToken(token) {
		return nil, ErrSubscriptionTokenInvalid
	}
	tok := ids.Token(ids.Subscriber)
	sub, err := s.store.ReplaceSubscriberToken(ctx, ids.Hash(token), ids.Hash(tok), s.now())
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "subscriber token rotated", "subscription", sub.ID)
	return &IssuedToken{Token: tok, Subscription: sub}, nil
}

// Revoke makes token stop working. ErrSubscriptionTokenInvalid when it is
// not live.
func (s *SubscriptionService) Revoke(ctx context.Context, token string) error {
	if !ValidSubscriberToken(token) {
		return ErrSubscriptionTokenInvalid
	}
	return s.store.RevokeSubscriberToken(ctx, ids.Hash(token), s.now())
}

// Reissue issues a new token for a subscription (operator recovery: lost
// token, or a checkout claimed by someone else). Every other token of the
// subscription and any unclaimed checkout stop working.
func (s *SubscriptionService) Reissue(ctx context.Context, subscriptionID string) (*IssuedToken, error) {
	if !ids.Valid(SubscriptionIDPrefix, subscriptionID) {
		return nil, ErrSubscriptionNotFound
	}
	tok := ids.Token(ids.Subscriber)
	sub, err := s.store.IssueSubscriberToken(ctx, subscriptionID, ids.Hash(tok), s.now())
	if err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "subscriber token reissued by operator", "subscription", sub.ID)
	return &IssuedToken{Token: tok, Subscription: sub}, nil
}

// Subscription returns a subscription by our id (operators).
func (s *SubscriptionService) Subscription(ctx context.Context, id string) (*Subscription, error) {
	if !ids.Valid(SubscriptionIDPrefix, id) {
		return nil, ErrSubscriptionNotFound
	}
	return s.store.Subscription(ctx, id)
}

// ValidSubscriberToken reports whether token has the form of a subscriber
// token: "nd_" and 43 base64url characters (32 bytes).
func ValidSubscriberToken(token string) bool {
	return ids.ValidToken(ids.Subscriber, token)
}

// validSessionID accepts processor session ids: 1..255 characters of
// [A-Za-z0-9_].
func validSessionID(id string) bool {
	if id == "" || len(id) > 255 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// billingErr wraps a processor error in ErrBillingFailed unless it already
// carries a service sentinel.
func billingErr(err error) error {
	for _, known := range []error{ErrBillingUnavailable, ErrBillingFailed, ErrCheckoutNotFound,
		ErrSubscriptionTokenInvalid, ErrWebhookMalformed, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, known) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", ErrBillingFailed, err)
}
