package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/x402"
)

// The bad-input scenario sends malformed requests at volume to every route
// GET /v1/capabilities lists: malformed JSON, huge bodies, wrong types,
// hostile query strings and path ids, junk headers, and forged or replayed
// payment credentials (x402 v2 and v1, MPP, garbage base64). It asserts
// that nothing is answered with a 5xx, that no request breaks the
// connection (except a body over the limit, which the server may cut
// short), that no forged or replayed payment is accepted, that the server
// log has no panic, that the database is unchanged except in tables a
// legitimately accepted request writes to, and that every instance still
// answers /healthz.

// capability is one route of GET /v1/capabilities.
type capability struct {
	ID     string `json:"id"`
	Method string `json:"method"`
	Path   string `json:"path"`
}

// paidRoutes are the capabilities sold per call.
var paidRoutes = map[string]bool{
	"claims.verify.quick": true, "claims.verify.standard": true, "claims.verify.deep": true, "claims.verify.research": true,
	"niche.pay-per-call": true, "niche.search.pay-per-call": true,
}

// writesOnAccept lists, per route id prefix, the tables a request
// answered 2xx may legitimately change. Every other table must stay
// byte-identical.
var writesOnAccept = []struct {
	prefix string
	tables []string
}{
	{"niche.search", []string{"niche_quota"}},
	{"niche.list", []string{"niche_quota"}}, // with q: a search, counted
	{"commerce.quotes.create", []string{"payment_quotes"}},
	{"commerce.admin.customers", []string{"payment_customers"}},
	{"subscription.", []string{"niche_subscription_checkouts", "niche_subscriptions", "niche_subscription_tokens", "niche_billing_events"}},
	{"niche.admin.", []string{"niche_evaluations", "niche_revisions", "niche_operations", "niche_signals", "niche_collections", "niche_links", "niche_search", "niche_terms", "niche_fts"}},
}

// fuzzFixtures is what the setup phase learnt: routes, real ids, used
// credentials and fresh challenges to forge from.
type fuzzFixtures struct {
	caps       []capability
	nicheIDs   []string
	orderIDs   []string
	tokens     []string
	verifIDs   []string
	snapIDs    []string
	used       map[string][]*paidCall // route id -> used credentials
	challenges map[string]*challenge  // route id -> a fresh challenge
	adminKey   string
}

// fuzzer is one worker.
type fuzzer struct {
	hc    *http.Client
	st    *stats
	rng   *rand.Rand
	bases []string
	fx    *fuzzFixtures
	forge *evm.KeySigner // signs forged credentials
	mu    *sync.Mutex
	acc   map[string]int // route id -> 2xx answers
	paid  map[int]int    // status -> answers to forged or replayed payments on paid routes
	sent  *int
	pg    bool // the servers run on PostgreSQL
	// badText counts 500s explained by the known defect of PostgreSQL
	// text parameters (NUL or invalid UTF-8 in a path id or a filter).
	badText *int
	// answeredAgain counts used credentials presented for the very
	// request they paid for and answered with that purchase.
	answeredAgain *int
}

var paramRE = regexp.MustCompile(`\{([a-z_]+)\}`)

// idPrefixes gives ids of the right shape for path parameters.
var idPrefixes = map[string]string{
	"niche_id": "niche_", "order_id": "ord_", "verification_id": "cv_", "snapshot_id": "snap_", "signal_id": "sig_",
	"subscription_id": "sub_", "session_id": "cs_",
}

// pathFor fills the route's parameters with unknown, hostile or (now and
// then) real ids.
func (f *fuzzer) pathFor(c capability) string {
	path := paramRE.ReplaceAllStringFunc(c.Path, func(m string) string {
		name := m[1 : len(m)-1]
		real := map[string][]string{"niche_id": f.fx.nicheIDs, "order_id": f.fx.orderIDs, "verification_id": f.fx.verifIDs, "snapshot_id": f.fx.snapIDs}[name]
		switch n := f.rng.IntN(10); {
		case n < 3 && len(real) > 0:
			return pick(f.rng, real)
		case n < 7:
			return idPrefixes[name] + randomHex(16)
		default:
			return pick(f.rng, []string{
				url.PathEscape("../../etc/passwd"), "%2e%2e%2f%2e%2e", strings.Repeat("x", 5000), url.PathEscape("ñ漢字🙂"),
				"%00", "%ff%fe", url.PathEscape("' OR 1=1 --"), "null", "-1", url.PathEscape("niche_" + randomHex(16) + "\x00"),
			})
		}
	})
	if f.rng.IntN(8) == 0 && strings.HasPrefix(path, "/v1/") {
		path = pick(f.rng, []string{"/niche-discovery", "/claim-verification"}) + path
	}
	return path
}

// junkQuery returns a hostile query string.
func (f *fuzzer) junkQuery() string {
	return pick(f.rng, []string{
		"limit=abc", "limit=-1", "limit=0", "limit=99999999999999999999999", "limit=1e309", "limit=2.5", "limit=",
		"q=", "q=" + strings.Repeat("a", 5000), "q=%00%01%02", "q=%zz", "q=" + url.QueryEscape(`"unterminated`), "q=" + url.QueryEscape("*:()-\"^~"),
		"sort=bogus", "sort=score&sort=recent", "category=" + strings.Repeat("c", 500), "category=%00", "category=%C3%28", "cursor=" + randomHex(40), "cursor=%%%",
		"days=-5", "days=abc", "status=" + randomHex(4), "since=yesterday", "q=ok&limit=5&unknown=1", strings.Repeat("a=1&", 2000),
	})
}

// claimTemplate is a valid verification body to mutate.
func claimTemplate() map[string]any {
	return map[string]any{"claim": "The Base mainnet chain ID is 8453.", "minimumSources": 1, "maxSources": 3,
		"sourcePolicy": "authoritative", "allowedDomains": []any{}, "blockedDomains": []any{}, "includeConflicts": true,
		"language": "auto", "freshnessHours": 168, "asOf": nil, "jurisdiction": nil}
}

// templateFor returns a plausible body for a route (so that wrong types
// reach the field validation, not just the top level).
func templateFor(c capability) map[string]any {
	switch {
	case strings.HasPrefix(c.ID, "claims.verify"):
		return claimTemplate()
	case c.ID == "commerce.quotes.create":
		return map[string]any{"tier": "deep"}
	case c.ID == "commerce.admin.customers.create":
		return map[string]any{"name": "load test", "email": "load@example.com"}
	case strings.HasPrefix(c.ID, "commerce.receipts"):
		return map[string]any{"receipt": map[string]any{"format": "assay-receipt/1", "receiptId": "rcpt_" + randomHex(16), "orderId": "ord_" + randomHex(16), "signature": "AAAA"}}
	case strings.HasPrefix(c.ID, "niche.admin.evaluations"):
		return map[string]any{"title": "A niche title", "problem": strings.Repeat("problem ", 5), "buyer": "buyers", "category": "ops",
			"solution_hypothesis": strings.Repeat("solution ", 3), "pain": 3, "frequency": 3, "willingness_to_pay": 3, "reachable_buyers": 3,
			"feasibility": 3, "competition_gap": 3, "evaluation_notes": strings.Repeat("notes ", 6), "signal_ids": []any{"sig_" + randomHex(16)}, "publish": false}
	case strings.HasPrefix(c.ID, "subscription."):
		return map[string]any{"email": "load@example.com", "session_id": "cs_" + randomHex(16), "token": "nd_" + randomHex(16)}
	}
	return map[string]any{"id": randomHex(8), "items": []any{1, 2}}
}

// wrongValue returns a value of a random JSON type.
func (f *fuzzer) wrongValue() any {
	return pick(f.rng, []any{
		nil, true, 0, -1, 1.5, json.Number("1e400"), json.Number("-0"), json.Number("123456789012345678901234567890"),
		"", "x", strings.Repeat("y", 10000), "NaN", "2026-13-45", []any{}, []any{nil, 1, "a"}, map[string]any{}, map[string]any{"nested": []any{map[string]any{}}},
	})
}

// body returns a malformed, oversized or mistyped body and its kind.
func (f *fuzzer) body(c capability) ([]byte, string) {
	switch f.rng.IntN(5) {
	case 0:
		return pick(f.rng, [][]byte{
			[]byte("{"), []byte(`{"claim":`), []byte(`{"claim":"x",}`), []byte(`[1,2`), []byte("nul"), []byte(`{"a":1}{"b":2}`),
			[]byte(`{'claim':'x'}`), []byte(`{"claim":"\ud800"}`), []byte("{\"claim\":\"\xff\xfe\"}"), []byte("\xef\xbb\xbf{\"claim\":\"x\"}"),
			[]byte("NaN"), []byte(`{"claim": 1e999999}`), []byte("\x00\x01\x02"), []byte(`{"claim":"a","claim":5}`),
			[]byte(strings.Repeat("[", 100000)), []byte(`{"a":` + strings.Repeat(`{"a":`, 20000)), []byte(strings.Repeat("9", 200000)),
			[]byte(`"` + strings.Repeat("\\", 10001) + `"`), []byte("null"), []byte("[]"), []byte(`"just a string"`), []byte("42"), {},
		}), "body: malformed JSON"
	case 1:
		m := templateFor(c)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		for range 1 + f.rng.IntN(3) {
			m[pick(f.rng, keys)] = f.wrongValue()
		}
		if f.rng.IntN(3) == 0 {
			m["unexpected_"+randomHex(3)] = f.wrongValue()
		}
		b, _ := json.Marshal(m)
		return b, "body: wrong types"
	case 2:
		switch f.rng.IntN(3) {
		case 0:
			return bytes.Repeat([]byte("a"), 2<<20), "body: huge (over the limit)"
		case 1:
			m := templateFor(c)
			m["claim"] = strings.Repeat("long claim ", 80000) // ~880 KB, under the 1 MiB limit
			b, _ := json.Marshal(m)
			return b, "body: large string under the limit"
		default:
			items := make([]any, 50000)
			for i := range items {
				items[i] = "example" + randomHex(2) + ".com"
			}
			m := templateFor(c)
			m["allowedDomains"] = items
			b, _ := json.Marshal(m)
			return b, "body: huge array"
		}
	case 3:
		b, _ := json.Marshal(templateFor(c))
		return b, "body: plausible"
	default:
		return nil, "body: none"
	}
}

// paymentHeader returns a forged, replayed or garbage credential for a
// route (or for any route, for the generic kinds).
func (f *fuzzer) paymentHeader(ctx context.Context, c capability) (http.Header, string) {
	h := http.Header{}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	ch := f.fx.challenges[c.ID]
	if ch == nil {
		ch = f.fx.challenges["claims.verify.quick"]
	}
	switch f.rng.IntN(12) {
	case 0:
		h.Set(x402.HeaderPaymentSignature, pick(f.rng, []string{"!!!not base64!!!", b64("{not json"), b64(`{"x402Version":2}`), b64(`[]`), b64(`{"x402Version":"2","payload":5}`), strings.Repeat("A", 60000), "", "====", b64(strings.Repeat("{", 10000))}))
		return h, "payment: x402 v2 garbage"
	case 1:
		h.Set(x402.HeaderXPayment, pick(f.rng, []string{"%%%", b64("null"), b64(`{"x402Version":1,"scheme":"exact","network":"base","payload":{}}`), b64(`{"x402Version":1,"scheme":"upto"}`), b64(strings.Repeat("x", 40000))}))
		return h, "payment: x402 v1 garbage"
	case 2:
		h.Set(mpp.HeaderAuthorization, pick(f.rng, []string{"Payment", "Payment ", "Payment !!!", "Payment " + b64("{}"), "Payment " + base64.RawURLEncoding.EncodeToString([]byte(`{"challenge":{"id":"x"},"payload":{}}`)), "Payment " + strings.Repeat("A", 50000), "Bearer " + randomHex(20), "Basic " + b64("a:b")}))
		return h, "payment: MPP garbage"
	case 3, 4:
		// A used credential, replayed to its own route or to another.
		var pcs []*paidCall
		for id, l := range f.fx.used {
			if id == c.ID || f.rng.IntN(3) == 0 {
				pcs = append(pcs, l...)
			}
		}
		if len(pcs) == 0 {
			break
		}
		pc := pick(f.rng, pcs)
		h.Set(pc.cred.Header, pc.cred.Value)
		return h, "payment: replayed (" + pc.cred.Protocol + ")"
	case 5, 6, 7, 8:
		if ch == nil {
			break
		}
		cred, kind, err := f.forged(ctx, ch)
		if err != nil {
			f.st.fail("fuzzer", "forging: %v", err)
			break
		}
		h.Set(cred.Header, cred.Value)
		return h, "payment: forged " + kind
	case 9:
		// Two credentials at once.
		h.Set(x402.HeaderPaymentSignature, b64(`{"x402Version":2}`))
		h.Set(mpp.HeaderAuthorization, "Payment "+b64("{}"))
		return h, "payment: several credentials"
	case 10:
		h.Set(mpp.HeaderPaymentAuthorization, "Payment "+randomHex(40))
		return h, "payment: MPP Payment-Authorization garbage"
	}
	h.Set(x402.HeaderPaymentSignature, randomHex(64))
	return h, "payment: x402 v2 garbage"
}

// forged signs a credential that must be refused: wrong payer, amount,
// payee, expiry, network, or a tampered MPP challenge.
func (f *fuzzer) forged(ctx context.Context, ch *challenge) (*credential, string, error) {
	now := time.Now()
	switch f.rng.IntN(7) {
	case 0, 1, 2:
		if ch.v2 == nil {
			break
		}
		pr := *ch.v2
		req := pr.Accepts[0]
		kind := ""
		switch f.rng.IntN(4) {
		case 0:
			req.Amount, kind = "1", "x402v2 underpaid"
		case 1:
			req.PayTo, kind = f.forge.Address().Hex(), "x402v2 wrong payee"
		case 2:
			now, kind = now.Add(-24*time.Hour), "x402v2 expired"
		default:
			kind = "x402v2 bad signature"
		}
		pr.Accepts = []x402.PaymentRequirements{req}
		// The accepted object echoed is the one issued (Raw keeps the
		// decoded bytes): only the signed authorization differs.
		pl, err := paying.PayX402V2(ctx, f.forge, &pr, &req, now)
		if err != nil {
			return nil, "", err
		}
		if kind == "x402v2 bad signature" {
			var ex x402.ExactEVMPayload
			if err := json.Unmarshal(pl.Payload, &ex); err != nil {
				return nil, "", err
			}
			sig := []byte(ex.Signature)
			i := 2 + f.rng.IntN(len(sig)-2)
			sig[i] = "0123456789abcdef"[(strings.IndexByte("0123456789abcdef", sig[i])+1+f.rng.IntN(15))%16]
			ex.Signature = string(sig)
			pl.Payload, _ = json.Marshal(ex)
		}
		v, err := x402.EncodeHeader(pl)
		return &credential{Protocol: protoX402V2, Header: x402.HeaderPaymentSignature, Value: v}, kind, err
	case 3, 4:
		if ch.v1 == nil {
			break
		}
		req := ch.v1.Accepts[0]
		pl, err := paying.PayX402V1(ctx, f.forge, &req, now)
		if err != nil {
			return nil, "", err
		}
		// Claim to be someone else: the signature no longer matches.
		var ex x402.ExactEVMPayload
		if err := json.Unmarshal(pl.Payload, &ex); err != nil {
			return nil, "", err
		}
		other, _ := evm.GenerateKeySigner()
		ex.Authorization.From = other.Address().Hex()
		pl.Payload, _ = json.Marshal(ex)
		v, err := x402.EncodeHeader(pl)
		return &credential{Protocol: protoX402V1, Header: x402.HeaderXPayment, Value: v}, "x402v1 wrong signer", err
	}
	if len(ch.mpp) == 0 {
		return nil, "", fmt.Errorf("no MPP challenge")
	}
	c := ch.mpp[0]
	kind := "mpp tampered challenge"
	switch f.rng.IntN(3) {
	case 0:
		c.ID = base64.RawURLEncoding.EncodeToString([]byte(randomHex(16)))
	case 1:
		c.Expires, kind = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "mpp expired challenge"
	default:
		c.Realm, kind = "evil.example", "mpp foreign realm"
	}
	cred, err := paying.PayMPPEVM(ctx, f.forge, c, now)
	if err != nil {
		return nil, "", err
	}
	v, err := cred.Encode()
	return &credential{Protocol: protoMPP, Header: mpp.HeaderAuthorization, Value: v}, kind, err
}

// junkHeaders adds hostile non-payment headers.
func (f *fuzzer) junkHeaders(h http.Header) string {
	switch f.rng.IntN(9) {
	case 0:
		h.Set(httpgate.HeaderCustomerKey, pick(f.rng, []string{"ask_" + randomHex(16), "", strings.Repeat("k", 5000)}))
		return "header: customer key"
	case 1:
		h.Set(httpgate.HeaderQuoteID, pick(f.rng, []string{"quo_" + randomHex(16), "../x", strings.Repeat("q", 3000)}))
		return "header: quote id"
	case 2:
		h.Set(httpgate.HeaderIdempotencyKey, pick(f.rng, []string{strings.Repeat("i", 5000), "ñ", " ", randomHex(8)}))
		return "header: idempotency key"
	case 3:
		h.Set("X-Niche-Paid-Call", pick(f.rng, []string{"npc_" + randomHex(30), "garbage", strings.Repeat("t", 4000), "a.b.c"}))
		return "header: forged unlock token"
	case 4:
		h.Set("Authorization", pick(f.rng, []string{"Bearer nd_" + randomHex(20), "Bearer ", "Bearer " + strings.Repeat("z", 8000)}))
		return "header: forged subscriber token"
	case 5:
		h.Set(httpgate.HeaderOrderToken, pick(f.rng, append([]string{"ort_" + randomHex(20), ""}, f.fx.tokens...)))
		return "header: order token"
	case 6:
		h.Set("X-Admin-Key", pick(f.rng, []string{"adm_" + randomHex(16), f.fx.adminKey, f.fx.adminKey, ""}))
		return "header: admin key (wrong or right)"
	case 7:
		h.Set("Content-Type", pick(f.rng, []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-16", "application/json; charset=latin1"}))
		return "header: content type"
	default:
		h.Set("X-Forwarded-For", pick(f.rng, []string{"1.2.3.4, 5.6.7.8", "not an ip", "::1", strings.Repeat("9.", 1000)}))
		return "header: forwarded-for"
	}
}

// one sends one hostile request.
func (f *fuzzer) one(ctx context.Context) {
	c := pick(f.rng, f.fx.caps)
	method, path := c.Method, f.pathFor(c)
	h := http.Header{}
	var body []byte
	var kind string
	switch n := f.rng.IntN(20); {
	case n < 6:
		body, kind = f.body(c)
		if c.Method == http.MethodGet && f.rng.IntN(2) == 0 {
			method = http.MethodPost // a body on a GET route: wrong method
		}
		h.Set("Content-Type", "application/json")
	case n < 12:
		var ph http.Header
		ph, kind = f.paymentHeader(ctx, c)
		h = ph
		if strings.HasPrefix(c.ID, "claims.verify") {
			b, _ := json.Marshal(claimTemplate())
			body = b
			h.Set("Content-Type", "application/json")
		}
	case n < 15:
		kind = f.junkHeaders(h)
		if c.Method != http.MethodGet {
			b, _ := json.Marshal(templateFor(c))
			body = b
		}
	case n < 18:
		kind = "query: hostile"
		path += "?" + f.junkQuery()
	default:
		method = pick(f.rng, []string{http.MethodDelete, http.MethodPatch, http.MethodPut, http.MethodHead, http.MethodOptions, "PROPFIND"})
		kind = "method: wrong"
	}
	base := pick(f.rng, f.bases)
	req, err := f.request(ctx, method, base, path, body, kind)
	if err != nil {
		f.st.fail("fuzzer", "building %s %s: %v", method, path, err)
		return
	}
	for k, v := range h {
		req.Header[k] = v
	}
	start := time.Now()
	res, err := f.hc.Do(req)
	f.mu.Lock()
	*f.sent++
	f.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		f.st.netErr(kind)
		if strings.Contains(kind, "huge") || strings.Contains(kind, "large") {
			f.st.note("%s %s (%s): connection closed: %v", method, path, kind, err)
			return
		}
		f.st.fail("connection broken", "%s %s%s (%s): %v", method, base, truncateStr(path, 120), kind, err)
		return
	}
	rb, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	f.st.observe(kind, res.StatusCode, time.Since(start))
	if paidRoutes[c.ID] && method == c.Method && strings.HasPrefix(kind, "payment:") {
		f.mu.Lock()
		f.paid[res.StatusCode]++
		f.mu.Unlock()
	}
	switch {
	case res.StatusCode >= 500 && f.pg && hasBadText(path):
		f.mu.Lock()
		*f.badText++
		f.mu.Unlock()
		f.st.known("PostgreSQL: 500 for NUL or invalid UTF-8 in an id or a filter", "%s %s (%s) -> %d", method, truncateStr(path, 120), kind, res.StatusCode)
	case res.StatusCode >= 500:
		f.st.fail("5xx answer", "%s %s%s (%s) -> %d %s", method, base, truncateStr(path, 120), kind, res.StatusCode, snippet(rb))
	case res.StatusCode < 300 && paidRoutes[c.ID] && method == c.Method && strings.HasPrefix(kind, "payment: replayed (") &&
		res.Header.Get(httpgate.HeaderReplay) == "true":
		// A used credential presented for the very request it paid for is
		// that purchase answered again (stored bytes, nothing charged).
		f.mu.Lock()
		*f.answeredAgain++
		f.mu.Unlock()
	case res.StatusCode < 300 && paidRoutes[c.ID] && method == c.Method && strings.HasPrefix(kind, "payment:"):
		f.st.fail("forged or replayed payment accepted", "%s %s (%s) -> %d", method, path, kind, res.StatusCode)
	case res.StatusCode < 300:
		f.mu.Lock()
		f.acc[c.ID]++
		f.mu.Unlock()
	}
}

// request builds a request; some huge bodies go out chunked (no length).
func (f *fuzzer) request(ctx context.Context, method, base, path string, body []byte, kind string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
		if strings.Contains(kind, "huge") && f.rng.IntN(2) == 0 {
			rd = io.MultiReader(bytes.NewReader(body)) // unknown length: chunked
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://placeholder/", rd)
	if err != nil {
		return nil, err
	}
	// Keep hostile escapes as they are: set the URL by hand.
	pu, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	p, q, _ := strings.Cut(path, "?")
	req.URL.Scheme, req.URL.Host, req.Host = pu.Scheme, pu.Host, pu.Host
	req.URL.Opaque = "//" + pu.Host + p
	req.URL.RawQuery = q
	return req, nil
}

// hasBadText reports whether the decoded path or query of a request holds
// a NUL or invalid UTF-8, which PostgreSQL text parameters cannot carry.
func hasBadText(pathAndQuery string) bool {
	p, q, _ := strings.Cut(pathAndQuery, "?")
	for _, part := range append([]string{p}, strings.Split(q, "&")...) {
		s, err := url.PathUnescape(part)
		if err != nil {
			s = part
		}
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return true
		}
	}
	return false
}

func truncateStr(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
