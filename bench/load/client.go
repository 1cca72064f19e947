package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
)

// answer is what one HTTP request got.
type answer struct {
	status int
	header http.Header
	body   []byte
	dur    time.Duration
	err    error
}

// ok reports whether the request was answered with one of the statuses.
func (a answer) is(statuses ...int) bool { return a.err == nil && slices.Contains(statuses, a.status) }

// newHTTPClient returns a client with its own connection pool.
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// do sends one request and records it under class: latency and status, or
// a transport error. Every 5xx is recorded as a failure.
func do(ctx context.Context, hc *http.Client, st *stats, class, base, method, path string, body []byte, hdr http.Header) answer {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return answer{err: err}
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	res, err := hc.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			st.netErr(class)
		}
		return answer{err: err, dur: time.Since(start)}
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, 32<<20))
	res.Body.Close()
	a := answer{status: res.StatusCode, header: res.Header, body: b, dur: time.Since(start), err: err}
	if err != nil {
		if ctx.Err() == nil {
			st.netErr(class)
		}
		return a
	}
	st.observe(class, res.StatusCode, a.dur)
	if res.StatusCode >= 500 {
		st.fail("5xx answer", "%s %s%s -> %d %s", method, base, path, res.StatusCode, snippet(b))
	}
	return a
}

// snippet shortens a body for a message; a problem body (402 challenges)
// is reduced to its type, error and detail.
func snippet(b []byte) string {
	var p struct {
		Type   string `json:"type"`
		Error  string `json:"error"`
		Detail any    `json:"detail"`
	}
	if json.Unmarshal(b, &p) == nil && (p.Type != "" || p.Error != "") {
		return fmt.Sprintf("problem type=%q error=%q detail=%v", p.Type, p.Error, p.Detail)
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// delivery is one paid response a client received: 200 with order headers.
type delivery struct {
	Class     string
	Protocol  string
	CredKey   string // the server's reservation key
	Nonce     string // payer/nonce: the client's own account
	OrderID   string
	Token     string
	ReceiptID string
	SHA256    string
	Base      string
}

// ledger is the clients' own account of what was paid and delivered, kept
// independently of the server's order ids: by the payer's own nonce
// (payer address and EIP-3009 nonce) and by order id. A second delivery
// for either is a double delivery.
type ledger struct {
	mu        sync.Mutex
	byNonce   map[string][]*delivery
	byOrder   map[string][]*delivery
	keySigned map[string]int // reservation key -> credentials signed for it
	list      []*delivery
	doubles   int
	replays   int
	replayOK  int
	recovered int // deliveries recovered by an idempotent replay after a kill
	signed    int // credentials signed
	st        *stats
}

func newLedger(st *stats) *ledger {
	return &ledger{byNonce: map[string][]*delivery{}, byOrder: map[string][]*delivery{}, keySigned: map[string]int{}, st: st}
}

// signedOne records a freshly signed credential.
func (l *ledger) signedOne(cred *credential) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.signed++
	l.keySigned[cred.Key]++
}

// shared reports whether another credential was signed for the same
// reservation key: the server handed out the same MPP challenge twice, to
// another payer or to the same one (see the known defect in README.md).
func (l *ledger) shared(cred *credential) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.keySigned[cred.Key] > 1
}

// sharedKeys counts reservation keys that several credentials were signed
// for.
func (l *ledger) sharedKeys() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.keySigned {
		if c > 1 {
			n++
		}
	}
	return n
}

// deliver records a delivery and reports a double delivery as a failure.
func (l *ledger) deliver(d *delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, d)
	l.byNonce[d.Nonce] = append(l.byNonce[d.Nonce], d)
	l.byOrder[d.OrderID] = append(l.byOrder[d.OrderID], d)
	if n := len(l.byNonce[d.Nonce]); n > 1 {
		l.doubles++
		l.st.fail("double delivery (same payment nonce)", "payment %s delivered %d times (orders %s)", d.Nonce, n, orderIDs(l.byNonce[d.Nonce]))
	}
	if n := len(l.byOrder[d.OrderID]); n > 1 {
		l.doubles++
		l.st.fail("double delivery (same order)", "order %s delivered %d times", d.OrderID, n)
	}
}

// replay records an idempotent replay: it must name an order delivered
// before and carry the same bytes. With recover, a replay of an order no
// client received (its response was lost when the server was killed) is
// the recovery of that delivery and is booked as one (d, without token).
func (l *ledger) replay(d *delivery, recover bool) {
	l.mu.Lock()
	prev := l.byOrder[d.OrderID]
	if len(prev) == 0 && recover {
		l.recovered++
		l.mu.Unlock()
		l.deliver(d)
		return
	}
	defer l.mu.Unlock()
	l.replays++
	if len(prev) == 0 {
		l.st.fail("idempotent replay", "replay names order %s that no client received", d.OrderID)
		return
	}
	if prev[0].SHA256 != d.SHA256 {
		l.st.fail("idempotent replay", "replay of order %s has different bytes", d.OrderID)
		return
	}
	if d.Token != "" {
		// A replay hands out a fresh token and the previous one stops
		// working: the audit reads the order with the latest.
		prev[0].Token = d.Token
	}
	l.replayOK++
}

// retoken records the latest order token of an order: an answer that
// replays an order (or tells that it is settling) hands out a fresh token
// and the previous one stops working.
func (l *ledger) retoken(orderID, token string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ds := l.byOrder[orderID]; len(ds) > 0 && token != "" {
		ds[0].Token = token
	}
}

// deliveries returns a copy of the list.
func (l *ledger) deliveries() []*delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.list)
}

func orderIDs(ds []*delivery) string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.OrderID
	}
	return strings.Join(ids, ",")
}

// paidReq is a request to a paid route.
type paidReq struct {
	class  string
	method string
	path   string
	body   []byte
	idem   string // Idempotency-Key, "" for none
}

// paidCall is a paid request with its credential and answer.
type paidCall struct {
	req  paidReq
	cred *credential
	base string
	ans  answer
}

// payer is the paying side shared by the scenarios: a wallet, a protocol
// rotation and the ledger.
type payer struct {
	hc     *http.Client
	st     *stats
	led    *ledger
	wallet *evm.KeySigner
	proto  int
	// recover books idempotent replays of orders no client received as
	// recovered deliveries (crash scenario).
	recover bool
}

// headers for a paid request.
func (p *payer) headers(r paidReq, cred *credential) http.Header {
	h := http.Header{}
	if r.idem != "" {
		h.Set(httpgate.HeaderIdempotencyKey, r.idem)
	}
	if cred != nil {
		h.Set(cred.Header, cred.Value)
	}
	return h
}

// challenge asks for the price: the unpaid request must be a 402.
func (p *payer) challenge(ctx context.Context, base string, r paidReq) (*challenge, bool) {
	a := do(ctx, p.hc, p.st, r.class+" (402)", base, r.method, r.path, r.body, p.headers(r, nil))
	if a.err != nil {
		return nil, false
	}
	if a.status != http.StatusPaymentRequired {
		p.st.fail("unexpected status", "%s %s unpaid -> %d, want 402: %s", r.method, r.path, a.status, snippet(a.body))
		return nil, false
	}
	ch, err := parseChallenge(a.header, a.body)
	if err != nil {
		p.st.fail("bad challenge", "%s %s: %v", r.method, r.path, err)
		return nil, false
	}
	return ch, true
}

// sign signs a credential with the next protocol of the rotation.
func (p *payer) sign(ctx context.Context, ch *challenge) (*credential, bool) {
	proto := protocols[p.proto%len(protocols)]
	p.proto++
	cred, err := ch.pay(ctx, p.wallet, proto, time.Now())
	if err != nil {
		p.st.fail("signing", "%s: %v", proto, err)
		return nil, false
	}
	p.led.signedOne(cred)
	return cred, true
}

// send sends r with cred to base and, on 200, checks the order headers and
// records the delivery (or the idempotent replay).
func (p *payer) send(ctx context.Context, base string, r paidReq, cred *credential) answer {
	a := do(ctx, p.hc, p.st, r.class, base, r.method, r.path, r.body, p.headers(r, cred))
	if a.err != nil || a.status != http.StatusOK {
		return a
	}
	p.record(base, r, cred, a)
	return a
}

// record books a 200 answer to a paid request.
func (p *payer) record(base string, r paidReq, cred *credential, a answer) {
	h := a.header
	orderID, token, receiptID := h.Get(httpgate.HeaderOrderID), h.Get(httpgate.HeaderOrderToken), h.Get(httpgate.HeaderReceiptID)
	d := &delivery{Class: r.class, Protocol: cred.Protocol, CredKey: cred.Key, Nonce: cred.Nonce, OrderID: orderID, Token: token,
		ReceiptID: receiptID, SHA256: sha256Hex(a.body), Base: base}
	if h.Get(httpgate.HeaderReplay) == "true" {
		if orderID == "" || receiptID == "" {
			p.st.fail("order headers", "%s %s: replay without order id or receipt id", r.method, r.path)
			return
		}
		p.led.replay(d, p.recover)
		return
	}
	if orderID == "" || token == "" || receiptID == "" {
		p.st.fail("order headers", "%s %s -> 200 without order id/token/receipt id: %v", r.method, r.path, h)
		return
	}
	p.led.deliver(d)
}

// sharedRefusal reports whether a 402 refusing cred is explained by the
// known defect of shared MPP challenges: "payment_already_used" for a
// reservation key that another payer signed too. It is recorded as such.
func (p *payer) sharedRefusal(cred *credential, a answer) bool {
	if a.status != http.StatusPaymentRequired || cred.Protocol != protoMPP || !p.led.shared(cred) {
		return false
	}
	var pb struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(a.body, &pb) != nil || pb.Error != "payment_already_used" {
		return false
	}
	p.st.known("MPP challenge handed out twice", "credential %s (payer %s) refused: Payment already used", cred.Key, strings.SplitN(cred.Nonce, "/", 2)[0])
	return true
}

// pay runs a paid call: challenge, credential, paid request. It returns nil
// when no credential could be made.
func (p *payer) pay(ctx context.Context, base string, r paidReq) *paidCall {
	ch, ok := p.challenge(ctx, base, r)
	if !ok {
		return nil
	}
	cred, ok := p.sign(ctx, ch)
	if !ok {
		return nil
	}
	a := p.send(ctx, base, r, cred)
	return &paidCall{req: r, cred: cred, base: base, ans: a}
}

// claimBodies are claims the offline demo corpus has material on.
var claimTexts = []string{
	"The Base mainnet chain ID is 8453.",
	"USDC on Base uses 6 decimals.",
	"Mount Everest is 8,849 metres tall.",
	"Canberra is the capital of Australia.",
	"Lake Baikal is the deepest lake in the world.",
	"The Nile is the longest river in Africa.",
	"HTTP status code 402 means Payment Required.",
	"RFC 9110 defines the semantics of HTTP.",
	"Two doses of the MMR vaccine protect against measles.",
	"Washing hands with soap reduces the spread of infections.",
	"Sydney is the capital of Australia.",
	"Base fees dropped after the Dencun upgrade.",
}

// claimBody returns a verification body for a random claim.
func claimBody(rng *rand.Rand) []byte {
	m := map[string]any{"claim": claimTexts[rng.IntN(len(claimTexts))]}
	switch rng.IntN(3) {
	case 0:
		m["minimumSources"] = 1
	case 1:
		m["minimumSources"] = 1
		m["maxSources"] = 3
		m["includeConflicts"] = false
	}
	b, _ := json.Marshal(m)
	return b
}

// tiers maps claim tiers to their paths.
var tiers = []struct{ name, path string }{
	{"quick", "/v1/claims/verify/quick"},
	{"standard", "/v1/claims/verify"},
	{"deep", "/v1/claims/verify/deep"},
	{"research", "/v1/claims/verify/research"},
}

// catalogue is what the clients know about the niche catalogue.
type catalogue struct {
	ids        []string
	categories []string
	words      []string
}

// loadCatalogue lists the published niches.
func loadCatalogue(ctx context.Context, hc *http.Client, base string) (*catalogue, error) {
	res, err := hc.Get(base + "/v1/niches?limit=100&sort=recent")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var list struct {
		Niches []struct {
			ID       string `json:"id"`
			Title    string `json:"title"`
			Category string `json:"category"`
		} `json:"niches"`
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list niches: %d", res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
		return nil, err
	}
	if len(list.Niches) == 0 {
		return nil, fmt.Errorf("the demo catalogue is empty")
	}
	c := &catalogue{}
	seen := map[string]bool{}
	for _, n := range list.Niches {
		c.ids = append(c.ids, n.ID)
		if n.Category != "" && !seen["c:"+n.Category] {
			seen["c:"+n.Category] = true
			c.categories = append(c.categories, n.Category)
		}
		for _, w := range strings.FieldsFunc(strings.ToLower(n.Title), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
			if len(w) >= 5 && !seen["w:"+w] {
				seen["w:"+w] = true
				c.words = append(c.words, w)
			}
		}
	}
	if len(c.words) == 0 {
		c.words = []string{"invoice", "scheduling"}
	}
	return c, nil
}

func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }
