package server

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/internal/websession"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/shapes"
)

// DefaultSubscriptionPrefix is the service prefix under which the
// subscription routes are also served when SubscriptionConfig.Prefixes is
// nil and the same server mounts no niche catalogue (with one, they follow
// its prefix).
const DefaultSubscriptionPrefix = "/niche-discovery"

// SubscriptionConfig configures the niche subscription routes. The zero
// value mounts nothing.
//
// Routes (each also under every prefix, by default the niche prefix):
//
//	GET  /v1/subscription/status                 availability and price; with "Authorization: Bearer nd_…" also the caller's own status
//	POST /v1/subscription/checkout               start a checkout (no body); 503 when billing is not ready
//	POST /v1/subscription/claim                  {"sessionId"} → the subscriber token, once, after the processor's webhook
//	GET  /v1/subscription/success                page the processor redirects to; its button claims the token (POST)
//	POST /v1/subscription/success                form target of that page: shows the token once
//	GET  /v1/subscription/cancelled              page for a payer who gave up
//	POST /v1/subscription/portal                 Bearer token → {"portalUrl"}
//	POST /v1/subscription/token/rotate           Bearer token → a new token; the old one stops working
//	POST /v1/subscription/token/revoke           Bearer token → {"revoked":true}
//	POST /v1/subscription/webhook                the processor's signed webhooks (≤ 256 KiB)
//	POST /v1/admin/subscriptions/{subscription_id}/token   operator reissue (admin key)
//
// The pages' forms (the success page's, the development checkout's and
// portal's) are refused when a browser sends them from another origin
// (net/http's CrossOriginProtection). When the service keeps sessions
// (niche.SubscriptionOptions.Sessions), the page that shows a new token
// also signs the browser in (a session cookie, package pages), so that
// the payer can read the catalogue pages at once.
//
// With the development backend (niche.LocalBilling) also:
//
//	GET|POST /v1/subscription/local/checkout/{session_id}   confirm a checkout; shows the token once
//	GET|POST /v1/subscription/local/portal/{session_id}     cancel, fail a renewal, pay a renewal
type SubscriptionConfig struct {
	// Service sells and checks subscriptions. Nil mounts nothing. Pass the
	// same value to the niche catalogue as its niche.Subscribers.
	Service *niche.SubscriptionService
	// Prefixes are the service prefixes under which the routes are also
	// served. Nil means the niche catalogue's prefix (NicheConfig.Prefix,
	// by default "/niche-discovery") when this server mounts one, so that
	// the checkout its unlock blocks name exists, else
	// {"/niche-discovery"}; an empty non-nil slice serves the root paths
	// only.
	Prefixes []string
	// PublicURL is the absolute URL under which clients reach this handler,
	// without the service prefix (for example "https://api.example.com").
	// Checkout success/cancel URLs and the development backend's page URLs
	// are built from it, followed by the prefix the request came in on.
	// Empty derives it from the request (TLS and Host header): set it in
	// production.
	PublicURL string
	// SuccessURL replaces our claim page as the checkout's success URL; it
	// must contain niche.CheckoutSessionPlaceholder.
	SuccessURL string
	// CancelURL replaces our cancellation page.
	CancelURL string
	// PortalReturnURL is where the billing portal sends subscribers back.
	// Empty means the status endpoint.
	PortalReturnURL string
}

// subscriptionPrefixes returns the prefixes of the subscription routes
// (see SubscriptionConfig.Prefixes).
func (s *Server) subscriptionPrefixes() []string {
	if s.cfg.Subscriptions.Prefixes != nil {
		return s.cfg.Subscriptions.Prefixes
	}
	if s.cfg.Niche.Engine != nil {
		p, err := s.cfg.Niche.resolvedPrefix()
		switch {
		case err != nil:
			// New refuses this configuration (nicheRoutes).
		case p == "":
			return []string{}
		default:
			return []string{p}
		}
	}
	return []string{DefaultSubscriptionPrefix}
}

// subscriptionRoutes returns the subscription routes (none until configured).
func (s *Server) subscriptionRoutes() ([]*Route, error) {
	c := s.cfg.Subscriptions
	if c.Service == nil {
		return nil, nil
	}
	if c.SuccessURL != "" && !strings.Contains(c.SuccessURL, niche.CheckoutSessionPlaceholder) {
		return nil, errorf("Subscriptions.SuccessURL must contain %s", niche.CheckoutSessionPlaceholder)
	}
	pre := s.subscriptionPrefixes()
	h := func(f http.HandlerFunc) http.Handler { return f }
	// The pages' forms (success, development checkout and portal) change
	// state with the browser's cookies: cross-origin browser POSTs are
	// refused (net/http's CrossOriginProtection; API clients send no
	// Sec-Fetch-Site nor Origin and are not affected).
	csrf := http.NewCrossOriginProtection()
	form := func(f http.HandlerFunc) http.Handler { return csrf.Handler(f) }
	routes := []*Route{
		{ID: "subscription.status", Summary: "Subscription availability and monthly price; with a Bearer subscriber token, the caller's own subscription status.",
			Status: "stable", Method: "GET", Path: "/v1/subscription/status", Handler: h(s.subsStatus)},
		{ID: "subscription.checkout", Summary: "Start a checkout for a monthly subscription; returns the checkout URL and the session id to claim the token with.",
			Status: "stable", Method: "POST", Path: "/v1/subscription/checkout", Handler: h(s.subsCheckout), MaxBodyBytes: 4 << 10},
		{ID: "subscription.claim", Summary: "Exchange a paid checkout's session id for the subscriber token (once, after the payment processor confirmed the payment).",
			Status: "stable", Method: "POST", Path: "/v1/subscription/claim", Handler: h(s.subsClaim), Body: "SubscriptionClaimRequest", MaxBodyBytes: 4 << 10},
		{ID: "subscription.success", Summary: "Page the checkout returns to; its button reveals the subscriber token once.",
			Status: "stable", Method: "GET", Path: "/v1/subscription/success", Handler: h(s.subsSuccessPage)},
		{ID: "subscription.success.claim", Summary: "Form target of the success page: shows the subscriber token once.",
			Status: "stable", Method: "POST", Path: "/v1/subscription/success", Handler: form(s.subsSuccessClaim), MaxBodyBytes: 4 << 10},
		{ID: "subscription.cancelled", Summary: "Page for a payer who left the checkout; nothing was charged.",
			Status: "stable", Method: "GET", Path: "/v1/subscription/cancelled", Handler: h(s.subsCancelledPage)},
		{ID: "subscription.portal", Summary: "Open the billing portal (payment method, invoices, cancellation) for the Bearer subscriber token.",
			Status: "stable", Method: "POST", Path: "/v1/subscription/portal", Handler: h(s.subsPortal), MaxBodyBytes: 4 << 10},
		{ID: "subscription.token.rotate", Summary: "Replace the Bearer subscriber token by a new one, shown once; the old token stops working.",
			Status: "stable", Method: "POST", Path: "/v1/subscription/token/rotate", Handler: h(s.subsRotate), MaxBodyBytes: 4 << 10},
		{ID: "subscription.token.revoke", Summary: "Revoke the Bearer subscriber token.",
			Status: "stable", Method: "POST", Path: "/v1/subscription/token/revoke", Handler: h(s.subsRevoke), MaxBodyBytes: 4 << 10},
		{ID: "subscription.webhook", Summary: "Signed webhooks of the payment processor (subscription state changes).",
			Status: "stable", Method: "POST", Path: "/v1/subscription/webhook", Handler: h(s.subsWebhook), MaxBodyBytes: niche.MaxWebhookBytes},
		{ID: "subscription.admin.token", Summary: "Operator: issue a new subscriber token for a subscription (lost token); its other tokens and unclaimed checkout stop working.",
			Status: "stable", Method: "POST", Path: "/v1/admin/subscriptions/{subscription_id}/token", Handler: s.requireAdmin(h(s.subsReissue)),
			Admin: true, MaxBodyBytes: 4 << 10},
	}
	if _, ok := c.Service.Local(); ok {
		routes = append(routes,
			&Route{ID: "subscription.local.checkout", Summary: "Development billing backend: checkout page (no money moves).",
				Status: "development", Method: "GET", Path: strings.TrimSuffix(niche.LocalCheckoutPath, "/") + "/{session_id}", Handler: h(s.subsLocalCheckoutPage)},
			&Route{ID: "subscription.local.checkout.confirm", Summary: "Development billing backend: confirm a checkout; shows the subscriber token once.",
				Status: "development", Method: "POST", Path: strings.TrimSuffix(niche.LocalCheckoutPath, "/") + "/{session_id}", Handler: form(s.subsLocalCheckoutConfirm), MaxBodyBytes: 4 << 10},
			&Route{ID: "subscription.local.portal", Summary: "Development billing backend: billing portal page.",
				Status: "development", Method: "GET", Path: strings.TrimSuffix(niche.LocalPortalPath, "/") + "/{session_id}", Handler: h(s.subsLocalPortalPage)},
			&Route{ID: "subscription.local.portal.action", Summary: "Development billing backend: cancel, fail or pay a renewal.",
				Status: "development", Method: "POST", Path: strings.TrimSuffix(niche.LocalPortalPath, "/") + "/{session_id}", Handler: form(s.subsLocalPortalAction), MaxBodyBytes: 4 << 10},
		)
	}
	for _, r := range routes {
		r.Prefixes = pre
	}
	return routes, nil
}

// subscriptionStatus maps the subscription service's errors to statuses.
func subscriptionStatus(err error) (int, string, bool) {
	switch {
	case errors.Is(err, niche.ErrBillingUnavailable):
		return http.StatusServiceUnavailable, "Subscriptions are not available", true
	case errors.Is(err, niche.ErrBillingFailed):
		return http.StatusBadGateway, "The payment processor request failed; try again", true
	case errors.Is(err, niche.ErrWebhookSignature):
		return http.StatusBadRequest, "Invalid webhook signature", true
	case errors.Is(err, niche.ErrWebhookStale):
		return http.StatusBadRequest, "Webhook timestamp outside the tolerance", true
	case errors.Is(err, niche.ErrWebhookMalformed):
		return http.StatusBadRequest, "Invalid webhook payload", true
	case errors.Is(err, niche.ErrCheckoutNotFound):
		return http.StatusNotFound, "Checkout session not found", true
	case errors.Is(err, niche.ErrClaimPending):
		return http.StatusConflict, "The payment is not confirmed yet; retry shortly", true
	case errors.Is(err, niche.ErrClaimUsed):
		return http.StatusGone, "The token for this checkout was already issued", true
	case errors.Is(err, niche.ErrClaimExpired):
		return http.StatusGone, "The claim window for this checkout has passed; contact support", true
	case errors.Is(err, niche.ErrSubscriptionTokenInvalid):
		return http.StatusUnauthorized, "Subscription token is not valid", true
	case errors.Is(err, niche.ErrSubscriptionNotFound):
		return http.StatusNotFound, "Subscription not found", true
	case errors.Is(err, niche.ErrSubscriptionState):
		return http.StatusConflict, "Not allowed in the subscription's current state", true
	}
	return 0, "", false
}

// subsError answers a JSON error for err.
func (s *Server) subsError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg, ok := subscriptionStatus(err)
	if !ok {
		s.writeError(w, r, err)
		return
	}
	switch {
	case status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", "Bearer")
	case errors.Is(err, niche.ErrClaimPending):
		w.Header().Set("Retry-After", "5")
	}
	if status >= 500 {
		s.log.WarnContext(r.Context(), "subscription request failed", "path", r.URL.Path, "status", status, "err", err)
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Detail(w, status, msg)
}

// subsBase is the absolute URL of the subscription routes as the client
// reached them: the public URL plus the prefix of this request, if any.
func (s *Server) subsBase(r *http.Request) string {
	base := s.cfg.Subscriptions.PublicURL
	if base == "" {
		base = s.cfg.PublicBaseURL
	}
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	base = strings.TrimRight(base, "/")
	for _, p := range s.subscriptionPrefixes() {
		if p = strings.TrimRight(p, "/"); p != "" && strings.HasPrefix(r.URL.Path, p+"/") {
			return base + p
		}
	}
	return base
}

// bearerToken returns the token of "Authorization: Bearer <token>" and
// whether an Authorization header was sent at all.
func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(rest), true
}

// requireToken returns the Bearer token or answers 401.
func (s *Server) requireToken(w http.ResponseWriter, r *http.Request) (string, bool) {
	tok, _ := bearerToken(r)
	if tok == "" {
		w.Header().Set("WWW-Authenticate", "Bearer")
		httpjson.Detail(w, http.StatusUnauthorized, "Subscription token required")
		return "", false
	}
	return tok, true
}

func newSubscriberBody(st *niche.SubscriberStatus) *Subscriber {
	b := &Subscriber{TokenValid: st.TokenValid, Active: st.Entitled, AccessUntil: optionalTime(st.EntitledUntil)}
	if sub := st.Subscription; sub != nil {
		b.Status, b.SubscriptionID = &sub.Status, &sub.ID
		b.CurrentPeriodEnd, b.CancelAtPeriodEnd = optionalTime(sub.CurrentPeriodEnd), sub.CancelAtPeriodEnd
	}
	return b
}

func (s *Server) subsStatus(w http.ResponseWriter, r *http.Request) {
	svc := s.cfg.Subscriptions.Service
	body := SubscriptionStatus{Currency: "USD", Interval: "month"}
	if b := svc.Billing(); b != nil {
		name := b.Provider()
		body.Billing = &name
	}
	offer, err := svc.Offer(r.Context())
	switch {
	case err == nil:
		price := payment.MicroUSD(offer.AmountMicroUSD).String()
		body.Available, body.PriceUsdPerMonth, body.PriceMicrousdPerMonth = true, &price, &offer.AmountMicroUSD
		body.Development = offer.Development
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		s.writeError(w, r, err)
		return
	}
	if tok, sent := bearerToken(r); sent {
		st, err := svc.Lookup(r.Context(), tok)
		if err != nil {
			s.subsError(w, r, err)
			return
		}
		body.Subscriber = newSubscriberBody(st)
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, body)
}

func (s *Server) subsCheckout(w http.ResponseWriter, r *http.Request) {
	// No body is required; one that is sent is ignored.
	_, _ = io.Copy(io.Discard, r.Body)
	c := s.cfg.Subscriptions
	base := s.subsBase(r)
	p := niche.CheckoutParams{BaseURL: base, SuccessURL: c.SuccessURL, CancelURL: c.CancelURL}
	if p.SuccessURL == "" {
		p.SuccessURL = base + "/v1/subscription/success?session_id=" + niche.CheckoutSessionPlaceholder
	}
	if p.CancelURL == "" {
		p.CancelURL = base + "/v1/subscription/cancelled"
	}
	cs, offer, err := c.Service.Checkout(r.Context(), p)
	if err != nil {
		s.subsError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, SubscriptionCheckout{CheckoutURL: cs.URL, SessionID: cs.ID, ExpiresAt: optionalTime(cs.ExpiresAt),
		ClaimURL: base + "/v1/subscription/claim", PriceUsdPerMonth: payment.MicroUSD(offer.AmountMicroUSD).String(),
		PriceMicrousdPerMonth: offer.AmountMicroUSD, Development: offer.Development})
}

func (s *Server) writeToken(w http.ResponseWriter, r *http.Request, it *niche.IssuedToken) {
	st, err := s.cfg.Subscriptions.Service.Lookup(r.Context(), it.Token)
	if err != nil {
		// The token exists; only the status read failed. Still show it.
		s.log.WarnContext(r.Context(), "subscription status after issuing a token", "err", err)
		st = &niche.SubscriberStatus{TokenValid: true, Subscription: it.Subscription}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	httpjson.Write(w, http.StatusOK, SubscriptionToken{Token: it.Token, TokenShownOnce: true, Subscription: newSubscriberBody(st)})
}

func (s *Server) subsClaim(w http.ResponseWriter, r *http.Request) {
	var req shapes.SubscriptionClaimRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	it, err := s.cfg.Subscriptions.Service.Claim(r.Context(), req.SessionID)
	if err != nil {
		s.subsError(w, r, err)
		return
	}
	s.writeToken(w, r, it)
}

func (s *Server) subsPortal(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.requireToken(w, r)
	if !ok {
		return
	}
	c := s.cfg.Subscriptions
	base := s.subsBase(r)
	ret := c.PortalReturnURL
	if ret == "" {
		ret = base + "/v1/subscription/status"
	}
	ps, err := c.Service.Portal(r.Context(), tok, niche.PortalParams{ReturnURL: ret, BaseURL: base})
	if err != nil {
		s.subsError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, SubscriptionPortal{PortalURL: ps.URL})
}

func (s *Server) subsRotate(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.requireToken(w, r)
	if !ok {
		return
	}
	it, err := s.cfg.Subscriptions.Service.Rotate(r.Context(), tok)
	if err != nil {
		s.subsError(w, r, err)
		return
	}
	s.writeToken(w, r, it)
}

func (s *Server) subsRevoke(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.requireToken(w, r)
	if !ok {
		return
	}
	if err := s.cfg.Subscriptions.Service.Revoke(r.Context(), tok); err != nil {
		s.subsError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, SubscriptionRevoked{Revoked: true})
}

func (s *Server) subsReissue(w http.ResponseWriter, r *http.Request) {
	it, err := s.cfg.Subscriptions.Service.Reissue(r.Context(), r.PathValue("subscription_id"))
	if err != nil {
		s.subsError(w, r, err)
		return
	}
	s.writeToken(w, r, it)
}

func (s *Server) subsWebhook(w http.ResponseWriter, r *http.Request) {
	svc := s.cfg.Subscriptions.Service
	b := svc.Billing()
	if b == nil {
		s.subsError(w, r, niche.ErrBillingUnavailable)
		return
	}
	payload, ok := httpjson.ReadBody(w, r)
	if !ok {
		return
	}
	res, err := svc.HandleWebhook(r.Context(), payload, r.Header.Get(b.WebhookHeader()))
	if errors.Is(err, niche.ErrBillingFailed) {
		// Not recorded: the processor retries the delivery later.
		s.log.WarnContext(r.Context(), "subscription webhook deferred", "err", err)
		httpjson.Detail(w, http.StatusServiceUnavailable, "Webhook could not be processed; retry later")
		return
	}
	if err != nil {
		if errors.Is(err, niche.ErrWebhookSignature) || errors.Is(err, niche.ErrWebhookStale) {
			s.log.WarnContext(r.Context(), "subscription webhook refused", "err", err)
		}
		s.subsError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, SubscriptionWebhookReceipt{Received: true, Duplicate: res.Duplicate})
}

// Pages.

// subsPageTemplate renders every HTML page of the subscription flow.
var subsPageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
{{if .Refresh}}<meta http-equiv="refresh" content="5;url={{.Refresh}}">{{end}}
<title>{{.Title}} · Niche Discovery</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#111}
.dev{background:#b00020;color:#fff;padding:1rem;font-weight:bold;border-radius:4px}
code.token{display:block;padding:1rem;background:#f3f3f3;border:1px solid #ccc;word-break:break-all;font-size:1.05rem}
button{font-size:1rem;padding:.5rem 1rem;margin:.25rem 0}</style></head><body><main>
{{if .Dev}}<p class="dev">DEVELOPMENT BILLING BACKEND: no payment processor is involved and no money moves. Anyone who can reach this server can subscribe for free. Never use it in production.</p>
{{end}}<h1>{{.Title}}</h1>
{{range .Paragraphs}}<p>{{.}}</p>
{{end}}{{if .Token}}<p><strong>Your subscriber token. It is shown only this once: store it now.</strong></p>
<code class="token" id="token">{{.Token}}</code>
<p>Send it as <code>Authorization: Bearer &lt;token&gt;</code> to read full niche evaluations. If it leaks, rotate it with <code>POST /v1/subscription/token/rotate</code>.</p>
{{end}}{{if .SignedIn}}<p><strong>You are signed in in this browser.</strong>{{if .Catalogue}} <a href="{{.Catalogue}}">Read the catalogue</a>.{{end}}</p>
{{end}}{{range .Forms}}<form method="post" action="{{.Action}}">{{range $k, $v := .Fields}}<input type="hidden" name="{{$k}}" value="{{$v}}">{{end}}<button type="submit" name="{{.Name}}" value="{{.Value}}">{{.Label}}</button></form>
{{end}}</main></body></html>
`))

type subsPage struct {
	// SignedIn says the page signed the payer in (a session cookie);
	// Catalogue links the catalogue pages when they are mounted.
	SignedIn   bool
	Catalogue  string
	Title      string
	Dev        bool
	Paragraphs []string
	Token      string
	Forms      []subsForm
	Refresh    string
}

type subsForm struct {
	Action      string
	Fields      map[string]string
	Name, Value string
	Label       string
}

func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, status int, p subsPage) {
	var buf bytes.Buffer
	if err := subsPageTemplate.Execute(&buf, p); err != nil {
		s.log.ErrorContext(r.Context(), "subscription page", "err", err)
		httpjson.Detail(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	httpjson.HTMLPage(w, r, status, buf.Bytes(), "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
}

// pageError renders err as an HTML page, or as JSON when the client asked
// for JSON.
func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error, dev bool) {
	if wantsJSON(r) {
		s.subsError(w, r, err)
		return
	}
	status, msg, ok := subscriptionStatus(err)
	if !ok {
		if errors.Is(err, context.Canceled) {
			w.WriteHeader(499)
			return
		}
		s.log.ErrorContext(r.Context(), "subscription page failed", "path", r.URL.Path, "err", err)
		status, msg = http.StatusInternalServerError, "Something went wrong; try again."
	}
	s.renderPage(w, r, status, subsPage{Title: http.StatusText(status), Dev: dev, Paragraphs: []string{msg}})
}

// wantsJSON reports whether the client prefers a JSON answer.
func wantsJSON(r *http.Request) bool {
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		return true
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return ct == "application/json"
}

// formValue reads a field of an urlencoded form body.
func formValue(r *http.Request, name string) string {
	if err := r.ParseForm(); err != nil {
		return ""
	}
	return r.PostForm.Get(name)
}

func (s *Server) subsSuccessPage(w http.ResponseWriter, r *http.Request) {
	id := queryValues(r).Get("session_id")
	if id == "" {
		s.renderPage(w, r, http.StatusBadRequest, subsPage{Title: "Missing checkout session",
			Paragraphs: []string{"This page needs the session_id the checkout sent you back with."}})
		return
	}
	s.renderPage(w, r, http.StatusOK, subsPage{Title: "Thank you for subscribing",
		Paragraphs: []string{
			"Your payment is confirmed by the payment processor directly with us; it can take a few seconds.",
			"Press the button to reveal your subscriber token. It is shown only once, so keep this page open until you have stored it.",
		},
		Forms: []subsForm{{Action: r.URL.Path, Fields: map[string]string{"session_id": id}, Label: "Reveal my subscriber token"}},
	})
}

func (s *Server) subsSuccessClaim(w http.ResponseWriter, r *http.Request) {
	id := formValue(r, "session_id")
	it, err := s.cfg.Subscriptions.Service.Claim(r.Context(), id)
	if errors.Is(err, niche.ErrClaimPending) {
		w.Header().Set("Retry-After", "5")
		s.renderPage(w, r, http.StatusConflict, subsPage{Title: "Payment not confirmed yet",
			Paragraphs: []string{"The payment processor has not confirmed your payment to us yet. This page checks again in 5 seconds."},
			Refresh:    r.URL.Path + "?" + url.Values{"session_id": {id}}.Encode()})
		return
	}
	if err != nil {
		s.pageError(w, r, err, false)
		return
	}
	s.renderPage(w, r, http.StatusOK, s.signInPage(w, r, subsPage{Title: "Your subscription is active", Token: it.Token}, it.Token))
}

// signInPage signs the payer's browser in with the token just issued,
// when the subscription service keeps sessions (package pages reads
// them), and says so on p.
func (s *Server) signInPage(w http.ResponseWriter, r *http.Request, p subsPage, token string) subsPage {
	in, err := s.cfg.Subscriptions.Service.SignIn(r.Context(), token)
	if err != nil {
		if !errors.Is(err, niche.ErrSessionsUnavailable) {
			s.log.WarnContext(r.Context(), "subscription: signing in after checkout failed", "err", err)
		}
		return p
	}
	websession.Set(w, r, in.Secret, in.ExpiresAt)
	p.SignedIn = true
	for _, rt := range s.routes {
		if rt.ID == "pages.list" {
			p.Catalogue = rt.Path
		}
	}
	return p
}

func (s *Server) subsCancelledPage(w http.ResponseWriter, r *http.Request) {
	s.renderPage(w, r, http.StatusOK, subsPage{Title: "Checkout cancelled",
		Paragraphs: []string{"You left the checkout. Nothing was charged."}})
}

func (s *Server) subsLocalCheckoutPage(w http.ResponseWriter, r *http.Request) {
	l, _ := s.cfg.Subscriptions.Service.Local()
	cs, err := l.CheckoutSession(r.PathValue("session_id"))
	if err != nil {
		s.pageError(w, r, err, true)
		return
	}
	s.renderPage(w, r, http.StatusOK, subsPage{Title: "Confirm your subscription", Dev: true,
		Paragraphs: []string{
			"Niche Discovery monthly subscription: USD " + payment.MicroUSD(cs.AmountMicroUSD).String() + " per month (simulated).",
			"This checkout expires at " + cs.ExpiresAt.Format(time.RFC3339) + ".",
		},
		Forms: []subsForm{{Action: r.URL.Path, Label: "Confirm subscription (development: no money moves)"}},
	})
}

func (s *Server) subsLocalCheckoutConfirm(w http.ResponseWriter, r *http.Request) {
	it, err := s.cfg.Subscriptions.Service.ConfirmLocalCheckout(r.Context(), r.PathValue("session_id"))
	if err != nil {
		s.pageError(w, r, err, true)
		return
	}
	if wantsJSON(r) {
		s.writeToken(w, r, it)
		return
	}
	s.renderPage(w, r, http.StatusOK, s.signInPage(w, r, subsPage{Title: "Your subscription is active", Dev: true, Token: it.Token}, it.Token))
}

// localPortalPage shows a development subscription and the actions its
// status allows.
func (s *Server) localPortalPage(w http.ResponseWriter, r *http.Request, sub *niche.Subscription, note string) {
	p := subsPage{Title: "Manage your subscription", Dev: true}
	if note != "" {
		p.Paragraphs = append(p.Paragraphs, note)
	}
	access := "no access to full evaluations"
	if ok, _ := s.cfg.Subscriptions.Service.Entitlement(sub); ok {
		access = "full access"
	}
	p.Paragraphs = append(p.Paragraphs, "Status: "+sub.Status+" ("+access+").")
	if !sub.CurrentPeriodEnd.IsZero() {
		p.Paragraphs = append(p.Paragraphs, "Current period ends "+sub.CurrentPeriodEnd.Format(time.RFC3339)+".")
	}
	add := func(action, label string) {
		p.Forms = append(p.Forms, subsForm{Action: r.URL.Path, Name: "action", Value: action, Label: label})
	}
	if sub.Status == niche.SubscriptionActive || sub.Status == niche.SubscriptionTrialing {
		add(niche.LocalActionFailPayment, "Simulate a failed renewal payment (past_due)")
	}
	if sub.Status != niche.SubscriptionCanceled {
		add(niche.LocalActionPay, "Simulate a paid renewal (active, one more month)")
		add(niche.LocalActionCancel, "Cancel the subscription now")
	}
	s.renderPage(w, r, http.StatusOK, p)
}

func (s *Server) subsLocalPortalPage(w http.ResponseWriter, r *http.Request) {
	sub, err := s.cfg.Subscriptions.Service.LocalPortalSubscription(r.Context(), r.PathValue("session_id"))
	if err != nil {
		s.pageError(w, r, err, true)
		return
	}
	s.localPortalPage(w, r, sub, "")
}

func (s *Server) subsLocalPortalAction(w http.ResponseWriter, r *http.Request) {
	action := formValue(r, "action")
	svc := s.cfg.Subscriptions.Service
	sub, err := svc.LocalPortalAction(r.Context(), r.PathValue("session_id"), action)
	if err != nil {
		s.pageError(w, r, err, true)
		return
	}
	if wantsJSON(r) {
		ok, until := svc.Entitlement(sub)
		st := &niche.SubscriberStatus{TokenValid: true, Entitled: ok, EntitledUntil: until, Subscription: sub}
		w.Header().Set("Cache-Control", "no-store")
		httpjson.Write(w, http.StatusOK, newSubscriberBody(st))
		return
	}
	s.localPortalPage(w, r, sub, "Done: "+action+".")
}
