package niche_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
)

// clock is a settable clock shared by the service, the backend and the store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func openStore(t *testing.T, clk *clock) *store.DB {
	t.Helper()
	db := emptyDB.Open(t, &store.Options{Now: clk.Now})
	return db
}

const testBase = "http://127.0.0.1:8080/niche-discovery"

type localEnv struct {
	clk   *clock
	db    *store.DB
	local *niche.LocalBilling
	svc   *niche.SubscriptionService
}

func newLocalEnv(t *testing.T, opts *niche.SubscriptionOptions) *localEnv {
	t.Helper()
	e := &localEnv{clk: newClock()}
	e.db = openStore(t, e.clk)
	var err error
	e.local, err = niche.NewLocalBilling(&niche.LocalBillingOptions{Secret: []byte(strings.Repeat("k", 32)), Now: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	o := niche.SubscriptionOptions{}
	if opts != nil {
		o = *opts
	}
	o.Now = e.clk.Now
	e.svc, err = niche.NewSubscriptionService(nichestore.New(e.db), e.local, &o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// subscribe runs a development checkout and returns the session and token.
func (e *localEnv) subscribe(t *testing.T) (string, *niche.IssuedToken) {
	t.Helper()
	ctx := context.Background()
	cs, offer, err := e.svc.Checkout(ctx, niche.CheckoutParams{BaseURL: testBase})
	if err != nil {
		t.Fatalf("Checkout: %v", err)
	}
	if !offer.Development || offer.AmountMicroUSD != 9_990_000 {
		t.Fatalf("offer = %+v", offer)
	}
	if want := testBase + niche.LocalCheckoutPath + cs.ID; cs.URL != want {
		t.Fatalf("checkout URL %q, want %q", cs.URL, want)
	}
	// Before confirmation the checkout cannot be claimed.
	if _, err := e.svc.Claim(ctx, cs.ID); !errors.Is(err, niche.ErrClaimPending) {
		t.Fatalf("Claim before confirmation: %v, want ErrClaimPending", err)
	}
	it, err := e.svc.ConfirmLocalCheckout(ctx, cs.ID)
	if err != nil {
		t.Fatalf("ConfirmLocalCheckout: %v", err)
	}
	return cs.ID, it
}

func mustActive(t *testing.T, svc *niche.SubscriptionService, token string, want bool) *niche.Subscriber {
	t.Helper()
	s, err := svc.Active(context.Background(), token)
	switch {
	case want && err != nil:
		t.Fatalf("Active: %v, want access", err)
	case !want && !errors.Is(err, niche.ErrNotSubscribed):
		t.Fatalf("Active = %+v, %v; want ErrNotSubscribed", s, err)
	}
	return s
}

func TestLocalCheckoutToActive(t *testing.T) {
	e := newLocalEnv(t, nil)
	ctx := context.Background()
	session, it := e.subscribe(t)
	if !niche.ValidSubscriberToken(it.Token) {
		t.Fatalf("token %q is not an nd_ token", it.Token)
	}
	sub := mustActive(t, e.svc, it.Token, true)
	want := &niche.Subscriber{ID: it.Subscription.ID, Status: niche.SubscriptionActive, CurrentPeriodEnd: e.clk.Now().AddDate(0, 1, 0).Truncate(time.Second)}
	if d := cmp.Diff(want, sub); d != "" {
		t.Fatalf("subscriber (-want +got):\n%s", d)
	}
	// Shown once: neither a second confirmation nor a claim gives it again.
	if _, err := e.svc.ConfirmLocalCheckout(ctx, session); !errors.Is(err, niche.ErrClaimUsed) {
		t.Fatalf("second confirmation: %v, want ErrClaimUsed", err)
	}
	if _, err := e.svc.Claim(ctx, session); !errors.Is(err, niche.ErrClaimUsed) {
		t.Fatalf("claim after confirmation: %v, want ErrClaimUsed", err)
	}
	// Only the hash is stored.
	w, _ := e.db.SQL()
	var n int
	if err := w.QueryRow("SELECT COUNT(*) FROM niche_subscription_tokens WHERE token_hash = ?", ids.Hash(it.Token)).Scan(&n); err != nil || n != 1 {
		t.Fatalf("stored token hashes: %d, %v", n, err)
	}
	if err := w.QueryRow("SELECT COUNT(*) FROM niche_subscription_tokens WHERE token_hash = ?", it.Token).Scan(&n); err != nil || n != 0 {
		t.Fatalf("token stored in clear: %d, %v", n, err)
	}
	st, err := e.svc.Lookup(ctx, it.Token)
	if err != nil || !st.TokenValid || !st.Entitled || st.Subscription.Status != niche.SubscriptionActive {
		t.Fatalf("Lookup = %+v, %v", st, err)
	}
}

func TestLocalSessionsAreSignedAndExpire(t *testing.T) {
	e := newLocalEnv(t, nil)
	ctx := context.Background()
	cs, _, err := e.svc.Checkout(ctx, niche.CheckoutParams{BaseURL: testBase})
	if err != nil {
		t.Fatal(err)
	}
	forged := cs.ID[:len(cs.ID)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", cs.ID[len(cs.ID)-1])+1)%16])
	for _, id := range []string{forged, "lcs_", "lcs_zz", "cs_test_1", ""} {
		if _, err := e.svc.ConfirmLocalCheckout(ctx, id); !errors.Is(err, niche.ErrCheckoutNotFound) {
			t.Fatalf("ConfirmLocalCheckout(%q): %v, want ErrCheckoutNotFound", id, err)
		}
	}
	// Another backend's secret cannot confirm our sessions.
	other, _ := niche.NewLocalBilling(nil)
	if _, _, err := other.CompleteCheckout(cs.ID); !errors.Is(err, niche.ErrCheckoutNotFound) {
		t.Fatalf("foreign backend accepted the session: %v", err)
	}
	e.clk.Advance(61 * time.Minute)
	if _, err := e.svc.ConfirmLocalCheckout(ctx, cs.ID); !errors.Is(err, niche.ErrCheckoutNotFound) {
		t.Fatalf("expired session: %v, want ErrCheckoutNotFound", err)
	}
	w, _ := e.db.SQL()
	var n int
	if err := w.QueryRow("SELECT COUNT(*) FROM niche_subscriptions").Scan(&n); err != nil || n != 0 {
		t.Fatalf("refused confirmations created %d subscriptions (%v)", n, err)
	}
}

func TestLocalPortalStateMachine(t *testing.T) {
	e := newLocalEnv(t, &niche.SubscriptionOptions{PastDueGrace: 3 * 24 * time.Hour})
	ctx := context.Background()
	_, it := e.subscribe(t)
	portal := func() string {
		t.Helper()
		ps, err := e.svc.Portal(ctx, it.Token, niche.PortalParams{BaseURL: testBase, ReturnURL: testBase + "/v1/subscription/status"})
		if err != nil {
			t.Fatalf("Portal: %v", err)
		}
		portalID, ok := strings.CutPrefix(ps.URL, testBase+niche.LocalPortalPath)
		if !ok {
			t.Fatalf("portal URL %q", ps.URL)
		}
		return portalID
	}
	stale := portal()
	periodEnd := it.Subscription.CurrentPeriodEnd
	steps := []struct {
		action     string
		advance    time.Duration
		wantErr    error
		wantStatus string
		wantAccess bool
	}{
		{niche.LocalActionFailPayment, time.Hour, nil, niche.SubscriptionPastDue, true},
		{"", 2 * 24 * time.Hour, nil, niche.SubscriptionPastDue, true},           // within the 3-day grace
		{"", 2 * 24 * time.Hour, nil, niche.SubscriptionPastDue, false},          // grace over
		{niche.LocalActionFailPayment, 0, niche.ErrSubscriptionState, "", false}, // already past_due
		{niche.LocalActionPay, time.Minute, nil, niche.SubscriptionActive, true},
		{niche.LocalActionCancel, time.Minute, nil, niche.SubscriptionCanceled, false},
		{niche.LocalActionPay, time.Minute, niche.ErrSubscriptionState, "", false}, // canceled is final
		{"bogus", 0, niche.ErrSubscriptionState, "", false},
	}
	for i, st := range steps {
		e.clk.Advance(st.advance)
		if st.action != "" {
			sub, err := e.svc.LocalPortalAction(ctx, portal(), st.action)
			if !errors.Is(err, st.wantErr) || (err == nil) != (st.wantErr == nil) {
				t.Fatalf("step %d %s: %v, want %v", i, st.action, err, st.wantErr)
			}
			if err == nil && sub.Status != st.wantStatus {
				t.Fatalf("step %d %s: status %s, want %s", i, st.action, sub.Status, st.wantStatus)
			}
			if st.action == niche.LocalActionPay && err == nil && !sub.CurrentPeriodEnd.After(periodEnd) {
				t.Fatalf("paid renewal did not extend the period: %v", sub.CurrentPeriodEnd)
			}
		}
		mustActive(t, e.svc, it.Token, st.wantAccess)
		st2, err := e.svc.Lookup(ctx, it.Token)
		if err != nil || !st2.TokenValid || st2.Entitled != st.wantAccess {
			t.Fatalf("step %d: Lookup = %+v, %v", i, st2, err)
		}
	}
	// The token stays valid for the portal after cancellation.
	if _, err := e.svc.Portal(ctx, it.Token, niche.PortalParams{BaseURL: testBase}); err != nil {
		t.Fatalf("portal after cancel: %v", err)
	}
	for _, id := range []string{"lps_00", stale} { // forged; expired (the steps took days)
		if _, err := e.svc.LocalPortalAction(ctx, id, niche.LocalActionCancel); !errors.Is(err, niche.ErrCheckoutNotFound) {
			t.Fatalf("portal session %q: %v, want ErrCheckoutNotFound", id, err)
		}
	}
}

func TestPastDueRefusedAtOnceWithNegativeGrace(t *testing.T) {
	e := newLocalEnv(t, &niche.SubscriptionOptions{PastDueGrace: -1})
	ctx := context.Background()
	_, it := e.subscribe(t)
	ps, _ := e.svc.Portal(ctx, it.Token, niche.PortalParams{BaseURL: testBase})
	if _, err := e.svc.LocalPortalAction(ctx, strings.TrimPrefix(ps.URL, testBase+niche.LocalPortalPath), niche.LocalActionFailPayment); err != nil {
		t.Fatal(err)
	}
	mustActive(t, e.svc, it.Token, false)
}

func TestTokenRotateRevokeReissue(t *testing.T) {
	e := newLocalEnv(t, nil)
	ctx := context.Background()
	_, it := e.subscribe(t)
	rot, err := e.svc.Rotate(ctx, it.Token)
	if err != nil || rot.Token == it.Token || rot.Subscription.ID != it.Subscription.ID {
		t.Fatalf("Rotate = %+v, %v", rot, err)
	}
	mustActive(t, e.svc, it.Token, false)
	mustActive(t, e.svc, rot.Token, true)
	if _, err := e.svc.Rotate(ctx, it.Token); !errors.Is(err, niche.ErrSubscriptionTokenInvalid) {
		t.Fatalf("rotating a rotated-out token: %v", err)
	}
	if st, _ := e.svc.Lookup(ctx, it.Token); st.TokenValid {
		t.Fatal("Lookup reports a rotated-out token as valid")
	}
	if err := e.svc.Revoke(ctx, rot.Token); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	mustActive(t, e.svc, rot.Token, false)
	if err := e.svc.Revoke(ctx, rot.Token); !errors.Is(err, niche.ErrSubscriptionTokenInvalid) {
		t.Fatalf("second Revoke: %v", err)
	}
	if _, err := e.svc.Portal(ctx, rot.Token, niche.PortalParams{BaseURL: testBase}); !errors.Is(err, niche.ErrSubscriptionTokenInvalid) {
		t.Fatalf("portal with a revoked token: %v", err)
	}
	re, err := e.svc.Reissue(ctx, it.Subscription.ID)
	if err != nil {
		t.Fatalf("Reissue: %v", err)
	}
	mustActive(t, e.svc, re.Token, true)
	for _, bad := range []string{"", "nd_", "nd_short", "Bearer " + re.Token, re.Token + "x", strings.Replace(re.Token, "nd_", "ND_", 1)} {
		mustActive(t, e.svc, bad, false)
	}
	if _, err := e.svc.Reissue(ctx, "nsub_"+strings.Repeat("0", 32)); !errors.Is(err, niche.ErrSubscriptionNotFound) {
		t.Fatalf("Reissue(unknown): %v", err)
	}
	if _, err := e.svc.Reissue(ctx, "../etc"); !errors.Is(err, niche.ErrSubscriptionNotFound) {
		t.Fatalf("Reissue(malformed): %v", err)
	}
}

// signedLocal returns a development event signed with the test secret.
func signedLocal(t *testing.T, secret string, at time.Time, ev map[string]any) ([]byte, string) {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b, niche.SignPayload(b, []byte(secret), at)
}

func TestWebhookForgedStaleReplayed(t *testing.T) {
	e := newLocalEnv(t, nil)
	ctx := context.Background()
	_, it := e.subscribe(t)
	secret := strings.Repeat("k", 32)
	cancel := func(id string) map[string]any {
		return map[string]any{"id": id, "object": "event", "type": "customer.subscription.deleted", "created": e.clk.Now().Unix(),
			"data": map[string]any{"subscription": it.Subscription.ProviderRef, "status": "canceled", "observedAt": e.clk.Now().Add(time.Second).UnixMicro()}}
	}
	payload, _ := signedLocal(t, secret, e.clk.Now(), cancel("levt_forged"))
	_, forgedSig := signedLocal(t, strings.Repeat("x", 32), e.clk.Now(), cancel("levt_forged"))
	stalePayload, staleSig := signedLocal(t, secret, e.clk.Now().Add(-6*time.Minute), cancel("levt_stale"))
	futurePayload, futureSig := signedLocal(t, secret, e.clk.Now().Add(6*time.Minute), cancel("levt_future"))
	bad := []struct {
		name    string
		payload []byte
		sig     string
		want    error
	}{
		{"wrong secret", payload, forgedSig, niche.ErrWebhookSignature},
		{"no signature", payload, "", niche.ErrWebhookSignature},
		{"garbage header", payload, "t=abc,v1=zz", niche.ErrWebhookSignature},
		{"tampered body", []byte(strings.Replace(string(stalePayload), "canceled", "active__", 1)), staleSig, niche.ErrWebhookSignature},
		{"stale", stalePayload, staleSig, niche.ErrWebhookStale},
		{"from the future", futurePayload, futureSig, niche.ErrWebhookStale},
		{"too large", append(payload, make([]byte, niche.MaxWebhookBytes)...), forgedSig, niche.ErrWebhookMalformed},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.svc.HandleWebhook(ctx, tc.payload, tc.sig); !errors.Is(err, tc.want) {
				t.Fatalf("HandleWebhook: %v, want %v", err, tc.want)
			}
			mustActive(t, e.svc, it.Token, true)
		})
	}
	notEvent, notEventSig := signedLocal(t, secret, e.clk.Now(), map[string]any{"id": "x", "object": "charge"})
	if _, err := e.svc.HandleWebhook(ctx, notEvent, notEventSig); !errors.Is(err, niche.ErrWebhookMalformed) {
		t.Fatalf("signed non-event: %v", err)
	}
	// A genuine delivery applies once; its replays are duplicates.
	p, sig := signedLocal(t, secret, e.clk.Now(), cancel("levt_real"))
	res, err := e.svc.HandleWebhook(ctx, p, sig)
	if err != nil || res.Duplicate || res.Changes != 1 {
		t.Fatalf("genuine delivery = %+v, %v", res, err)
	}
	mustActive(t, e.svc, it.Token, false)
	res, err = e.svc.HandleWebhook(ctx, p, sig)
	if err != nil || !res.Duplicate {
		t.Fatalf("replay = %+v, %v", res, err)
	}
}

// scriptedBilling is a Billing whose ResolveWebhook fails on demand.
type scriptedBilling struct {
	*niche.LocalBilling
	mu    sync.Mutex
	fails int
	calls int
}

func (b *scriptedBilling) ResolveWebhook(ctx context.Context, ev *niche.WebhookEvent) ([]niche.SubscriptionChange, error) {
	b.mu.Lock()
	b.calls++
	fail := b.fails > 0
	b.fails--
	b.mu.Unlock()
	if fail {
		return nil, errors.New("processor unreachable")
	}
	return b.LocalBilling.ResolveWebhook(ctx, ev)
}

func TestWebhookResolveFailureIsRetryable(t *testing.T) {
	clk := newClock()
	db := openStore(t, clk)
	local, _ := niche.NewLocalBilling(&niche.LocalBillingOptions{Now: clk.Now})
	b := &scriptedBilling{LocalBilling: local, fails: 1}
	svc, err := niche.NewSubscriptionService(nichestore.New(db), b, &niche.SubscriptionOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs, _ := local.CreateCheckout(ctx, niche.CheckoutParams{BaseURL: testBase})
	payload, sig, err := local.CompleteCheckout(cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.HandleWebhook(ctx, payload, sig); !errors.Is(err, niche.ErrBillingFailed) {
		t.Fatalf("first delivery: %v, want ErrBillingFailed", err)
	}
	var env struct{ ID string }
	if err := json.Unmarshal(payload, &env); err != nil || env.ID == "" {
		t.Fatalf("event id: %v", err)
	}
	if seen, err := nichestore.New(db).SubscriptionEventSeen(ctx, niche.LocalProvider, env.ID); err != nil || seen {
		t.Fatalf("an event whose resolution failed was recorded (%v)", err)
	}
	if _, err := svc.Claim(ctx, cs.ID); !errors.Is(err, niche.ErrClaimPending) {
		t.Fatalf("claim after a failed delivery: %v", err)
	}
	res, err := svc.HandleWebhook(ctx, payload, sig)
	if err != nil || res.Duplicate {
		t.Fatalf("retried delivery = %+v, %v", res, err)
	}
	it, err := svc.Claim(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustActive(t, svc, it.Token, true)
	// A duplicate never reaches the processor.
	calls := b.calls
	if res, err := svc.HandleWebhook(ctx, payload, sig); err != nil || !res.Duplicate || b.calls != calls {
		t.Fatalf("duplicate = %+v, %v, processor calls %d → %d", res, err, calls, b.calls)
	}
}

func TestClaimWindow(t *testing.T) {
	e := newLocalEnv(t, &niche.SubscriptionOptions{ClaimWindow: time.Hour})
	ctx := context.Background()
	cs, _, _ := e.svc.Checkout(ctx, niche.CheckoutParams{BaseURL: testBase})
	payload, sig, _ := e.local.CompleteCheckout(cs.ID)
	if _, err := e.svc.HandleWebhook(ctx, payload, sig); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(2 * time.Hour)
	if _, err := e.svc.Claim(ctx, cs.ID); !errors.Is(err, niche.ErrClaimExpired) {
		t.Fatalf("late claim: %v, want ErrClaimExpired", err)
	}
	for _, id := range []string{"", "cs test", strings.Repeat("a", 256), "cs_\x00"} {
		if _, err := e.svc.Claim(ctx, id); !errors.Is(err, niche.ErrCheckoutNotFound) {
			t.Fatalf("Claim(%q): %v, want ErrCheckoutNotFound", id, err)
		}
	}
}

func TestNoBilling(t *testing.T) {
	clk := newClock()
	svc, err := niche.NewSubscriptionService(nichestore.New(openStore(t, clk)), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.Offer(ctx); !errors.Is(err, niche.ErrBillingUnavailable) {
		t.Fatalf("Offer: %v", err)
	}
	if _, _, err := svc.Checkout(ctx, niche.CheckoutParams{}); !errors.Is(err, niche.ErrBillingUnavailable) {
		t.Fatalf("Checkout: %v", err)
	}
	if _, err := svc.HandleWebhook(ctx, []byte("{}"), ""); !errors.Is(err, niche.ErrBillingUnavailable) {
		t.Fatalf("HandleWebhook: %v", err)
	}
	mustActive(t, svc, ids.Token(ids.Subscriber), false)
	if _, err := niche.NewSubscriptionService(nil, nil, nil); err == nil {
		t.Fatal("nil store accepted")
	}
	if _, err := niche.NewLocalBilling(&niche.LocalBillingOptions{Secret: []byte("short")}); err == nil {
		t.Fatal("short secret accepted")
	}
}

func TestEntitledPolicy(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	end := now.AddDate(0, 0, 20)
	grace := 7 * 24 * time.Hour
	tests := []struct {
		status    string
		pastDue   time.Time
		grace     time.Duration
		want      bool
		wantUntil time.Time
	}{
		{niche.SubscriptionActive, time.Time{}, grace, true, end},
		{niche.SubscriptionTrialing, time.Time{}, grace, true, end},
		{niche.SubscriptionPastDue, now.Add(-time.Hour), grace, true, now.Add(-time.Hour).Add(grace)},
		{niche.SubscriptionPastDue, now.Add(-grace), grace, false, time.Time{}},
		{niche.SubscriptionPastDue, now.Add(-time.Hour), -1, false, time.Time{}},
		{niche.SubscriptionPastDue, time.Time{}, grace, false, time.Time{}},
		{niche.SubscriptionUnpaid, time.Time{}, grace, false, time.Time{}},
		{niche.SubscriptionCanceled, time.Time{}, grace, false, time.Time{}},
		{niche.SubscriptionIncomplete, time.Time{}, grace, false, time.Time{}},
		{niche.SubscriptionIncompleteExpired, time.Time{}, grace, false, time.Time{}},
		{niche.SubscriptionPaused, time.Time{}, grace, false, time.Time{}},
		{"mystery", time.Time{}, grace, false, time.Time{}},
	}
	for _, tc := range tests {
		sub := &niche.Subscription{Status: tc.status, PastDueSince: tc.pastDue, CurrentPeriodEnd: end}
		ok, until := sub.Entitled(now, tc.grace)
		if ok != tc.want || !until.Equal(tc.wantUntil) {
			t.Errorf("%s (past due since %v, grace %v) = %v, %v; want %v, %v", tc.status, tc.pastDue, tc.grace, ok, until, tc.want, tc.wantUntil)
		}
	}
	var nilSub *niche.Subscription
	if ok, _ := nilSub.Entitled(now, grace); ok {
		t.Error("nil subscription entitled")
	}
}

func TestSignedPayloadAcceptsRotatedSecrets(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	payload := []byte(`{"id":"evt_1"}`)
	oldSig := niche.SignPayload(payload, []byte("old-secret"), now)
	newSig := niche.SignPayload(payload, []byte("new-secret"), now)
	_, v1New, _ := strings.Cut(newSig, ",")
	both := oldSig + "," + v1New
	if err := niche.VerifySignedPayload(payload, both, []byte("new-secret"), time.Minute, now); err != nil {
		t.Fatalf("header with two v1 signatures: %v", err)
	}
	if err := niche.VerifySignedPayload(payload, oldSig, []byte("new-secret"), time.Minute, now); !errors.Is(err, niche.ErrWebhookSignature) {
		t.Fatalf("old-secret signature accepted: %v", err)
	}
}
