package nichetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
)

// TestSubscriberSessions runs the conformance suite of
// niche.SubscriberSessions against stores made by open (each call must
// return an empty store).
func TestSubscriberSessions(t *testing.T, open func(t *testing.T) niche.SubscriberSessions) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := open(t)
	a := niche.SubscriberSession{Hash: "a1", TokenHash: "t1", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	b := niche.SubscriberSession{Hash: "b2", TokenHash: "t1", CreatedAt: t0, ExpiresAt: t0.Add(2 * time.Hour)}
	for _, x := range []niche.SubscriberSession{a, b} {
		if err := s.CreateSubscriberSession(ctx, x); err != nil {
			t.Fatalf("create %s: %v", x.Hash, err)
		}
	}
	if err := s.CreateSubscriberSession(ctx, a); err == nil {
		t.Error("creating a session twice succeeded")
	}
	got, err := s.SubscriberSession(ctx, "a1", t0.Add(time.Minute))
	if err != nil || got.TokenHash != "t1" || !got.ExpiresAt.Equal(a.ExpiresAt) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("read a1 = %+v, %v; want %+v", got, err, a)
	}
	if _, err := s.SubscriberSession(ctx, "a1", t0.Add(time.Hour)); !errors.Is(err, niche.ErrSessionNotFound) {
		t.Errorf("read a1 at its expiry: %v, want ErrSessionNotFound", err)
	}
	if _, err := s.SubscriberSession(ctx, "zz", t0); !errors.Is(err, niche.ErrSessionNotFound) {
		t.Errorf("read unknown: %v, want ErrSessionNotFound", err)
	}
	n, err := s.PruneSubscriberSessions(ctx, t0.Add(90*time.Minute))
	if err != nil || n != 1 {
		t.Errorf("prune = %d, %v; want 1", n, err)
	}
	if _, err := s.SubscriberSession(ctx, "b2", t0); err != nil {
		t.Errorf("b2 after prune: %v", err)
	}
	if err := s.DeleteSubscriberSession(ctx, "b2"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSubscriberSession(ctx, "b2"); err != nil {
		t.Errorf("deleting twice: %v", err)
	}
	if _, err := s.SubscriberSession(ctx, "b2", t0); !errors.Is(err, niche.ErrSessionNotFound) {
		t.Errorf("read b2 after delete: %v, want ErrSessionNotFound", err)
	}
}
