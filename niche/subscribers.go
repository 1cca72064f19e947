// Package niche is the niche-discovery catalogue engine.
package niche

import (
	"context"
	"errors"
	"time"
)

// ErrNotSubscribed reports a subscriber token that is unknown, revoked or
// whose subscription is not active.
var ErrNotSubscribed = errors.New("niche: no active subscription")

// Subscriber is the holder of an active subscription.
type Subscriber struct {
	ID               string    // customer or subscription reference
	Status           string    // "active" or "trialing"
	CurrentPeriodEnd time.Time // zero when unknown
}

// Subscribers answers whether a subscriber token grants full access. The
// subscription service implements it; the catalogue's HTTP routes use it
// for "Authorization: Bearer nd_…".
type Subscribers interface {
	// Active returns the subscriber identified by token, or
	// ErrNotSubscribed.
	Active(ctx context.Context, token string) (*Subscriber, error)
}
