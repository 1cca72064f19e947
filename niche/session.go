package niche

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/assaykit/assay/internal/ids"
)

// Subscriber sessions: how a person, rather than an agent, reads what the
// subscription bought. Signing in with a subscriber token opens a session
// in a browser (package pages keeps its secret in an HttpOnly cookie); the
// API keeps taking the token itself.
//
// Choices where the issue left them open:
//
//   - A session is bound to the token it was opened with: it ends when
//     that token stops working (rotated, revoked, reissued) as well as on
//     sign-out and after SessionTTL. The store keeps only the SHA-256 of
//     the session secret and of the token.
//   - A live token signs in even when its subscription is not entitled,
//     so that a past_due subscriber can reach the billing portal; reads of
//     full evaluations still need an entitled subscription.

// DefaultSessionTTL is how long a session lasts when
// SubscriptionOptions.SessionTTL is zero.
const DefaultSessionTTL = 30 * 24 * time.Hour

// Session errors.
var (
	// ErrSessionNotFound is an unknown, expired or signed-out session, or
	// one whose token stopped working.
	ErrSessionNotFound = errors.New("niche: session not found")
	// ErrSessionsUnavailable is a sign-in on a service without a session
	// store (SubscriptionOptions.Sessions).
	ErrSessionsUnavailable = errors.New("niche: sessions are not configured")
)

// SubscriberSession is one signed-in browser session, as stored.
type SubscriberSession struct {
	// Hash is the SHA-256 hex of the session secret.
	Hash string
	// TokenHash is the SHA-256 hex of the subscriber token it was opened
	// with.
	TokenHash string
	// CreatedAt and ExpiresAt bound it.
	CreatedAt, ExpiresAt time.Time
}

// SubscriberSessions keeps subscriber sessions, by the hash of their
// secret. store/nichestore implements it on SQLite and PostgreSQL (table
// niche_subscriber_sessions, migration 0035), nichemem.Subscriptions in
// memory; the conformance suite is nichetest.TestSubscriberSessions.
type SubscriberSessions interface {
	// CreateSubscriberSession stores a new session (its hash must be new).
	CreateSubscriberSession(ctx context.Context, s SubscriberSession) error
	// SubscriberSession returns the session with that hash unless it
	// expired at or before now; else ErrSessionNotFound.
	SubscriberSession(ctx context.Context, hash string, now time.Time) (*SubscriberSession, error)
	// DeleteSubscriberSession removes a session; removing an unknown one
	// is not an error.
	DeleteSubscriberSession(ctx context.Context, hash string) error
	// PruneSubscriberSessions removes the sessions expired before t and
	// returns how many were removed.
	PruneSubscriberSessions(ctx context.Context, before time.Time) (int64, error)
}

// SessionSubscribers is implemented by a Subscribers that also knows
// signed-in sessions (SubscriptionService): sell.Niche grants a session
// what it grants the session's token.
type SessionSubscribers interface {
	Subscribers
	// ActiveSession returns the subscriber of the session with that
	// secret while its token is live and its subscription entitled, and
	// ErrNotSubscribed otherwise.
	ActiveSession(ctx context.Context, secret string) (*Subscriber, error)
}

var _ SessionSubscribers = (*SubscriptionService)(nil)

// SignedIn is an open session: its secret (shown once, kept by the
// browser) and the subscription's status when it was opened.
type SignedIn struct {
	Secret    string
	ExpiresAt time.Time
	Status    *SubscriberStatus
}

// SignIn opens a session for the holder of a live subscriber token. It
// fails with ErrSubscriptionTokenInvalid for a malformed, unknown or
// revoked token and ErrSessionsUnavailable without a session store.
func (s *SubscriptionService) SignIn(ctx context.Context, token string) (*SignedIn, error) {
	if s.sessions == nil {
		return nil, ErrSessionsUnavailable
	}
	st, err := s.Lookup(ctx, token)
	if err != nil {
		return nil, err
	}
	if !st.TokenValid {
		return nil, ErrSubscriptionTokenInvalid
	}
	secret := ids.Token(ids.Session)
	now := s.now()
	sess := SubscriberSession{Hash: ids.Hash(secret), TokenHash: ids.Hash(token), CreatedAt: now, ExpiresAt: now.Add(s.sessionTTL)}
	if err := s.sessions.CreateSubscriberSession(ctx, sess); err != nil {
		return nil, fmt.Errorf("niche: sign in: %w", err)
	}
	if n, err := s.sessions.PruneSubscriberSessions(ctx, now); err != nil {
		s.log.WarnContext(ctx, "subscriber sessions: pruning failed", "err", err)
	} else if n > 0 {
		s.log.InfoContext(ctx, "subscriber sessions: pruned expired sessions", "count", n)
	}
	s.log.InfoContext(ctx, "subscriber signed in", "subscription", st.Subscription.ID)
	return &SignedIn{Secret: secret, ExpiresAt: sess.ExpiresAt, Status: st}, nil
}

// session returns the live session of secret and its subscription, or
// ErrSessionNotFound (also when its token stopped working).
func (s *SubscriptionService) session(ctx context.Context, secret string) (*SubscriberSession, *Subscription, error) {
	if s.sessions == nil || !ids.ValidToken(ids.Session, secret) {
		return nil, nil, ErrSessionNotFound
	}
	sess, err := s.sessions.SubscriberSession(ctx, ids.Hash(secret), s.now())
	if err != nil {
		return nil, nil, err
	}
	sub, err := s.store.SubscriptionByToken(ctx, sess.TokenHash)
	if errors.Is(err, ErrSubscriptionTokenInvalid) {
		return nil, nil, ErrSessionNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	return sess, sub, nil
}

// Session returns the status of the subscription of a signed-in session,
// or ErrSessionNotFound.
func (s *SubscriptionService) Session(ctx context.Context, secret string) (*SubscriberStatus, error) {
	_, sub, err := s.session(ctx, secret)
	if err != nil {
		return nil, err
	}
	ok, until := s.Entitlement(sub)
	return &SubscriberStatus{TokenValid: true, Entitled: ok, EntitledUntil: until, Subscription: sub}, nil
}

// ActiveSession implements SessionSubscribers.
func (s *SubscriptionService) ActiveSession(ctx context.Context, secret string) (*Subscriber, error) {
	_, sub, err := s.session(ctx, secret)
	if errors.Is(err, ErrSessionNotFound) {
		return nil, ErrNotSubscribed
	}
	if err != nil {
		return nil, err
	}
	return s.entitled(sub)
}

// SignOut ends a session; ending an unknown one is not an error.
func (s *SubscriptionService) SignOut(ctx context.Context, secret string) error {
	if s.sessions == nil || !ids.ValidToken(ids.Session, secret) {
		return nil
	}
	return s.sessions.DeleteSubscriberSession(ctx, ids.Hash(secret))
}

// SessionPortal opens the billing portal for the subscription of a
// signed-in session (see Portal).
func (s *SubscriptionService) SessionPortal(ctx context.Context, secret string, p PortalParams) (*PortalSession, error) {
	_, sub, err := s.session(ctx, secret)
	if err != nil {
		return nil, err
	}
	return s.portal(ctx, sub, p)
}
