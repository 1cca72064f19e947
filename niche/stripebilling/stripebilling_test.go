package stripebilling_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/stripebilling"
	sbt "github.com/assaykit/assay/niche/stripebilling/stripebillingtest"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

const (
	whsec   = "whsec_test_secret_0123456789"
	priceID = "price_niche_monthly"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

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

func newBilling(t *testing.T, url string, clk *clock, mod func(*stripebilling.Options)) *stripebilling.Billing {
	t.Helper()
	o := &stripebilling.Options{SecretKey: "sk_test_123", PriceID: priceID, WebhookSecret: whsec, APIURL: url,
		MaxNetworkRetries: -1}
	if clk != nil {
		o.Now = clk.Now
	}
	if mod != nil {
		mod(o)
	}
	b, err := stripebilling.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewValidatesOptions(t *testing.T) {
	for _, o := range []*stripebilling.Options{
		nil,
		{SecretKey: "pk_test_1", PriceID: priceID, WebhookSecret: whsec},
		{SecretKey: "", PriceID: priceID, WebhookSecret: whsec},
		{SecretKey: "sk_test_1", WebhookSecret: whsec},
		{SecretKey: "sk_test_1", PriceID: priceID},
	} {
		if _, err := stripebilling.New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	b, err := stripebilling.New(&stripebilling.Options{SecretKey: "rk_live_1", PriceID: priceID, WebhookSecret: whsec})
	if err != nil || !b.Livemode() || b.Provider() != "stripe" || b.WebhookHeader() != "Stripe-Signature" {
		t.Fatalf("live restricted key: %v %v", b, err)
	}
}

func TestOfferChecksThePrice(t *testing.T) {
	fake := sbt.NewServer()
	defer fake.Close()
	good := sbt.MonthlyPrice(priceID)
	tests := []struct {
		name   string
		price  sbt.Price
		expect int64
		want   string // "" = available; else a substring of the error
	}{
		{"monthly usd", good, 0, ""},
		{"expected amount", good, 999, ""},
		{"other amount", good, 1999, "amount 999 cents, expected 1999"},
		{"inactive", func() sbt.Price { p := good; p.Active = false; return p }(), 0, "not active"},
		{"one-time", func() sbt.Price { p := good; p.Type = "one_time"; return p }(), 0, "not recurring"},
		{"yearly", func() sbt.Price { p := good; p.Interval = "year"; return p }(), 0, "not monthly"},
		{"quarterly", func() sbt.Price { p := good; p.IntervalCount = 3; return p }(), 0, "not monthly"},
		{"metered", func() sbt.Price { p := good; p.UsageType = "metered"; return p }(), 0, "metered"},
		{"eur", func() sbt.Price { p := good; p.Currency = "eur"; return p }(), 0, `currency "eur"`},
		{"free", func() sbt.Price { p := good; p.UnitAmount = 0; return p }(), 0, "no fixed positive unit amount"},
		{"live price, test key", func() sbt.Price { p := good; p.Livemode = true; return p }(), 0, "livemode"},
		{"unknown price", func() sbt.Price { p := good; p.ID = "price_other"; return p }(), 0, "resource_missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake.SetPrice(tc.price)
			b := newBilling(t, fake.URL, nil, func(o *stripebilling.Options) { o.ExpectedAmountCents = tc.expect })
			o, err := b.Offer(context.Background())
			if tc.want == "" {
				want := &niche.BillingOffer{PriceRef: priceID, AmountMicroUSD: 9_990_000, Currency: "USD", Interval: "month"}
				if err != nil {
					t.Fatalf("Offer: %v", err)
				}
				if d := cmp.Diff(want, o); d != "" {
					t.Fatalf("offer (-want +got):\n%s", d)
				}
				return
			}
			if !errors.Is(err, niche.ErrBillingUnavailable) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Offer: %v, want ErrBillingUnavailable mentioning %q", err, tc.want)
			}
		})
	}
}

func TestOfferIsCached(t *testing.T) {
	fake := sbt.NewServer()
	defer fake.Close()
	fake.SetPrice(sbt.MonthlyPrice(priceID))
	clk := &clock{t: time.Now()}
	b := newBilling(t, fake.URL, clk, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := b.Offer(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("%d price requests for 8 concurrent offers, want 1", n)
	}
	clk.Advance(11 * time.Minute)
	fake.Fail("/v1/prices/", 500)
	if _, err := b.Offer(ctx); !errors.Is(err, niche.ErrBillingUnavailable) {
		t.Fatalf("Offer with Stripe down: %v", err)
	}
	fake.Fail("/v1/prices/", 0)
	if _, err := b.Offer(ctx); err == nil {
		t.Fatal("a failed check must be cached for a short while")
	}
	clk.Advance(31 * time.Second)
	if _, err := b.Offer(ctx); err != nil {
		t.Fatalf("Offer after recovery: %v", err)
	}
	if n := len(fake.Requests()); n != 3 {
		t.Fatalf("%d price requests, want 3", n)
	}
}

func TestCheckoutAndPortalParameters(t *testing.T) {
	fake := sbt.NewServer()
	defer fake.Close()
	fake.SetPrice(sbt.MonthlyPrice(priceID))
	b := newBilling(t, fake.URL, nil, func(o *stripebilling.Options) { o.ServiceID = "niche-test" })
	ctx := context.Background()
	if _, err := b.CreateCheckout(ctx, niche.CheckoutParams{}); !errors.Is(err, niche.ErrBillingUnavailable) {
		t.Fatalf("checkout without URLs: %v", err)
	}
	success := "https://api.example/niche-discovery/v1/subscription/success?session_id=" + niche.CheckoutSessionPlaceholder
	cs, err := b.CreateCheckout(ctx, niche.CheckoutParams{SuccessURL: success, CancelURL: "https://api.example/cancel"})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := fake.Session(cs.ID)
	if !ok || cs.URL != got.URL || cs.ExpiresAt.IsZero() {
		t.Fatalf("session %+v / %+v", cs, got)
	}
	want := sbt.Session{ID: cs.ID, URL: got.URL, Status: "open", Price: priceID, SuccessURL: success,
		CancelURL: "https://api.example/cancel", Metadata: map[string]string{"serviceId": "niche-test"},
		SubscriptionMetadata: map[string]string{"serviceId": "niche-test"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("checkout parameters (-want +got):\n%s", d)
	}
	if _, err := fake.CompleteCheckout(cs.ID, false); err != nil {
		t.Fatal(err)
	}
	got, _ = fake.Session(cs.ID)
	ps, err := b.CreatePortal(ctx, niche.PortalParams{CustomerRef: got.Customer, ReturnURL: "https://api.example/back"})
	if err != nil || !strings.HasPrefix(ps.URL, "https://billing.stripe.test/") {
		t.Fatalf("CreatePortal = %+v, %v", ps, err)
	}
	if _, err := b.CreatePortal(ctx, niche.PortalParams{CustomerRef: "cus_unknown"}); !errors.Is(err, niche.ErrBillingFailed) {
		t.Fatalf("portal for an unknown customer: %v", err)
	}
	fake.Fail("/v1/checkout/", 500)
	if _, err := b.CreateCheckout(ctx, niche.CheckoutParams{SuccessURL: success, CancelURL: "https://x/c"}); !errors.Is(err, niche.ErrBillingFailed) {
		t.Fatalf("checkout with Stripe down: %v", err)
	}
}

// env is a subscription service over SQLite selling through the fake.
type env struct {
	clk  *clock
	fake *sbt.Server
	b    *stripebilling.Billing
	db   *store.DB
	svc  *niche.SubscriptionService
}

// emptyDB is an empty, migrated database, copied for each test that
// opens it (migrating each anew cost about 10 ms).
var emptyDB storetest.Template

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{clk: &clock{t: time.Now().UTC()}, fake: sbt.NewServer()}
	t.Cleanup(e.fake.Close)
	e.fake.Now = e.clk.Now
	e.fake.SetPrice(sbt.MonthlyPrice(priceID))
	e.b = newBilling(t, e.fake.URL, e.clk, nil)
	var err error
	e.db = emptyDB.Open(t, &store.Options{Now: e.clk.Now})
	e.svc, err = niche.NewSubscriptionService(nichestore.New(e.db), e.b, &niche.SubscriptionOptions{Now: e.clk.Now, PastDueGrace: 7 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) deliver(t *testing.T, payload []byte) (*niche.WebhookResult, error) {
	t.Helper()
	return e.svc.HandleWebhook(context.Background(), payload, sbt.Sign(payload, whsec, time.Time{}))
}

func (e *env) mustDeliver(t *testing.T, payload []byte) *niche.WebhookResult {
	t.Helper()
	res, err := e.deliver(t, payload)
	if err != nil {
		t.Fatalf("webhook: %v", err)
	}
	return res
}

// subscribe runs checkout → checkout.session.completed → claim.
func (e *env) subscribe(t *testing.T) (sessionID string, it *niche.IssuedToken, subID string) {
	t.Helper()
	ctx := context.Background()
	cs, offer, err := e.svc.Checkout(ctx, niche.CheckoutParams{SuccessURL: "https://x/ok?s=" + niche.CheckoutSessionPlaceholder, CancelURL: "https://x/no"})
	if err != nil {
		t.Fatalf("Checkout: %v", err)
	}
	if offer.AmountMicroUSD != 9_990_000 || offer.Development {
		t.Fatalf("offer %+v", offer)
	}
	// The success redirect alone grants nothing.
	if _, err := e.svc.Claim(ctx, cs.ID); !errors.Is(err, niche.ErrClaimPending) {
		t.Fatalf("claim before the webhook: %v", err)
	}
	obj, err := e.fake.CompleteCheckout(cs.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Claim(ctx, cs.ID); !errors.Is(err, niche.ErrClaimPending) {
		t.Fatalf("claim after payment but before the webhook: %v", err)
	}
	res := e.mustDeliver(t, sbt.Event("checkout.session.completed", obj))
	if res.Duplicate || res.Changes != 1 {
		t.Fatalf("checkout webhook = %+v", res)
	}
	it, err = e.svc.Claim(ctx, cs.ID)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return cs.ID, it, obj["subscription"].(string)
}

func (e *env) active(t *testing.T, token string) bool {
	t.Helper()
	_, err := e.svc.Active(context.Background(), token)
	if err != nil && !errors.Is(err, niche.ErrNotSubscribed) {
		t.Fatalf("Active: %v", err)
	}
	return err == nil
}

func TestSubscriptionLifecycleWithFake(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	session, it, subID := e.subscribe(t)
	if !e.active(t, it.Token) {
		t.Fatal("new subscriber refused")
	}
	if it.Subscription.Provider != "stripe" || it.Subscription.ProviderRef != subID || it.Subscription.PriceRef != priceID {
		t.Fatalf("subscription %+v", it.Subscription)
	}
	if _, err := e.svc.Claim(ctx, session); !errors.Is(err, niche.ErrClaimUsed) {
		t.Fatalf("second claim: %v", err)
	}
	ps, err := e.svc.Portal(ctx, it.Token, niche.PortalParams{ReturnURL: "https://x/back"})
	if err != nil || ps.URL == "" {
		t.Fatalf("Portal = %+v, %v", ps, err)
	}

	set := func(f func(*sbt.Subscription)) map[string]any {
		obj, err := e.fake.SetSubscription(subID, f)
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	// A stale copy of the subscription, taken while it was active.
	staleActive, _ := e.fake.SubscriptionObject(subID)

	steps := []struct {
		name    string
		advance time.Duration
		event   func() []byte
		want    bool
		status  string
	}{
		{"renewal fails", time.Hour, func() []byte {
			set(func(s *sbt.Subscription) { s.Status = "past_due" })
			return sbt.Event("invoice.payment_failed", sbt.InvoiceObject(subID, "open"))
		}, true, niche.SubscriptionPastDue},
		{"still in grace", 6 * 24 * time.Hour, nil, true, niche.SubscriptionPastDue},
		{"grace over", 2 * 24 * time.Hour, nil, false, niche.SubscriptionPastDue},
		{"paid", time.Hour, func() []byte {
			set(func(s *sbt.Subscription) {
				s.Status = "active"
				s.CurrentPeriodEnd = s.CurrentPeriodEnd.AddDate(0, 1, 0)
			})
			return sbt.Event("invoice.paid", sbt.InvoiceObject(subID, "paid"))
		}, true, niche.SubscriptionActive},
		{"cancel at period end", time.Hour, func() []byte {
			return sbt.Event("customer.subscription.updated", set(func(s *sbt.Subscription) { s.CancelAtPeriodEnd = true }))
		}, true, niche.SubscriptionActive},
		{"unpaid", time.Hour, func() []byte {
			return sbt.Event("customer.subscription.updated", set(func(s *sbt.Subscription) { s.Status = "unpaid" }))
		}, false, niche.SubscriptionUnpaid},
		{"late delivery of an old event converges on Stripe's state", time.Hour, func() []byte {
			return sbt.Event("customer.subscription.updated", staleActive)
		}, false, niche.SubscriptionUnpaid},
		{"canceled", time.Hour, func() []byte {
			return sbt.Event("customer.subscription.deleted", set(func(s *sbt.Subscription) { s.Status = "canceled" }))
		}, false, niche.SubscriptionCanceled},
	}
	for _, st := range steps {
		e.clk.Advance(st.advance)
		if st.event != nil {
			if res := e.mustDeliver(t, st.event()); res.Duplicate {
				t.Fatalf("%s: fresh event reported as duplicate", st.name)
			}
		}
		if got := e.active(t, it.Token); got != st.want {
			t.Fatalf("%s: active = %v, want %v", st.name, got, st.want)
		}
		sub, err := nichestore.New(e.db).SubscriptionByRef(ctx, "stripe", subID)
		if err != nil || sub.Status != st.status {
			t.Fatalf("%s: stored status %v (%v), want %s", st.name, sub, err, st.status)
		}
	}
	stored, _ := nichestore.New(e.db).SubscriptionByRef(ctx, "stripe", subID)
	if !stored.CancelAtPeriodEnd && stored.Status != niche.SubscriptionCanceled {
		t.Fatalf("cancel flag lost: %+v", stored)
	}
	// Deleted at Stripe (retrieve fails): the deletion event still applies.
	e.fake.DeleteSubscription(subID)
	e.mustDeliver(t, sbt.Event("customer.subscription.deleted", staleActive))
	if e.active(t, it.Token) {
		t.Fatal("deleted subscription grants access")
	}
}

func TestForeignAndOtherModeEventsAreIgnored(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cs, _, err := e.svc.Checkout(ctx, niche.CheckoutParams{SuccessURL: "https://x/ok", CancelURL: "https://x/no"})
	if err != nil {
		t.Fatal(err)
	}
	obj, _ := e.fake.CompleteCheckout(cs.ID, true)
	foreign := map[string]any{}
	for k, v := range obj {
		foreign[k] = v
	}
	foreign["metadata"] = map[string]any{"serviceId": "another-product"}
	live := map[string]any{}
	for k, v := range obj {
		live[k] = v
	}
	live["livemode"] = true
	open := map[string]any{}
	for k, v := range obj {
		open[k] = v
	}
	open["status"] = "open"
	payment := map[string]any{}
	for k, v := range obj {
		payment[k] = v
	}
	payment["mode"] = "payment"
	for name, o := range map[string]map[string]any{"another product": foreign, "live mode": live, "not complete": open, "payment mode": payment} {
		res := e.mustDeliver(t, sbt.Event("checkout.session.completed", o))
		if res.Duplicate {
			t.Fatalf("%s: duplicate", name)
		}
		if _, err := e.svc.Claim(ctx, cs.ID); !errors.Is(err, niche.ErrClaimPending) {
			t.Fatalf("%s: claim = %v, want ErrClaimPending", name, err)
		}
	}
	// Updates about a subscription we did not sell create nothing.
	subObj, _ := e.fake.SubscriptionObject(obj["subscription"].(string))
	e.mustDeliver(t, sbt.Event("customer.subscription.updated", subObj))
	if _, err := nichestore.New(e.db).SubscriptionByRef(ctx, "stripe", obj["subscription"].(string)); !errors.Is(err, niche.ErrSubscriptionNotFound) {
		t.Fatalf("foreign subscription stored: %v", err)
	}
	// Unknown event types and one-off invoices are recorded and ignored.
	for _, p := range [][]byte{
		sbt.Event("charge.refunded", map[string]any{"id": "ch_1", "object": "charge"}),
		sbt.Event("invoice.paid", map[string]any{"id": "in_1", "object": "invoice", "parent": nil}),
	} {
		if res := e.mustDeliver(t, p); res.Changes != 0 {
			t.Fatalf("ignored event made %d changes", res.Changes)
		}
	}
	// Now the genuine completion (a trial) works.
	e.mustDeliver(t, sbt.Event("checkout.session.completed", obj))
	it, err := e.svc.Claim(ctx, cs.ID)
	if err != nil || it.Subscription.Status != niche.SubscriptionTrialing || !e.active(t, it.Token) {
		t.Fatalf("trial: %+v, %v", it, err)
	}
}

func TestForgedStaleAndReplayedWebhooksChangeNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, it, subID := e.subscribe(t)
	cancelObj, _ := e.fake.SetSubscription(subID, func(s *sbt.Subscription) { s.Status = "canceled" })
	payload := sbt.Event("customer.subscription.deleted", cancelObj)
	now := time.Now()
	bad := []struct {
		name    string
		payload []byte
		sig     string
		want    error
	}{
		{"forged with another secret", payload, sbt.Sign(payload, "whsec_attacker", now), niche.ErrWebhookSignature},
		{"unsigned", payload, "", niche.ErrWebhookSignature},
		{"malformed header", payload, "garbage", niche.ErrWebhookSignature},
		{"body swapped under a valid signature", []byte(strings.Replace(string(payload), "deleted", "updated", 1)), sbt.Sign(payload, whsec, now), niche.ErrWebhookSignature},
		{"stale", payload, sbt.Sign(payload, whsec, now.Add(-301*time.Second)), niche.ErrWebhookStale},
		{"future", payload, sbt.Sign(payload, whsec, now.Add(10*time.Minute)), niche.ErrWebhookStale},
		{"not an event", []byte(`{"object":"charge"}`), sbt.Sign([]byte(`{"object":"charge"}`), whsec, now), niche.ErrWebhookMalformed},
		{"not JSON", []byte(`{`), sbt.Sign([]byte(`{`), whsec, now), niche.ErrWebhookMalformed},
		{"too large", []byte(strings.Repeat(" ", niche.MaxWebhookBytes+1)), "t=1,v1=00", niche.ErrWebhookMalformed},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.svc.HandleWebhook(ctx, tc.payload, tc.sig); !errors.Is(err, tc.want) {
				t.Fatalf("HandleWebhook: %v, want %v", err, tc.want)
			}
			if !e.active(t, it.Token) {
				t.Fatal("a refused webhook changed the subscription")
			}
		})
	}
	// The genuine delivery applies once; replays within the tolerance are
	// duplicates and do not even reach Stripe.
	sig := sbt.Sign(payload, whsec, now)
	if res, err := e.svc.HandleWebhook(ctx, payload, sig); err != nil || res.Duplicate {
		t.Fatalf("genuine delivery = %+v, %v", res, err)
	}
	if e.active(t, it.Token) {
		t.Fatal("cancellation not applied")
	}
	before := len(e.fake.Requests())
	if res, err := e.svc.HandleWebhook(ctx, payload, sig); err != nil || !res.Duplicate {
		t.Fatalf("replay = %+v, %v", res, err)
	}
	if after := len(e.fake.Requests()); after != before {
		t.Fatalf("a duplicate called Stripe %d times", after-before)
	}
}

func TestWebhookDuringStripeOutageIsRetried(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cs, _, _ := e.svc.Checkout(ctx, niche.CheckoutParams{SuccessURL: "https://x/ok", CancelURL: "https://x/no"})
	obj, _ := e.fake.CompleteCheckout(cs.ID, false)
	payload := sbt.Event("checkout.session.completed", obj)
	e.fake.Fail("/v1/subscriptions/", 503)
	if _, err := e.deliver(t, payload); !errors.Is(err, niche.ErrBillingFailed) {
		t.Fatalf("delivery during outage: %v, want ErrBillingFailed", err)
	}
	if _, err := e.svc.Claim(ctx, cs.ID); !errors.Is(err, niche.ErrClaimPending) {
		t.Fatalf("claim after a failed delivery: %v", err)
	}
	e.fake.Fail("/v1/subscriptions/", 0)
	if res := e.mustDeliver(t, payload); res.Duplicate {
		t.Fatal("Stripe's retry was treated as a duplicate")
	}
	if _, err := e.svc.Claim(ctx, cs.ID); err != nil {
		t.Fatalf("claim after the retry: %v", err)
	}
}

func TestConcurrentDuplicateDeliveriesProcessOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cs, _, _ := e.svc.Checkout(ctx, niche.CheckoutParams{SuccessURL: "https://x/ok", CancelURL: "https://x/no"})
	obj, _ := e.fake.CompleteCheckout(cs.ID, false)
	payload := sbt.Event("checkout.session.completed", obj)
	sig := sbt.Sign(payload, whsec, time.Time{})
	const n = 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh := 0
	for range n {
		wg.Go(func() {
			res, err := e.svc.HandleWebhook(ctx, payload, sig)
			if err != nil {
				t.Error(err)
				return
			}
			if !res.Duplicate {
				mu.Lock()
				fresh++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if fresh != 1 {
		t.Fatalf("%d of %d concurrent deliveries processed, want 1", fresh, n)
	}
	w, _ := e.db.SQL()
	var subs, events int
	_ = w.QueryRow("SELECT COUNT(*) FROM niche_subscriptions").Scan(&subs)
	_ = w.QueryRow("SELECT COUNT(*) FROM niche_billing_events").Scan(&events)
	if subs != 1 || events != 1 {
		t.Fatalf("%d subscriptions and %d events stored, want 1 and 1", subs, events)
	}
}

// TestStripeMock runs the Stripe calls against stripe-mock (the real API
// schema: parameter names, types and response shapes) and completes a
// subscription with a signed webhook.
func TestStripeMock(t *testing.T) {
	url := sbt.StartStripeMock(t)
	ctx := context.Background()
	b := newBilling(t, url, nil, nil)
	offer, err := b.Offer(ctx)
	if err != nil {
		t.Fatalf("Offer against stripe-mock: %v", err)
	}
	if offer.PriceRef != priceID || offer.AmountMicroUSD <= 0 || offer.Currency != "USD" {
		t.Fatalf("offer %+v", offer)
	}
	db := emptyDB.Open(t, nil)
	svc, err := niche.NewSubscriptionService(nichestore.New(db), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, _, err := svc.Checkout(ctx, niche.CheckoutParams{
		SuccessURL: "https://api.example/niche-discovery/v1/subscription/success?session_id=" + niche.CheckoutSessionPlaceholder,
		CancelURL:  "https://api.example/niche-discovery/v1/subscription/cancelled"})
	if err != nil {
		t.Fatalf("Checkout against stripe-mock: %v", err)
	}
	if !strings.HasPrefix(cs.ID, "cs_") || !strings.HasPrefix(cs.URL, "https://") {
		t.Fatalf("checkout session %+v", cs)
	}
	// stripe-mock keeps no state: build the completed session as Stripe
	// would send it; the subscription is then read back from stripe-mock.
	completed := map[string]any{"id": cs.ID, "object": "checkout.session", "mode": "subscription", "status": "complete",
		"payment_status": "paid", "livemode": false, "metadata": map[string]any{"serviceId": stripebilling.DefaultServiceID},
		"subscription": "sub_mock_1", "customer": "cus_mock_1"}
	payload := sbt.Event("checkout.session.completed", completed)
	if _, err := svc.HandleWebhook(ctx, payload, sbt.Sign(payload, "whsec_wrong", time.Time{})); !errors.Is(err, niche.ErrWebhookSignature) {
		t.Fatalf("forged webhook: %v", err)
	}
	if _, err := svc.Claim(ctx, cs.ID); !errors.Is(err, niche.ErrClaimPending) {
		t.Fatalf("claim after a forged webhook: %v", err)
	}
	res, err := svc.HandleWebhook(ctx, payload, sbt.Sign(payload, whsec, time.Time{}))
	if err != nil || res.Changes != 1 {
		t.Fatalf("webhook = %+v, %v", res, err)
	}
	it, err := svc.Claim(ctx, cs.ID)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	sub, err := svc.Active(ctx, it.Token)
	if err != nil || sub.Status != niche.SubscriptionActive {
		t.Fatalf("Active = %+v, %v", sub, err)
	}
	if it.Subscription.ProviderRef != "sub_mock_1" || it.Subscription.CustomerRef == "" {
		t.Fatalf("subscription %+v", it.Subscription)
	}
	ps, err := svc.Portal(ctx, it.Token, niche.PortalParams{ReturnURL: "https://api.example/account"})
	if err != nil || ps.URL == "" {
		t.Fatalf("Portal against stripe-mock = %+v, %v", ps, err)
	}
	// An invoice event re-reads the subscription from stripe-mock.
	inv := sbt.Event("invoice.paid", sbt.InvoiceObject("sub_mock_1", "paid"))
	if res, err := svc.HandleWebhook(ctx, inv, sbt.Sign(inv, whsec, time.Time{})); err != nil || res.Changes != 1 {
		t.Fatalf("invoice webhook = %+v, %v", res, err)
	}
	var env struct {
		APIVersion string `json:"api_version"`
	}
	_ = json.Unmarshal(payload, &env)
	if env.APIVersion == "" {
		t.Fatal("test events must carry an api_version")
	}
}
