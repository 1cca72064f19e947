package httpgate_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/stripecard"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/storetest"
)

// The tests in this file run the Gate with the real processor
// (Protocols): payments signed by the dev wallet, verified by the real
// local EIP-3009 verifier, MPP challenges bound by HMAC, cards through the
// fake Stripe, settlement in dev mode or through the fake facilitator.

// realEnv is an env whose gate charges through Protocols.
type realEnv struct {
	*env
	p      *protocols.Processor
	fac    *paymenttest.Facilitator
	stripe *paymenttest.Stripe
	wallet *evm.KeySigner
}

type realOpts struct {
	db          *store.DB
	clock       *clock                   // shared by instances of one test
	production  bool                     // settle through fac
	fac         *paymenttest.Facilitator // shared by instances (production)
	stripe      *paymenttest.Stripe      // shared by instances
	gate        func(*httpgate.Options)
	proc        func(*protocols.Options)
	facilitator func(*x402.FacilitatorOptions)
}

// testSecret keys the MPP challenge binding of the real processor.
var testSecret = []byte("0123456789abcdef0123456789abcdef")

func newRealEnv(t *testing.T, o realOpts) *realEnv {
	t.Helper()
	if o.db == nil {
		o.db = emptyDB.Open(t, nil)
	}
	if o.clock == nil {
		o.clock = &clock{}
	}
	if o.stripe == nil {
		o.stripe = paymenttest.NewStripe(t)
	}
	sc, err := stripecard.New(&stripecard.Options{SecretKey: "sk_test_123", ProfileID: "profile_test_1", BackendURL: o.stripe.URL})
	if err != nil {
		t.Fatal(err)
	}
	popts := &protocols.Options{PayTo: paymenttest.DevPayee, Dev: !o.production, MPPSecret: testSecret, Realm: "api.example.test",
		Now: o.clock.now, Stripe: sc}
	if o.production {
		if o.fac == nil {
			o.fac = paymenttest.NewFacilitator(t)
		}
		fopts := &x402.FacilitatorOptions{URL: o.fac.URL, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond}
		if o.facilitator != nil {
			o.facilitator(fopts)
		}
		fac, err := x402.NewFacilitator(fopts)
		if err != nil {
			t.Fatal(err)
		}
		popts.Facilitator = fac
	}
	if o.proc != nil {
		o.proc(popts)
	}
	p, err := protocols.New(popts)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := payment.LoadKeyring(context.Background(), o.db, "")
	if err != nil {
		t.Fatal(err)
	}
	gopts := &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys, Now: o.clock.now}, PublicBaseURL: publicBase}
	if o.gate != nil {
		o.gate(gopts)
	}
	g, err := httpgate.New(p, paymentstore.New(o.db), gopts)
	if err != nil {
		t.Fatal(err)
	}
	h := &paidHandler{kind: "verification"}
	nh := &paidHandler{kind: "niche"}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/claims/verify/quick", g.Middleware(quickOffer)(h))
	mux.Handle("POST /v1/claims/verify/deep", g.Middleware(deepOffer)(h))
	pricier := quickOffer
	pricier.AmountMicroUSD = 30000
	mux.Handle("POST /v2/claims/verify/quick", g.Middleware(pricier)(h))
	mux.Handle("GET /v1/niches/{id}/pay-per-call", g.Middleware(nicheOffer)(nh))
	srv := httptest.NewServer(recoverer(mux))
	t.Cleanup(srv.Close)
	return &realEnv{
		env: &env{t: t, db: o.db, gate: g, cashier: g.Cashier(), h: h, url: srv.URL, clock: o.clock},
		p:   p, fac: o.fac, stripe: o.stripe, wallet: paymenttest.DevWallet(),
	}
}

// challenge asks for the 402 of a request and returns it.
func (e *realEnv) challenge(method, path, body string, headers map[string]string) *payment.Challenge {
	e.t.Helper()
	r := e.do(method, path, body, headers)
	if r.status != 402 {
		e.t.Fatalf("unpaid %s %s: %d %s", method, path, r.status, r.body)
	}
	return paymenttest.ChallengeFrom(e.t, r.header, r.body)
}

// credentials returns one header per way to pay ch: x402 v2, x402 v1 and
// MPP evm, each a fresh payment.
func (e *realEnv) credentials(ch *payment.Challenge) map[string]map[string]string {
	now := e.clock.now()
	return map[string]map[string]string{
		"x402 v2": {"Payment-Signature": paymenttest.X402V2(e.t, e.wallet, ch, now)},
		"x402 v1": {"X-Payment": paymenttest.X402V1(e.t, e.wallet, ch, now)},
		"mpp evm": {"Authorization": paymenttest.MPPEVM(e.t, e.wallet, ch, now)},
	}
}

func TestGateRealPaymentsEveryProtocol(t *testing.T) {
	e := newRealEnv(t, realOpts{})
	for name, h := range e.credentials(e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)) {
		r := e.do("POST", "/v1/claims/verify/quick", claimBody, h)
		if r.status != 200 || r.header.Get(httpgate.HeaderReceiptID) == "" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
		// The same credential for the same request is the same purchase:
		// its answer again, with a fresh token that replaces the first.
		again := e.do("POST", "/v1/claims/verify/quick", claimBody, h)
		if again.status != 200 || again.header.Get(httpgate.HeaderReplay) != "true" || string(again.body) != string(r.body) ||
			again.header.Get(httpgate.HeaderOrderID) != r.header.Get(httpgate.HeaderOrderID) ||
			again.header.Get(httpgate.HeaderReceiptID) != r.header.Get(httpgate.HeaderReceiptID) {
			t.Errorf("%s presented again: %d %v %s", name, again.status, again.header, again.body)
		}
		id, oldTok, newTok := r.header.Get(httpgate.HeaderOrderID), r.header.Get(httpgate.HeaderOrderToken), again.header.Get(httpgate.HeaderOrderToken)
		if o, err := paymentstore.New(e.db).Order(context.Background(), id); err != nil || newTok == "" || newTok == oldTok || o.TokenHash != ids.Hash(newTok) {
			t.Errorf("%s: the token was not rotated (%v)", name, err)
		}
		// For another request it is a used payment.
		if other := e.do("POST", "/v1/claims/verify/quick", `{"claim":"The Moon orbits the Earth"}`, h); other.status != 402 ||
			detail(t, other.body) != "Payment already used" || !strings.Contains(decodedPaymentRequired(t, other.header), `"error":"payment_already_used"`) {
			t.Errorf("%s for another request: %d %s", name, other.status, other.body)
		}
	}
	if n := e.h.delivered.Load(); n != 3 {
		t.Errorf("%d deliveries, want 3", n)
	}
}

// decodedPaymentRequired returns the JSON of a 402's PAYMENT-REQUIRED header.
func decodedPaymentRequired(t *testing.T, h http.Header) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(h.Get("PAYMENT-REQUIRED"))
	if err != nil {
		t.Fatalf("PAYMENT-REQUIRED: %v", err)
	}
	return string(raw)
}

// One signed EIP-3009 authorization is one payment, whichever protocol
// carries it: an MPP evm credential repackaged as x402 (v2 or v1), or an
// x402 payload replayed in the other version, is answered with the first
// purchase (never charged or delivered again) for the same request, and
// refused for another — in every order.
func TestGateOneAuthorizationAcrossProtocols(t *testing.T) {
	kinds := []string{"mpp evm", "x402 v2", "x402 v1"}
	for _, first := range kinds {
		for _, second := range kinds {
			if first == second {
				continue
			}
			t.Run(first+" then "+second, func(t *testing.T) {
				e := newRealEnv(t, realOpts{})
				ch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
				mpp := paymenttest.MPPEVM(t, e.wallet, ch, e.clock.now())
				headers := map[string]map[string]string{
					"mpp evm": {"Authorization": mpp},
					"x402 v2": {"Payment-Signature": paymenttest.X402FromMPP(t, mpp, ch, 2)},
					"x402 v1": {"X-Payment": paymenttest.X402FromMPP(t, mpp, ch, 1)},
				}
				if r := e.do("POST", "/v1/claims/verify/quick", claimBody, headers[first]); r.status != 200 {
					t.Fatalf("first use (%s): %d %s", first, r.status, r.body)
				}
				r := e.do("POST", "/v1/claims/verify/quick", claimBody, headers[second])
				if r.status != 200 || r.header.Get(httpgate.HeaderReplay) != "true" {
					t.Fatalf("second use (%s), same request: %d %s", second, r.status, r.body)
				}
				r = e.do("POST", "/v1/claims/verify/quick", `{"claim":"The Moon orbits the Earth"}`, headers[second])
				if r.status != 402 || detail(t, r.body) != "Payment already used" || r.header.Get("PAYMENT-REQUIRED") == "" {
					t.Fatalf("second use (%s), another request: %d %s", second, r.status, r.body)
				}
				if n := e.h.delivered.Load(); n != 1 || e.countOrders(payment.OrderCompleted) != 1 {
					t.Fatalf("%d deliveries, %d completed orders; want 1 and 1", n, e.countOrders(payment.OrderCompleted))
				}
			})
		}
	}
	// The same holds between x402 versions for a random-nonce x402 payment.
	e := newRealEnv(t, realOpts{})
	ch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	v2 := paymenttest.X402V2(t, e.wallet, ch, e.clock.now())
	raw, _ := base64.StdEncoding.DecodeString(v2)
	var pl struct {
		Payload json.RawMessage `json:"payload"`
	}
	_ = json.Unmarshal(raw, &pl)
	v1, _ := x402.EncodeHeader(x402.PaymentPayload{X402Version: 1, Scheme: "exact", Network: "base", Payload: pl.Payload})
	if r := e.do("POST", "/v1/claims/verify/quick", claimBody, map[string]string{"Payment-Signature": v2}); r.status != 200 {
		t.Fatalf("v2: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/v1/claims/verify/quick", `{"claim":"The Moon orbits the Earth"}`, map[string]string{"X-Payment": v1}); r.status != 402 || detail(t, r.body) != "Payment already used" {
		t.Fatalf("the v2 authorization as v1: %d %s", r.status, r.body)
	}
	// An MPP challenge is single use even for a second signer.
	mch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	if r := e.do("POST", "/v1/claims/verify/quick", claimBody, map[string]string{"Authorization": paymenttest.MPPEVM(t, e.wallet, mch, e.clock.now())}); r.status != 200 {
		t.Fatalf("mpp: %d %s", r.status, r.body)
	}
	other := paymenttest.NewWallet(t)
	if r := e.do("POST", "/v1/claims/verify/quick", claimBody, map[string]string{"Authorization": paymenttest.MPPEVM(t, other, mch, e.clock.now())}); r.status != 402 || detail(t, r.body) != "Payment already used" {
		t.Fatalf("the same challenge by another signer: %d %s", r.status, r.body)
	}
}

// A card call that fails voids its hold; a retry of the same credential is
// then refused before any work (Stripe replays the cancelled intent).
func TestGateCardRetryAfterFailureIsRefusedBeforeWork(t *testing.T) {
	e := newRealEnv(t, realOpts{})
	ch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	card := map[string]string{"Authorization": paymenttest.MPPStripe(t, ch, "spt_test_card1")}
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, with(card, "X-Test-Behaviour", "fail502"))
	if r.status != 502 {
		t.Fatalf("failing call: %d %s", r.status, r.body)
	}
	intents := e.stripe.Intents()
	if len(intents) != 1 || intents[0].Status != "canceled" {
		t.Fatalf("after the failed call: %+v", intents)
	}
	r = e.do("POST", "/v1/claims/verify/quick", claimBody, card)
	if r.status != 402 || !strings.Contains(detail(t, r.body), "authorisation was released") || r.header.Get("PAYMENT-REQUIRED") == "" {
		t.Fatalf("retry with the spent credential: %d %s", r.status, r.body)
	}
	if e.h.delivered.Load() != 0 || len(e.stripe.Intents()) != 1 || e.countOrders(payment.OrderProcessing)+e.countOrders(payment.OrderSettling) != 0 {
		t.Fatalf("the refused retry ran (%d deliveries) or left an order or a hold (%d intents)", e.h.delivered.Load(), len(e.stripe.Intents()))
	}
	// A fresh challenge with the same card token pays.
	ch2 := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	if r := e.do("POST", "/v1/claims/verify/quick", claimBody, map[string]string{"Authorization": paymenttest.MPPStripe(t, ch2, "spt_test_card1")}); r.status != 200 {
		t.Fatalf("fresh challenge: %d %s", r.status, r.body)
	}
}

// A replayed card challenge with a new token is refused before any hold is
// placed: no authorisation is left pending, also when several tokens race
// for one challenge.
func TestGateReplayedCardChallengeLeavesNoHold(t *testing.T) {
	e := newRealEnv(t, realOpts{})
	ch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	if r := e.do("POST", "/v1/claims/verify/quick", claimBody, map[string]string{"Authorization": paymenttest.MPPStripe(t, ch, "spt_test_a")}); r.status != 200 {
		t.Fatalf("first card: %d %s", r.status, r.body)
	}
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, map[string]string{"Authorization": paymenttest.MPPStripe(t, ch, "spt_test_b")})
	if r.status != 402 || detail(t, r.body) != "Payment already used" {
		t.Fatalf("replayed challenge, new token: %d %s", r.status, r.body)
	}
	for _, in := range e.stripe.Intents() {
		if in.Token == "spt_test_b" {
			t.Fatalf("a hold was placed for the refused token: %+v", in)
		}
	}

	ch2 := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	const n = 12
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", e.url+"/v1/claims/verify/quick", strings.NewReader(claimBody))
			req.Header.Set("Authorization", paymenttest.MPPStripe(t, ch2, fmt.Sprintf("spt_test_race_%d", i)))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			statuses[i] = res.StatusCode
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		if s == 200 {
			ok++
		} else if s != 402 {
			t.Errorf("status %d", s)
		}
	}
	pending, raced := 0, 0
	for _, in := range e.stripe.Intents() {
		if in.Status == "requires_capture" {
			pending++
		}
		if strings.HasPrefix(in.Token, "spt_test_race_") {
			raced++
		}
	}
	if ok != 1 || pending != 0 || raced != 1 {
		t.Fatalf("%d paid, %d holds pending, %d intents for the raced challenge; want 1, 0, 1", ok, pending, raced)
	}
}

// A refused settlement answers 402 with a challenge for this very request
// (body digest, quote) that can be paid, and, for x402, the failure
// SettleResponse in PAYMENT-RESPONSE.
func TestGateSettlementFailureRechallengesThisRequest(t *testing.T) {
	e := newRealEnv(t, realOpts{production: true})
	ctx := context.Background()
	q, err := e.cashier.CreateQuote(ctx, quickOffer)
	if err != nil {
		t.Fatal(err)
	}
	quoted := map[string]string{httpgate.HeaderQuoteID: q.ID}
	ch := e.challenge("POST", "/v2/claims/verify/quick", claimBody, quoted)
	e.fac.Script("/settle", paymenttest.Reply{Body: paymenttest.Recorded("settle_failure")})
	r := e.do("POST", "/v2/claims/verify/quick", claimBody, with(quoted, "Payment-Signature", paymenttest.X402V2(t, e.wallet, ch, e.clock.now())))
	if r.status != 402 || !strings.HasPrefix(detail(t, r.body), "Settlement failed") || e.h.delivered.Load() != 1 {
		t.Fatalf("failed settlement: %d %s", r.status, r.body)
	}
	var sr x402.SettleResponse
	if err := x402.DecodeHeader(r.header.Get("PAYMENT-RESPONSE"), &sr); err != nil || sr.Success || sr.ErrorReason != "insufficient_funds" ||
		sr.Transaction != "" || sr.Network != "eip155:8453" {
		t.Fatalf("PAYMENT-RESPONSE %q: %+v %v", r.header.Get("PAYMENT-RESPONSE"), sr, err)
	}
	fresh := paymenttest.ChallengeFrom(t, r.header, r.body)
	mc := paymenttest.MPPChallenge(t, fresh, "evm")
	if mc.Digest != mpp.BodyDigest([]byte(claimBody)) {
		t.Fatalf("fresh challenge digest %q, want the request body's", mc.Digest)
	}
	op, _ := base64.RawURLEncoding.DecodeString(mc.Opaque)
	if !strings.Contains(string(op), q.ID) {
		t.Fatalf("fresh challenge opaque %s does not carry quote %s", op, q.ID)
	}
	// The fresh MPP challenge is payable on this POST, quoted route.
	pay := e.do("POST", "/v2/claims/verify/quick", claimBody, with(quoted, "Authorization", paymenttest.MPPEVM(t, e.wallet, fresh, e.clock.now())))
	if pay.status != 200 || !strings.Contains(string(pay.body), `"amount":20000`) {
		t.Fatalf("paying the fresh challenge: %d %s", pay.status, pay.body)
	}
	// MPP failures carry no receipt header.
	ch3 := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	e.fac.Script("/settle", paymenttest.Reply{Body: paymenttest.Recorded("settle_failure")})
	r = e.do("POST", "/v1/claims/verify/quick", claimBody, map[string]string{"Authorization": paymenttest.MPPEVM(t, e.wallet, ch3, e.clock.now())})
	if r.status != 402 || r.header.Get("Payment-Receipt") != "" || r.header.Get("PAYMENT-RESPONSE") != "" {
		t.Fatalf("mpp settlement failure: %d %v", r.status, r.header)
	}
}

// A settled payment cannot be settled again at the facilitator either (the
// fake refuses the nonce like a real one), so even a ledger that forgot
// the reservation would not deliver twice for one payment.
func TestGateFacilitatorRefusesASettledNonce(t *testing.T) {
	fac := paymenttest.NewFacilitator(t)
	a := newRealEnv(t, realOpts{production: true, fac: fac})
	b := newRealEnv(t, realOpts{production: true, fac: fac}) // another ledger
	ch := a.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	h := map[string]string{"Payment-Signature": paymenttest.X402V2(t, a.wallet, ch, a.clock.now())}
	if r := a.do("POST", "/v1/claims/verify/quick", claimBody, h); r.status != 200 {
		t.Fatalf("first: %d %s", r.status, r.body)
	}
	r := b.do("POST", "/v1/claims/verify/quick", claimBody, h)
	if r.status != 402 || b.h.delivered.Load() != 0 {
		t.Fatalf("the settled authorization at another ledger: %d %s (delivered %d)", r.status, r.body, b.h.delivered.Load())
	}
}

// An Idempotency-Key retry of the same payment gets its stored answer even
// after the payment expired (x402 validBefore, MPP challenge expiry), and
// only the payer who made it does.
func TestGateIdempotentRetryAfterExpiry(t *testing.T) {
	for _, kind := range []string{"x402 v2", "x402 v1", "mpp evm"} {
		t.Run(kind, func(t *testing.T) {
			e := newRealEnv(t, realOpts{production: true})
			ch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
			h := e.credentials(ch)[kind]
			first := e.do("POST", "/v1/claims/verify/quick", claimBody, with(h, "Idempotency-Key", "key-1"))
			if first.status != 200 {
				t.Fatalf("first: %d %s", first.status, first.body)
			}
			verifies := len(e.fac.Calls("/verify"))
			e.clock.advance(20 * time.Minute) // past validBefore and the challenge's expires
			// The housekeeping pass every instance runs (the resolver's
			// Reconcile) forgets nothing a retry needs.
			if _, err := e.cashier.Reconcile(context.Background()); err != nil {
				t.Fatal(err)
			}
			// Without the key too: the credential is the purchase.
			if r := e.do("POST", "/v1/claims/verify/quick", claimBody, h); r.status != 200 || string(r.body) != string(first.body) ||
				r.header.Get(httpgate.HeaderReplay) != "true" || r.header.Get(httpgate.HeaderOrderID) != first.header.Get(httpgate.HeaderOrderID) {
				t.Fatalf("without the key, after expiry: %d %s", r.status, r.body)
			}
			retry := e.do("POST", "/v1/claims/verify/quick", claimBody, with(h, "Idempotency-Key", "key-1"))
			if retry.status != 200 || string(retry.body) != string(first.body) || retry.header.Get(httpgate.HeaderReplay) != "true" ||
				retry.header.Get(httpgate.HeaderOrderID) != first.header.Get(httpgate.HeaderOrderID) {
				t.Fatalf("retry after expiry: %d %v %s", retry.status, retry.header, retry.body)
			}
			if len(e.fac.Calls("/verify")) != verifies || len(e.fac.Calls("/settle")) != 1 || e.h.delivered.Load() != 1 {
				t.Fatalf("the retry was verified (%d) or settled (%d) or ran (%d)", len(e.fac.Calls("/verify"))-verifies, len(e.fac.Calls("/settle")), e.h.delivered.Load())
			}
			// Another payer with the same key and their own (expired)
			// payment gets nothing of the first payer's.
			other := paymenttest.NewWallet(t)
			var oh map[string]string
			switch kind {
			case "x402 v2":
				oh = map[string]string{"Payment-Signature": paymenttest.X402V2(t, other, ch, e.clock.now().Add(-20*time.Minute))}
			case "x402 v1":
				oh = map[string]string{"X-Payment": paymenttest.X402V1(t, other, ch, e.clock.now().Add(-20*time.Minute))}
			default:
				oh = map[string]string{"Authorization": paymenttest.MPPEVM(t, other, ch, e.clock.now())}
			}
			if r := e.do("POST", "/v1/claims/verify/quick", claimBody, with(oh, "Idempotency-Key", "key-1")); r.status != 402 || strings.Contains(string(r.body), "cv_") {
				t.Fatalf("other payer, same key: %d %s", r.status, r.body)
			}
			// The same payer's other, expired x402 payment is not a replay
			// either: it is verified, and refused.
			if kind != "mpp evm" {
				stale := e.credentials(ch)[kind]
				e.clock.advance(20 * time.Minute)
				if r := e.do("POST", "/v1/claims/verify/quick", claimBody, with(stale, "Idempotency-Key", "key-1")); r.status != 402 || strings.Contains(string(r.body), "cv_") {
					t.Fatalf("another expired payment of the payer: %d %s", r.status, r.body)
				}
			}
		})
	}
}

// A card retry with the same Idempotency-Key after its challenge expired
// gets its stored answer too, without touching Stripe again.
func TestGateIdempotentCardRetryAfterExpiry(t *testing.T) {
	e := newRealEnv(t, realOpts{})
	ch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	card := map[string]string{"Authorization": paymenttest.MPPStripe(t, ch, "spt_test_idem"), "Idempotency-Key": "card-key"}
	first := e.do("POST", "/v1/claims/verify/quick", claimBody, card)
	if first.status != 200 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	calls := len(e.stripe.Requests())
	e.clock.advance(time.Hour)
	retry := e.do("POST", "/v1/claims/verify/quick", claimBody, card)
	if retry.status != 200 || string(retry.body) != string(first.body) || retry.header.Get(httpgate.HeaderReplay) != "true" {
		t.Fatalf("retry after expiry: %d %s", retry.status, retry.body)
	}
	if len(e.stripe.Requests()) != calls || e.h.delivered.Load() != 1 {
		t.Fatalf("the retry called Stripe %d times or ran again", len(e.stripe.Requests())-calls)
	}
}

// An x402 payment valid for less than the route's work and settlement is
// refused with a clear problem before any work or order.
func TestGateRefusesAnX402PaymentThatWouldExpireDuringTheWork(t *testing.T) {
	e := newRealEnv(t, realOpts{})
	ch := e.challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	now := e.clock.now()
	// quickOffer works for at most 2 s and settlement gets 60 s.
	h := map[string]string{"Payment-Signature": paymenttest.X402V2(t, e.wallet, ch, now, paymenttest.WithValidity(0, now.Unix()+30))}
	r := e.do("POST", "/v1/claims/verify/quick", claimBody, h)
	if r.status != 402 || !strings.Contains(detail(t, r.body), "the work and the settlement") {
		t.Fatalf("short-lived payment: %d %s", r.status, r.body)
	}
	if e.h.delivered.Load() != 0 || e.countOrders(payment.OrderFailed)+e.countOrders(payment.OrderProcessing) != 0 {
		t.Fatal("the short-lived payment opened an order or ran the handler")
	}
}

// A payment may name its quote in the x402 payment-identifier extension
// instead of X-Agentic-Quote-Id: the quote then prices the call (and is
// used up by it).
func TestGateQuoteNamedByThePaymentIdentifier(t *testing.T) {
	e := newRealEnv(t, realOpts{})
	ctx := context.Background()
	q, err := e.cashier.CreateQuote(ctx, quickOffer) // 20000; the /v2 route now costs 30000
	if err != nil {
		t.Fatal(err)
	}
	// The client learnt the quoted price from the quote (or from a 402 of
	// a request that named it) and signs it, naming the quote.
	ch := e.challenge("POST", "/v2/claims/verify/quick", claimBody, map[string]string{httpgate.HeaderQuoteID: q.ID})
	h := map[string]string{"Payment-Signature": paymenttest.X402V2(t, e.wallet, ch, e.clock.now(), paymenttest.WithPaymentID(q.ID))}
	r := e.do("POST", "/v2/claims/verify/quick", claimBody, h) // no X-Agentic-Quote-Id
	if r.status != 200 || !strings.Contains(string(r.body), `"amount":20000`) {
		t.Fatalf("quote named by the payment: %d %s", r.status, r.body)
	}
	if o := e.order(r.header.Get(httpgate.HeaderOrderID)); o.QuoteID != q.ID || o.AmountMicroUSD != 20000 {
		t.Fatalf("order = %+v", o)
	}
	// The quote is used up.
	ch2 := e.challenge("POST", "/v2/claims/verify/quick", claimBody, nil)
	h2 := map[string]string{"Payment-Signature": paymenttest.X402V2(t, e.wallet, ch2, e.clock.now(), paymenttest.WithPaymentID(q.ID), paymenttest.WithAmount("20000"))}
	if r := e.do("POST", "/v2/claims/verify/quick", claimBody, h2); r.status != 402 || detail(t, r.body) != "Quote "+q.ID+" was already used" {
		t.Fatalf("second use of the quote: %d %s", r.status, r.body)
	}
	// A payment naming a quote the request contradicts is refused.
	q2, _ := e.cashier.CreateQuote(ctx, quickOffer)
	q3, _ := e.cashier.CreateQuote(ctx, quickOffer)
	ch3 := e.challenge("POST", "/v2/claims/verify/quick", claimBody, map[string]string{httpgate.HeaderQuoteID: q3.ID})
	h3 := with(map[string]string{"Payment-Signature": paymenttest.X402V2(t, e.wallet, ch3, e.clock.now(), paymenttest.WithPaymentID(q2.ID))}, httpgate.HeaderQuoteID, q3.ID)
	if r := e.do("POST", "/v2/claims/verify/quick", claimBody, h3); r.status != 402 || !strings.Contains(detail(t, r.body), "names quote") {
		t.Fatalf("contradicting quotes: %d %s", r.status, r.body)
	}
	if e.h.delivered.Load() != 1 {
		t.Fatalf("%d deliveries", e.h.delivered.Load())
	}
}

// One real payment (dev-wallet signature, local verifier) fired from 50
// goroutines: one delivery. On SQLite, and with two gates (two processors,
// two database handles) sharing a SQLite file or a PostgreSQL database.
func TestGateRealPaymentRace(t *testing.T) {
	t.Run("sqlite one gate", func(t *testing.T) {
		e := newRealEnv(t, realOpts{db: openDB(t, storetest.SQLitePath(t))})
		realRace(t, []*realEnv{e})
	})
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite-file two gates": func(t *testing.T) string { return storetest.SQLitePath(t) },
		"postgres two gates":    func(t *testing.T) string { return storetest.MigratedPostgresURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			clk := &clock{}
			st := paymenttest.NewStripe(t)
			a := newRealEnv(t, realOpts{db: openDB(t, d), clock: clk, stripe: st})
			b := newRealEnv(t, realOpts{db: openDB(t, d), clock: clk, stripe: st})
			realRace(t, []*realEnv{a, b})
		})
	}
}

func realRace(t *testing.T, envs []*realEnv) {
	t.Helper()
	ch := envs[0].challenge("POST", "/v1/claims/verify/quick", claimBody, nil)
	for name, h := range envs[0].credentials(ch) {
		const n = 50
		urls := make([]string, len(envs))
		for i, e := range envs {
			urls[i] = e.url
		}
		got := fireOnePayment(t, urls, n, h)
		// One delivery; every other copy is answered as the same
		// purchase: in flight (409), settling (202) or its answer again.
		if got.ok != 1 || got.used != 0 || got.ok+got.replayed+got.inFlight+got.pending != n {
			t.Errorf("%s: %+v; want 1 delivery and %d answers of the same purchase", name, got, n-1)
		}
	}
	delivered := int64(0)
	for _, e := range envs {
		delivered += e.h.delivered.Load()
	}
	if completed := envs[0].countOrders(payment.OrderCompleted); delivered != 3 || completed != 3 {
		t.Fatalf("%d deliveries, %d completed orders for three payments; want 3 and 3", delivered, completed)
	}
}
