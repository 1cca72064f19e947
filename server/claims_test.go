package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/storetest"
	"github.com/google/go-cmp/cmp"
)

type claimsEnv struct {
	h    http.Handler
	srv  *Server
	pay  *recordingPaywall
	prov *claimstest.Provider
	eng  *claims.Engine
}

// emptyDB is an empty, migrated database, copied for each test that
// opens it (migrating each anew cost about 10 ms).
var emptyDB storetest.Template

func newClaimsEnv(t *testing.T, prov *claimstest.Provider, opts *claims.Options) *claimsEnv {
	t.Helper()
	db := emptyDB.Open(t, nil)
	f, err := claimstest.LoadFixture("confirmed")
	if err != nil {
		t.Fatal(err)
	}
	if prov == nil {
		prov = f.Provider()
	}
	var p claims.SearchProvider = prov
	if prov.ProviderName == "none" {
		p = nil
	}
	e, err := claims.New(p, claimsstore.New(db), f.Snapshotter(), opts)
	if err != nil {
		t.Fatal(err)
	}
	pay := &recordingPaywall{payer: "0xPAYER"}
	s, err := New(Config{Paywall: pay, AdminKey: "admin-secret", Claims: ClaimsConfig{Engine: e}})
	if err != nil {
		t.Fatal(err)
	}
	return &claimsEnv{h: s, srv: s, pay: pay, prov: prov, eng: e}
}

const goodBody = `{"claim":"Exampleton raised its minimum wage to $18.00 per hour, effective 1 November 2026."}`

func TestClaimsRoutesTable(t *testing.T) {
	env := newClaimsEnv(t, nil, nil)
	byID := map[string]*Route{}
	for _, r := range env.srv.Routes() {
		byID[r.ID] = r
	}
	for _, tier := range claims.Tiers() {
		r := byID["claims.verify."+tier.Name]
		if r == nil {
			t.Fatalf("no route for %s", tier.Name)
		}
		suffix := strings.TrimPrefix(tierListing(tier.Name).HTTPPath, "/v1/claims/verify")
		want := &Route{ID: "claims.verify." + tier.Name, Status: "paid-preview", Method: "POST", Path: tierListing(tier.Name).HTTPPath,
			Prefixes: []string{"/claim-verification"},
			Aliases:  []string{"/v1/services/{service_slug}/claims/verify" + suffix, "/claim-verification/v1/services/{service_slug}/claims/verify" + suffix},
			Body:     "ClaimVerificationRequest",
			Offer: &payment.Offer{ID: "claims.verify." + tier.Name, AmountMicroUSD: tierListing(tier.Name).AmountMicroUSD, CardMicroUSD: 500_000,
				MimeType: "application/json", WorkTimeout: 120*time.Second + claims.DefaultCheckGrace, Product: tier.Name}}
		got := *r
		got.Handler, got.Summary = nil, ""
		got.Offer = &payment.Offer{}
		*got.Offer = *r.Offer
		got.Offer.Description = ""
		if diff := cmp.Diff(want, &got); diff != "" {
			t.Errorf("route %s (-want +got):\n%s", tier.Name, diff)
		}
		if r.Summary == "" || r.Offer.Description == "" {
			t.Errorf("route %s lacks a summary or description", tier.Name)
		}
	}
	if r := byID["claims.verification.get"]; r == nil || r.Path != "/v1/claims/verifications/{verification_id}" {
		t.Fatalf("get route: %+v", r)
	}
	// A zero ClaimsConfig mounts nothing.
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Routes() {
		if strings.HasPrefix(r.ID, "claims.") {
			t.Fatalf("route %s mounted without an engine", r.ID)
		}
	}
}

func TestClaimsEveryPath(t *testing.T) {
	env := newClaimsEnv(t, nil, nil)
	for _, tier := range claims.Tiers() {
		suffix := strings.TrimPrefix(tierListing(tier.Name).HTTPPath, "/v1/claims/verify")
		for _, p := range []string{
			tierListing(tier.Name).HTTPPath,
			"/claim-verification" + tierListing(tier.Name).HTTPPath,
			"/v1/services/claim-verification/claims/verify" + suffix,
			"/claim-verification/v1/services/claim-verification/claims/verify" + suffix,
		} {
			rec := do(t, env.h, "POST", p, goodBody)
			if rec.Code != 200 {
				t.Fatalf("%s: %d %s", p, rec.Code, rec.Body)
			}
			var res claims.Result
			if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || !ids.Valid(ids.Verification, res.VerificationID) {
				t.Fatalf("%s: %v %s", p, err, rec.Body)
			}
			if kind, id := env.pay.last().Result(); kind != "verification" || id != res.VerificationID {
				t.Fatalf("%s: SetResult %q %q", p, kind, id)
			}
		}
		rec := do(t, env.h, "POST", "/v1/services/other-service/claims/verify"+suffix, goodBody)
		if rec.Code != 404 || strings.TrimSpace(rec.Body.String()) != `{"detail":"Not Found"}` {
			t.Fatalf("unknown slug: %d %s", rec.Code, rec.Body)
		}
	}
	// Usage was reported only for calls that called the provider.
	var total int
	for _, c := range env.pay.calls {
		total += c.Usage().InputTokens
	}
	if env.prov.Calls() == 0 || total != 21000*env.prov.Calls() {
		t.Fatalf("usage %d for %d provider calls", total, env.prov.Calls())
	}
}

// Invalid requests are answered 422 before any charge or provider call.
// domainPattern is the domainname pattern of claims.Request's domain
// lists, as a JSON string writes it.
const domainPattern = `^(\\*\\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?$`

func TestClaimsValidationBeforePayment(t *testing.T) {
	env := newClaimsEnv(t, nil, nil)
	tests := []struct {
		name, path, body string
		hdr              []string
		status           int
		want             string
	}{
		{"tier cap", "/v1/claims/verify/quick", `{"claim":"Some claim.","minimumSources":4}`, nil, 422,
			`{"detail":[{"type":"value_error","loc":["body"],"msg":"Value error, The quick tier supports at most 3 cited sources; minimumSources (4) cannot be met","input":{"claim":"Some claim.","minimumSources":4},"ctx":{"error":{}}}]}`},
		{"official_only", "/v1/claims/verify", `{"claim":"Some claim.","sourcePolicy":"official_only"}`, nil, 422,
			`{"detail":[{"type":"value_error","loc":["body"],"msg":"Value error, allowedDomains is required when sourcePolicy is official_only","input":{"claim":"Some claim.","sourcePolicy":"official_only"},"ctx":{"error":{}}}]}`},
		{"bad domain", "/v1/claims/verify/deep", `{"claim":"Some claim.","blockedDomains":["http://u@x.com"]}`, nil, 422,
			`{"detail":[{"type":"string_pattern_mismatch","loc":["body","blockedDomains",0],"msg":"String should match pattern '` + domainPattern + `'","input":"http://u@x.com","ctx":{"pattern":"` + domainPattern + `"}}]}`},
		{"empty body", "/v1/claims/verify", ``, nil, 422,
			`{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"long idempotency key", "/v1/claims/verify", goodBody, []string{"Idempotency-Key", strings.Repeat("k", 256)}, 422,
			`{"detail":[{"type":"string_too_long","loc":["header","idempotency-key"],"msg":"String should have at most 255 characters","input":"` + strings.Repeat("k", 256) + `","ctx":{"max_length":255}}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, env.h, "POST", tc.path, tc.body, tc.hdr...)
			if rec.Code != tc.status || strings.TrimSpace(rec.Body.String()) != tc.want {
				t.Fatalf("got %d %s\nwant %d %s", rec.Code, rec.Body, tc.status, tc.want)
			}
		})
	}
	if env.pay.charged != 0 || env.prov.Calls() != 0 {
		t.Fatalf("charged %d times, provider called %d times for invalid requests", env.pay.charged, env.prov.Calls())
	}
}

func TestClaimsIdempotencyHTTP(t *testing.T) {
	env := newClaimsEnv(t, nil, nil)
	rec := do(t, env.h, "POST", "/v1/claims/verify", goodBody, "Idempotency-Key", "abc")
	if rec.Code != 200 {
		t.Fatal(rec.Code, rec.Body)
	}
	var first claims.Result
	_ = json.Unmarshal(rec.Body.Bytes(), &first)
	rec = do(t, env.h, "POST", "/claim-verification/v1/claims/verify", goodBody, "Idempotency-Key", "abc")
	var again claims.Result
	_ = json.Unmarshal(rec.Body.Bytes(), &again)
	if rec.Code != 200 || again.VerificationID != first.VerificationID || !again.Provenance.CacheHit || env.prov.Calls() != 1 {
		t.Fatalf("replay: %d %s", rec.Code, rec.Body)
	}
	if u := env.pay.last().Usage(); u.InputTokens != 0 {
		t.Fatalf("a replay reported usage %+v", u)
	}
	if kind, id := env.pay.last().Result(); kind != "verification" || id != first.VerificationID {
		t.Fatal("replay did not record its result")
	}
	rec = do(t, env.h, "POST", "/v1/claims/verify", `{"claim":"Another claim."}`, "Idempotency-Key", "abc")
	if rec.Code != 409 || strings.TrimSpace(rec.Body.String()) != `{"detail":"Idempotency-Key was already used for a different request"}` {
		t.Fatalf("conflict: %d %s", rec.Code, rec.Body)
	}
	// Another payer's identical key is theirs alone.
	rec = do(t, env.h, "POST", "/v1/claims/verify", goodBody, "Idempotency-Key", "abc", "X-Test-Payer", "0xOTHER")
	var theirs claims.Result
	_ = json.Unmarshal(rec.Body.Bytes(), &theirs)
	if rec.Code != 200 || theirs.VerificationID == first.VerificationID {
		t.Fatalf("other payer: %d %s", rec.Code, rec.Body)
	}
}

func TestClaimsInFlightHTTP(t *testing.T) {
	f, _ := claimstest.LoadFixture("confirmed")
	env := newClaimsEnv(t, claimstest.Respond(f.Response, 500*time.Millisecond), &claims.Options{IdempotencyWait: -1})
	done := make(chan int, 1)
	go func() { done <- do(t, env.h, "POST", "/v1/claims/verify", goodBody, "Idempotency-Key", "slow").Code }()
	time.Sleep(150 * time.Millisecond)
	rec := do(t, env.h, "POST", "/v1/claims/verify", goodBody, "Idempotency-Key", "slow")
	if rec.Code != 409 || rec.Header().Get("Retry-After") == "" ||
		strings.TrimSpace(rec.Body.String()) != `{"detail":"A request with this Idempotency-Key is still being processed; retry later"}` {
		t.Fatalf("in flight: %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if code := <-done; code != 200 {
		t.Fatalf("first: %d", code)
	}
}

func TestClaimsProviderFailures(t *testing.T) {
	tests := []struct {
		name   string
		prov   *claimstest.Provider
		opts   *claims.Options
		status int
		body   string
		retry  string
	}{
		{"failed", claimstest.NewProvider(claimstest.Step{Err: fmt.Errorf("boom")}), nil, 502, `{"detail":"Evidence provider failed"}`, ""},
		{"bad output", claimstest.NewProvider(claimstest.Step{}), nil, 502, `{"detail":"Evidence provider failed"}`, ""},
		{"rate limited", claimstest.NewProvider(claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderRateLimited, RetryAfter: 7 * time.Second}}),
			nil, 503, `{"detail":"Evidence provider is busy; retry later"}`, "7"},
		{"quota", claimstest.NewProvider(claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderQuotaExhausted}}), nil, 503,
			`{"detail":"Evidence provider is unavailable"}`, ""},
		{"not configured", &claimstest.Provider{ProviderName: "none"}, nil, 503, `{"detail":"Claim verification is not configured"}`, ""},
		{"timeout", claimstest.NewProvider(claimstest.Step{Delay: time.Second}), &claims.Options{Timeout: 50 * time.Millisecond}, 504,
			`{"detail":"Verification timed out"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newClaimsEnv(t, tc.prov, tc.opts)
			rec := do(t, env.h, "POST", "/v1/claims/verify/deep", goodBody)
			if rec.Code != tc.status || strings.TrimSpace(rec.Body.String()) != tc.body || rec.Header().Get("Retry-After") != tc.retry {
				t.Fatalf("got %d %s (Retry-After %q)", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
			}
			if kind, _ := env.pay.last().Result(); kind != "" {
				t.Fatal("a failed call recorded a result")
			}
		})
	}
}

// TestClaimsGetVerification: the payer reads a verification with the
// token of the order that bought it (a real gate and ledger: the order
// names the verification it delivered), the admin with the admin key.
func TestClaimsGetVerification(t *testing.T) {
	ctx := context.Background()
	db := emptyDB.Open(t, nil)
	f, err := claimstest.LoadFixture("confirmed")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := claims.New(f.Provider(), claimsstore.New(db), f.Snapshotter(), nil)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	gate, err := httpgate.New(&gatetest.Processor{}, paymentstore.New(db), &httpgate.Options{PublicBaseURL: "https://api.example.test",
		ReadCredential: gatetest.ReadCredential, CashierOptions: payment.CashierOptions{Keys: keys}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Paywall: gate, AdminKey: "admin-secret", Claims: ClaimsConfig{Engine: eng}})
	if err != nil {
		t.Fatal(err)
	}
	env := struct{ h http.Handler }{srv}
	rec := do(t, env.h, "POST", "/v1/claims/verify", goodBody, gatetest.Header, gatetest.Credential("0xA", "n1"))
	if rec.Code != 200 {
		t.Fatalf("paid verification: %d %s", rec.Code, rec.Body)
	}
	token := rec.Header().Get("X-Agentic-Order-Token")
	var res claims.Result
	_ = json.Unmarshal(rec.Body.Bytes(), &res)
	path := "/v1/claims/verifications/" + res.VerificationID
	tests := []struct {
		name   string
		path   string
		hdr    []string
		status int
		body   string
	}{
		{"payer", path, []string{"X-Agentic-Order-Token", token}, 200, ""},
		{"payer under prefix", "/claim-verification" + path, []string{"X-Agentic-Order-Token", token}, 200, ""},
		{"admin", path, []string{"Authorization", "Bearer admin-secret"}, 200, ""},
		{"admin header", path, []string{"X-Admin-Key", "admin-secret"}, 200, ""},
		{"other token", path, []string{"X-Agentic-Order-Token", "ort_someone-else"}, 404, `{"detail":"Verification not found"}`},
		{"wrong admin key", path, []string{"X-Admin-Key", "nope"}, 401, `{"detail":"X-Agentic-Order-Token is required"}`},
		{"no credential", path, nil, 401, `{"detail":"X-Agentic-Order-Token is required"}`},
		{"unknown id", "/v1/claims/verifications/" + ids.New(ids.Verification), []string{"X-Agentic-Order-Token", token}, 404, `{"detail":"Verification not found"}`},
		{"malformed id", "/v1/claims/verifications/nope", []string{"X-Admin-Key", "admin-secret"}, 404, `{"detail":"Verification not found"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, env.h, "GET", tc.path, "", tc.hdr...)
			if rec.Code != tc.status {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if tc.status != 200 {
				if strings.TrimSpace(rec.Body.String()) != tc.body {
					t.Fatalf("body %s", rec.Body)
				}
				return
			}
			var got claims.Result
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.VerificationID != res.VerificationID || got.Status != res.Status {
				t.Fatalf("%v %s", err, rec.Body)
			}
			if rec.Header().Get("Cache-Control") != "private, no-store" {
				t.Fatal("cacheable verification")
			}
		})
	}
}

// passThrough is a paywall that never calls Precheck (the handler must
// validate by itself).
type passThrough struct{}

func (passThrough) Gate(_ payment.Offer, next http.Handler) http.Handler { return next }

func TestClaimsWithOtherPaywallsAndConfig(t *testing.T) {
	db := emptyDB.Open(t, nil)
	f, _ := claimstest.LoadFixture("confirmed")
	e, err := claims.New(f.Provider(), claimsstore.New(db), f.Snapshotter(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, pw := range map[string]httpgate.Paywall{"free": httpgate.Free{}, "no precheck": passThrough{}} {
		t.Run(name, func(t *testing.T) {
			s, err := New(Config{Paywall: pw, Claims: ClaimsConfig{Engine: e, Prefix: "/cv/", ServiceSlug: "verifier"}})
			if err != nil {
				t.Fatal(err)
			}
			if rec := do(t, s, "POST", "/cv/v1/services/verifier/claims/verify/deep", goodBody); rec.Code != 200 {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if rec := do(t, s, "POST", "/v1/services/claim-verification/claims/verify/deep", goodBody); rec.Code != 404 {
				t.Fatalf("default slug still served: %d", rec.Code)
			}
			if rec := do(t, s, "POST", "/claim-verification/v1/claims/verify", goodBody); rec.Code != 404 {
				t.Fatalf("default prefix still served: %d", rec.Code)
			}
			rec := do(t, s, "POST", "/v1/claims/verify/quick", `{"claim":"x y z","minimumSources":5}`)
			if rec.Code != 422 || !strings.Contains(rec.Body.String(), "The quick tier supports at most 3 cited sources") {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
		})
	}
	// Without a paywall, New refuses the paid routes.
	if _, err := New(Config{Claims: ClaimsConfig{Engine: e}}); !errors.Is(err, ErrNoPaywall) {
		t.Fatalf("no paywall: %v", err)
	}
	if _, err := New(Config{Claims: ClaimsConfig{Engine: e, Prefix: "cv"}}); err == nil {
		t.Fatal("relative prefix accepted")
	}
}

// A host can sell a subset of the tiers: only their routes are mounted,
// and an unknown tier name is refused.
func TestClaimsTierSubset(t *testing.T) {
	env := newClaimsEnv(t, nil, nil)
	s, err := New(Config{Paywall: httpgate.Free{}, Claims: ClaimsConfig{Engine: env.eng, Tiers: []string{claims.Quick}}})
	if err != nil {
		t.Fatal(err)
	}
	var tiers []string
	for _, r := range s.Routes() {
		if tier, ok := strings.CutPrefix(r.ID, "claims.verify."); ok {
			tiers = append(tiers, tier)
		}
	}
	if !slices.Equal(tiers, []string{claims.Quick}) || len(s.TierOffers()) != 1 {
		t.Fatalf("tier routes %v, offers %v", tiers, s.TierOffers())
	}
	if rec := do(t, s, "POST", "/v1/claims/verify", goodBody); rec.Code != 404 {
		t.Fatalf("standard tier served: %d", rec.Code)
	}
	if rec := do(t, s, "POST", "/v1/claims/verify/quick", goodBody); rec.Code != 200 {
		t.Fatalf("quick tier: %d %s", rec.Code, rec.Body)
	}
	if _, err := New(Config{Paywall: httpgate.Free{}, Claims: ClaimsConfig{Engine: env.eng, Tiers: []string{"premium"}}}); err == nil {
		t.Fatal("unknown tier accepted")
	}
}

// tierListing is the default catalogue's listing of a claim tier.
func tierListing(tier string) sell.Listing {
	c, err := sell.NewCatalogue(nil)
	if err != nil {
		panic(err)
	}
	l, _ := c.Tier(tier)
	return l
}
