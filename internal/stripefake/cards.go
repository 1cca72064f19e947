// Package stripefake is the one fake of the Stripe API the tests use, for
// both Stripe integrations: cards (payment/stripecard, PaymentIntents)
// and subscriptions (niche/stripebilling: prices, checkout sessions,
// subscriptions, billing portal). payment/paymenttest exports it as
// Stripe, niche/stripebilling/stripebillingtest as Server. It is
// hand-written because stripe-mock is stateless: it cannot authorise then
// capture an intent, replay an idempotent request as it was, or drive a
// subscription through renewal and cancellation.
package stripefake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Shared payment tokens with scripted outcomes at the fake Stripe. Any
// other "spt_…" token authorises normally (requires_capture).
const (
	SPTDeclined       = "spt_test_declined"        // 402 card_error card_declined
	SPTRequiresAction = "spt_test_requires_action" // status requires_action
	SPTInvalid        = "spt_test_invalid"         // 400 invalid_request_error
	SPTCaptured       = "spt_test_captured"        // succeeds at once (no manual capture)
)

// Request is one request the fake Stripe received.
type Request struct {
	Method, Path   string
	IdempotencyKey string
	StripeVersion  string
	Form           map[string]string
}

// Intent is the fake's view of a PaymentIntent.
type Intent struct {
	ID       string
	Amount   int64
	Currency string
	Status   string
	Token    string
	Metadata map[string]string
	Refunded bool
}

// Server is the one fake of the Stripe API, on a loopback httptest
// server: the PaymentIntents endpoints cards use (create with a shared
// payment token, retrieve with ?expand[]=latest_charge, capture, cancel,
// refunds) and the subscription endpoints niche/stripebilling uses
// (prices, checkout sessions, subscriptions, billing portal), with state
// so tests can drive payments and subscriptions through their lives —
// which stateless stripe-mock cannot. On the PaymentIntents endpoints,
// idempotency keys replay the first answer as it was then (a cancelled
// intent is replayed as requires_capture), with the Idempotent-Replayed:
// true header, as Stripe does. Its zero state has no price: set one with
// SetPrice.
type Server struct {
	*httptest.Server
	// TokenParam is the form parameter that must carry the SPT
	// (default "shared_payment_granted_token").
	TokenParam string
	// Now is the fake's clock (time.Now when nil).
	Now func() time.Time

	mu       sync.Mutex
	requests []Request
	failures map[string]int // path prefix → status
	// cards
	intents  map[string]*Intent
	replayed map[string][]byte
	// subscriptions
	price    *Price
	sessions map[string]*Session
	subs     map[string]*Subscription
}

// Start starts a fake Stripe on loopback. Close it when done.
func Start() *Server {
	s := &Server{TokenParam: "shared_payment_granted_token", failures: map[string]int{},
		intents: map[string]*Intent{}, replayed: map[string][]byte{},
		sessions: map[string]*Session{}, subs: map[string]*Subscription{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Requests returns the requests received.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Intent returns a PaymentIntent by id.
func (s *Server) Intent(id string) (Intent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.intents[id]
	if !ok {
		return Intent{}, false
	}
	return *in, true
}

// Intents returns every PaymentIntent created.
func (s *Server) Intents() []Intent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Intent
	for _, in := range s.intents {
		out = append(out, *in)
	}
	return out
}

func stripeError(w http.ResponseWriter, status int, typ, code, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"type": typ, "code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return b
}

// serve records the request, answers an injected failure, and routes to
// the cards or the subscription endpoints.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		stripeError(w, 400, "invalid_request_error", "parameter_invalid", "bad form")
		return
	}
	form := map[string]string{}
	values := r.PostForm
	if r.Method == http.MethodGet {
		values = r.Form
	}
	for k, v := range values {
		form[k] = v[0]
	}
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, IdempotencyKey: key,
		StripeVersion: r.Header.Get("Stripe-Version"), Form: form})
	for prefix, status := range s.failures {
		if strings.HasPrefix(r.URL.Path, prefix) {
			billingError(w, status, "", "injected failure")
			return
		}
	}
	if !strings.HasPrefix(r.URL.Path, "/v1/payment_intents") && r.URL.Path != "/v1/refunds" {
		s.serveBilling(w, r)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer sk_") {
		stripeError(w, 401, "invalid_request_error", "", "Invalid API Key provided")
		return
	}
	if key != "" {
		if b, ok := s.replayed[r.URL.Path+"|"+key]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Idempotent-Replayed", "true")
			_, _ = w.Write(b)
			return
		}
	}
	rec := httptest.NewRecorder()
	s.route(rec, r, form)
	if key != "" && rec.Code < 500 {
		s.replayed[r.URL.Path+"|"+key] = rec.Body.Bytes()
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, form map[string]string) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/payment_intents":
		s.create(w, form)
	case r.Method == http.MethodGet && len(parts) == 3 && parts[1] == "payment_intents":
		in, ok := s.intents[parts[2]]
		if !ok {
			stripeError(w, 404, "invalid_request_error", "resource_missing", "No such payment_intent: "+parts[2])
			return
		}
		out := intentJSON(in)
		for k, v := range form {
			if strings.HasPrefix(k, "expand") && v == "latest_charge" {
				out["latest_charge"] = chargeJSON(in)
			}
		}
		writeJSON(w, out)
	case r.Method == http.MethodPost && len(parts) == 4 && parts[1] == "payment_intents" && parts[3] == "capture":
		s.transition(w, parts[2], "requires_capture", "succeeded")
	case r.Method == http.MethodPost && len(parts) == 4 && parts[1] == "payment_intents" && parts[3] == "cancel":
		s.transition(w, parts[2], "", "canceled")
	case r.Method == http.MethodPost && r.URL.Path == "/v1/refunds":
		in, ok := s.intents[form["payment_intent"]]
		if !ok || in.Status != "succeeded" {
			stripeError(w, 400, "invalid_request_error", "charge_not_refundable", "This PaymentIntent cannot be refunded.")
			return
		}
		in.Refunded = true
		writeJSON(w, map[string]any{"id": "re_" + randHex(), "object": "refund", "payment_intent": in.ID, "amount": in.Amount, "status": "succeeded"})
	default:
		stripeError(w, 404, "invalid_request_error", "resource_missing", "Unrecognized request URL")
	}
}

func (s *Server) create(w http.ResponseWriter, form map[string]string) {
	amount, err := strconv.ParseInt(form["amount"], 10, 64)
	switch {
	case err != nil || amount < 50:
		stripeError(w, 400, "invalid_request_error", "amount_too_small", "Amount must be at least $0.50 usd")
		return
	case form["currency"] != "usd" || form["confirm"] != "true":
		stripeError(w, 400, "invalid_request_error", "parameter_invalid", "currency usd and confirm=true are expected")
		return
	case form["capture_method"] != "manual":
		stripeError(w, 400, "invalid_request_error", "parameter_invalid", "this fake expects capture_method=manual")
		return
	case form["automatic_payment_methods[enabled]"] != "true" || form["automatic_payment_methods[allow_redirects]"] != "never":
		stripeError(w, 400, "invalid_request_error", "parameter_invalid", "automatic payment methods without redirects are expected")
		return
	}
	token := form[s.TokenParam]
	status := "requires_capture"
	switch {
	case !strings.HasPrefix(token, "spt_"):
		stripeError(w, 400, "invalid_request_error", "parameter_missing", fmt.Sprintf("Missing required param: %s.", s.TokenParam))
		return
	case token == SPTInvalid:
		stripeError(w, 400, "invalid_request_error", "resource_missing", "No such shared payment token: "+token)
		return
	case token == SPTDeclined:
		stripeError(w, 402, "card_error", "card_declined", "Your card was declined.")
		return
	case token == SPTRequiresAction:
		status = "requires_action"
	case token == SPTCaptured:
		status = "succeeded"
	}
	meta := map[string]string{}
	for k, v := range form {
		if name, ok := strings.CutPrefix(k, "metadata["); ok {
			meta[strings.TrimSuffix(name, "]")] = v
		}
	}
	in := &Intent{ID: "pi_" + randHex(), Amount: amount, Currency: "usd", Status: status, Token: token, Metadata: meta}
	s.intents[in.ID] = in
	writeJSON(w, intentJSON(in))
}

func (s *Server) transition(w http.ResponseWriter, id, from, to string) {
	in, ok := s.intents[id]
	if !ok {
		stripeError(w, 404, "invalid_request_error", "resource_missing", "No such payment_intent: "+id)
		return
	}
	if (from != "" && in.Status != from) || in.Status == "succeeded" || in.Status == "canceled" {
		stripeError(w, 400, "invalid_request_error", "payment_intent_unexpected_state",
			fmt.Sprintf("This PaymentIntent's status is %s.", in.Status))
		return
	}
	in.Status = to
	writeJSON(w, intentJSON(in))
}

func intentJSON(in *Intent) map[string]any {
	return map[string]any{"id": in.ID, "object": "payment_intent", "amount": in.Amount, "currency": in.Currency,
		"status": in.Status, "capture_method": "manual", "metadata": in.Metadata, "customer": nil,
		"payment_method": "pm_" + in.ID[3:], "latest_charge": "ch_" + in.ID[3:]}
}

// chargeJSON is the intent's charge, as ?expand[]=latest_charge shows it.
func chargeJSON(in *Intent) map[string]any {
	refunded := int64(0)
	if in.Refunded {
		refunded = in.Amount
	}
	return map[string]any{"id": "ch_" + in.ID[3:], "object": "charge", "amount": in.Amount, "captured": in.Status == "succeeded",
		"refunded": in.Refunded, "amount_refunded": refunded}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func randHex() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
