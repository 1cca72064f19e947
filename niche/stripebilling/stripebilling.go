// Package stripebilling sells niche-discovery subscriptions through Stripe
// (github.com/stripe/stripe-go/v85, API version 2026-03-25.dahlia): Checkout
// Sessions in subscription mode, Billing Portal sessions, and signed
// webhooks turned into niche.SubscriptionChanges. It implements
// niche.Billing.
//
// Choices made here:
//
//   - The price is checked strictly before checkout is offered: it must be
//     active, of type recurring, billed every month (interval month, count
//     1, licensed usage), in USD, per-unit with a positive unit amount, in
//     the same mode (live or test) as the secret key, and, when
//     Options.ExpectedAmountCents is set, of exactly that amount. Anything
//     else makes checkout unavailable (503) rather than selling the wrong
//     product. The check is cached for Options.OfferTTL (failures for 30 s).
//   - Checkout sessions carry metadata serviceId (on the session and on the
//     subscription). A checkout.session.completed event creates a
//     subscription only when the session is ours (mode subscription, status
//     complete, our serviceId); events about other subscriptions of the
//     same Stripe account are ignored, as are events of the other mode
//     (test vs live).
//   - Webhooks are verified with webhook.ConstructEventWithOptions (300 s
//     tolerance by default; timestamps further in the future are refused
//     too), bodies are limited to 256 KiB, and the API-version check is
//     relaxed (IgnoreAPIVersionMismatch): the payload is only used for
//     object ids and the session's own fields, read version-tolerantly.
//   - For every subscription event (customer.subscription.*, invoice.paid,
//     invoice.payment_failed, and the subscription of a completed checkout)
//     the subscription is re-read from Stripe, and the change carries the
//     state as of that read. Deliveries in any order, duplicated or late,
//     therefore converge on Stripe's current state. If Stripe cannot be
//     reached the webhook fails (503) and Stripe retries it.
//   - Retries: stripe-go's own (Options.MaxNetworkRetries, 2 by default),
//     which send an Idempotency-Key on every POST, so that retried checkout
//     creations never create two sessions; each attempt has the HTTP
//     client's timeout (20 s by default).
package stripebilling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
	"golang.org/x/sync/singleflight"

	"github.com/assaykit/assay/internal/stripeclient"
	"github.com/assaykit/assay/niche"
)

// Provider is the niche.Billing provider name of this backend.
const Provider = "stripe"

// DefaultServiceID is the metadata serviceId set on checkout sessions and
// subscriptions when Options.ServiceID is empty.
const DefaultServiceID = "niche-discovery"

// SignatureHeader carries Stripe's webhook signature.
const SignatureHeader = "Stripe-Signature"

// Options configure New. SecretKey, PriceID and WebhookSecret are required.
type Options struct {
	// SecretKey is the Stripe secret or restricted key (sk_live_…,
	// sk_test_…, rk_live_…, rk_test_…). Its mode must match the price's and
	// the events'.
	SecretKey string
	// PriceID is the monthly USD price sold (price_…).
	PriceID string
	// WebhookSecret is the endpoint's signing secret (whsec_…).
	WebhookSecret string
	// ServiceID marks our sessions and subscriptions in their metadata.
	// Empty means DefaultServiceID.
	ServiceID string
	// ExpectedAmountCents, when positive, is the only unit amount accepted
	// (for example 999 for USD 9.99).
	ExpectedAmountCents int64
	// Tolerance is the webhook timestamp tolerance. Zero means 300 s.
	Tolerance time.Duration
	// APIURL replaces https://api.stripe.com (stripe-mock, test fakes).
	APIURL string
	// HTTPClient makes the API calls. Nil means a client with a 20 s
	// timeout.
	HTTPClient *http.Client
	// MaxNetworkRetries is how often stripe-go retries a failed call. Zero
	// means 2; negative means none.
	MaxNetworkRetries int
	// OfferTTL is how long a successful price check is reused. Zero means
	// 10 minutes.
	OfferTTL time.Duration
	// Logger receives warnings about ignored events and Stripe failures.
	// Nil discards them.
	Logger *slog.Logger
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// Billing is the Stripe implementation of niche.Billing.
type Billing struct {
	sc        *stripe.Client
	priceID   string
	secret    string
	serviceID string
	amount    int64
	tolerance time.Duration
	ttl       time.Duration
	livemode  bool
	log       *slog.Logger
	now       func() time.Time

	sf      singleflight.Group
	mu      sync.Mutex
	offer   *niche.BillingOffer
	offErr  error
	offerAt time.Time
	offTTL  time.Duration
}

var _ niche.Billing = (*Billing)(nil)

// New returns the Stripe billing backend. It makes no API call: the price
// is checked on the first Offer.
func New(opts *Options) (*Billing, error) {
	if opts == nil {
		return nil, errors.New("stripebilling: options are required")
	}
	o := *opts
	var livemode bool
	switch {
	case strings.HasPrefix(o.SecretKey, "sk_live_"), strings.HasPrefix(o.SecretKey, "rk_live_"):
		livemode = true
	case strings.HasPrefix(o.SecretKey, "sk_test_"), strings.HasPrefix(o.SecretKey, "rk_test_"):
	default:
		return nil, errors.New("stripebilling: SecretKey must be a Stripe secret or restricted key (sk_live_, sk_test_, rk_live_, rk_test_)")
	}
	if o.PriceID == "" {
		return nil, errors.New("stripebilling: PriceID is required")
	}
	if o.WebhookSecret == "" {
		return nil, errors.New("stripebilling: WebhookSecret is required")
	}
	if o.ServiceID == "" {
		o.ServiceID = DefaultServiceID
	}
	if o.Tolerance <= 0 {
		o.Tolerance = niche.DefaultWebhookTolerance
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 20 * time.Second}
	}
	retries := int64(2)
	switch {
	case o.MaxNetworkRetries > 0:
		retries = int64(o.MaxNetworkRetries)
	case o.MaxNetworkRetries < 0:
		retries = 0
	}
	if o.OfferTTL <= 0 {
		o.OfferTTL = 10 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	sc := stripeclient.New(o.SecretKey, stripeclient.Options{HTTPClient: o.HTTPClient, URL: o.APIURL,
		MaxNetworkRetries: stripe.Int64(retries), Logger: slogAdapter{o.Logger}, DisableTelemetry: true})
	return &Billing{sc: sc, priceID: o.PriceID, secret: o.WebhookSecret, serviceID: o.ServiceID,
		amount: o.ExpectedAmountCents, tolerance: o.Tolerance, ttl: o.OfferTTL, livemode: livemode,
		log: o.Logger, now: o.Now}, nil
}

// Provider returns "stripe".
func (b *Billing) Provider() string { return Provider }

// WebhookHeader returns "Stripe-Signature".
func (b *Billing) WebhookHeader() string { return SignatureHeader }

// Livemode reports whether the secret key is a live key.
func (b *Billing) Livemode() bool { return b.livemode }

// Offer checks the configured price (cached) and returns the offer, or an
// error wrapping niche.ErrBillingUnavailable.
func (b *Billing) Offer(ctx context.Context) (*niche.BillingOffer, error) {
	if o, err, ok := b.cachedOffer(); ok {
		return o, err
	}
	// One price check at a time; it runs detached from the first caller's
	// cancellation so that the others still get its answer.
	ch := b.sf.DoChan("offer", func() (any, error) {
		// A check that ended between this caller's look at the cache and
		// its call here has already answered.
		if o, err, ok := b.cachedOffer(); ok {
			return o, err
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		o, err := b.checkPrice(cctx)
		b.mu.Lock()
		b.offer, b.offErr, b.offerAt, b.offTTL = o, err, b.now(), b.ttl
		if err != nil {
			b.offTTL = 30 * time.Second
		}
		b.mu.Unlock()
		if err != nil {
			b.log.WarnContext(cctx, "stripe: checkout unavailable", "err", err)
		}
		return o, err
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*niche.BillingOffer), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// cachedOffer returns the last price check's answer while it is fresh.
func (b *Billing) cachedOffer() (*niche.BillingOffer, error, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.offerAt.IsZero() && b.now().Sub(b.offerAt) < b.offTTL {
		return b.offer, b.offErr, true
	}
	return nil, nil, false
}

func (b *Billing) checkPrice(ctx context.Context) (*niche.BillingOffer, error) {
	p, err := b.sc.V1Prices.Retrieve(ctx, b.priceID, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: retrieving price %s: %s", niche.ErrBillingUnavailable, b.priceID, describe(err))
	}
	var problems []string
	if !p.Active {
		problems = append(problems, "not active")
	}
	if p.Type != stripe.PriceTypeRecurring || p.Recurring == nil {
		problems = append(problems, "not recurring")
	} else {
		if p.Recurring.Interval != stripe.PriceRecurringIntervalMonth || p.Recurring.IntervalCount != 1 {
			problems = append(problems, fmt.Sprintf("billed every %d %s, not monthly", p.Recurring.IntervalCount, p.Recurring.Interval))
		}
		if p.Recurring.UsageType != "" && p.Recurring.UsageType != stripe.PriceRecurringUsageTypeLicensed {
			problems = append(problems, "metered usage")
		}
	}
	if p.Currency != stripe.CurrencyUSD {
		problems = append(problems, fmt.Sprintf("currency %q, not usd", p.Currency))
	}
	if (p.BillingScheme != "" && p.BillingScheme != stripe.PriceBillingSchemePerUnit) || p.UnitAmount <= 0 {
		problems = append(problems, "no fixed positive unit amount")
	} else if b.amount > 0 && p.UnitAmount != b.amount {
		problems = append(problems, fmt.Sprintf("amount %d cents, expected %d", p.UnitAmount, b.amount))
	}
	if p.Livemode != b.livemode {
		problems = append(problems, fmt.Sprintf("livemode %v does not match the key", p.Livemode))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: price %s: %s", niche.ErrBillingUnavailable, b.priceID, strings.Join(problems, "; "))
	}
	return &niche.BillingOffer{PriceRef: p.ID, AmountMicroUSD: p.UnitAmount * 10_000, Currency: "USD",
		Interval: "month", Livemode: p.Livemode}, nil
}

// CreateCheckout creates a Checkout Session in subscription mode for the
// configured price.
func (b *Billing) CreateCheckout(ctx context.Context, p niche.CheckoutParams) (*niche.CheckoutSession, error) {
	if p.SuccessURL == "" || p.CancelURL == "" {
		return nil, fmt.Errorf("%w: success and cancel URLs are required", niche.ErrBillingUnavailable)
	}
	meta := map[string]string{"serviceId": b.serviceID}
	cs, err := b.sc.V1CheckoutSessions.Create(ctx, &stripe.CheckoutSessionCreateParams{
		Mode:       stripe.String(string(stripe.CheckoutSessionModeSubscription)),
		LineItems:  []*stripe.CheckoutSessionCreateLineItemParams{{Price: stripe.String(b.priceID), Quantity: stripe.Int64(1)}},
		SuccessURL: stripe.String(p.SuccessURL),
		CancelURL:  stripe.String(p.CancelURL),
		Metadata:   meta,
		SubscriptionData: &stripe.CheckoutSessionCreateSubscriptionDataParams{
			Metadata: meta,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: creating checkout session: %s", niche.ErrBillingFailed, describe(err))
	}
	if cs.ID == "" || cs.URL == "" {
		return nil, fmt.Errorf("%w: checkout session without id or URL", niche.ErrBillingFailed)
	}
	out := &niche.CheckoutSession{ID: cs.ID, URL: cs.URL}
	if cs.ExpiresAt > 0 {
		out.ExpiresAt = time.Unix(cs.ExpiresAt, 0).UTC()
	}
	return out, nil
}

// CreatePortal creates a Billing Portal session for the customer.
func (b *Billing) CreatePortal(ctx context.Context, p niche.PortalParams) (*niche.PortalSession, error) {
	if p.CustomerRef == "" {
		return nil, fmt.Errorf("%w: the subscription has no Stripe customer", niche.ErrBillingFailed)
	}
	params := &stripe.BillingPortalSessionCreateParams{Customer: stripe.String(p.CustomerRef)}
	if p.ReturnURL != "" {
		params.ReturnURL = stripe.String(p.ReturnURL)
	}
	ps, err := b.sc.V1BillingPortalSessions.Create(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("%w: creating billing portal session: %s", niche.ErrBillingFailed, describe(err))
	}
	if ps.URL == "" {
		return nil, fmt.Errorf("%w: billing portal session without URL", niche.ErrBillingFailed)
	}
	return &niche.PortalSession{URL: ps.URL}, nil
}

// VerifyWebhook checks the Stripe-Signature of a delivery (signature and
// tolerance) and decodes the event envelope.
func (b *Billing) VerifyWebhook(_ context.Context, payload []byte, signature string) (*niche.WebhookEvent, error) {
	if len(payload) > niche.MaxWebhookBytes {
		return nil, fmt.Errorf("%w: payload larger than %d bytes", niche.ErrWebhookMalformed, niche.MaxWebhookBytes)
	}
	ev, err := webhook.ConstructEventWithOptions(payload, signature, b.secret, webhook.ConstructEventOptions{
		Tolerance: b.tolerance, IgnoreAPIVersionMismatch: true,
	})
	switch {
	case errors.Is(err, webhook.ErrTooOld):
		return nil, fmt.Errorf("%w: %v", niche.ErrWebhookStale, err)
	case errors.Is(err, webhook.ErrNotSigned), errors.Is(err, webhook.ErrInvalidHeader), errors.Is(err, webhook.ErrNoValidSignature):
		return nil, fmt.Errorf("%w: %v", niche.ErrWebhookSignature, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", niche.ErrWebhookMalformed, err)
	}
	// The library only refuses old timestamps; refuse far-future ones too.
	if ts, ok := signedAt(signature); !ok || ts.Sub(b.now()) > b.tolerance {
		return nil, fmt.Errorf("%w: signed in the future", niche.ErrWebhookStale)
	}
	if ev.ID == "" || ev.Data == nil || len(ev.Data.Raw) == 0 {
		return nil, fmt.Errorf("%w: event without id or data", niche.ErrWebhookMalformed)
	}
	return &niche.WebhookEvent{ID: ev.ID, Type: string(ev.Type), Created: time.Unix(ev.Created, 0).UTC(),
		Livemode: ev.Livemode, Object: ev.Data.Raw}, nil
}

// signedAt returns the t= timestamp of a Stripe-Signature header.
func signedAt(header string) (time.Time, bool) {
	for part := range strings.SplitSeq(header, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "t="); ok {
			sec, err := strconv.ParseInt(v, 10, 64)
			return time.Unix(sec, 0), err == nil
		}
	}
	return time.Time{}, false
}

// ref is an id that Stripe sends either as a string or as an expanded
// object with an "id".
type ref string

func (r *ref) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*r = ref(s)
		return nil
	}
	var o struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	*r = ref(o.ID)
	return nil
}

// Event types acted on.
const (
	evCheckoutCompleted = "checkout.session.completed"
	evInvoicePaid       = "invoice.paid"
	evInvoiceFailed     = "invoice.payment_failed"
	evSubDeleted        = "customer.subscription.deleted"
)

// ResolveWebhook turns a verified Stripe event into subscription changes,
// re-reading the subscription from Stripe.
func (b *Billing) ResolveWebhook(ctx context.Context, ev *niche.WebhookEvent) ([]niche.SubscriptionChange, error) {
	if ev.Livemode != b.livemode {
		b.log.WarnContext(ctx, "stripe: event of the other mode ignored", "event", ev.ID, "livemode", ev.Livemode)
		return nil, nil
	}
	switch ev.Type {
	case evCheckoutCompleted:
		var cs struct {
			ID       string            `json:"id"`
			Mode     string            `json:"mode"`
			Status   string            `json:"status"`
			Metadata map[string]string `json:"metadata"`
			Sub      ref               `json:"subscription"`
			Customer ref               `json:"customer"`
		}
		if err := json.Unmarshal(ev.Object, &cs); err != nil {
			return nil, fmt.Errorf("%w: checkout session: %v", niche.ErrWebhookMalformed, err)
		}
		if cs.Mode != "subscription" || cs.Metadata["serviceId"] != b.serviceID {
			return nil, nil // another product's checkout
		}
		if cs.Status != "complete" || cs.Sub == "" || cs.ID == "" {
			b.log.WarnContext(ctx, "stripe: incomplete checkout session ignored", "event", ev.ID, "session", cs.ID, "status", cs.Status)
			return nil, nil
		}
		c, err := b.fetch(ctx, string(cs.Sub))
		if err != nil {
			return nil, err
		}
		c.Create, c.CheckoutSession = true, cs.ID
		if c.CustomerRef == "" {
			c.CustomerRef = string(cs.Customer)
		}
		return []niche.SubscriptionChange{c}, nil

	case "customer.subscription.created", "customer.subscription.updated", evSubDeleted,
		"customer.subscription.paused", "customer.subscription.resumed":
		var s struct {
			ID                string `json:"id"`
			Status            string `json:"status"`
			Customer          ref    `json:"customer"`
			CancelAtPeriodEnd bool   `json:"cancel_at_period_end"`
		}
		if err := json.Unmarshal(ev.Object, &s); err != nil || s.ID == "" {
			return nil, fmt.Errorf("%w: subscription object", niche.ErrWebhookMalformed)
		}
		c, err := b.fetch(ctx, s.ID)
		if errors.Is(err, errNoSuchSubscription) && ev.Type == evSubDeleted {
			// Gone at Stripe: the deletion is final, whatever came before.
			return []niche.SubscriptionChange{{ProviderRef: s.ID, CustomerRef: string(s.Customer),
				Status: niche.SubscriptionCanceled, ObservedAt: b.now()}}, nil
		}
		if err != nil {
			return nil, err
		}
		return []niche.SubscriptionChange{c}, nil

	case evInvoicePaid, evInvoiceFailed, "invoice.payment_succeeded":
		var inv struct {
			Sub    ref `json:"subscription"` // before API 2025-03-31
			Parent *struct {
				Details *struct {
					Sub ref `json:"subscription"`
				} `json:"subscription_details"`
			} `json:"parent"`
		}
		if err := json.Unmarshal(ev.Object, &inv); err != nil {
			return nil, fmt.Errorf("%w: invoice object: %v", niche.ErrWebhookMalformed, err)
		}
		id := string(inv.Sub)
		if inv.Parent != nil && inv.Parent.Details != nil && inv.Parent.Details.Sub != "" {
			id = string(inv.Parent.Details.Sub)
		}
		if id == "" {
			return nil, nil // not a subscription invoice
		}
		c, err := b.fetch(ctx, id)
		if err != nil {
			return nil, err
		}
		return []niche.SubscriptionChange{c}, nil
	}
	return nil, nil
}

var errNoSuchSubscription = errors.New("stripebilling: no such subscription")

// fetch reads a subscription's current state from Stripe.
func (b *Billing) fetch(ctx context.Context, id string) (niche.SubscriptionChange, error) {
	s, err := b.sc.V1Subscriptions.Retrieve(ctx, id, nil)
	if err != nil {
		var se *stripe.Error
		if errors.As(err, &se) && (se.HTTPStatusCode == http.StatusNotFound || se.Code == stripe.ErrorCodeResourceMissing) {
			return niche.SubscriptionChange{}, fmt.Errorf("%w: %s", errNoSuchSubscription, id)
		}
		return niche.SubscriptionChange{}, fmt.Errorf("%w: retrieving subscription %s: %s", niche.ErrBillingFailed, id, describe(err))
	}
	c := niche.SubscriptionChange{ProviderRef: s.ID, Status: string(s.Status), CancelAtPeriodEnd: s.CancelAtPeriodEnd,
		ObservedAt: b.now()}
	if c.ProviderRef == "" {
		c.ProviderRef = id
	}
	if s.Customer != nil {
		c.CustomerRef = s.Customer.ID
	}
	if s.Items != nil {
		for i, it := range s.Items.Data {
			if it == nil || it.Price == nil {
				continue
			}
			if i == 0 || it.Price.ID == b.priceID {
				c.PriceRef = it.Price.ID
				if it.CurrentPeriodEnd > 0 {
					c.CurrentPeriodEnd = time.Unix(it.CurrentPeriodEnd, 0).UTC()
				}
			}
		}
	}
	return c, nil
}

// describe summarises a Stripe error without request details.
func describe(err error) string {
	var se *stripe.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("stripe %d %s: %s", se.HTTPStatusCode, se.Code, se.Msg)
	}
	return err.Error()
}

// slogAdapter routes stripe-go's logging to slog (request chatter at debug).
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Debugf(ctx context.Context, format string, v ...any) {
	a.l.DebugContext(ctx, "stripe: "+fmt.Sprintf(format, v...))
}

func (a slogAdapter) Infof(ctx context.Context, format string, v ...any) {
	a.l.DebugContext(ctx, "stripe: "+fmt.Sprintf(format, v...))
}

func (a slogAdapter) Warnf(ctx context.Context, format string, v ...any) {
	a.l.WarnContext(ctx, "stripe: "+fmt.Sprintf(format, v...))
}

func (a slogAdapter) Errorf(ctx context.Context, format string, v ...any) {
	a.l.WarnContext(ctx, "stripe: "+fmt.Sprintf(format, v...))
}
