package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/stripebilling"
	sbt "github.com/assaykit/assay/niche/stripebilling/stripebillingtest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
)

// subsEnv is a running server with subscriptions configured.
type subsEnv struct {
	svc  *niche.SubscriptionService
	db   *store.DB
	srv  *Server
	http *httptest.Server
}

func newSubsEnv(t *testing.T, billing niche.Billing, cfg SubscriptionConfig) *subsEnv {
	t.Helper()
	db := emptyDB.Open(t, nil)
	// The store keeps sessions too: the pages that show a new token sign
	// the browser in.
	svc, err := niche.NewSubscriptionService(nichestore.New(db), billing, &niche.SubscriptionOptions{Sessions: nichestore.New(db)})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Service = svc
	srv, err := New(Config{AdminKey: testAdminKey, Subscriptions: cfg})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &subsEnv{svc: svc, db: db, srv: srv, http: hs}
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", a.body, err)
	}
	return m
}

// call sends a request; hdr alternates names and values.
func call(t *testing.T, method, target string, body []byte, hdr ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, res.Header, b}
}

func wantStatus(t *testing.T, a answer, status int, detail string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d (body %s)", a.status, status, a.body)
	}
	if detail != "" {
		if got := strings.TrimSpace(string(a.body)); got != `{"detail":"`+detail+`"}` {
			t.Fatalf("body %s, want detail %q", got, detail)
		}
	}
}

func localBilling(t *testing.T) *niche.LocalBilling {
	t.Helper()
	l, err := niche.NewLocalBilling(nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSubscriptionsNotMountedWithoutService(t *testing.T) {
	srv, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/subscription/status", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("status %d without a subscription service", rec.Code)
	}
}

func TestSubscriptionRoutesTable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prefixes []string
		want     []string
	}{
		{"default prefix", nil, []string{"/niche-discovery"}},
		{"custom prefix", []string{"/nd"}, []string{"/nd"}},
		{"root only", []string{}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSubsEnv(t, localBilling(t), SubscriptionConfig{Prefixes: tc.prefixes})
			ids := map[string]bool{}
			for _, r := range e.srv.Routes() {
				if !strings.HasPrefix(r.ID, "subscription.") {
					continue
				}
				ids[r.ID] = true
				if r.Summary == "" || r.Status == "" || r.Method == "" || r.Path == "" || r.Handler == nil {
					t.Errorf("route %s is incomplete: %+v", r.ID, r)
				}
				if d := cmp.Diff(tc.want, r.Prefixes); d != "" {
					t.Errorf("route %s prefixes (-want +got):\n%s", r.ID, d)
				}
			}
			for _, id := range []string{"subscription.status", "subscription.checkout", "subscription.portal", "subscription.webhook",
				"subscription.claim", "subscription.token.rotate", "subscription.token.revoke", "subscription.admin.token",
				"subscription.success", "subscription.success.claim", "subscription.cancelled",
				"subscription.local.checkout", "subscription.local.checkout.confirm", "subscription.local.portal", "subscription.local.portal.action"} {
				if !ids[id] {
					t.Errorf("route %s missing", id)
				}
			}
			for _, p := range append([]string{""}, tc.want...) {
				wantStatus(t, call(t, "GET", e.http.URL+p+"/v1/subscription/status", nil), 200, "")
			}
			if len(tc.want) == 0 {
				wantStatus(t, call(t, "GET", e.http.URL+"/niche-discovery/v1/subscription/status", nil), 404, "Not Found")
			}
		})
	}
	stripeOnly := newSubsEnv(t, nil, SubscriptionConfig{})
	for _, r := range stripeOnly.srv.Routes() {
		if strings.HasPrefix(r.ID, "subscription.local") {
			t.Fatalf("development pages mounted without the development backend: %s", r.ID)
		}
	}
	if _, err := New(Config{Subscriptions: SubscriptionConfig{Service: stripeOnly.svc, SuccessURL: "https://x/ok"}}); err == nil {
		t.Fatal("a SuccessURL without the session placeholder was accepted")
	}
}

var tokenInPage = regexp.MustCompile(`<code class="token" id="token">(nd_[A-Za-z0-9_-]{43})</code>`)

func TestLocalBackendOverHTTP(t *testing.T) {
	e := newSubsEnv(t, localBilling(t), SubscriptionConfig{})
	base := e.http.URL + "/niche-discovery"

	st := call(t, "GET", base+"/v1/subscription/status", nil)
	wantStatus(t, st, 200, "")
	want := map[string]any{"available": true, "priceUsdPerMonth": "9.99", "priceMicrousdPerMonth": 9.99e6,
		"currency": "USD", "interval": "month", "billing": "local", "development": true}
	if d := cmp.Diff(want, st.json(t)); d != "" {
		t.Fatalf("status (-want +got):\n%s", d)
	}

	checkout := func() map[string]any {
		a := call(t, "POST", base+"/v1/subscription/checkout", nil)
		wantStatus(t, a, 200, "")
		if a.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("checkout Cache-Control %q", a.header.Get("Cache-Control"))
		}
		return a.json(t)
	}
	co := checkout()
	checkoutURL := co["checkoutUrl"].(string)
	if !strings.HasPrefix(checkoutURL, base+niche.LocalCheckoutPath) || co["claimUrl"] != base+"/v1/subscription/claim" || co["development"] != true {
		t.Fatalf("checkout answer %v", co)
	}

	page := call(t, "GET", checkoutURL, nil)
	wantStatus(t, page, 200, "")
	for _, s := range []string{"DEVELOPMENT BILLING BACKEND", `<form method="post"`, "9.99"} {
		if !strings.Contains(string(page.body), s) {
			t.Fatalf("checkout page lacks %q:\n%s", s, page.body)
		}
	}
	for h, v := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
		if page.header.Get(h) != v {
			t.Fatalf("checkout page %s = %q, want %q", h, page.header.Get(h), v)
		}
	}
	if !strings.Contains(page.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("CSP %q", page.header.Get("Content-Security-Policy"))
	}

	// Confirm (API form): the token is shown once.
	conf := call(t, "POST", checkoutURL, nil, "Accept", "application/json")
	wantStatus(t, conf, 200, "")
	tok := conf.json(t)
	token, _ := tok["token"].(string)
	if !niche.ValidSubscriberToken(token) || tok["tokenShownOnce"] != true {
		t.Fatalf("confirmation %v", tok)
	}
	if sub := tok["subscription"].(map[string]any); sub["active"] != true || sub["status"] != "active" {
		t.Fatalf("subscription %v", sub)
	}
	wantStatus(t, call(t, "POST", checkoutURL, nil, "Accept", "application/json"), 410, "The token for this checkout was already issued")
	sessionID := co["sessionId"].(string)
	wantStatus(t, call(t, "POST", base+"/v1/subscription/claim", []byte(`{"sessionId":"`+sessionID+`"}`), "Content-Type", "application/json"),
		410, "The token for this checkout was already issued")
	if _, err := e.svc.Active(context.Background(), token); err != nil {
		t.Fatalf("Active after local checkout: %v", err)
	}

	// Status for the caller's own token (weakness 26).
	status := func(auth string) map[string]any {
		a := call(t, "GET", base+"/v1/subscription/status", nil, "Authorization", auth)
		wantStatus(t, a, 200, "")
		sub, _ := a.json(t)["subscriber"].(map[string]any)
		if sub == nil {
			t.Fatalf("no subscriber in %s", a.body)
		}
		return sub
	}
	own := status("Bearer " + token)
	if own["tokenValid"] != true || own["active"] != true || own["status"] != "active" || own["subscriptionId"] == nil || own["currentPeriodEnd"] == nil {
		t.Fatalf("own status %v", own)
	}
	for _, auth := range []string{"Bearer nd_unknown", "Basic dXNlcjpwYXNz", "Bearer "} {
		if s := status(auth); s["tokenValid"] != false || s["active"] != false || s["status"] != nil {
			t.Fatalf("status for %q: %v", auth, s)
		}
	}

	// Portal.
	a := call(t, "POST", base+"/v1/subscription/portal", nil)
	wantStatus(t, a, 401, "Subscription token required")
	if a.header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("WWW-Authenticate %q", a.header.Get("WWW-Authenticate"))
	}
	wantStatus(t, call(t, "POST", base+"/v1/subscription/portal", nil, "Authorization", "Basic x"), 401, "Subscription token required")
	wantStatus(t, call(t, "POST", base+"/v1/subscription/portal", nil, "Authorization", "Bearer nd_x"), 401, "Subscription token is not valid")
	p := call(t, "POST", base+"/v1/subscription/portal", nil, "Authorization", "Bearer "+token)
	wantStatus(t, p, 200, "")
	portalURL := p.json(t)["portalUrl"].(string)
	if !strings.HasPrefix(portalURL, base+niche.LocalPortalPath) {
		t.Fatalf("portal URL %q", portalURL)
	}
	pp := call(t, "GET", portalURL, nil)
	if pp.status != 200 || !strings.Contains(string(pp.body), `value="fail_payment"`) || !strings.Contains(string(pp.body), "full access") {
		t.Fatalf("portal page %d:\n%s", pp.status, pp.body)
	}
	form := func(v url.Values, hdr ...string) answer {
		return call(t, "POST", portalURL, []byte(v.Encode()), append([]string{"Content-Type", "application/x-www-form-urlencoded"}, hdr...)...)
	}
	if a := form(url.Values{"action": {"fail_payment"}}); a.status != 200 || !strings.Contains(string(a.body), "past_due") {
		t.Fatalf("fail_payment: %d %s", a.status, a.body)
	}
	if s := status("Bearer " + token); s["status"] != "past_due" || s["active"] != true || s["accessUntil"] == nil {
		t.Fatalf("past_due within grace: %v", s)
	}
	wantStatus(t, form(url.Values{"action": {"fail_payment"}}, "Accept", "application/json"), 409, "Not allowed in the subscription's current state")
	c := form(url.Values{"action": {"cancel"}}, "Accept", "application/json")
	wantStatus(t, c, 200, "")
	if j := c.json(t); j["status"] != "canceled" || j["active"] != false {
		t.Fatalf("cancel: %v", j)
	}
	if s := status("Bearer " + token); s["tokenValid"] != true || s["active"] != false || s["status"] != "canceled" {
		t.Fatalf("after cancel: %v", s)
	}
	if _, err := e.svc.Active(context.Background(), token); err == nil {
		t.Fatal("canceled subscription still active")
	}
	wantStatus(t, call(t, "GET", base+niche.LocalPortalPath+"lps_forged", nil, "Accept", "application/json"), 404, "Checkout session not found")

	// A second subscriber, confirmed through the HTML form.
	co2 := checkout()
	html := call(t, "POST", co2["checkoutUrl"].(string), nil, "Content-Type", "application/x-www-form-urlencoded")
	m := tokenInPage.FindSubmatch(html.body)
	if html.status != 200 || m == nil {
		t.Fatalf("confirmation page %d without a token:\n%s", html.status, html.body)
	}
	token2 := string(m[1])
	if !strings.Contains(string(html.body), "DEVELOPMENT BILLING BACKEND") {
		t.Fatal("confirmation page not labelled as development")
	}

	// Rotate and revoke.
	r := call(t, "POST", base+"/v1/subscription/token/rotate", nil, "Authorization", "Bearer "+token2)
	wantStatus(t, r, 200, "")
	token3 := r.json(t)["token"].(string)
	if token3 == token2 || !niche.ValidSubscriberToken(token3) {
		t.Fatalf("rotated token %q", token3)
	}
	if s := status("Bearer " + token2); s["tokenValid"] != false {
		t.Fatalf("rotated-out token still valid: %v", s)
	}
	wantStatus(t, call(t, "POST", base+"/v1/subscription/token/rotate", nil, "Authorization", "Bearer "+token2), 401, "Subscription token is not valid")
	wantStatus(t, call(t, "POST", base+"/v1/subscription/token/revoke", nil), 401, "Subscription token required")
	rv := call(t, "POST", base+"/v1/subscription/token/revoke", nil, "Authorization", "Bearer "+token3)
	if rv.status != 200 || strings.TrimSpace(string(rv.body)) != `{"revoked":true}` {
		t.Fatalf("revoke: %d %s", rv.status, rv.body)
	}
	wantStatus(t, call(t, "POST", base+"/v1/subscription/token/revoke", nil, "Authorization", "Bearer "+token3), 401, "Subscription token is not valid")
	if _, err := e.svc.Active(context.Background(), token3); err == nil {
		t.Fatal("revoked token still active")
	}

	// Operator reissue.
	subID := own["subscriptionId"].(string)
	admin := e.http.URL + "/v1/admin/subscriptions/" + subID + "/token"
	wantStatus(t, call(t, "POST", admin, nil), 401, "A valid admin key is required")
	wantStatus(t, call(t, "POST", e.http.URL+"/v1/admin/subscriptions/nsub_"+strings.Repeat("0", 32)+"/token", nil,
		"Authorization", "Bearer "+testAdminKey), 404, "Subscription not found")
	re := call(t, "POST", admin, nil, "Authorization", "Bearer "+testAdminKey)
	wantStatus(t, re, 200, "")
	if j := re.json(t); !niche.ValidSubscriberToken(j["token"].(string)) {
		t.Fatalf("reissue: %v", j)
	}
}

func TestSubscriptionsWithoutBilling(t *testing.T) {
	e := newSubsEnv(t, nil, SubscriptionConfig{})
	st := call(t, "GET", e.http.URL+"/v1/subscription/status", nil)
	wantStatus(t, st, 200, "")
	want := map[string]any{"available": false, "priceUsdPerMonth": nil, "priceMicrousdPerMonth": nil,
		"currency": "USD", "interval": "month", "billing": nil, "development": false}
	if d := cmp.Diff(want, st.json(t)); d != "" {
		t.Fatalf("status (-want +got):\n%s", d)
	}
	wantStatus(t, call(t, "POST", e.http.URL+"/v1/subscription/checkout", nil), 503, "Subscriptions are not available")
	wantStatus(t, call(t, "POST", e.http.URL+"/v1/subscription/webhook", []byte("{}")), 503, "Subscriptions are not available")
}

// stripeEnv is a server selling through the Stripe fake.
func stripeEnv(t *testing.T, cfg SubscriptionConfig) (*subsEnv, *sbt.Server) {
	t.Helper()
	fake := sbt.NewServer()
	t.Cleanup(fake.Close)
	fake.SetPrice(sbt.MonthlyPrice("price_niche"))
	b, err := stripebilling.New(&stripebilling.Options{SecretKey: "sk_test_1", PriceID: "price_niche", WebhookSecret: "whsec_1",
		APIURL: fake.URL, MaxNetworkRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return newSubsEnv(t, b, cfg), fake
}

func TestStripeBackendOverHTTP(t *testing.T) {
	e, fake := stripeEnv(t, SubscriptionConfig{PublicURL: "https://api.example.com/"})
	base := e.http.URL + "/niche-discovery"

	co := call(t, "POST", base+"/v1/subscription/checkout", []byte(`{"ignored":true}`), "Content-Type", "application/json")
	wantStatus(t, co, 200, "")
	j := co.json(t)
	sessionID := j["sessionId"].(string)
	if j["development"] != false || j["priceUsdPerMonth"] != "9.99" || j["claimUrl"] != "https://api.example.com/niche-discovery/v1/subscription/claim" {
		t.Fatalf("checkout %v", j)
	}
	sess, _ := fake.Session(sessionID)
	if sess.SuccessURL != "https://api.example.com/niche-discovery/v1/subscription/success?session_id={CHECKOUT_SESSION_ID}" ||
		sess.CancelURL != "https://api.example.com/niche-discovery/v1/subscription/cancelled" {
		t.Fatalf("redirect URLs %q %q", sess.SuccessURL, sess.CancelURL)
	}

	claim := func() answer {
		return call(t, "POST", base+"/v1/subscription/claim", []byte(`{"sessionId":"`+sessionID+`"}`), "Content-Type", "application/json")
	}
	a := claim()
	wantStatus(t, a, 409, "The payment is not confirmed yet; retry shortly")
	if a.header.Get("Retry-After") != "5" {
		t.Fatalf("Retry-After %q", a.header.Get("Retry-After"))
	}
	// The success redirect (page and its form) grants nothing before the webhook.
	sp := call(t, "GET", base+"/v1/subscription/success?session_id="+sessionID, nil)
	if sp.status != 200 || !strings.Contains(string(sp.body), `name="session_id" value="`+sessionID+`"`) || tokenInPage.Match(sp.body) {
		t.Fatalf("success page %d:\n%s", sp.status, sp.body)
	}
	successForm := func() answer {
		return call(t, "POST", base+"/v1/subscription/success", []byte(url.Values{"session_id": {sessionID}}.Encode()),
			"Content-Type", "application/x-www-form-urlencoded")
	}
	pending := successForm()
	if pending.status != 409 || !strings.Contains(string(pending.body), `http-equiv="refresh"`) || tokenInPage.Match(pending.body) {
		t.Fatalf("pending page %d:\n%s", pending.status, pending.body)
	}
	wantStatus(t, call(t, "GET", base+"/v1/subscription/success", nil), 400, "")

	obj, err := fake.CompleteCheckout(sessionID, false)
	if err != nil {
		t.Fatal(err)
	}
	payload := sbt.Event("checkout.session.completed", obj)
	hook := func(body []byte, sig string) answer {
		return call(t, "POST", base+"/v1/subscription/webhook", body, "Stripe-Signature", sig, "Content-Type", "application/json")
	}
	wantStatus(t, hook(payload, sbt.Sign(payload, "whsec_forged", time.Time{})), 400, "Invalid webhook signature")
	wantStatus(t, hook(payload, ""), 400, "Invalid webhook signature")
	wantStatus(t, hook(payload, sbt.Sign(payload, "whsec_1", time.Now().Add(-10*time.Minute))), 400, "Webhook timestamp outside the tolerance")
	wantStatus(t, hook(bytes.Repeat([]byte(" "), niche.MaxWebhookBytes+1), "t=1,v1=00"), 413, "Request body too large")
	wantStatus(t, claim(), 409, "")
	fake.Fail("/v1/subscriptions/", 500)
	wantStatus(t, hook(payload, sbt.Sign(payload, "whsec_1", time.Time{})), 503, "Webhook could not be processed; retry later")
	fake.Fail("/v1/subscriptions/", 0)
	ok := hook(payload, sbt.Sign(payload, "whsec_1", time.Time{}))
	if ok.status != 200 || strings.TrimSpace(string(ok.body)) != `{"received":true,"duplicate":false}` {
		t.Fatalf("webhook: %d %s", ok.status, ok.body)
	}
	if dup := hook(payload, sbt.Sign(payload, "whsec_1", time.Time{})); strings.TrimSpace(string(dup.body)) != `{"received":true,"duplicate":true}` {
		t.Fatalf("replayed webhook: %d %s", dup.status, dup.body)
	}

	page := successForm()
	m := tokenInPage.FindSubmatch(page.body)
	if page.status != 200 || m == nil {
		t.Fatalf("claim page %d:\n%s", page.status, page.body)
	}
	token := string(m[1])
	// Stripe's success page signs the payer's browser in.
	var session *http.Cookie
	for _, c := range (&http.Response{Header: page.header}).Cookies() {
		if c.Name == "assay_session" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || !strings.Contains(string(page.body), "signed in in this browser") {
		t.Fatalf("the success page did not sign in: %v\n%s", page.header, page.body)
	}
	if st, err := e.svc.Session(context.Background(), session.Value); err != nil || !st.Entitled {
		t.Fatalf("session after the success page: %+v, %v", st, err)
	}
	if strings.Contains(string(page.body), "DEVELOPMENT") {
		t.Fatal("Stripe pages must not carry the development label")
	}
	if again := successForm(); again.status != 410 || tokenInPage.Match(again.body) {
		t.Fatalf("second claim page %d:\n%s", again.status, again.body)
	}
	wantStatus(t, claim(), 410, "The token for this checkout was already issued")

	if sub, err := e.svc.Active(context.Background(), token); err != nil || sub.Status != "active" {
		t.Fatalf("Active = %+v, %v", sub, err)
	}
	st := call(t, "GET", base+"/v1/subscription/status", nil, "Authorization", "Bearer "+token).json(t)
	if sub := st["subscriber"].(map[string]any); sub["active"] != true || st["billing"] != "stripe" {
		t.Fatalf("status %v", st)
	}
	p := call(t, "POST", base+"/v1/subscription/portal", nil, "Authorization", "Bearer "+token)
	wantStatus(t, p, 200, "")
	if !strings.HasPrefix(p.json(t)["portalUrl"].(string), "https://billing.stripe.test/") {
		t.Fatalf("portal %s", p.body)
	}

	// Cancellation through a webhook ends access.
	subID := obj["subscription"].(string)
	canceled, _ := fake.SetSubscription(subID, func(s *sbt.Subscription) { s.Status = "canceled" })
	del := sbt.Event("customer.subscription.deleted", canceled)
	wantStatus(t, hook(del, sbt.Sign(del, "whsec_1", time.Time{})), 200, "")
	if _, err := e.svc.Active(context.Background(), token); err == nil {
		t.Fatal("canceled subscriber still active")
	}
	st = call(t, "GET", base+"/v1/subscription/status", nil, "Authorization", "Bearer "+token).json(t)
	if sub := st["subscriber"].(map[string]any); sub["active"] != false || sub["status"] != "canceled" || sub["tokenValid"] != true {
		t.Fatalf("status after cancel %v", st)
	}
	// The development pages do not exist with Stripe.
	wantStatus(t, call(t, "GET", base+niche.LocalCheckoutPath+"lcs_x", nil), 404, "Not Found")
}

func TestStripeCheckoutUnavailable(t *testing.T) {
	e, fake := stripeEnv(t, SubscriptionConfig{})
	p := sbt.MonthlyPrice("price_niche")
	p.Currency = "eur"
	fake.SetPrice(p)
	wantStatus(t, call(t, "POST", e.http.URL+"/v1/subscription/checkout", nil), 503, "Subscriptions are not available")
	st := call(t, "GET", e.http.URL+"/v1/subscription/status", nil).json(t)
	if st["available"] != false || st["priceUsdPerMonth"] != nil || st["billing"] != "stripe" {
		t.Fatalf("status %v", st)
	}
}

func TestStripeMockOverHTTP(t *testing.T) {
	mock := sbt.StartStripeMock(t)
	b, err := stripebilling.New(&stripebilling.Options{SecretKey: "sk_test_1", PriceID: "price_niche", WebhookSecret: "whsec_1",
		APIURL: mock, MaxNetworkRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e := newSubsEnv(t, b, SubscriptionConfig{})
	co := call(t, "POST", e.http.URL+"/niche-discovery/v1/subscription/checkout", nil)
	wantStatus(t, co, 200, "")
	sessionID := co.json(t)["sessionId"].(string)
	completed := map[string]any{"id": sessionID, "object": "checkout.session", "mode": "subscription", "status": "complete",
		"livemode": false, "metadata": map[string]any{"serviceId": "niche-discovery"}, "subscription": "sub_mock", "customer": "cus_mock"}
	payload := sbt.Event("checkout.session.completed", completed)
	wh := call(t, "POST", e.http.URL+"/niche-discovery/v1/subscription/webhook", payload, "Stripe-Signature", sbt.Sign(payload, "whsec_1", time.Time{}))
	wantStatus(t, wh, 200, "")
	cl := call(t, "POST", e.http.URL+"/niche-discovery/v1/subscription/claim", []byte(`{"sessionId":"`+sessionID+`"}`), "Content-Type", "application/json")
	wantStatus(t, cl, 200, "")
	token := cl.json(t)["token"].(string)
	if _, err := e.svc.Active(context.Background(), token); err != nil {
		t.Fatalf("Active: %v", err)
	}
	p := call(t, "POST", e.http.URL+"/niche-discovery/v1/subscription/portal", nil, "Authorization", "Bearer "+token)
	wantStatus(t, p, 200, "")
}

func TestUSD(t *testing.T) {
	for micro, want := range map[int64]string{0: "0.00", 9_990_000: "9.99", 10_000_000: "10.00", 250_000: "0.25",
		1: "0.000001", 12_345_678: "12.345678", -500_000: "-0.50"} {
		if got := payment.MicroUSD(micro).String(); got != want {
			t.Errorf("payment.MicroUSD(%d).String() = %q, want %q", micro, got, want)
		}
	}
}
