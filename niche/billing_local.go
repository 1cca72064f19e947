package niche

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Development billing backend constants.
const (
	// LocalProvider is LocalBilling's Provider name.
	LocalProvider = "local"
	// LocalCheckoutPath and LocalPortalPath, followed by a session id, are
	// the development backend's pages under CheckoutParams.BaseURL.
	LocalCheckoutPath = "/v1/subscription/local/checkout/"
	LocalPortalPath   = "/v1/subscription/local/portal/"
	// LocalWebhookHeader carries LocalBilling's webhook signature.
	LocalWebhookHeader = "Assay-Local-Signature"
	// LocalPriceRef is the price id the development backend sells.
	LocalPriceRef = "local_monthly"
)

// Actions of the development billing portal (LocalBilling.PortalEvent).
const (
	LocalActionCancel      = "cancel"       // cancel now: canceled
	LocalActionFailPayment = "fail_payment" // a renewal fails: past_due
	LocalActionPay         = "pay"          // a renewal is paid: active, period extended
)

// LocalBillingOptions configure NewLocalBilling. A nil *Options means
// defaults.
type LocalBillingOptions struct {
	// Secret signs session ids and webhook payloads; at least 32 bytes.
	// Nil means a random secret: sessions then die with the process, and
	// several instances cannot share them.
	Secret []byte
	// AmountMicroUSD is the displayed monthly price. Zero means 9.99 USD.
	AmountMicroUSD int64
	// SessionTTL is how long a checkout or portal session can be used.
	// Zero means one hour.
	SessionTTL time.Duration
	// Tolerance is the webhook timestamp tolerance. Zero means
	// DefaultWebhookTolerance.
	Tolerance time.Duration
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// LocalBilling is a DEVELOPMENT billing backend: it sells the subscription
// without any payment processor and moves no money. Its checkout URL is a
// page of our own server (LocalCheckoutPath) whose confirmation produces a
// signed checkout.session.completed event that goes through exactly the
// same path as a Stripe webhook (SubscriptionService.HandleWebhook: verify,
// de-duplicate, apply), and then shows the subscriber token once. Its
// billing portal page (LocalPortalPath) can cancel the subscription,
// simulate a failed renewal (past_due) or a paid one, again through signed
// events. Anyone who can reach the server can subscribe for free: never
// use it in production.
//
// It keeps no state: session ids carry their expiry and an HMAC, and the
// subscription and event ids of a checkout are derived from its session, so
// confirming one checkout twice is a duplicate event.
type LocalBilling struct {
	secret    []byte
	amount    int64
	ttl       time.Duration
	tolerance time.Duration
	now       func() time.Time
}

// NewLocalBilling returns the development billing backend.
func NewLocalBilling(opts *LocalBillingOptions) (*LocalBilling, error) {
	var o LocalBillingOptions
	if opts != nil {
		o = *opts
	}
	l := &LocalBilling{secret: o.Secret, amount: o.AmountMicroUSD, ttl: o.SessionTTL, tolerance: o.Tolerance, now: o.Now}
	if l.secret == nil {
		l.secret = make([]byte, 32)
		_, _ = rand.Read(l.secret)
	} else if len(l.secret) < 32 {
		return nil, errors.New("niche: NewLocalBilling: secret shorter than 32 bytes")
	}
	if l.amount == 0 {
		l.amount = 9_990_000
	}
	if l.amount < 0 {
		return nil, errors.New("niche: NewLocalBilling: negative amount")
	}
	if l.ttl <= 0 {
		l.ttl = time.Hour
	}
	if l.tolerance <= 0 {
		l.tolerance = DefaultWebhookTolerance
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l, nil
}

// Provider returns LocalProvider.
func (l *LocalBilling) Provider() string { return LocalProvider }

// WebhookHeader returns LocalWebhookHeader.
func (l *LocalBilling) WebhookHeader() string { return LocalWebhookHeader }

// Offer returns the development offer (always available).
func (l *LocalBilling) Offer(context.Context) (*BillingOffer, error) {
	return &BillingOffer{PriceRef: LocalPriceRef, AmountMicroUSD: l.amount, Currency: "USD",
		Interval: "month", Development: true}, nil
}

// CreateCheckout returns a checkout session whose URL is the development
// checkout page under p.BaseURL.
func (l *LocalBilling) CreateCheckout(_ context.Context, p CheckoutParams) (*CheckoutSession, error) {
	if p.BaseURL == "" {
		return nil, fmt.Errorf("%w: the development backend needs the public base URL", ErrBillingUnavailable)
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	exp := l.now().Add(l.ttl).Truncate(time.Second)
	id := l.sign("lcs_", nonce[:], exp)
	return &CheckoutSession{ID: id, URL: strings.TrimRight(p.BaseURL, "/") + LocalCheckoutPath + id, ExpiresAt: exp}, nil
}

// CreatePortal returns a portal session whose URL is the development
// portal page under p.BaseURL.
func (l *LocalBilling) CreatePortal(_ context.Context, p PortalParams) (*PortalSession, error) {
	ref, ok := strings.CutPrefix(p.SubscriptionRef, "lsub_")
	raw, err := hex.DecodeString(ref)
	if !ok || err != nil || len(raw) != 16 {
		return nil, fmt.Errorf("%w: %q is not a development subscription", ErrCheckoutNotFound, p.SubscriptionRef)
	}
	if p.BaseURL == "" {
		return nil, fmt.Errorf("%w: the development backend needs the public base URL", ErrBillingUnavailable)
	}
	id := l.sign("lps_", raw, l.now().Add(l.ttl).Truncate(time.Second))
	return &PortalSession{URL: strings.TrimRight(p.BaseURL, "/") + LocalPortalPath + id}, nil
}

// LocalSession describes a development checkout or portal session.
type LocalSession struct {
	ID        string
	ExpiresAt time.Time
	// SubscriptionRef is the development subscription a portal session
	// manages, or the one a checkout session creates.
	SubscriptionRef string
	// AmountMicroUSD is the monthly price.
	AmountMicroUSD int64
}

// CheckoutSession checks a development checkout session id and describes
// it; ErrCheckoutNotFound when it is malformed, forged or expired.
func (l *LocalBilling) CheckoutSession(id string) (*LocalSession, error) {
	nonce, exp, err := l.open("lcs_", id)
	if err != nil {
		return nil, err
	}
	return &LocalSession{ID: id, ExpiresAt: exp, SubscriptionRef: "lsub_" + l.derive("sub", nonce), AmountMicroUSD: l.amount}, nil
}

// PortalSession checks a development portal session id and describes it;
// ErrCheckoutNotFound when it is malformed, forged or expired.
func (l *LocalBilling) PortalSession(id string) (*LocalSession, error) {
	raw, exp, err := l.open("lps_", id)
	if err != nil {
		return nil, err
	}
	return &LocalSession{ID: id, ExpiresAt: exp, SubscriptionRef: "lsub_" + hex.EncodeToString(raw), AmountMicroUSD: l.amount}, nil
}

// CompleteCheckout confirms a development checkout: it returns the signed
// checkout.session.completed webhook payload and its signature, for
// SubscriptionService.HandleWebhook. The event id is derived from the
// session, so completing a checkout twice yields a duplicate.
func (l *LocalBilling) CompleteCheckout(sessionID string) (payload []byte, signature string, err error) {
	nonce, _, err := l.open("lcs_", sessionID)
	if err != nil {
		return nil, "", err
	}
	ref := l.derive("sub", nonce)
	now := l.now()
	ev := localEvent{
		ID: "levt_" + l.derive("evt", nonce), Object: "event", Type: "checkout.session.completed", Created: now.Unix(),
		Data: localEventData{CheckoutSession: sessionID, Subscription: "lsub_" + ref, Customer: "lcus_" + ref,
			Price: LocalPriceRef, Status: SubscriptionActive, CurrentPeriodEnd: now.AddDate(0, 1, 0).Unix(),
			ObservedAt: now.UnixMicro()},
	}
	return l.signEvent(ev, now)
}

// PortalEvent performs a development portal action (LocalAction*) on the
// portal session's subscription and returns the signed webhook payload and
// its signature. periodEnd is the subscription's current period end (a
// paid renewal extends it by a month).
func (l *LocalBilling) PortalEvent(portalID, action string, periodEnd time.Time) (payload []byte, signature string, err error) {
	raw, _, err := l.open("lps_", portalID)
	if err != nil {
		return nil, "", err
	}
	now := l.now()
	var id [16]byte
	_, _ = rand.Read(id[:])
	data := localEventData{Subscription: "lsub_" + hex.EncodeToString(raw), ObservedAt: now.UnixMicro()}
	ev := localEvent{ID: "levt_" + hex.EncodeToString(id[:]), Object: "event", Created: now.Unix()}
	switch action {
	case LocalActionCancel:
		ev.Type, data.Status = "customer.subscription.deleted", SubscriptionCanceled
	case LocalActionFailPayment:
		ev.Type, data.Status = "invoice.payment_failed", SubscriptionPastDue
	case LocalActionPay:
		if periodEnd.Before(now) {
			periodEnd = now
		}
		ev.Type, data.Status, data.CurrentPeriodEnd = "invoice.paid", SubscriptionActive, periodEnd.AddDate(0, 1, 0).Unix()
	default:
		return nil, "", fmt.Errorf("%w: unknown action %q", ErrSubscriptionState, action)
	}
	ev.Data = data
	return l.signEvent(ev, now)
}

// VerifyWebhook checks a development webhook signature ("t=<unix>,v1=<hex
// HMAC-SHA256 of "t.payload">", Stripe's scheme) and decodes the event.
func (l *LocalBilling) VerifyWebhook(_ context.Context, payload []byte, signature string) (*WebhookEvent, error) {
	if len(payload) > MaxWebhookBytes {
		return nil, ErrWebhookMalformed
	}
	if err := VerifySignedPayload(payload, signature, l.secret, l.tolerance, l.now()); err != nil {
		return nil, err
	}
	var ev localEvent
	if err := json.Unmarshal(payload, &ev); err != nil || ev.Object != "event" || ev.ID == "" {
		return nil, fmt.Errorf("%w: not a development billing event", ErrWebhookMalformed)
	}
	obj, _ := json.Marshal(ev.Data)
	return &WebhookEvent{ID: ev.ID, Type: ev.Type, Created: time.Unix(ev.Created, 0).UTC(), Object: obj}, nil
}

// ResolveWebhook turns a development event into its change: the event
// carries the subscription's new state.
func (l *LocalBilling) ResolveWebhook(_ context.Context, ev *WebhookEvent) ([]SubscriptionChange, error) {
	var d localEventData
	if err := json.Unmarshal(ev.Object, &d); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWebhookMalformed, err)
	}
	c := SubscriptionChange{ProviderRef: d.Subscription, CustomerRef: d.Customer, PriceRef: d.Price, Status: d.Status,
		ObservedAt: time.UnixMicro(d.ObservedAt).UTC()}
	if d.CurrentPeriodEnd > 0 {
		c.CurrentPeriodEnd = time.Unix(d.CurrentPeriodEnd, 0).UTC()
	}
	if ev.Type == "checkout.session.completed" {
		c.Create, c.CheckoutSession = true, d.CheckoutSession
	}
	return []SubscriptionChange{c}, nil
}

type localEvent struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Type    string         `json:"type"`
	Created int64          `json:"created"`
	Data    localEventData `json:"data"`
}

type localEventData struct {
	CheckoutSession  string `json:"checkoutSession,omitempty"`
	Subscription     string `json:"subscription"`
	Customer         string `json:"customer,omitempty"`
	Price            string `json:"price,omitempty"`
	Status           string `json:"status"`
	CurrentPeriodEnd int64  `json:"currentPeriodEnd,omitempty"`
	ObservedAt       int64  `json:"observedAt"`
}

func (l *LocalBilling) signEvent(ev localEvent, now time.Time) ([]byte, string, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, "", err
	}
	return payload, SignPayload(payload, l.secret, now), nil
}

// sign returns prefix + hex(body ‖ expiry ‖ mac).
func (l *LocalBilling) sign(prefix string, body []byte, exp time.Time) string {
	buf := binary.BigEndian.AppendUint64(append([]byte(nil), body...), uint64(exp.Unix()))
	return prefix + hex.EncodeToString(append(buf, l.mac(prefix, buf)...))
}

// open checks a signed id and returns its body and expiry.
func (l *LocalBilling) open(prefix, id string) ([]byte, time.Time, error) {
	rest, ok := strings.CutPrefix(id, prefix)
	raw, err := hex.DecodeString(rest)
	if !ok || err != nil || len(raw) != 16+8+16 {
		return nil, time.Time{}, ErrCheckoutNotFound
	}
	buf, mac := raw[:24], raw[24:]
	if !hmac.Equal(mac, l.mac(prefix, buf)) {
		return nil, time.Time{}, ErrCheckoutNotFound
	}
	exp := time.Unix(int64(binary.BigEndian.Uint64(buf[16:])), 0).UTC()
	if !l.now().Before(exp) {
		return nil, time.Time{}, fmt.Errorf("%w: session expired", ErrCheckoutNotFound)
	}
	return buf[:16], exp, nil
}

func (l *LocalBilling) mac(prefix string, b []byte) []byte {
	m := hmac.New(sha256.New, l.secret)
	m.Write([]byte(prefix))
	m.Write(b)
	return m.Sum(nil)[:16]
}

// derive returns 32 hex digits bound to the secret, a purpose and b.
func (l *LocalBilling) derive(purpose string, b []byte) string {
	return hex.EncodeToString(l.mac(purpose+"|", b))
}

// SignPayload returns a webhook signature header value in Stripe's scheme:
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<payload>")>".
func SignPayload(payload, secret []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(payload)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySignedPayload checks a signature made by SignPayload (several v1
// entries are allowed, as during a secret rotation): it fails with
// ErrWebhookSignature when no v1 signature matches and with ErrWebhookStale
// when the timestamp is more than tolerance away from now, in either
// direction.
func VerifySignedPayload(payload []byte, header string, secret []byte, tolerance time.Duration, now time.Time) error {
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("%w: malformed header", ErrWebhookSignature)
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: missing timestamp or signature", ErrWebhookSignature)
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(payload)
	want := m.Sum(nil)
	match := false
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			match = true
		}
	}
	if !match {
		return ErrWebhookSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %s from now", ErrWebhookStale, d.Round(time.Second))
	}
	return nil
}
