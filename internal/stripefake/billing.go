package stripefake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Price is the price the fake serves.
type Price struct {
	ID            string
	Active        bool
	Type          string // "recurring" or "one_time"
	Currency      string
	UnitAmount    int64
	Interval      string
	IntervalCount int64
	UsageType     string
	Livemode      bool
}

// MonthlyPrice returns an active USD 9.99 monthly test-mode price.
func MonthlyPrice(id string) Price {
	return Price{ID: id, Active: true, Type: "recurring", Currency: "usd", UnitAmount: 999,
		Interval: "month", IntervalCount: 1, UsageType: "licensed"}
}

// Session is a checkout session created through the fake.
type Session struct {
	ID                   string
	URL                  string
	Status               string // open, complete
	Price                string
	SuccessURL           string
	CancelURL            string
	Metadata             map[string]string
	SubscriptionMetadata map[string]string
	Subscription         string
	Customer             string
}

// Subscription is a subscription of the fake.
type Subscription struct {
	ID                string
	Customer          string
	Status            string
	Price             string
	CurrentPeriodEnd  time.Time
	CancelAtPeriodEnd bool
	Metadata          map[string]string
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func randHexN(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SetPrice sets the price the fake serves.
func (s *Server) SetPrice(p Price) {
	s.mu.Lock()
	s.price = &p
	s.mu.Unlock()
}

// Fail makes requests whose path starts with prefix answer status with a
// Stripe API error (0 removes the failure).
func (s *Server) Fail(prefix string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.failures, prefix)
		return
	}
	s.failures[prefix] = status
}

// Session returns a copy of a checkout session.
func (s *Server) Session(id string) (Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.sessions[id]
	if !ok {
		return Session{}, false
	}
	return *cs, true
}

// CompleteCheckout pays an open checkout session: it creates a customer and
// an active subscription (trialing when trial is true) and returns the
// completed session object, as a checkout.session.completed event carries
// it.
func (s *Server) CompleteCheckout(sessionID string, trial bool) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.sessions[sessionID]
	if !ok {
		return nil, fmt.Errorf("stripebillingtest: no session %s", sessionID)
	}
	if cs.Status != "open" {
		return nil, fmt.Errorf("stripebillingtest: session %s is %s", sessionID, cs.Status)
	}
	sub := &Subscription{ID: "sub_" + randHexN(12), Customer: "cus_" + randHexN(7), Status: "active", Price: cs.Price,
		CurrentPeriodEnd: s.now().AddDate(0, 1, 0).Truncate(time.Second), Metadata: cs.SubscriptionMetadata}
	if trial {
		sub.Status = "trialing"
	}
	s.subs[sub.ID] = sub
	cs.Status, cs.Subscription, cs.Customer = "complete", sub.ID, sub.Customer
	return s.sessionObject(cs), nil
}

// SetSubscription changes a subscription as Stripe would after a renewal,
// a failed payment or a cancellation, and returns its object.
func (s *Server) SetSubscription(id string, update func(*Subscription)) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.subs[id]
	if !ok {
		return nil, fmt.Errorf("stripebillingtest: no subscription %s", id)
	}
	update(sub)
	return s.subscriptionObject(sub), nil
}

// DeleteSubscription forgets a subscription: retrieving it then fails with
// resource_missing.
func (s *Server) DeleteSubscription(id string) {
	s.mu.Lock()
	delete(s.subs, id)
	s.mu.Unlock()
}

// SubscriptionObject returns the JSON object of a subscription.
func (s *Server) SubscriptionObject(id string) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.subs[id]
	if !ok {
		return nil, false
	}
	return s.subscriptionObject(sub), true
}

func (s *Server) sessionObject(cs *Session) map[string]any {
	o := map[string]any{"id": cs.ID, "object": "checkout.session", "mode": "subscription", "status": cs.Status,
		"url": cs.URL, "success_url": cs.SuccessURL, "cancel_url": cs.CancelURL, "livemode": false,
		"metadata": cs.Metadata, "expires_at": s.now().Add(24 * time.Hour).Unix(),
		"payment_status": "unpaid", "subscription": nil, "customer": nil}
	if cs.Status == "complete" {
		o["payment_status"], o["subscription"], o["customer"] = "paid", cs.Subscription, cs.Customer
	}
	return o
}

func (s *Server) priceObject(p *Price) map[string]any {
	o := map[string]any{"id": p.ID, "object": "price", "active": p.Active, "type": p.Type, "currency": p.Currency,
		"unit_amount": p.UnitAmount, "billing_scheme": "per_unit", "livemode": p.Livemode}
	if p.Type == "recurring" {
		o["recurring"] = map[string]any{"interval": p.Interval, "interval_count": p.IntervalCount, "usage_type": p.UsageType}
	}
	return o
}

func (s *Server) subscriptionObject(sub *Subscription) map[string]any {
	item := map[string]any{"id": "si_" + strings.TrimPrefix(sub.ID, "sub_"), "object": "subscription_item",
		"price":              map[string]any{"id": sub.Price, "object": "price"},
		"current_period_end": sub.CurrentPeriodEnd.Unix(), "current_period_start": sub.CurrentPeriodEnd.AddDate(0, -1, 0).Unix()}
	return map[string]any{"id": sub.ID, "object": "subscription", "status": sub.Status, "customer": sub.Customer,
		"cancel_at_period_end": sub.CancelAtPeriodEnd, "livemode": false, "metadata": sub.Metadata,
		"items": map[string]any{"object": "list", "data": []any{item}, "has_more": false}}
}

func billingJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func billingError(w http.ResponseWriter, status int, code, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "api_error"
	}
	billingJSON(w, status, map[string]any{"error": map[string]any{"type": typ, "code": code, "message": msg}})
}

// serveBilling answers the subscription endpoints (the caller holds s.mu).
func (s *Server) serveBilling(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer sk_") && !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer rk_") {
		billingError(w, http.StatusUnauthorized, "", "Invalid API Key provided")
		return
	}
	if err := r.ParseForm(); err != nil {
		billingError(w, http.StatusBadRequest, "", "bad form")
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/prices/"):
		id := strings.TrimPrefix(path, "/v1/prices/")
		if s.price == nil || s.price.ID != id {
			billingError(w, http.StatusNotFound, "resource_missing", "No such price: '"+id+"'")
			return
		}
		billingJSON(w, http.StatusOK, s.priceObject(s.price))

	case r.Method == http.MethodPost && path == "/v1/checkout/sessions":
		f := r.PostForm
		if f.Get("mode") != "subscription" {
			billingError(w, http.StatusBadRequest, "parameter_invalid", "mode must be subscription")
			return
		}
		if s.price == nil || f.Get("line_items[0][price]") != s.price.ID || f.Get("line_items[0][quantity]") != "1" {
			billingError(w, http.StatusBadRequest, "resource_missing", "No such price")
			return
		}
		if f.Get("success_url") == "" || f.Get("cancel_url") == "" {
			billingError(w, http.StatusBadRequest, "parameter_missing", "success_url and cancel_url are required")
			return
		}
		id := "cs_test_" + randHexN(24)
		cs := &Session{ID: id, URL: "https://checkout.stripe.test/c/pay/" + id, Status: "open", Price: s.price.ID,
			SuccessURL: f.Get("success_url"), CancelURL: f.Get("cancel_url"),
			Metadata:             formMap(f, "metadata"),
			SubscriptionMetadata: formMap(f, "subscription_data[metadata]")}
		s.sessions[id] = cs
		billingJSON(w, http.StatusOK, s.sessionObject(cs))

	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/checkout/sessions/"):
		cs, ok := s.sessions[strings.TrimPrefix(path, "/v1/checkout/sessions/")]
		if !ok {
			billingError(w, http.StatusNotFound, "resource_missing", "No such checkout.session")
			return
		}
		billingJSON(w, http.StatusOK, s.sessionObject(cs))

	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/subscriptions/"):
		sub, ok := s.subs[strings.TrimPrefix(path, "/v1/subscriptions/")]
		if !ok {
			billingError(w, http.StatusNotFound, "resource_missing", "No such subscription")
			return
		}
		billingJSON(w, http.StatusOK, s.subscriptionObject(sub))

	case r.Method == http.MethodPost && path == "/v1/billing_portal/sessions":
		cust := r.PostForm.Get("customer")
		found := false
		for _, sub := range s.subs {
			found = found || sub.Customer == cust
		}
		if !found {
			billingError(w, http.StatusNotFound, "resource_missing", "No such customer: '"+cust+"'")
			return
		}
		billingJSON(w, http.StatusOK, map[string]any{"id": "bps_" + randHexN(12), "object": "billing_portal.session",
			"customer": cust, "return_url": r.PostForm.Get("return_url"), "livemode": false,
			"url": "https://billing.stripe.test/p/session/" + randHexN(16)})

	default:
		billingError(w, http.StatusNotFound, "", "Unrecognized request URL ("+r.Method+": "+path+")")
	}
}

// formMap collects name[key]=value form fields into a map.
func formMap(f map[string][]string, name string) map[string]string {
	out := map[string]string{}
	for k, v := range f {
		if rest, ok := strings.CutPrefix(k, name+"["); ok && strings.HasSuffix(rest, "]") && !strings.Contains(rest, "[") && len(v) > 0 {
			out[strings.TrimSuffix(rest, "]")] = v[0]
		}
	}
	return out
}
