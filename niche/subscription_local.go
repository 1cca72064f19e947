package niche

import (
	"context"
	"errors"
	"fmt"
)

// Local returns the development billing backend when it is the configured
// one.
func (s *SubscriptionService) Local() (*LocalBilling, bool) {
	l, ok := s.billing.(*LocalBilling)
	return l, ok
}

// ConfirmLocalCheckout completes a development checkout the way Stripe
// would: the backend signs a checkout.session.completed event, which goes
// through HandleWebhook (verification, de-duplication, state change), and
// the session is then claimed. The token is returned once; confirming the
// same checkout again fails with ErrClaimUsed.
func (s *SubscriptionService) ConfirmLocalCheckout(ctx context.Context, sessionID string) (*IssuedToken, error) {
	l, ok := s.Local()
	if !ok {
		return nil, ErrBillingUnavailable
	}
	payload, sig, err := l.CompleteCheckout(sessionID)
	if err != nil {
		return nil, err
	}
	if _, err := s.HandleWebhook(ctx, payload, sig); err != nil {
		return nil, err
	}
	return s.Claim(ctx, sessionID)
}

// LocalPortalSubscription returns the subscription a development portal
// session manages.
func (s *SubscriptionService) LocalPortalSubscription(ctx context.Context, portalID string) (*Subscription, error) {
	l, ok := s.Local()
	if !ok {
		return nil, ErrBillingUnavailable
	}
	ps, err := l.PortalSession(portalID)
	if err != nil {
		return nil, err
	}
	sub, err := s.store.SubscriptionByRef(ctx, LocalProvider, ps.SubscriptionRef)
	if errors.Is(err, ErrSubscriptionNotFound) {
		return nil, ErrCheckoutNotFound
	}
	return sub, err
}

// LocalPortalAction performs a development portal action (LocalAction*)
// through a signed event and HandleWebhook, and returns the subscription's
// new state. Actions the current status does not allow fail with
// ErrSubscriptionState: a canceled subscription is final, a payment can
// only fail on an active or trialing one.
func (s *SubscriptionService) LocalPortalAction(ctx context.Context, portalID, action string) (*Subscription, error) {
	sub, err := s.LocalPortalSubscription(ctx, portalID)
	if err != nil {
		return nil, err
	}
	allowed := false
	switch action {
	case LocalActionCancel, LocalActionPay:
		allowed = sub.Status != SubscriptionCanceled
	case LocalActionFailPayment:
		allowed = sub.Status == SubscriptionActive || sub.Status == SubscriptionTrialing
	}
	if !allowed {
		return nil, fmt.Errorf("%w: %q on a %s subscription", ErrSubscriptionState, action, sub.Status)
	}
	l, _ := s.Local()
	payload, sig, err := l.PortalEvent(portalID, action, sub.CurrentPeriodEnd)
	if err != nil {
		return nil, err
	}
	if _, err := s.HandleWebhook(ctx, payload, sig); err != nil {
		return nil, err
	}
	return s.store.Subscription(ctx, sub.ID)
}
