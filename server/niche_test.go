package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichetest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
)

type nicheFixture struct {
	h         http.Handler
	srv       *Server
	eng       *niche.Engine
	pay       *recordingPaywall
	subs      *nichetest.Subscribers
	signer    *niche.UnlockSigner
	published []string // ids, in creation order
	draftID   string
	withdrawn string
}

// secrets appear only in redacted fields of the fixture.
var nicheSecrets = []string{"SECRETNOTES", "SECRETHYPOTHESIS", "SECRETPROBLEMTAIL", "SECRETEVIDENCE", "secret-evidence.example"}

func newNicheFixture(t *testing.T, cfg NicheConfig) *nicheFixture {
	t.Helper()
	return newNicheFixtureWith(t, cfg, nil)
}

// newNicheFixtureWith is newNicheFixture with a hook that completes the
// server's configuration (with the fixture's database at hand).
func newNicheFixtureWith(t *testing.T, cfg NicheConfig, configure func(*Config, *store.DB)) *nicheFixture {
	t.Helper()
	ctx := context.Background()
	db := emptyDB.Open(t, nil)
	eng, err := niche.New(nichestore.New(db), &niche.Options{Sources: []niche.Source{{ID: "forum", Name: "Forums", License: "CC BY-SA 4.0",
		Scope: "public threads", Enabled: true}}})
	if err != nil {
		t.Fatal(err)
	}
	f := &nicheFixture{eng: eng, pay: &recordingPaywall{}, subs: &nichetest.Subscribers{}}
	f.subs.Add("nd_good", niche.Subscriber{ID: "cus_1"})
	f.signer, err = niche.NewUnlockSigner([]byte("unlock-key-for-tests-0123456789abcdef"), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var sigs []niche.SignalInput
	for i, host := range []string{"www.secret-evidence.example", "b.example.org", "c.example.net", "d.example.io"} {
		sigs = append(sigs, niche.SignalInput{
			ID: fmt.Sprintf("sig_%032x", i+1), Kind: niche.KindComplaint, SourceURL: "https://" + host + "/SECRETEVIDENCE/" + strconv.Itoa(i),
			Origin: "forum", Title: "SECRETEVIDENCE title " + strconv.Itoa(i), Excerpt: "SECRETEVIDENCE excerpt",
			ObservedAt: now.Add(-time.Duration(i+1) * 24 * time.Hour), License: "CC BY-SA 4.0", State: niche.StateAccepted,
		})
	}
	if _, err := eng.IngestSignals(ctx, sigs); err != nil {
		t.Fatal(err)
	}
	ids := []string{sigs[0].ID, sigs[1].ID, sigs[2].ID, sigs[3].ID}
	mk := func(title, category string, pain int, publish bool) string {
		ev, err := eng.Create(ctx, niche.Op{}, niche.Draft{
			Title: title, Buyer: "Owners of small firms", Category: category,
			Problem:            "Small firms lose hours every week on " + title + " and the visible part of this problem ends here, after a padding sentence that pushes the rest past the teaser. SECRETPROBLEMTAIL follows far beyond the teaser limit of one hundred and sixty characters, so it must never show.",
			SolutionHypothesis: "SECRETHYPOTHESIS: automate " + title, EvaluationNotes: "SECRETNOTES about " + title + " and the evidence.",
			Pain: new(pain), Frequency: new(3), WillingnessToPay: new(3), ReachableBuyers: new(3), Feasibility: new(3), CompetitionGap: new(3),
			SignalIDs: ids, Publish: publish,
		})
		if err != nil {
			t.Fatal(err)
		}
		return ev.ID
	}
	f.published = []string{
		mk("Invoice reminders for plumbers", "Trades", 5, true),
		mk("Inventory counts for bakeries", "Food", 2, true),
		mk("Invoice matching for bakeries", "food", 3, true),
	}
	f.draftID = mk("Invoice draft never published", "Trades", 5, false)
	f.withdrawn = mk("Invoice withdrawn evaluation", "Trades", 5, true)
	if _, err := eng.Withdraw(ctx, f.withdrawn, 1, niche.Op{}); err != nil {
		t.Fatal(err)
	}
	cfg.Engine = eng
	if cfg.Subscribers == nil {
		cfg.Subscribers = f.subs
	}
	if cfg.Unlock == nil {
		cfg.Unlock = f.signer
	}
	sc := Config{Niche: cfg, Paywall: f.pay, AdminKey: testAdminKey}
	if configure != nil {
		configure(&sc, db)
	}
	f.srv, err = New(sc)
	if err != nil {
		t.Fatal(err)
	}
	f.h = f.srv
	return f
}

func (f *nicheFixture) get(t *testing.T, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, f.h, "GET", target, "", hdr...)
}

func decodeMap(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	return m
}

func nicheIDs(t *testing.T, rec *httptest.ResponseRecorder) []string {
	t.Helper()
	var body struct {
		Niches []struct {
			ID string `json:"id"`
		} `json:"niches"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, n := range body.Niches {
		out = append(out, n.ID)
	}
	return out
}

func TestNicheRoutesTable(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{})
	seen := map[string]*Route{}
	for _, r := range f.srv.Routes() {
		if !strings.HasPrefix(r.ID, "niche.") {
			continue
		}
		seen[r.ID] = r
		if r.Summary == "" || r.Status == "" || r.Method == "" || r.Path == "" || len(r.Prefixes) != 1 || r.Prefixes[0] != "/niche-discovery" {
			t.Errorf("route %s incomplete: %+v", r.ID, r)
		}
		if strings.HasPrefix(r.Path, "/v1/admin/") != r.Admin {
			t.Errorf("route %s: Admin=%v", r.ID, r.Admin)
		}
	}
	for id, want := range map[string]int64{"niche.pay-per-call": 250000, "niche.search.pay-per-call": 50000} {
		if r := seen[id]; r == nil || r.Offer == nil || r.Offer.AmountMicroUSD != want {
			t.Errorf("%s offer: %+v", id, r)
		}
	}
	for id, q := range map[string]string{"niche.list": "NicheListQuery", "niche.search": "NicheSearchQuery", "niche.search.pay-per-call": "NicheSearchQuery"} {
		if seen[id] == nil || seen[id].Query != q {
			t.Errorf("%s query shape: %+v", id, seen[id])
		}
	}
	if len(seen) != 18 {
		t.Errorf("%d niche routes, want 18", len(seen))
	}
	// Custom prefix and prices.
	g := newNicheFixtureWith(t, NicheConfig{Prefix: "/nd/"}, func(c *Config, _ *store.DB) {
		cat, err := sell.NewCatalogue(&sell.CatalogueOptions{Prices: sell.Prices{NicheSearch: 70000}})
		if err != nil {
			t.Fatal(err)
		}
		c.Catalogue = cat
	})
	if rec := g.get(t, "/nd/v1/niches"); rec.Code != 200 {
		t.Fatalf("custom prefix: %d", rec.Code)
	}
	if rec := g.get(t, "/niche-discovery/v1/niches"); rec.Code != 404 {
		t.Fatalf("default prefix still served: %d", rec.Code)
	}
	if rec := g.get(t, "/nd/v1/search/pay-per-call?q=invoice"); rec.Code != 200 || !cmp.Equal(g.pay.charges(), []string{"niche.search=70000"}) {
		t.Fatalf("custom search price: %d %v", rec.Code, g.pay.charges())
	}
}

func TestNicheList(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{FreeSearchesPerDay: new(UnlimitedSearches)})
	p := f.published
	tests := []struct {
		target string
		want   []string
	}{
		{"/v1/niches", []string{p[0], p[2], p[1]}},
		{"/niche-discovery/v1/niches?sort=recent", []string{p[2], p[1], p[0]}},
		{"/v1/niches?category=FOOD", []string{p[2], p[1]}},
		{"/v1/niches?q=invoice", []string{p[0], p[2]}},
		{"/v1/niches?q=invoice&category=food&sort=recent", []string{p[2]}},
		{"/v1/niches?limit=1", []string{p[0]}},
		{"/v1/niches?q=zzz", []string{}},
		{"/v1/niches?q=", []string{p[0], p[2], p[1]}},
	}
	for _, tc := range tests {
		rec := f.get(t, tc.target)
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", tc.target, rec.Code, rec.Body)
		}
		if diff := cmp.Diff(tc.want, nicheIDs(t, rec)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.target, diff)
		}
	}
	m := decodeMap(t, f.get(t, "/v1/niches?limit=1"))
	item := m["niches"].([]any)[0].(map[string]any)
	unlock := item["unlock"].(map[string]any)
	ppc := unlock["payPerCall"].(map[string]any)
	if ppc["path"] != "/niche-discovery/v1/niches/"+p[0]+"/pay-per-call" || ppc["amountMicrousd"] != 250000.0 || ppc["priceUsd"] != "0.25" {
		t.Errorf("unlock block: %v", unlock)
	}
	if _, ok := unlock["subscription"]; ok {
		t.Errorf("a server without subscription routes names a checkout: %v", unlock)
	}
}

func TestNicheQueryValidation(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{})
	long := strings.Repeat("a", 151)
	tests := []struct {
		target string
		want   string
	}{
		{"/v1/niches?limit=0", `{"detail":[{"type":"greater_than_equal","loc":["query","limit"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`},
		{"/v1/niches?limit=101", `{"detail":[{"type":"less_than_equal","loc":["query","limit"],"msg":"Input should be less than or equal to 100","input":"101","ctx":{"le":100}}]}`},
		{"/v1/niches?sort=best", `{"detail":[{"type":"literal_error","loc":["query","sort"],"msg":"Input should be 'recent' or 'score'","input":"best","ctx":{"expected":"'recent' or 'score'"}}]}`},
		{"/v1/niches?q=" + long, `{"detail":[{"type":"string_too_long","loc":["query","q"],"msg":"String should have at most 150 characters","input":"` + long + `","ctx":{"max_length":150}}]}`},
		{"/v1/niches?category=" + strings.Repeat("c", 81), `{"detail":[{"type":"string_too_long","loc":["query","category"],"msg":"String should have at most 80 characters","input":"` + strings.Repeat("c", 81) + `","ctx":{"max_length":80}}]}`},
		{"/v1/search", `{"detail":[{"type":"missing","loc":["query","q"],"msg":"Field required","input":null}]}`},
		{"/v1/search?q=ab", `{"detail":[{"type":"string_too_short","loc":["query","q"],"msg":"String should have at least 3 characters","input":"ab","ctx":{"min_length":3}}]}`},
		{"/v1/search?q=abc&limit=21&sort=x", `{"detail":[{"type":"literal_error","loc":["query","sort"],"msg":"Input should be 'recent' or 'score'","input":"x","ctx":{"expected":"'recent' or 'score'"}},{"type":"less_than_equal","loc":["query","limit"],"msg":"Input should be less than or equal to 20","input":"21","ctx":{"le":20}}]}`},
		{"/v1/search/pay-per-call?q=" + long, `{"detail":[{"type":"string_too_long","loc":["query","q"],"msg":"String should have at most 150 characters","input":"` + long + `","ctx":{"max_length":150}}]}`},
		{"/v1/search/pay-per-call?q=invoice&limit=0", `{"detail":[{"type":"greater_than_equal","loc":["query","limit"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`},
		// A malformed percent escape stays literal text, as in Starlette
		// (URL.Query would drop the parameter).
		{"/v1/niches?sort=%ZZ", `{"detail":[{"type":"literal_error","loc":["query","sort"],"msg":"Input should be 'recent' or 'score'","input":"%ZZ","ctx":{"expected":"'recent' or 'score'"}}]}`},
		{"/v1/niches?limit=%ZZ", `{"detail":[{"type":"int_parsing","loc":["query","limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"%ZZ"}]}`},
	}
	for _, tc := range tests {
		rec := f.get(t, tc.target)
		if rec.Code != 422 {
			t.Errorf("%s: status %d %s", tc.target, rec.Code, rec.Body)
			continue
		}
		if got := strings.TrimSpace(rec.Body.String()); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.target, got, tc.want)
		}
	}
	if c := f.pay.charges(); len(c) != 0 {
		t.Errorf("invalid paid searches were charged: %v", c)
	}
	// q=%ZZinvoice searches for the literal text "%ZZinvoice".
	if rec := f.get(t, "/v1/search?q=%ZZinvoice"); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"%ZZinvoice"`) {
		t.Errorf("q=%%ZZinvoice: %d %s", rec.Code, rec.Body)
	}
	// Signed and zero-padded integers are accepted, like Pydantic. (Its
	// other lax forms, "5.0" or " 5 ", are the shapes decoder's business.)
	for _, v := range []string{"%2B5", "005"} {
		if rec := f.get(t, "/v1/niches?limit="+v); rec.Code != 200 {
			t.Errorf("limit=%s: %d %s", v, rec.Code, rec.Body)
		}
	}
}

func TestNicheUnknownIDs(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{})
	unknown := "niche_" + strings.Repeat("f", 32)
	for _, id := range []string{unknown, f.draftID, f.withdrawn, "not-an-id", "niche_" + strings.Repeat("F", 32)} {
		for _, suffix := range []string{"", "/preview", "/pay-per-call"} {
			for _, auth := range [][]string{nil, {"Authorization", "Bearer nd_good"}} {
				target := "/v1/niches/" + url.PathEscape(id) + suffix
				rec := f.get(t, target, auth...)
				if rec.Code != 404 || strings.TrimSpace(rec.Body.String()) != `{"detail":"Niche not found"}` {
					t.Errorf("%s (%v): %d %s", target, auth, rec.Code, rec.Body)
				}
			}
		}
	}
	if c := f.pay.charges(); len(c) != 0 {
		t.Errorf("unknown ids were charged: %v", c)
	}
	if rec := f.get(t, "/v1/admin/niche/evaluations/"+unknown, "Authorization", "Bearer "+testAdminKey); rec.Code != 404 {
		t.Errorf("admin unknown: %d", rec.Code)
	}
}

func TestNicheDetailAccess(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{})
	id, other := f.published[0], f.published[1]
	// The pay-per-call route returns the full evaluation and a token.
	rec := f.get(t, "/niche-discovery/v1/niches/"+id+"/pay-per-call")
	if rec.Code != 200 {
		t.Fatalf("pay-per-call: %d %s", rec.Code, rec.Body)
	}
	tok := rec.Header().Get("X-Niche-Paid-Call")
	m := decodeMap(t, rec)
	access := m["access"].(map[string]any)
	if tok == "" || access["unlockToken"] != tok || access["kind"] != "pay_per_call" || access["orderId"] != f.pay.last().OrderID || access["payer"] != "0xabc" {
		t.Fatalf("token %q access %v", tok, access)
	}
	if m["evaluationNotes"] == nil || m["id"] != id || len(m["evidence"].([]any)) != 4 {
		t.Fatalf("not the full evaluation: %v", m)
	}
	if c := f.pay.charges(); !cmp.Equal(c, []string{"niche.evaluation=250000"}) {
		t.Fatalf("charges %v", c)
	}
	expiredSigner, _ := niche.NewUnlockSigner([]byte("unlock-key-for-tests-0123456789abcdef"),
		&niche.UnlockOptions{Now: func() time.Time { return time.Now().Add(-time.Hour) }})
	expired, _, _ := expiredSigner.Issue(id, "x")
	otherKey, _ := niche.NewUnlockSigner([]byte("another-key-for-tests-0123456789abcdef"), nil)
	forged, _, _ := otherKey.Issue(id, "x")
	forOther, _, _ := f.signer.Issue(other, "x")
	tests := []struct {
		name   string
		id     string
		hdr    []string
		status int
		access string
	}{
		{"anonymous", id, nil, 401, ""},
		{"subscriber", id, []string{"Authorization", "Bearer nd_good"}, 200, "subscription"},
		{"subscriber lower-case scheme", id, []string{"Authorization", "bearer nd_good"}, 200, "subscription"},
		{"inactive subscriber", id, []string{"Authorization", "Bearer nd_gone"}, 401, ""},
		{"paid-call token", id, []string{"X-Niche-Paid-Call", tok}, 200, "pay_per_call"},
		{"token of another niche", other, []string{"X-Niche-Paid-Call", tok}, 401, ""},
		{"token issued for another niche", id, []string{"X-Niche-Paid-Call", forOther}, 401, ""},
		{"expired token", id, []string{"X-Niche-Paid-Call", expired}, 401, ""},
		{"forged token", id, []string{"X-Niche-Paid-Call", forged}, 401, ""},
		{"garbage token", id, []string{"X-Niche-Paid-Call", "paid"}, 401, ""},
		{"admin key is no token", id, []string{"X-Niche-Paid-Call", testAdminKey}, 401, ""},
		{"token with inactive subscriber", id, []string{"Authorization", "Bearer nd_gone", "X-Niche-Paid-Call", tok}, 200, "pay_per_call"},
	}
	for _, tc := range tests {
		rec := f.get(t, "/v1/niches/"+tc.id, tc.hdr...)
		if rec.Code != tc.status {
			t.Errorf("%s: %d %s", tc.name, rec.Code, rec.Body)
			continue
		}
		m := decodeMap(t, rec)
		if tc.status == 401 {
			if rec.Header().Get("WWW-Authenticate") == "" || m["detail"] == nil || m["unlock"] == nil || m["evaluationNotes"] != nil {
				t.Errorf("%s: locked answer %v", tc.name, m)
			}
			for _, s := range nicheSecrets {
				if strings.Contains(rec.Body.String(), s) {
					t.Errorf("%s: 401 leaks %q", tc.name, s)
				}
			}
			continue
		}
		if m["access"].(map[string]any)["kind"] != tc.access || m["solutionHypothesis"] == nil {
			t.Errorf("%s: %v", tc.name, m["access"])
		}
		if rec.Header().Get("Cache-Control") != "private, no-store" {
			t.Errorf("%s: Cache-Control %q", tc.name, rec.Header().Get("Cache-Control"))
		}
	}
	// Without a signer the header is ignored and pay-per-call carries no token.
	g := newNicheFixture(t, NicheConfig{})
	g.srv.cfg.Niche.Unlock = nil
	h, err := New(Config{Niche: NicheConfig{Engine: g.eng, Subscribers: g.subs}, Paywall: g.pay})
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(t, h, "GET", "/v1/niches/"+g.published[0], "", "X-Niche-Paid-Call", tok); rec.Code != 401 {
		t.Errorf("no signer: %d", rec.Code)
	}
}

// TestNichePreviewNeverLeaks reads every free route that returns niche
// data and checks that no redacted text reaches it.
func TestNichePreviewNeverLeaks(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{FreeSearchesPerDay: new(UnlimitedSearches)})
	targets := []string{
		"/v1/niches", "/v1/niches?sort=recent&limit=100", "/v1/niches?q=invoice", "/v1/niches?category=food",
		"/v1/search?q=invoice", "/v1/search?q=bakeries&sort=recent", "/v1/search?q=secretnotes", "/v1/search?q=small+firms",
		"/v1/sources",
	}
	for _, id := range f.published {
		targets = append(targets, "/v1/niches/"+id+"/preview", "/v1/niches/"+id)
	}
	for _, target := range targets {
		rec := f.get(t, target)
		if rec.Code != 200 && rec.Code != 401 {
			t.Fatalf("%s: %d %s", target, rec.Code, rec.Body)
		}
		for _, s := range nicheSecrets {
			if strings.Contains(rec.Body.String(), s) {
				t.Errorf("%s leaks %q: %s", target, s, rec.Body)
			}
		}
		for _, key := range []string{"solutionHypothesis", "evaluationNotes", "evidence", "dimensions", "sourceUrl"} {
			if strings.Contains(rec.Body.String(), `"`+key+`"`) {
				t.Errorf("%s has key %s", target, key)
			}
		}
	}
	// The preview's keys are exactly the allow-list.
	m := decodeMap(t, f.get(t, "/v1/niches/"+f.published[0]+"/preview"))
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	want := []string{"access", "buyer", "category", "id", "problemTeaser", "score", "scoreType", "scoreVersion", "signalCount", "title", "unlock"}
	if diff := cmp.Diff(want, keys, cmp.Transformer("sort", sortedStrings)); diff != "" {
		t.Errorf("preview keys (-want +got):\n%s", diff)
	}
	if teaser := m["problemTeaser"].(string); !strings.HasSuffix(teaser, "…") || len([]rune(teaser)) > 160 {
		t.Errorf("teaser %q", teaser)
	}
	// Subscribers do get the hidden fields through search.
	rec := f.get(t, "/v1/search?q=invoice", "Authorization", "Bearer nd_good")
	if !strings.Contains(rec.Body.String(), "SECRETNOTES") || decodeMap(t, rec)["access"] != "full" {
		t.Errorf("subscriber search not full: %s", rec.Body)
	}
}

func sortedStrings(in []string) []string {
	out := append([]string(nil), in...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestNicheSearchQuotaFair checks that only searches that find something
// use the free quota: four searches finding nothing and a malformed one,
// then three real ones, are all answered; the fourth real one is 429.
func TestNicheSearchQuotaFair(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{})
	search := func(q string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/v1/search?q="+url.QueryEscape(q), nil)
		req.RemoteAddr = "203.0.113.9:1"
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		return rec
	}
	for i, q := range []string{"landlordzone", "nothing matches", "xyzzy", "qqqq"} {
		rec := search(q)
		m := decodeMap(t, rec)
		quota, _ := m["quota"].(map[string]any)
		if rec.Code != 200 || m["count"] != 0.0 || quota["used"] != 0.0 || quota["remaining"] != 3.0 {
			t.Fatalf("empty search %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	if rec := search("in"); rec.Code != 422 {
		t.Fatalf("malformed search: %d %s", rec.Code, rec.Body)
	}
	// The list's text filter follows the same rule.
	req := httptest.NewRequest("GET", "/v1/niches?q=xyzzy", nil)
	req.RemoteAddr = "203.0.113.9:1"
	rr := httptest.NewRecorder()
	f.h.ServeHTTP(rr, req)
	if rr.Code != 200 || decodeMap(t, rr)["count"] != 0.0 {
		t.Fatalf("empty list filter: %d %s", rr.Code, rr.Body)
	}
	for i := 1; i <= 3; i++ {
		rec := search("invoice")
		quota, _ := decodeMap(t, rec)["quota"].(map[string]any)
		if rec.Code != 200 || quota["used"] != float64(i) {
			t.Fatalf("real search %d after the empty ones: %d %s", i, rec.Code, rec.Body)
		}
	}
	if rec := search("invoice"); rec.Code != 429 {
		t.Fatalf("4th real search: %d %s", rec.Code, rec.Body)
	}
}

func TestNicheSearchQuota(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	search := func(remote string, hdr ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/v1/search?q=invoice", nil)
		req.RemoteAddr = remote
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		return rec
	}
	for i := 1; i <= 3; i++ {
		rec := search("203.0.113.5:1234")
		if rec.Code != 200 {
			t.Fatalf("search %d: %d %s", i, rec.Code, rec.Body)
		}
		q := decodeMap(t, rec)["quota"].(map[string]any)
		if q["used"] != float64(i) || q["remaining"] != float64(3-i) || q["limit"] != 3.0 {
			t.Fatalf("quota after %d: %v", i, q)
		}
		if rec.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("Cache-Control %q", rec.Header().Get("Cache-Control"))
		}
	}
	rec := search("203.0.113.5:999")
	if rec.Code != 429 || !strings.HasPrefix(decodeMap(t, rec)["detail"].(string), "Free search limit reached: 3 searches per UTC day") {
		t.Fatalf("4th search: %d %s", rec.Code, rec.Body)
	}
	if resets, err := time.Parse(time.RFC3339, fmt.Sprint(decodeMap(t, rec)["resetsAt"])); err != nil || resets.Hour() != 0 || !resets.After(time.Now()) {
		t.Fatalf("429 body without the reset time: %s", rec.Body)
	}
	ra, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	now := time.Now().UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	if err != nil || ra < 1 || ra > int(time.Until(midnight).Seconds())+2 {
		t.Fatalf("Retry-After %q (midnight in %v)", rec.Header().Get("Retry-After"), time.Until(midnight))
	}
	// X-Forwarded-For from an untrusted peer is ignored.
	if rec := search("203.0.113.5:1", "X-Forwarded-For", "198.51.100.1"); rec.Code != 429 {
		t.Fatalf("spoofed X-Forwarded-For bypassed the quota: %d", rec.Code)
	}
	// From a trusted proxy, the client is the right-most untrusted hop.
	if rec := search("10.1.2.3:1", "X-Forwarded-For", "203.0.113.5, 10.9.9.9"); rec.Code != 429 {
		t.Fatalf("client behind proxy: %d", rec.Code)
	}
	if rec := search("10.1.2.3:1", "X-Forwarded-For", "203.0.113.5, 198.51.100.7"); rec.Code != 200 {
		t.Fatalf("another client behind proxy: %d", rec.Code)
	}
	// A query without letters or digits is not counted.
	req := httptest.NewRequest("GET", "/v1/search?q=%21%21%21", nil)
	req.RemoteAddr = "203.0.113.5:1"
	rr := httptest.NewRecorder()
	f.h.ServeHTTP(rr, req)
	if rr.Code != 200 || decodeMap(t, rr)["count"] != 0.0 {
		t.Fatalf("punctuation query: %d %s", rr.Code, rr.Body)
	}
	// Subscribers are unlimited and get full evaluations.
	for range 5 {
		rec := search("203.0.113.5:1", "Authorization", "Bearer nd_good")
		m := decodeMap(t, rec)
		if rec.Code != 200 || m["access"] != "full" || m["quota"] != nil {
			t.Fatalf("subscriber: %d %v", rec.Code, m)
		}
	}
	if rec := search("203.0.113.5:1", "Authorization", "Bearer nd_revoked"); rec.Code != 401 {
		t.Fatalf("inactive subscriber: %d", rec.Code)
	}
	// Paid searches have no quota.
	for range 4 {
		if rec := f.get(t, "/v1/search/pay-per-call?q=invoice&limit=1"); rec.Code != 200 || decodeMap(t, rec)["access"] != "pay_per_call" {
			t.Fatalf("paid search: %d %s", rec.Code, rec.Body)
		}
	}
}

func TestNicheSearchResults(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{FreeSearchesPerDay: new(UnlimitedSearches)})
	p := f.published
	rec := f.get(t, "/v1/search?q=Invoice&sort=score")
	if diff := cmp.Diff([]string{p[0], p[2]}, nicheIDs(t, rec)); diff != "" {
		t.Errorf("search (-want +got):\n%s", diff)
	}
	m := decodeMap(t, rec)
	if m["normalizedQuery"] != "invoic" /* the stem matched */ || m["access"] != "preview" || m["payPerCall"] == nil || m["rankingMethod"] != "relevance-v1, then score, then id" {
		t.Errorf("envelope %v", m)
	}
	rec = f.get(t, "/niche-discovery/v1/search/pay-per-call?q=bakeries&sort=recent")
	if diff := cmp.Diff([]string{p[2], p[1]}, nicheIDs(t, rec)); diff != "" {
		t.Errorf("paid search (-want +got):\n%s", diff)
	}
	if !strings.Contains(rec.Body.String(), "SECRETNOTES") {
		t.Errorf("paid search is not full")
	}
}

func TestNichePaidSearchEmptyCatalogue(t *testing.T) {
	db := emptyDB.Open(t, nil)
	eng, _ := niche.New(nichestore.New(db), nil)
	pay := &recordingPaywall{}
	h, err := New(Config{Niche: NicheConfig{Engine: eng}, Paywall: pay})
	if err != nil {
		t.Fatal(err)
	}
	rec := do(t, h, "GET", "/v1/search/pay-per-call?q=invoice", "")
	if rec.Code != 503 || strings.TrimSpace(rec.Body.String()) != `{"detail":"The niche catalogue is empty"}` || len(pay.charges()) != 0 {
		t.Fatalf("empty catalogue: %d %s %v", rec.Code, rec.Body, pay.charges())
	}
	// Without a paywall, New refuses the pay-per-call routes.
	if _, err := New(Config{Niche: NicheConfig{Engine: eng}}); !errors.Is(err, ErrNoPaywall) {
		t.Fatalf("no paywall: %v", err)
	}
	if rec := do(t, h, "GET", "/v1/niches", ""); rec.Code != 200 || strings.TrimSpace(rec.Body.String()) == "" {
		t.Fatalf("list on empty catalogue: %d", rec.Code)
	}
}

func TestNicheSources(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{})
	rec := f.get(t, "/niche-discovery/v1/sources")
	var body struct {
		Sources []struct {
			ID, Name, License, Scope string
			Configured               bool
			Stats                    struct{ Signals, Accepted int }
			LastCollection           *struct{ Added int }
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if len(body.Sources) != 1 || body.Sources[0].ID != "forum" || !body.Sources[0].Configured || body.Sources[0].Stats.Signals != 4 ||
		body.Sources[0].Stats.Accepted != 4 || body.Sources[0].LastCollection == nil || body.Sources[0].LastCollection.Added != 4 {
		t.Fatalf("sources %+v", body.Sources)
	}
}

func TestNicheAdmin(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{})
	auth := []string{"Authorization", "Bearer " + testAdminKey, "Content-Type", "application/json"}
	if rec := do(t, f.h, "POST", "/v1/admin/niche/evaluations", `{}`); rec.Code != 401 {
		t.Fatalf("no admin key: %d", rec.Code)
	}
	if rec := do(t, f.h, "GET", "/v1/admin/niche/signals", "", "Authorization", "Bearer wrong"); rec.Code != 401 {
		t.Fatalf("wrong admin key: %d", rec.Code)
	}
	// Ingest a pending signal, then moderate it.
	body := `{"signals":[{"kind":"question","sourceUrl":"https://www.newsite.example.com/q/1","origin":"forum","title":"How do I chase invoices?","excerpt":"Clients pay late.","observedAt":"2026-01-02T03:04:05Z","license":"CC BY-SA 4.0"}]}`
	rec := do(t, f.h, "POST", "/v1/admin/niche/signals", body, auth...)
	if rec.Code != 200 {
		t.Fatalf("ingest: %d %s", rec.Code, rec.Body)
	}
	var ing struct {
		Results []struct {
			ID, Outcome string
			Signal      niche.Signal
		}
		Created int
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &ing)
	if ing.Created != 1 || ing.Results[0].Signal.SourceDomain != "example.com" || ing.Results[0].Signal.State != "pending" {
		t.Fatalf("ingest result %s", rec.Body)
	}
	sid := ing.Results[0].ID
	// Too short for a date: the shape refuses it (Pydantic-style loc).
	if rec := do(t, f.h, "POST", "/v1/admin/niche/signals", strings.Replace(body, "2026-01-02T03:04:05Z", "yesterday", 1), auth...); rec.Code != 422 ||
		!strings.Contains(rec.Body.String(), `"loc":["body","signals",0,"observedAt"]`) {
		t.Fatalf("short date: %d %s", rec.Code, rec.Body)
	}
	// Well-sized but not a date: the engine refuses it, naming the field.
	if rec := do(t, f.h, "POST", "/v1/admin/niche/signals", strings.Replace(body, "2026-01-02T03:04:05Z", "not-a-real-date", 1), auth...); rec.Code != 422 ||
		!strings.Contains(rec.Body.String(), "signals[0].observedAt") {
		t.Fatalf("bad date: %d %s", rec.Code, rec.Body)
	}
	rec = do(t, f.h, "GET", "/v1/admin/niche/signals?state=pending", "", auth...)
	if rec.Code != 200 || decodeMap(t, rec)["count"] != 1.0 {
		t.Fatalf("pending list: %d %s", rec.Code, rec.Body)
	}
	rec = do(t, f.h, "POST", "/v1/admin/niche/signals/"+sid+"/moderation", `{"state":"rejected","note":"duplicate thread","actor":"mod"}`, auth...)
	if rec.Code != 200 || decodeMap(t, rec)["state"] != "rejected" {
		t.Fatalf("moderate: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, f.h, "GET", "/v1/admin/niche/signals/sig_"+strings.Repeat("9", 32), "", auth...); rec.Code != 404 ||
		strings.TrimSpace(rec.Body.String()) != `{"detail":"Signal not found"}` {
		t.Fatalf("unknown signal: %d %s", rec.Code, rec.Body)
	}

	// Create, revise with a stale revision, publish, withdraw.
	ids := fmt.Sprintf(`"sig_%032x","sig_%032x","sig_%032x"`, 1, 2, 3)
	draft := `{"title":"Payment chasing for wedding photographers","problem":"Wedding photographers wait months for final payments and chase couples by hand.","buyer":"Wedding photographers","category":"Creative","solution_hypothesis":"Scheduled payment plans with automatic reminders.","pain":4,"frequency":3,"willingness_to_pay":3,"reachable_buyers":4,"feasibility":4,"competition_gap":2,"evaluation_notes":"Forums show repeated complaints about late final payments.","signal_ids":[` + ids + `]}`
	rec = do(t, f.h, "POST", "/v1/admin/niche/evaluations", `{"operationId":"op-1","actor":"ana","reason":"new","draft":`+draft+`}`, auth...)
	if rec.Code != 201 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	ev := decodeMap(t, rec)
	id := ev["id"].(string)
	if ev["score"] != 68.0 || ev["status"] != "draft" || ev["revision"] != 1.0 {
		t.Fatalf("created %v", ev)
	}
	if rec := do(t, f.h, "POST", "/v1/admin/niche/evaluations", `{"operationId":"op-1","actor":"ana","reason":"changed","draft":`+draft+`}`, auth...); rec.Code != 409 {
		t.Fatalf("op reuse: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, f.h, "PUT", "/v1/admin/niche/evaluations/"+id, `{"expectedRevision":5,"draft":`+draft+`}`, auth...); rec.Code != 409 ||
		!strings.Contains(rec.Body.String(), "current revision") {
		t.Fatalf("stale revise: %d %s", rec.Code, rec.Body)
	}
	bad := strings.Replace(draft, `"signal_ids":[`, `"signal_ids":["`+sid+`","sig_`+strings.Repeat("e", 32)+`",`, 1)
	if rec := do(t, f.h, "PUT", "/v1/admin/niche/evaluations/"+id, `{"expectedRevision":1,"draft":`+bad+`}`, auth...); rec.Code != 422 ||
		!strings.Contains(rec.Body.String(), sid) || !strings.Contains(rec.Body.String(), "sig_"+strings.Repeat("e", 32)) {
		t.Fatalf("bad refs: %d %s", rec.Code, rec.Body)
	}
	rec = do(t, f.h, "POST", "/v1/admin/niche/evaluations/"+id+"/publish", `{"expectedRevision":1,"operationId":"pub-1","reason":"reviewed"}`, auth...)
	if rec.Code != 200 || decodeMap(t, rec)["status"] != "published" {
		t.Fatalf("publish: %d %s", rec.Code, rec.Body)
	}
	if rec := f.get(t, "/v1/niches/"+id+"/preview"); rec.Code != 200 {
		t.Fatalf("published preview: %d", rec.Code)
	}
	rec = do(t, f.h, "POST", "/v1/admin/niche/evaluations/"+id+"/withdraw", `{"expectedRevision":2}`, auth...)
	if rec.Code != 200 || decodeMap(t, rec)["status"] != "withdrawn" {
		t.Fatalf("withdraw: %d %s", rec.Code, rec.Body)
	}
	if rec := f.get(t, "/v1/niches/"+id+"/preview"); rec.Code != 404 {
		t.Fatalf("withdrawn preview: %d", rec.Code)
	}
	rec = do(t, f.h, "GET", "/v1/admin/niche/evaluations/"+id+"/revisions", "", auth...)
	var revs struct {
		Revisions []niche.Revision
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &revs)
	if len(revs.Revisions) != 3 || revs.Revisions[0].Actor != "ana" || revs.Revisions[1].Reason != "reviewed" || revs.Revisions[2].Action != "withdraw" {
		t.Fatalf("revisions: %s", rec.Body)
	}
	if rec := do(t, f.h, "GET", "/v1/admin/niche/evaluations/"+id, "", auth...); rec.Code != 200 || decodeMap(t, rec)["status"] != "withdrawn" {
		t.Fatalf("admin get: %d", rec.Code)
	}
}

func TestNicheAdminImport(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{})
	auth := []string{"Authorization", "Bearer " + testAdminKey, "Content-Type", "application/x-ndjson"}
	jsonl := fmt.Sprintf(`{"type":"signal","id":"sig_%032x","kind":"review","sourceUrl":"https://apps.example.com/r/1","origin":"appstore","title":"Two stars: no offline mode","excerpt":"Useless on site without signal.","observedAt":"2026-03-01T00:00:00Z","license":"Quoted under fair use","engagement":{"helpfulVotes":14}}
{"type":"draft","operationId":"imp-a","draft":{"title":"Offline job sheets for electricians","problem":"Electricians fill job sheets in basements without signal and lose them.","buyer":"Electrical contractors","category":"Trades","solution_hypothesis":"Offline-first job sheets that sync later.","pain":4,"frequency":4,"willingness_to_pay":3,"reachable_buyers":3,"feasibility":4,"competition_gap":3,"evaluation_notes":"App reviews complain about offline gaps in field apps.","signal_ids":["sig_%032x","sig_%032x","sig_%032x"],"publish":true}}
`, 100, 100, 1, 2)
	rec := do(t, f.h, "POST", "/v1/admin/niche/import", jsonl, auth...)
	if rec.Code != 200 {
		t.Fatalf("import: %d %s", rec.Code, rec.Body)
	}
	m := decodeMap(t, rec)
	if m["signalsCreated"] != 1.0 || m["draftsCreated"] != 1.0 || m["publishedNiches"] != 1.0 {
		t.Fatalf("report %v", m)
	}
	rec = do(t, f.h, "POST", "/v1/admin/niche/import", jsonl, auth...)
	if m := decodeMap(t, rec); rec.Code != 200 || m["signalsDuplicate"] != 1.0 || m["draftsReplayed"] != 1.0 {
		t.Fatalf("re-import: %d %v", rec.Code, m)
	}
	rec = do(t, f.h, "POST", "/v1/admin/niche/import", "{\"type\":\"draft\"}\nnot json\n", auth...)
	if rec.Code != 422 {
		t.Fatalf("bad import: %d %s", rec.Code, rec.Body)
	}
	var refused struct {
		Detail string
		Lines  []niche.LineError
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &refused)
	if len(refused.Lines) != 2 || refused.Lines[1].Line != 2 {
		t.Fatalf("refused %+v", refused)
	}
	if rec := do(t, f.h, "POST", "/v1/admin/niche/import", jsonl, "Authorization", "Bearer "+testAdminKey, "Content-Type", "application/xml"); rec.Code != 415 {
		t.Fatalf("content type: %d", rec.Code)
	}
}

func TestNicheConfigErrors(t *testing.T) {
	db := emptyDB.Open(t, nil)
	eng, _ := niche.New(nichestore.New(db), nil)
	shared := strings.Repeat("k", 40)
	signer, err := niche.NewUnlockSigner([]byte(shared), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{AdminKey: shared, Niche: NicheConfig{Engine: eng, Unlock: signer}}); err == nil {
		t.Error("unlock key equal to the admin key accepted")
	}
	if _, err := New(Config{Niche: NicheConfig{Engine: eng, Prefix: "nd"}}); err == nil {
		t.Error("prefix without / accepted")
	}
	if _, err := New(Config{Niche: NicheConfig{Engine: eng, FreeSearchesPerDay: new(-2)}}); err == nil {
		t.Error("FreeSearchesPerDay -2 accepted")
	}
}

// TestNichePrice pins priceUSD. (The lax integers of the query, " 5 ",
// "1_000", "20.0", are shapes.DecodeQuery's, checked against FastAPI by
// its golden cases: the route no longer parses them a second time.)
func TestNichePrice(t *testing.T) {
	prices := map[int64]string{250000: "0.25", 50000: "0.05", 1000000: "1.00", 1234567: "1.234567", 100000: "0.10"}
	for micro, want := range prices {
		if got := payment.MicroUSD(micro).String(); got != want {
			t.Errorf("payment.MicroUSD(%d).String() = %s, want %s", micro, got, want)
		}
	}
}

// TestNicheAmountSpelling pins the spelling of amounts in the niche
// answers (unlock blocks, the search offer): amountMicrousd, as in
// receipts, quotes and orders, never amountMicroUsd.
func TestNicheAmountSpelling(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{})
	var keys []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if strings.EqualFold(k, "amountMicrousd") {
					keys = append(keys, k)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, target := range []string{"/v1/niches?limit=1", "/v1/niches/" + f.published[0] + "/preview",
		"/v1/niches/" + f.published[0], "/v1/search?q=invoice&limit=1"} {
		rec := f.get(t, target)
		walk(decodeMap(t, rec))
		if strings.Contains(rec.Body.String(), "MicroUsd") {
			t.Errorf("%s spells an amount amountMicroUsd: %s", target, rec.Body)
		}
	}
	// One per unlock block (list item, preview, 401 answer, search
	// result) and the search's pay-per-call offer.
	if len(keys) != 5 {
		t.Fatalf("found %d amount keys, want 5: %v", len(keys), keys)
	}
	for _, k := range keys {
		if k != "amountMicrousd" {
			t.Errorf("amount key %q, want amountMicrousd", k)
		}
	}
}

// TestNicheUnlockURLsAnswer follows every URL a free answer gives (the
// unlock block's checkout and pay-per-call route, the list's search path,
// the search's pay-per-call offer) under several prefixes: none may be
// 404. The subscription routes follow the niche prefix unless configured.
func TestNicheUnlockURLsAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, prefix string
		subPrefixes  []string
		wantCheckout string
	}{
		{"default prefix", "", nil, "/niche-discovery/v1/subscription/checkout"},
		{"custom prefix", "/nd", nil, "/nd/v1/subscription/checkout"},
		{"root only", "/", nil, "/v1/subscription/checkout"},
		{"own subscription prefixes", "/nd", []string{"/billing", "/nd"}, "/billing/v1/subscription/checkout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newNicheFixtureWith(t, NicheConfig{Prefix: tc.prefix}, func(c *Config, db *store.DB) {
				svc, err := niche.NewSubscriptionService(nichestore.New(db), localBilling(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				c.Subscriptions = SubscriptionConfig{Service: svc, Prefixes: tc.subPrefixes}
			})
			base := strings.TrimRight(tc.prefix, "/")
			if tc.prefix == "" {
				base = "/niche-discovery"
			}
			id := f.published[0]
			preview := decodeMap(t, f.get(t, base+"/v1/niches/"+id+"/preview"))
			unlock := preview["unlock"].(map[string]any)
			sub := unlock["subscription"].(map[string]any)
			ppc := unlock["payPerCall"].(map[string]any)
			if sub["checkoutPath"] != tc.wantCheckout {
				t.Errorf("checkoutPath %v, want %s", sub["checkoutPath"], tc.wantCheckout)
			}
			list := decodeMap(t, f.get(t, base+"/v1/niches?limit=1"))
			search := decodeMap(t, f.get(t, base+"/v1/search?q=invoice"))
			offer := search["payPerCall"].(map[string]any)
			for _, u := range []struct{ method, path string }{
				{sub["checkoutMethod"].(string), sub["checkoutPath"].(string)},
				{ppc["method"].(string), ppc["path"].(string)},
				{"GET", list["searchPath"].(string) + "?q=invoice"},
				{offer["method"].(string), offer["path"].(string) + "?q=invoice"},
			} {
				rec := do(t, f.h, u.method, u.path, "")
				if rec.Code == http.StatusNotFound || rec.Code == http.StatusMethodNotAllowed || rec.Code >= 500 {
					t.Errorf("%s %s: %d %s", u.method, u.path, rec.Code, rec.Body)
				}
			}
		})
	}
}

// TestNicheSearchMatchesWhatPreviewsShow probes, over HTTP and on both
// free routes that match text, words found only in the hidden part of the
// problem, only in the solution hypothesis and only in the notes: an
// anonymous caller never matches them; a subscriber matches the first two
// (the notes are never indexed).
func TestNicheSearchMatchesWhatPreviewsShow(t *testing.T) {
	f := newNicheFixture(t, NicheConfig{FreeSearchesPerDay: new(UnlimitedSearches)})
	all := sortedStrings(f.published)
	sub := []string{"Authorization", "Bearer nd_good"}
	for _, tc := range []struct {
		word            string
		anonymous, full []string
	}{
		{"secretproblemtail", []string{}, all},
		{"secrethypothesis", []string{}, all},
		{"secretnotes", []string{}, []string{}},
		{"hundred sixty", []string{}, all}, // past the teaser too
		{"small firms", all, all},          // in every teaser
		{"owners", all, all},               // the buyer
	} {
		q := url.QueryEscape(tc.word)
		for _, target := range []string{"/v1/search?q=" + q, "/v1/niches?q=" + q} {
			if got := sortedStrings(nicheIDs(t, f.get(t, target))); !slices.Equal(tc.anonymous, got) {
				t.Errorf("anonymous %s: %v, want %v", target, got, tc.anonymous)
			}
			rec := f.get(t, target, sub...)
			if got := sortedStrings(nicheIDs(t, rec)); !slices.Equal(tc.full, got) {
				t.Errorf("subscriber %s: %v, want %v", target, got, tc.full)
			}
		}
	}
	m := decodeMap(t, f.get(t, "/v1/niches?q=invoice"))
	if m["queryScope"] != "preview" || m["access"] != "preview" {
		t.Errorf("anonymous list envelope %v", m)
	}
	m = decodeMap(t, f.get(t, "/v1/niches?q=invoice", sub...))
	if m["queryScope"] != "full" || m["access"] != "preview" {
		t.Errorf("subscriber list envelope %v", m)
	}
	if rec := f.get(t, "/v1/niches?q=invoice", "Authorization", "Bearer nd_revoked"); rec.Code != 401 {
		t.Errorf("inactive token with q: %d", rec.Code)
	}
	if rec := f.get(t, "/v1/niches", "Authorization", "Bearer nd_revoked"); rec.Code != 200 {
		t.Errorf("inactive token without q: %d", rec.Code)
	}
}

// TestNicheFreeSearchQuotaOptions checks the quota settings: nil (3), a
// number, 0 (no free search) and UnlimitedSearches, and that a list with
// q counts against the same quota as /v1/search.
func TestNicheFreeSearchQuotaOptions(t *testing.T) {
	status := func(f *nicheFixture, target string, hdr ...string) int { return f.get(t, target, hdr...).Code }

	f := newNicheFixture(t, NicheConfig{FreeSearchesPerDay: new(2)})
	m := decodeMap(t, f.get(t, "/v1/niches?q=invoice"))
	if q, _ := m["quota"].(map[string]any); q == nil || q["used"] != 1.0 || q["limit"] != 2.0 {
		t.Fatalf("list with q: quota %v", m["quota"])
	}
	if c := status(f, "/v1/search?q=bakeries"); c != 200 {
		t.Fatalf("second search: %d", c)
	}
	for _, target := range []string{"/v1/search?q=invoice", "/v1/niches?q=invoice"} {
		if c := status(f, target); c != 429 {
			t.Errorf("%s past the quota: %d", target, c)
		}
	}
	if c := status(f, "/v1/niches?category=food"); c != 200 {
		t.Errorf("list without q past the quota: %d", c)
	}
	if c := status(f, "/v1/niches?q=%21%21"); c != 200 {
		t.Errorf("list with a q without words past the quota: %d", c)
	}
	if m := decodeMap(t, f.get(t, "/v1/niches?q=invoice", "Authorization", "Bearer nd_good")); m["quota"] != nil || m["count"] != 2.0 {
		t.Errorf("subscriber list: %v", m)
	}

	none := newNicheFixture(t, NicheConfig{FreeSearchesPerDay: new(0)})
	for _, target := range []string{"/v1/search?q=invoice", "/v1/niches?q=invoice"} {
		rec := none.get(t, target)
		if rec.Code != 401 || rec.Header().Get("WWW-Authenticate") == "" ||
			!strings.Contains(decodeMap(t, rec)["detail"].(string), "/niche-discovery/v1/search/pay-per-call") {
			t.Errorf("%s without free searches: %d %s", target, rec.Code, rec.Body)
		}
	}
	if c := status(none, "/v1/niches"); c != 200 {
		t.Errorf("list without q and no free searches: %d", c)
	}
	if c := status(none, "/v1/search?q=invoice", "Authorization", "Bearer nd_good"); c != 200 {
		t.Errorf("subscriber without free searches: %d", c)
	}

	def := newNicheFixture(t, NicheConfig{})
	for i := range 3 {
		if c := status(def, "/v1/search?q=invoice"); c != 200 {
			t.Fatalf("default quota, search %d: %d", i+1, c)
		}
	}
	if c := status(def, "/v1/search?q=invoice"); c != 429 {
		t.Errorf("default quota, 4th search: %d", c)
	}

	unlimited := newNicheFixture(t, NicheConfig{FreeSearchesPerDay: new(UnlimitedSearches)})
	for range 5 {
		if m := decodeMap(t, unlimited.get(t, "/v1/search?q=invoice")); m["quota"] != nil || m["count"] != 2.0 {
			t.Fatalf("unlimited: %v", m)
		}
	}
}
