package nichetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
)

// subT0 is the reference time of the subscription suite (microsecond
// precision, as stored).
var subT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ignoreStoreClock drops the fields stores set from their own clock.
var ignoreStoreClock = cmpopts.IgnoreFields(niche.Subscription{}, "ID", "CreatedAt", "UpdatedAt")

// TestSubscriptionStore runs the conformance suite of niche.SubscriptionStore
// against stores made by open (each call must return an empty store).
func TestSubscriptionStore(t *testing.T, open func(t *testing.T) niche.SubscriptionStore) {
	t.Run("Empty", func(t *testing.T) { subEmpty(t, open(t)) })
	t.Run("CreateAndDuplicate", func(t *testing.T) { subCreateAndDuplicate(t, open(t)) })
	t.Run("UnknownSubscriptionIgnored", func(t *testing.T) { subUnknownIgnored(t, open(t)) })
	t.Run("OrderingAndPartialChanges", func(t *testing.T) { subOrdering(t, open(t)) })
	t.Run("ClaimOnce", func(t *testing.T) { subClaimOnce(t, open(t)) })
	t.Run("ClaimExpired", func(t *testing.T) { subClaimExpired(t, open(t)) })
	t.Run("RotateRevokeReissue", func(t *testing.T) { subRotateRevokeReissue(t, open(t)) })
	t.Run("Prune", func(t *testing.T) { subPrune(t, open(t)) })
	t.Run("InvalidEventRejected", func(t *testing.T) { subInvalidEvent(t, open(t)) })
	t.Run("ConcurrentDuplicateDeliveries", func(t *testing.T) {
		s := open(t)
		subConcurrent(t, s, s)
	})
}

// TestSubscriptionStoreShared runs the concurrency part of the suite
// against two stores that share one database, as two server instances
// would: duplicate deliveries, claims and rotations spread over both are
// each processed once.
func TestSubscriptionStoreShared(t *testing.T, open func(t *testing.T) (a, b niche.SubscriptionStore)) {
	a, b := open(t)
	subConcurrent(t, a, b)
}

func subEvent(id string, at time.Time, changes ...niche.SubscriptionChange) niche.BillingEvent {
	return niche.BillingEvent{Provider: "test", ID: id, Type: "test.event", ReceivedAt: at, Changes: changes}
}

func subCreate(ref, session string, at time.Time) niche.SubscriptionChange {
	return niche.SubscriptionChange{ProviderRef: ref, Create: true, CheckoutSession: session, CustomerRef: "cus_" + ref,
		PriceRef: "price_1", Status: niche.SubscriptionActive, CurrentPeriodEnd: at.AddDate(0, 1, 0), ObservedAt: at}
}

func mustApply(t *testing.T, s niche.SubscriptionStore, ev niche.BillingEvent, want bool) {
	t.Helper()
	got, err := s.ApplySubscriptionEvent(context.Background(), ev)
	if err != nil {
		t.Fatalf("ApplySubscriptionEvent(%s): %v", ev.ID, err)
	}
	if got != want {
		t.Fatalf("ApplySubscriptionEvent(%s) applied = %v, want %v", ev.ID, got, want)
	}
}

func mustByRef(t *testing.T, s niche.SubscriptionStore, ref string) *niche.Subscription {
	t.Helper()
	sub, err := s.SubscriptionByRef(context.Background(), "test", ref)
	if err != nil {
		t.Fatalf("SubscriptionByRef(%s): %v", ref, err)
	}
	return sub
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", what, err, want)
	}
}

// claimNew creates a subscription through a checkout event and claims it,
// returning the subscription and the token hash.
func claimNew(t *testing.T, s niche.SubscriptionStore, ref string) (*niche.Subscription, string) {
	t.Helper()
	session := ids.Hash("cs_" + ref)
	mustApply(t, s, subEvent("evt_create_"+ref, subT0, subCreate(ref, session, subT0)), true)
	tok := ids.Hash(ids.Token(ids.Subscriber))
	sub, err := s.ClaimSubscriptionCheckout(context.Background(), "test", session, tok, subT0.Add(time.Minute), subT0.Add(-time.Hour))
	if err != nil {
		t.Fatalf("ClaimSubscriptionCheckout: %v", err)
	}
	return sub, tok
}

func subEmpty(t *testing.T, s niche.SubscriptionStore) {
	ctx := context.Background()
	if seen, err := s.SubscriptionEventSeen(ctx, "test", "evt_1"); err != nil || seen {
		t.Fatalf("SubscriptionEventSeen on empty store = %v, %v", seen, err)
	}
	_, err := s.Subscription(ctx, ids.New(niche.SubscriptionIDPrefix))
	wantErr(t, "Subscription(unknown)", err, niche.ErrSubscriptionNotFound)
	_, err = s.SubscriptionByRef(ctx, "test", "sub_x")
	wantErr(t, "SubscriptionByRef(unknown)", err, niche.ErrSubscriptionNotFound)
	_, err = s.SubscriptionByToken(ctx, ids.Hash("nd_x"))
	wantErr(t, "SubscriptionByToken(unknown)", err, niche.ErrSubscriptionTokenInvalid)
	_, err = s.ClaimSubscriptionCheckout(ctx, "test", ids.Hash("cs_x"), ids.Hash("nd_x"), subT0, subT0.Add(-time.Hour))
	wantErr(t, "ClaimSubscriptionCheckout(unknown)", err, niche.ErrClaimPending)
	_, err = s.ReplaceSubscriberToken(ctx, ids.Hash("nd_x"), ids.Hash("nd_y"), subT0)
	wantErr(t, "ReplaceSubscriberToken(unknown)", err, niche.ErrSubscriptionTokenInvalid)
	_, err = s.IssueSubscriberToken(ctx, ids.New(niche.SubscriptionIDPrefix), ids.Hash("nd_y"), subT0)
	wantErr(t, "IssueSubscriberToken(unknown)", err, niche.ErrSubscriptionNotFound)
	wantErr(t, "RevokeSubscriberToken(unknown)", s.RevokeSubscriberToken(ctx, ids.Hash("nd_x"), subT0), niche.ErrSubscriptionTokenInvalid)
	// Nothing above may have created anything.
	_, err = s.SubscriptionByToken(ctx, ids.Hash("nd_y"))
	wantErr(t, "token created by a failed call", err, niche.ErrSubscriptionTokenInvalid)
}

func subCreateAndDuplicate(t *testing.T, s niche.SubscriptionStore) {
	ctx := context.Background()
	ev := subEvent("evt_1", subT0, subCreate("sub_1", ids.Hash("cs_1"), subT0))
	mustApply(t, s, ev, true)
	if seen, err := s.SubscriptionEventSeen(ctx, "test", "evt_1"); err != nil || !seen {
		t.Fatalf("SubscriptionEventSeen after apply = %v, %v", seen, err)
	}
	if seen, _ := s.SubscriptionEventSeen(ctx, "other", "evt_1"); seen {
		t.Fatal("event ids must be scoped by provider")
	}
	got := mustByRef(t, s, "sub_1")
	want := &niche.Subscription{Provider: "test", ProviderRef: "sub_1", CustomerRef: "cus_sub_1", PriceRef: "price_1",
		Status: niche.SubscriptionActive, CurrentPeriodEnd: subT0.AddDate(0, 1, 0), SyncedAt: subT0}
	if d := cmp.Diff(want, got, ignoreStoreClock); d != "" {
		t.Fatalf("created subscription (-want +got):\n%s", d)
	}
	if !ids.Valid(niche.SubscriptionIDPrefix, got.ID) || got.CreatedAt.IsZero() {
		t.Fatalf("id %q / created %v not set", got.ID, got.CreatedAt)
	}
	byID, err := s.Subscription(ctx, got.ID)
	if err != nil || byID.ProviderRef != "sub_1" {
		t.Fatalf("Subscription(%s) = %+v, %v", got.ID, byID, err)
	}
	// A duplicate delivery, even carrying different data, changes nothing.
	dup := ev
	dup.Changes = []niche.SubscriptionChange{{ProviderRef: "sub_1", Status: niche.SubscriptionCanceled, ObservedAt: subT0.Add(time.Hour)}}
	mustApply(t, s, dup, false)
	if d := cmp.Diff(got, mustByRef(t, s, "sub_1")); d != "" {
		t.Fatalf("duplicate event changed the subscription (-before +after):\n%s", d)
	}
	// The same event id from another provider is another event.
	other := dup
	other.Provider = "other"
	mustApply(t, s, other, true)
}

func subUnknownIgnored(t *testing.T, s niche.SubscriptionStore) {
	ctx := context.Background()
	mustApply(t, s, subEvent("evt_u", subT0, niche.SubscriptionChange{ProviderRef: "sub_foreign", Status: niche.SubscriptionActive, ObservedAt: subT0}), true)
	_, err := s.SubscriptionByRef(ctx, "test", "sub_foreign")
	wantErr(t, "subscription created without Create", err, niche.ErrSubscriptionNotFound)
	if seen, _ := s.SubscriptionEventSeen(ctx, "test", "evt_u"); !seen {
		t.Fatal("an event without effect must still be recorded")
	}
}

func subOrdering(t *testing.T, s niche.SubscriptionStore) {
	mustApply(t, s, subEvent("evt_c", subT0, subCreate("sub_o", "", subT0)), true)
	base := mustByRef(t, s, "sub_o")
	steps := []struct {
		name   string
		change niche.SubscriptionChange
		want   func(s *niche.Subscription)
	}{
		{"newer status only keeps other fields",
			niche.SubscriptionChange{ProviderRef: "sub_o", Status: niche.SubscriptionPastDue, ObservedAt: subT0.Add(2 * time.Hour)},
			func(s *niche.Subscription) {
				s.Status, s.PastDueSince, s.SyncedAt = niche.SubscriptionPastDue, subT0.Add(2*time.Hour), subT0.Add(2*time.Hour)
			}},
		{"older state is ignored",
			niche.SubscriptionChange{ProviderRef: "sub_o", Status: niche.SubscriptionActive, CustomerRef: "cus_old", ObservedAt: subT0.Add(time.Hour)},
			func(s *niche.Subscription) {}},
		{"still past_due keeps the start of past_due",
			niche.SubscriptionChange{ProviderRef: "sub_o", Status: niche.SubscriptionPastDue, ObservedAt: subT0.Add(3 * time.Hour)},
			func(s *niche.Subscription) { s.SyncedAt = subT0.Add(3 * time.Hour) }},
		{"paid: active, new period, cancel flag, past_due cleared",
			niche.SubscriptionChange{ProviderRef: "sub_o", Status: niche.SubscriptionActive, CancelAtPeriodEnd: true,
				CurrentPeriodEnd: subT0.AddDate(0, 2, 0), PriceRef: "price_2", ObservedAt: subT0.Add(4 * time.Hour)},
			func(s *niche.Subscription) {
				s.Status, s.PastDueSince, s.CancelAtPeriodEnd = niche.SubscriptionActive, time.Time{}, true
				s.CurrentPeriodEnd, s.PriceRef, s.SyncedAt = subT0.AddDate(0, 2, 0), "price_2", subT0.Add(4*time.Hour)
			}},
		{"same observation time applies (later delivery wins)",
			niche.SubscriptionChange{ProviderRef: "sub_o", Status: niche.SubscriptionCanceled, ObservedAt: subT0.Add(4 * time.Hour)},
			func(s *niche.Subscription) { s.Status, s.CancelAtPeriodEnd = niche.SubscriptionCanceled, false }},
	}
	want := *base
	for i, st := range steps {
		mustApply(t, s, subEvent(fmt.Sprintf("evt_o%d", i), subT0.Add(5*time.Hour), st.change), true)
		st.want(&want)
		if d := cmp.Diff(&want, mustByRef(t, s, "sub_o"), cmpopts.IgnoreFields(niche.Subscription{}, "UpdatedAt")); d != "" {
			t.Fatalf("%s (-want +got):\n%s", st.name, d)
		}
	}
}

func subClaimOnce(t *testing.T, s niche.SubscriptionStore) {
	ctx := context.Background()
	sub, tok := claimNew(t, s, "sub_c")
	got, err := s.SubscriptionByToken(ctx, tok)
	if err != nil || got.ID != sub.ID {
		t.Fatalf("SubscriptionByToken after claim = %+v, %v", got, err)
	}
	second := ids.Hash(ids.Token(ids.Subscriber))
	_, err = s.ClaimSubscriptionCheckout(ctx, "test", ids.Hash("cs_sub_c"), second, subT0.Add(2*time.Minute), subT0.Add(-time.Hour))
	wantErr(t, "second claim", err, niche.ErrClaimUsed)
	_, err = s.SubscriptionByToken(ctx, second)
	wantErr(t, "token of a refused claim", err, niche.ErrSubscriptionTokenInvalid)
	if _, err := s.SubscriptionByToken(ctx, tok); err != nil {
		t.Fatalf("first token stopped working after a refused claim: %v", err)
	}
	// Claims are scoped by provider.
	_, err = s.ClaimSubscriptionCheckout(ctx, "other", ids.Hash("cs_sub_c"), second, subT0, subT0.Add(-time.Hour))
	wantErr(t, "claim under another provider", err, niche.ErrClaimPending)
}

func subClaimExpired(t *testing.T, s niche.SubscriptionStore) {
	ctx := context.Background()
	session := ids.Hash("cs_exp")
	mustApply(t, s, subEvent("evt_exp", subT0, subCreate("sub_exp", session, subT0)), true)
	tok := ids.Hash(ids.Token(ids.Subscriber))
	_, err := s.ClaimSubscriptionCheckout(ctx, "test", session, tok, subT0.AddDate(0, 0, 8), subT0.Add(time.Second))
	wantErr(t, "late claim", err, niche.ErrClaimExpired)
	_, err = s.SubscriptionByToken(ctx, tok)
	wantErr(t, "token of an expired claim", err, niche.ErrSubscriptionTokenInvalid)
	// An expired claim is not consumed: an operator may still widen the window.
	if _, err := s.ClaimSubscriptionCheckout(ctx, "test", session, tok, subT0.Add(time.Minute), subT0); err != nil {
		t.Fatalf("claim within the window after an expired attempt: %v", err)
	}
}

func subRotateRevokeReissue(t *testing.T, s niche.SubscriptionStore) {
	ctx := context.Background()
	sub, tok := claimNew(t, s, "sub_r")
	rotated := ids.Hash(ids.Token(ids.Subscriber))
	got, err := s.ReplaceSubscriberToken(ctx, tok, rotated, subT0.Add(time.Hour))
	if err != nil || got.ID != sub.ID {
		t.Fatalf("ReplaceSubscriberToken = %+v, %v", got, err)
	}
	_, err = s.SubscriptionByToken(ctx, tok)
	wantErr(t, "rotated-out token", err, niche.ErrSubscriptionTokenInvalid)
	_, err = s.ReplaceSubscriberToken(ctx, tok, ids.Hash("nd_again"), subT0.Add(time.Hour))
	wantErr(t, "rotating a rotated-out token", err, niche.ErrSubscriptionTokenInvalid)
	if _, err := s.SubscriptionByToken(ctx, rotated); err != nil {
		t.Fatalf("new token: %v", err)
	}

	if err := s.RevokeSubscriberToken(ctx, rotated, subT0.Add(2*time.Hour)); err != nil {
		t.Fatalf("RevokeSubscriberToken: %v", err)
	}
	_, err = s.SubscriptionByToken(ctx, rotated)
	wantErr(t, "revoked token", err, niche.ErrSubscriptionTokenInvalid)
	wantErr(t, "second revoke", s.RevokeSubscriberToken(ctx, rotated, subT0), niche.ErrSubscriptionTokenInvalid)

	// Reissue: a subscription with an unclaimed checkout gets a token, and
	// the checkout can no longer be claimed.
	session := ids.Hash("cs_unclaimed")
	mustApply(t, s, subEvent("evt_un", subT0, subCreate("sub_un", session, subT0)), true)
	un := mustByRef(t, s, "sub_un")
	issued := ids.Hash(ids.Token(ids.Subscriber))
	if _, err := s.IssueSubscriberToken(ctx, un.ID, issued, subT0.Add(time.Hour)); err != nil {
		t.Fatalf("IssueSubscriberToken: %v", err)
	}
	_, err = s.ClaimSubscriptionCheckout(ctx, "test", session, ids.Hash("nd_thief"), subT0.Add(time.Hour), subT0.Add(-time.Hour))
	wantErr(t, "claim after reissue", err, niche.ErrClaimUsed)
	reissued := ids.Hash(ids.Token(ids.Subscriber))
	if _, err := s.IssueSubscriberToken(ctx, un.ID, reissued, subT0.Add(2*time.Hour)); err != nil {
		t.Fatalf("IssueSubscriberToken again: %v", err)
	}
	_, err = s.SubscriptionByToken(ctx, issued)
	wantErr(t, "token replaced by a reissue", err, niche.ErrSubscriptionTokenInvalid)
	if got, err := s.SubscriptionByToken(ctx, reissued); err != nil || got.ID != un.ID {
		t.Fatalf("reissued token = %+v, %v", got, err)
	}
	// Tokens of one subscription never open another.
	if got, _ := s.SubscriptionByToken(ctx, reissued); got.ID == sub.ID {
		t.Fatal("token crossed subscriptions")
	}
}

func subPrune(t *testing.T, s niche.SubscriptionStore) {
	ctx := context.Background()
	mustApply(t, s, subEvent("evt_old", subT0), true)
	mustApply(t, s, subEvent("evt_new", subT0.Add(48*time.Hour)), true)
	n, err := s.PruneSubscriptionEvents(ctx, subT0.Add(24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("PruneSubscriptionEvents = %d, %v; want 1", n, err)
	}
	if seen, _ := s.SubscriptionEventSeen(ctx, "test", "evt_old"); seen {
		t.Fatal("pruned event still seen")
	}
	if seen, _ := s.SubscriptionEventSeen(ctx, "test", "evt_new"); !seen {
		t.Fatal("recent event pruned")
	}
}

func subInvalidEvent(t *testing.T, s niche.SubscriptionStore) {
	ctx := context.Background()
	bad := []niche.BillingEvent{
		{Provider: "", ID: "evt_bad", ReceivedAt: subT0},
		{Provider: "test", ID: "", ReceivedAt: subT0},
		subEvent("evt_bad1", subT0, niche.SubscriptionChange{Status: niche.SubscriptionActive}),
		subEvent("evt_bad2", subT0, niche.SubscriptionChange{ProviderRef: "sub_b", Create: true}),
		// A valid change followed by an invalid one: nothing may be kept.
		subEvent("evt_bad3", subT0, subCreate("sub_b", "", subT0), niche.SubscriptionChange{ProviderRef: "sub_c", Create: true}),
	}
	for _, ev := range bad {
		if ok, err := s.ApplySubscriptionEvent(ctx, ev); err == nil || ok {
			t.Fatalf("ApplySubscriptionEvent(%+v) = %v, %v; want an error", ev, ok, err)
		}
		if seen, _ := s.SubscriptionEventSeen(ctx, ev.Provider, ev.ID); seen {
			t.Fatalf("rejected event %q was recorded", ev.ID)
		}
	}
	_, err := s.SubscriptionByRef(ctx, "test", "sub_b")
	wantErr(t, "subscription of a rejected event", err, niche.ErrSubscriptionNotFound)
}

// subConcurrent delivers one event, claims one checkout and rotates one
// token many times at once, alternating between stores a and b.
func subConcurrent(t *testing.T, a, b niche.SubscriptionStore) {
	ctx := context.Background()
	const n = 12
	stores := []niche.SubscriptionStore{a, b}
	run := func(f func(s niche.SubscriptionStore, i int) error) []error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				errs[i] = f(stores[i%2], i)
			})
		}
		close(start)
		wg.Wait()
		return errs
	}

	// Duplicate deliveries of one event: exactly one applies.
	session := ids.Hash("cs_conc")
	ev := subEvent("evt_conc", subT0, subCreate("sub_conc", session, subT0))
	var mu sync.Mutex
	applied := 0
	for i, err := range run(func(s niche.SubscriptionStore, _ int) error {
		ok, err := s.ApplySubscriptionEvent(ctx, ev)
		if ok {
			mu.Lock()
			applied++
			mu.Unlock()
		}
		return err
	}) {
		if err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
	}
	if applied != 1 {
		t.Fatalf("%d of %d concurrent duplicate deliveries applied, want 1", applied, n)
	}

	// Concurrent claims of one checkout: exactly one token.
	toks := make([]string, n)
	for i := range toks {
		toks[i] = ids.Hash(ids.Token(ids.Subscriber))
	}
	winner := -1
	for i, err := range run(func(s niche.SubscriptionStore, i int) error {
		_, err := s.ClaimSubscriptionCheckout(ctx, "test", session, toks[i], subT0.Add(time.Minute), subT0.Add(-time.Hour))
		return err
	}) {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("claims %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, niche.ErrClaimUsed):
			t.Fatalf("claim %d: %v, want ErrClaimUsed", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no claim succeeded")
	}
	for i, tok := range toks {
		_, err := b.SubscriptionByToken(ctx, tok)
		if (err == nil) != (i == winner) {
			t.Fatalf("token %d valid = %v, winner %d", i, err == nil, winner)
		}
	}

	// Concurrent rotations of the winning token: exactly one new token.
	news := make([]string, n)
	for i := range news {
		news[i] = ids.Hash(ids.Token(ids.Subscriber))
	}
	rotated := -1
	for i, err := range run(func(s niche.SubscriptionStore, i int) error {
		_, err := s.ReplaceSubscriberToken(ctx, toks[winner], news[i], subT0.Add(time.Hour))
		return err
	}) {
		switch {
		case err == nil && rotated >= 0:
			t.Fatalf("rotations %d and %d both succeeded", rotated, i)
		case err == nil:
			rotated = i
		case !errors.Is(err, niche.ErrSubscriptionTokenInvalid):
			t.Fatalf("rotation %d: %v, want ErrSubscriptionTokenInvalid", i, err)
		}
	}
	live := 0
	for _, tok := range append(news, toks[winner]) {
		if _, err := a.SubscriptionByToken(ctx, tok); err == nil {
			live++
		}
	}
	if rotated < 0 || live != 1 {
		t.Fatalf("after concurrent rotations: winner %d, %d live tokens; want exactly 1", rotated, live)
	}
}
