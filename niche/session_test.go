package niche_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store/nichestore"
)

// A session is granted what its token is granted, and ends with sign-out,
// with its TTL, and with its token; a lapsed subscription keeps its session
// (for the billing portal) but no access.
func TestSessionsFollowTheirToken(t *testing.T) {
	ctx := context.Background()
	e := newLocalEnv(t, nil)
	if _, err := e.svc.SignIn(ctx, "nd_x"); !errors.Is(err, niche.ErrSessionsUnavailable) {
		t.Fatalf("SignIn without a session store: %v", err)
	}
	e = newLocalEnv(t, nil)
	// The same database keeps the sessions.
	e.svc, _ = niche.NewSubscriptionService(nichestore.New(e.db), e.local, &niche.SubscriptionOptions{Now: e.clk.Now,
		Sessions: nichestore.New(e.db), SessionTTL: time.Hour})
	_, it := e.subscribe(t)
	for _, bad := range []string{"", "nd_short", it.Token + "x", "nd_" + strings.Repeat("A", 43)} {
		if _, err := e.svc.SignIn(ctx, bad); !errors.Is(err, niche.ErrSubscriptionTokenInvalid) {
			t.Errorf("SignIn(%q): %v, want ErrSubscriptionTokenInvalid", bad, err)
		}
	}
	in, err := e.svc.SignIn(ctx, it.Token)
	if err != nil || !strings.HasPrefix(in.Secret, "nds_") || !in.ExpiresAt.Equal(e.clk.Now().Add(time.Hour)) || !in.Status.Entitled {
		t.Fatalf("SignIn = %+v, %v", in, err)
	}
	if sub, err := e.svc.ActiveSession(ctx, in.Secret); err != nil || sub.ID != it.Subscription.ID {
		t.Fatalf("ActiveSession = %+v, %v", sub, err)
	}
	for _, bad := range []string{"", "nds_forged", in.Secret[:len(in.Secret)-1] + "A", it.Token} {
		if _, err := e.svc.ActiveSession(ctx, bad); !errors.Is(err, niche.ErrNotSubscribed) {
			t.Errorf("ActiveSession(%q): %v, want ErrNotSubscribed", bad, err)
		}
	}
	// Sign-out ends it; a second sign-out is no error.
	if err := e.svc.SignOut(ctx, in.Secret); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.SignOut(ctx, in.Secret); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Session(ctx, in.Secret); !errors.Is(err, niche.ErrSessionNotFound) {
		t.Fatalf("Session after sign-out: %v", err)
	}
	// The TTL ends it.
	in, _ = e.svc.SignIn(ctx, it.Token)
	e.clk.Advance(time.Hour)
	if _, err := e.svc.Session(ctx, in.Secret); !errors.Is(err, niche.ErrSessionNotFound) {
		t.Fatalf("Session after its TTL: %v", err)
	}
	// A lapsed subscription: the session stays (the portal), access goes.
	in, _ = e.svc.SignIn(ctx, it.Token)
	portal, err := e.svc.SessionPortal(ctx, in.Secret, niche.PortalParams{BaseURL: testBase, ReturnURL: testBase})
	if err != nil || !strings.Contains(portal.URL, niche.LocalPortalPath) {
		t.Fatalf("SessionPortal = %+v, %v", portal, err)
	}
	if _, err := e.svc.LocalPortalAction(ctx, portal.URL[strings.LastIndex(portal.URL, "/")+1:], niche.LocalActionCancel); err != nil {
		t.Fatal(err)
	}
	if st, err := e.svc.Session(ctx, in.Secret); err != nil || st.Entitled {
		t.Fatalf("Session of a cancelled subscription = %+v, %v; want the session without access", st, err)
	}
	if _, err := e.svc.ActiveSession(ctx, in.Secret); !errors.Is(err, niche.ErrNotSubscribed) {
		t.Fatalf("ActiveSession of a cancelled subscription: %v", err)
	}
	// Its token rotated: the session ends.
	if _, err := e.svc.Rotate(ctx, it.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Session(ctx, in.Secret); !errors.Is(err, niche.ErrSessionNotFound) {
		t.Fatalf("Session after its token rotated: %v", err)
	}
}
