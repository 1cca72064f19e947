package pages_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/internal/websession"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/pages"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/storetest"
)

// emptyDB is an empty, migrated database, copied for each test.
var emptyDB storetest.Template

// env is a server with the pages mounted over a catalogue, a development
// subscription, claim verification and payments, all on one SQLite
// database.
type env struct {
	h      http.Handler
	db     *store.DB
	subs   *niche.SubscriptionService
	ids    []string // published evaluations, landlord first
	verID  string
	token  string // order token of the verification
	order  string
	secret string // words only a full evaluation shows
}

func newEnv(t *testing.T, free int, po *pages.Options) *env {
	t.Helper()
	ctx := context.Background()
	db := emptyDB.Open(t, nil)
	e := &env{db: db, secret: "HYPOTHESISONLYFORSUBSCRIBERS"}
	ns := nichestore.New(db)
	eng, err := niche.New(ns, &niche.Options{Sources: []niche.Source{{ID: "forum", Name: "Forums", License: "CC BY-SA 4.0", Scope: "public threads", Enabled: true}}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var sigs []niche.SignalInput
	for i, host := range []string{"a.example.com", "b.example.org", "c.example.net", "d.example.io"} {
		sigs = append(sigs, niche.SignalInput{ID: fmt.Sprintf("sig_%032x", i+1), Kind: niche.KindComplaint, Origin: "forum",
			SourceURL: "https://" + host + "/thread/" + strconv.Itoa(i), Title: "Thread " + strconv.Itoa(i), Excerpt: "We lose deposits every year",
			ObservedAt: now.Add(-time.Duration(i+1) * 24 * time.Hour), License: "CC BY-SA 4.0", State: niche.StateAccepted})
	}
	if _, err := eng.IngestSignals(ctx, sigs); err != nil {
		t.Fatal(err)
	}
	sigIDs := []string{sigs[0].ID, sigs[1].ID, sigs[2].ID, sigs[3].ID}
	for i, d := range []struct{ title, category string }{{"Deposit evidence for small landlords", "Property"}, {"Invoice reminders for plumbers", "Trades"}, {"Stock counts for bakeries", "Food"}} {
		ev, err := eng.Create(ctx, niche.Op{}, niche.Draft{Title: d.title, Buyer: "Owners of small firms", Category: d.category,
			Problem:            "Small firms lose hours every week on " + d.title + ", a problem long enough to need a teaser that stops before the end of this sentence and what follows it.",
			SolutionHypothesis: e.secret + " " + d.title, EvaluationNotes: "Notes of the curator on the evidence behind it.",
			Rationale: &niche.DraftRationale{Pain: "RATIONALEPAIN " + d.title},
			Pain:      new(5 - i), Frequency: new(3), WillingnessToPay: new(3), ReachableBuyers: new(3), Feasibility: new(3), CompetitionGap: new(3),
			SignalIDs: sigIDs, Publish: true})
		if err != nil {
			t.Fatal(err)
		}
		e.ids = append(e.ids, ev.ID)
	}
	billing, err := niche.NewLocalBilling(nil)
	if err != nil {
		t.Fatal(err)
	}
	e.subs, err = niche.NewSubscriptionService(ns, billing, &niche.SubscriptionOptions{Sessions: ns})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	ps := paymentstore.New(db)
	gate, err := httpgate.New(&gatetest.Processor{}, ps, &httpgate.Options{PublicBaseURL: "http://127.0.0.1", ReadCredential: gatetest.ReadCredential,
		CashierOptions: payment.CashierOptions{Keys: keys}})
	if err != nil {
		t.Fatal(err)
	}
	ceng, err := claims.New(nil, claimsstore.New(db), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A stored verification paid by a completed order with a signed
	// receipt.
	snapID := ids.New(ids.Snapshot)
	rec := &claims.Record{Result: &claims.Result{VerificationID: ids.New(ids.Verification), Claim: "The Base mainnet chain ID is 8453.",
		Status: claims.StatusConfirmed, ObservedAt: now, Conclusion: "Two sources state it.",
		AtomicFacts: []claims.AtomicFact{{Statement: "Base mainnet has chain ID 8453", Status: claims.StatusConfirmed, Confidence: 0.9,
			Explanation: "Stated by the documentation.", EvidenceIDs: []string{"ev_1"}}},
		Evidence: []claims.Evidence{{ID: "ev_1", URL: "https://docs.example.org/base", Title: "Base docs", Publisher: "Example",
			RetrievedAt: now, Excerpt: "Chain ID 8453", Relationship: claims.Supports, SourceType: "documentation",
			QualityReason: "quote verified on the captured page; documentation; counted toward the verdict", SnapshotID: &snapID, Snapshotted: true}},
		Limitations: []string{"LIMITATIONONE"}, Snapshots: nil, Conflicts: []claims.Conflict{}, ProviderSources: []claims.ProviderSource{}},
		Tier: claims.Standard, PageIDs: []string{}}
	if err := claimsstore.New(db).SaveVerification(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	e.verID = rec.Result.VerificationID
	e.token = ids.Token(ids.OrderToken)
	o := paymenttest.NewTestOrder("claims.verify.standard")
	o.TokenHash = ids.Hash(e.token)
	e.order = o.ID
	if err := ps.OpenOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := ps.MarkSettling(ctx, o.ID, payment.Delivered{ResultKind: "verification", ResultID: e.verID, ResultSHA256: strings.Repeat("0", 64),
		Response: payment.StoredResponse{Status: 200, ContentType: "application/json", Body: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	rcpt := &payment.Receipt{ReceiptID: ids.New(ids.Receipt), OrderID: o.ID, OfferID: o.OfferID, Tier: "standard", AmountMicroUSD: 50_000,
		Currency: "USD", PaymentProtocol: "x402", PaymentMethod: "exact", Network: "eip155:8453", Payer: "0x" + strings.Repeat("1", 40),
		SettlementReference: "0xdev", Dev: true, ResultKind: "verification", ResultID: e.verID, ResultSHA256: strings.Repeat("0", 64),
		IssuedAt: now.UTC().Format(time.RFC3339)}
	signed, err := payment.SignReceipt(keys, rcpt)
	if err != nil {
		t.Fatal(err)
	}
	if err := ps.CompleteOrder(ctx, o.ID, payment.Settled{SettlementRef: "0xdev", ReceiptID: rcpt.ReceiptID, Receipt: signed, CompletedAt: now}); err != nil {
		t.Fatal(err)
	}
	pg, err := pages.New(po)
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{Paywall: gate, Commerce: server.CommerceConfig{Cashier: gate.Cashier()},
		Niche:         server.NicheConfig{Engine: eng, Subscribers: e.subs, FreeSearchesPerDay: &free},
		Subscriptions: server.SubscriptionConfig{Service: e.subs},
		Claims:        server.ClaimsConfig{Engine: ceng},
		Mounts:        []server.Mount{pg, discovery.Documents{}}})
	if err != nil {
		t.Fatal(err)
	}
	e.h = s
	return e
}

// subscribe goes through the development checkout and returns a live
// subscriber token.
func (e *env) subscribe(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	cs, _, err := e.subs.Checkout(ctx, niche.CheckoutParams{BaseURL: "http://127.0.0.1", SuccessURL: "http://127.0.0.1/ok?s=" + niche.CheckoutSessionPlaceholder, CancelURL: "http://127.0.0.1/no"})
	if err != nil {
		t.Fatal(err)
	}
	it, err := e.subs.ConfirmLocalCheckout(ctx, cs.ID)
	if err != nil {
		t.Fatal(err)
	}
	return it.Token
}

// do sends a request as a browser on 127.0.0.1 would (Accept text/html,
// same-origin POSTs), with header pairs overriding.
func (e *env) do(t *testing.T, method, target string, form url.Values, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, "http://127.0.0.1:8080"+target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	} else {
		req = httptest.NewRequest(method, "http://127.0.0.1:8080"+target, nil)
	}
	req.RemoteAddr = "192.0.2.10:5000"
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

func wantPage(t *testing.T, r *httptest.ResponseRecorder, status int, contains ...string) {
	t.Helper()
	if r.Code != status {
		t.Fatalf("status %d, want %d: %s", r.Code, status, r.Body)
	}
	if ct := r.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("Content-Type %q, want a page", ct)
	}
	if csp := r.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}
	for _, c := range contains {
		if !strings.Contains(r.Body.String(), c) {
			t.Errorf("page lacks %q:\n%s", c, r.Body)
		}
	}
}

func sessionCookie(t *testing.T, r *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range r.Result().Cookies() {
		if c.Name == websession.CookieName {
			return c
		}
	}
	t.Fatalf("no session cookie in %v", r.Header())
	return nil
}

func TestLandingForPeopleIndexForAgents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, nil)
	r := e.do(t, "GET", "/", nil)
	// Prices come from the catalogue: the standard tier, a full
	// evaluation, a search.
	wantPage(t, r, 200, "USD 0.05", "USD 0.25", "Browse the catalogue", "/niche-discovery/browse", "Deposit evidence for small landlords")
	for _, accept := range []string{"application/json", ""} {
		r := e.do(t, "GET", "/", nil, "Accept", accept)
		var ix discovery.ServiceIndex
		if r.Code != 200 || json.Unmarshal(r.Body.Bytes(), &ix) != nil || len(ix.Services) == 0 {
			t.Errorf("Accept %q: %d %s, want the JSON index", accept, r.Code, r.Body)
		}
	}
	// Pages are not capabilities nor operations of the documents.
	caps := e.do(t, "GET", "/v1/capabilities", nil, "Accept", "application/json")
	api := e.do(t, "GET", "/openapi.json", nil, "Accept", "application/json")
	for _, b := range []string{caps.Body.String(), api.Body.String()} {
		if strings.Contains(b, "pages.") || strings.Contains(b, "/browse") {
			t.Errorf("a page is published as an operation: %.300s", b)
		}
	}
}

func TestCatalogueListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, nil)
	r := e.do(t, "GET", "/niche-discovery/browse", nil)
	wantPage(t, r, 200, "Deposit evidence for small landlords", "Invoice reminders", "most recent", "Property", "Page 1")
	if strings.Contains(r.Body.String(), e.secret) {
		t.Error("the list shows a full evaluation's text")
	}
	// Highest score first.
	if b := r.Body.String(); strings.Index(b, "Deposit evidence") > strings.Index(b, "Stock counts") {
		t.Error("the list is not sorted by score")
	}
	r = e.do(t, "GET", "/niche-discovery/browse?category=trades&sort=recent", nil)
	wantPage(t, r, 200, "Invoice reminders for plumbers")
	if strings.Contains(r.Body.String(), "Stock counts") {
		t.Error("the category filter let another category through")
	}
	for _, q := range []string{"sort=best", "page=0", "page=9", "page=x"} {
		wantPage(t, e.do(t, "GET", "/niche-discovery/browse?"+q, nil), 400)
	}
	wantPage(t, e.do(t, "GET", "/niche-discovery/browse/niche_00000000000000000000000000000000", nil), 404, "Niche not found")
	// Unknown paths: a page for a browser, JSON for an agent.
	wantPage(t, e.do(t, "GET", "/niche-discovery/browse/a/b", nil), 404, "Page not found")
	if r := e.do(t, "GET", "/niche-discovery/browse/a/b", nil, "Accept", "application/json"); r.Code != 404 || r.Body.String() != `{"detail":"Not Found"}` {
		t.Errorf("unknown path for an agent: %d %s", r.Code, r.Body)
	}
}

func TestSearchQuotaPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, nil)
	wantPage(t, e.do(t, "GET", "/niche-discovery/browse/search", nil), 200, "Words to find")
	// Refused before counting.
	wantPage(t, e.do(t, "GET", "/niche-discovery/browse/search?q=ab", nil), 422, "at least 3 characters")
	// Nothing found is not counted.
	wantPage(t, e.do(t, "GET", "/niche-discovery/browse/search?q=zebra", nil), 200, "Nothing matches")
	// The word forms of the API: "landlord" finds "landlords".
	wantPage(t, e.do(t, "GET", "/niche-discovery/browse/search?q=landlord", nil), 200, "Deposit evidence for small landlords", "0 of 1 free searches left")
	r := e.do(t, "GET", "/niche-discovery/browse/search?q=plumbers", nil)
	wantPage(t, r, 429, "Free searches used", "used the 1 free searches", "Subscribe")
	if r.Header().Get("Retry-After") == "" {
		t.Error("no Retry-After on the quota page")
	}
	// The page and the API share one quota.
	api := e.do(t, "GET", "/niche-discovery/v1/search?q=plumbers", nil, "Accept", "application/json")
	if api.Code != 429 {
		t.Errorf("API after the page used the quota: %d", api.Code)
	}
}

func TestSignInReadFullSignOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, nil)
	id := e.ids[0]
	// Anonymous: the preview and how to unlock it.
	r := e.do(t, "GET", "/niche-discovery/browse/"+id, nil)
	wantPage(t, r, 200, "Deposit evidence", "Subscribe", "/niche-discovery/v1/niches/"+id+"/pay-per-call")
	if strings.Contains(r.Body.String(), e.secret) || strings.Contains(r.Body.String(), "RATIONALEPAIN") {
		t.Fatal("the preview shows the full evaluation")
	}
	wantPage(t, e.do(t, "POST", "/niche-discovery/account/sign-in", url.Values{"token": {"nd_wrong"}}), 401, "not a live subscriber token")
	tok := e.subscribe(t)
	// A cross-site form is refused, whatever it carries.
	wantPage(t, e.do(t, "POST", "/niche-discovery/account/sign-in", url.Values{"token": {tok}}, "Sec-Fetch-Site", "cross-site"), 403, "another site")
	r = e.do(t, "POST", "/niche-discovery/account/sign-in", url.Values{"token": {tok}})
	if r.Code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", r.Code, r.Body)
	}
	c := sessionCookie(t, r)
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Value == tok || !strings.HasPrefix(c.Value, "nds_") {
		t.Fatalf("cookie %+v: want HttpOnly, Lax, not Secure on loopback, a session secret", c)
	}
	// Stored hashed: neither the secret nor the token is in the table.
	var sh, th string
	if err := e.db.QueryRow(context.Background(), "SELECT session_hash, token_hash FROM niche_subscriber_sessions").Scan(&sh, &th); err != nil {
		t.Fatal(err)
	}
	if sh != ids.Hash(c.Value) || th != ids.Hash(tok) {
		t.Errorf("stored %s %s, want the hashes", sh, th)
	}
	cookie := c.Name + "=" + c.Value
	r = e.do(t, "GET", "/niche-discovery/browse/"+id, nil, "Cookie", cookie)
	wantPage(t, r, 200, e.secret, "RATIONALEPAIN", "Capture: not captured", "Review:", "Source page")
	// The API keeps taking the bearer token only.
	if r := e.do(t, "GET", "/niche-discovery/v1/niches/"+id, nil, "Accept", "application/json", "Cookie", cookie); r.Code != 401 {
		t.Errorf("the API accepted the cookie: %d", r.Code)
	}
	if r := e.do(t, "GET", "/niche-discovery/v1/niches/"+id, nil, "Accept", "application/json", "Authorization", "Bearer "+tok); r.Code != 200 {
		t.Errorf("the API refused the bearer token: %d", r.Code)
	}
	// A signed-in search matches the full text, without quota.
	wantPage(t, e.do(t, "GET", "/niche-discovery/browse/search?q="+e.secret, nil, "Cookie", cookie), 200, "in the full text")
	wantPage(t, e.do(t, "GET", "/niche-discovery/account", nil, "Cookie", cookie), 200, "full access", "Sign out", "Billing")
	// The portal button opens the development portal.
	if r := e.do(t, "POST", "/niche-discovery/account/portal", url.Values{}, "Cookie", cookie); r.Code != 303 || !strings.Contains(r.Header().Get("Location"), "/v1/subscription/local/portal/") {
		t.Errorf("portal: %d %v", r.Code, r.Header())
	}
	r = e.do(t, "POST", "/niche-discovery/account/sign-out", url.Values{}, "Cookie", cookie)
	if r.Code != 303 || sessionCookie(t, r).MaxAge >= 0 {
		t.Fatalf("sign-out: %d %v", r.Code, r.Header())
	}
	// The old cookie reads the preview again.
	r = e.do(t, "GET", "/niche-discovery/browse/"+id, nil, "Cookie", cookie)
	wantPage(t, r, 200, "Subscribe")
	if strings.Contains(r.Body.String(), e.secret) {
		t.Error("a signed-out session still reads the full evaluation")
	}
}

func TestSessionEndsWithItsToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, nil)
	tok := e.subscribe(t)
	r := e.do(t, "POST", "/niche-discovery/account/sign-in", url.Values{"token": {tok}})
	cookie := websession.CookieName + "=" + sessionCookie(t, r).Value
	if _, err := e.subs.Rotate(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	r = e.do(t, "GET", "/niche-discovery/browse/"+e.ids[0], nil, "Cookie", cookie)
	wantPage(t, r, 200, "Sign in")
	if strings.Contains(r.Body.String(), e.secret) {
		t.Error("a session outlived its rotated token")
	}
}

func TestCheckoutSuccessSignsIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, nil)
	// The subscribe button starts a checkout and sends the browser to it.
	r := e.do(t, "POST", "/niche-discovery/account/subscribe", url.Values{})
	loc := r.Header().Get("Location")
	if r.Code != 303 || !strings.Contains(loc, "/v1/subscription/local/checkout/") {
		t.Fatalf("subscribe: %d %s", r.Code, loc)
	}
	u, _ := url.Parse(loc)
	if r := e.do(t, "POST", u.Path, url.Values{}, "Sec-Fetch-Site", "cross-site"); r.Code != 403 {
		t.Errorf("a cross-site confirmation: %d", r.Code)
	}
	r = e.do(t, "POST", u.Path, url.Values{})
	wantPage(t, r, 200, "Your subscription is active", "signed in in this browser", "/niche-discovery/browse")
	cookie := websession.CookieName + "=" + sessionCookie(t, r).Value
	wantPage(t, e.do(t, "GET", "/niche-discovery/browse/"+e.ids[1], nil, "Cookie", cookie), 200, e.secret)
	// A JSON client of the same page gets its token and no cookie.
	cs, _, _ := e.subs.Checkout(context.Background(), niche.CheckoutParams{BaseURL: "http://127.0.0.1", SuccessURL: "http://x/?s=" + niche.CheckoutSessionPlaceholder, CancelURL: "http://x/"})
	cu, _ := url.Parse(cs.URL)
	r = e.do(t, "POST", cu.Path, url.Values{}, "Accept", "application/json", "Sec-Fetch-Site", "")
	if r.Code != 200 || len(r.Result().Cookies()) != 0 {
		t.Errorf("JSON confirmation: %d, cookies %v", r.Code, r.Result().Cookies())
	}
}

func TestVerificationPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, nil)
	p := "/claim-verification/v1/claims/verifications/" + e.verID
	wantPage(t, e.do(t, "GET", p, nil), 401, "Order token", `name="order_token"`)
	wantPage(t, e.do(t, "POST", p, url.Values{"order_token": {ids.Token(ids.OrderToken)}}), 404, "No verification answers")
	for _, r := range []*httptest.ResponseRecorder{
		e.do(t, "POST", p, url.Values{"order_token": {e.token}}),
		e.do(t, "GET", p+"?order_token="+url.QueryEscape(e.token), nil),
		e.do(t, "GET", p, nil, httpgate.HeaderOrderToken, e.token),
	} {
		wantPage(t, r, 200, "Verdict", "confirmed", "LIMITATIONONE", "Base mainnet has chain ID 8453", "90 %", "Counted",
			"docs.example.org", "Chain ID 8453", e.order, `&#34;signatureAlgorithm&#34;:&#34;Ed25519&#34;`, `src="/assets/receipt.js"`, `data-jwks="/claim-verification/.well-known/jwks.json"`)
	}
	// Agents keep the JSON answer.
	r := e.do(t, "GET", p, nil, "Accept", "application/json", httpgate.HeaderOrderToken, e.token)
	var res claims.Result
	if r.Code != 200 || json.Unmarshal(r.Body.Bytes(), &res) != nil || res.VerificationID != e.verID {
		t.Fatalf("JSON read: %d %s", r.Code, r.Body)
	}
	if r := e.do(t, "GET", p, nil, "Accept", "application/json"); r.Code != 401 || strings.HasPrefix(r.Header().Get("Content-Type"), "text/html") {
		t.Errorf("JSON read without a token: %d %s", r.Code, r.Header().Get("Content-Type"))
	}
	// The documents say the read is also served as a page.
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]any `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	oa := e.do(t, "GET", "/claim-verification/openapi.json", nil, "Accept", "application/json")
	if err := json.Unmarshal(oa.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Paths["/v1/claims/verifications/{verification_id}"]["get"].Responses["200"].Content["text/html"]; !ok {
		t.Errorf("the OpenAPI document does not declare the page: %v", doc.Paths["/v1/claims/verifications/{verification_id}"])
	}
	js := e.do(t, "GET", "/assets/receipt.js", nil)
	if js.Code != 200 || !strings.Contains(js.Body.String(), `crypto.subtle.verify({ name: "Ed25519" }`) {
		t.Errorf("receipt script: %d", js.Code)
	}
}

func TestRestyle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, &pages.Options{SiteName: "Acme Evidence", Stylesheet: []byte("body{color:rebeccapurple}"),
		Templates: fstest.MapFS{"mine.html": {Data: []byte(`{{define "landing"}}{{template "head" .}}<h1>OURS</h1>{{template "foot" .}}{{end}}`)}}})
	wantPage(t, e.do(t, "GET", "/", nil), 200, "<h1>OURS</h1>", "Acme Evidence")
	css := e.do(t, "GET", "/assets/pages.css", nil)
	if css.Body.String() != "body{color:rebeccapurple}" || !strings.HasPrefix(css.Header().Get("Content-Type"), "text/css") {
		t.Errorf("stylesheet: %q %q", css.Body, css.Header().Get("Content-Type"))
	}
	// The other pages keep the defaults.
	wantPage(t, e.do(t, "GET", "/niche-discovery/browse", nil), 200, "Acme Evidence", "Deposit evidence")
	if _, err := pages.New(&pages.Options{Templates: fstest.MapFS{"bad.html": {Data: []byte(`{{define "x"}}{{end`)}}}); err == nil {
		t.Error("a broken template was accepted")
	}
}

func TestPagesAreSmall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3, nil)
	tok := e.subscribe(t)
	r := e.do(t, "POST", "/niche-discovery/account/sign-in", url.Values{"token": {tok}})
	cookie := websession.CookieName + "=" + sessionCookie(t, r).Value
	for _, p := range []string{"/", "/niche-discovery/browse", "/niche-discovery/browse/" + e.ids[0], "/niche-discovery/account",
		"/claim-verification/v1/claims/verifications/" + e.verID + "?order_token=" + url.QueryEscape(e.token), "/assets/pages.css", "/assets/receipt.js"} {
		r := e.do(t, "GET", p, nil, "Cookie", cookie)
		if r.Code != 200 || r.Body.Len() > 100<<10 {
			t.Errorf("%s: %d, %d bytes (limit 100 KB)", p, r.Code, r.Body.Len())
		}
	}
}
