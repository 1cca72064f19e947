package paymenttest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/payment/x402"
)

// Option changes how a credential is built, usually to break it in one
// precise way.
type Option func(*spec)

type spec struct {
	payTo        string
	amount       string
	network      string
	asset        string
	validAfter   *int64
	validBefore  *int64
	nonce        *[32]byte
	realSigner   evm.Signer
	sigEdit      func([]byte) []byte
	acceptedEdit func(map[string]any)
	payloadEdit  func(map[string]any)
	challenge    func(*mpp.Challenge)
	version      int
	paymentID    string
	source       *string
	resourceURL  *string
}

// WithPayTo pays another address (authorization.to and the echoed payTo).
func WithPayTo(addr string) Option { return func(s *spec) { s.payTo = addr } }

// WithAmount pays another amount (authorization.value and the echoed
// amount), in atomic units.
func WithAmount(v string) Option { return func(s *spec) { s.amount = v } }

// WithNetwork pays on another network (CAIP-2 for v2, v1 name for v1) and
// signs with that network's domain when it is known.
func WithNetwork(n string) Option { return func(s *spec) { s.network = n } }

// WithAsset pays with another token contract (echoed asset and EIP-712
// verifyingContract).
func WithAsset(addr string) Option { return func(s *spec) { s.asset = addr } }

// WithValidity sets validAfter and validBefore (unix seconds).
func WithValidity(after, before int64) Option {
	return func(s *spec) { s.validAfter, s.validBefore = &after, &before }
}

// WithNonce sets the EIP-3009 nonce (for MPP, instead of keccak(id‖realm)).
func WithNonce(n [32]byte) Option { return func(s *spec) { s.nonce = &n } }

// WithSignedBy signs with another key while still claiming the wallet's
// address as "from" (a forged signature).
func WithSignedBy(other evm.Signer) Option { return func(s *spec) { s.realSigner = other } }

// WithTamperedSignature flips one bit of r after signing.
func WithTamperedSignature() Option {
	return func(s *spec) {
		s.sigEdit = func(b []byte) []byte { b[3] ^= 0x10; return b }
	}
}

// WithHighS rewrites the signature to its malleable high-s twin (same
// signer under naive recovery).
func WithHighS() Option {
	return func(s *spec) {
		s.sigEdit = func(b []byte) []byte {
			var sv secp256k1.ModNScalar
			sv.SetByteSlice(b[32:64])
			sv.Negate()
			hs := sv.Bytes()
			copy(b[32:64], hs[:])
			if b[64] == 27 {
				b[64] = 28
			} else {
				b[64] = 27
			}
			return b
		}
	}
}

// WithAccepted edits the echoed x402 v2 "accepted" object after signing.
func WithAccepted(edit func(map[string]any)) Option {
	return func(s *spec) { s.acceptedEdit = edit }
}

// WithPayload edits the x402 PaymentPayload (v1 or v2) or the MPP payload
// object after signing.
func WithPayload(edit func(map[string]any)) Option { return func(s *spec) { s.payloadEdit = edit } }

// WithChallenge edits the echoed MPP challenge after signing.
func WithChallenge(edit func(*mpp.Challenge)) Option {
	return func(s *spec) { s.challenge = edit }
}

// WithVersion sets x402Version in the payload (to mismatch the header).
func WithVersion(v int) Option { return func(s *spec) { s.version = v } }

// WithPaymentID adds the payment-identifier extension with id (v2).
func WithPaymentID(id string) Option { return func(s *spec) { s.paymentID = id } }

// WithSource sets the MPP credential source.
func WithSource(src string) Option { return func(s *spec) { s.source = &src } }

// WithResourceURL changes the echoed x402 v2 resource URL.
func WithResourceURL(u string) Option { return func(s *spec) { s.resourceURL = &u } }

func build(opts []Option) *spec {
	s := &spec{}
	for _, o := range opts {
		o(s)
	}
	return s
}

// sign builds an EIP-3009 authorization and its signature.
func (s *spec) sign(t testing.TB, w evm.Signer, n evm.Network, to, amount string, after, before int64, nonce [32]byte) x402.ExactEVMPayload {
	t.Helper()
	if s.payTo != "" {
		to = s.payTo
	}
	if s.amount != "" {
		amount = s.amount
	}
	if s.validAfter != nil {
		after = *s.validAfter
	}
	if s.validBefore != nil {
		before = *s.validBefore
	}
	if s.nonce != nil {
		nonce = *s.nonce
	}
	if s.asset != "" {
		a, err := evm.ParseAddress(s.asset)
		if err != nil {
			t.Fatal(err)
		}
		n.USDC = a
	}
	toA, err := evm.ParseAddress(to)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := new(big.Int).SetString(amount, 10)
	if !ok {
		t.Fatalf("amount %q", amount)
	}
	a := &evm.TransferAuthorization{From: w.Address(), To: toA, Value: v,
		ValidAfter: big.NewInt(after), ValidBefore: big.NewInt(before), Nonce: nonce}
	signer := w
	if s.realSigner != nil {
		signer = s.realSigner
	}
	sig, err := evm.SignTransfer(context.Background(), signer, n, a)
	if err != nil {
		t.Fatal(err)
	}
	if s.sigEdit != nil {
		sig = s.sigEdit(sig)
	}
	return x402.ExactEVMPayload{Signature: "0x" + hex.EncodeToString(sig), Authorization: a.Wire()}
}

func (s *spec) net(def evm.Network) evm.Network {
	if s.network == "" {
		return def
	}
	if n, ok := evm.LookupNetwork(s.network); ok {
		return n
	}
	n := def
	n.CAIP2, n.V1Name = s.network, s.network
	return n
}

func randomNonce(t testing.TB) [32]byte {
	var n [32]byte
	if _, err := rand.Read(n[:]); err != nil {
		t.Fatal(err)
	}
	return n
}

func edit(t testing.TB, raw []byte, f func(map[string]any)) []byte {
	t.Helper()
	if f == nil {
		return raw
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ChallengeFrom reads the challenge of a 402 answer as httpgate writes it:
// PAYMENT-REQUIRED (base64 JSON), the WWW-Authenticate values and the
// body.
func ChallengeFrom(t testing.TB, h http.Header, body []byte) *payment.Challenge {
	t.Helper()
	ch := &payment.Challenge{Body: body, MPP: h.Values(mpp.HeaderWWWAuthenticate)}
	if v := h.Get(x402.HeaderPaymentRequired); v != "" {
		pr, err := x402.DecodeBase64(v)
		if err != nil {
			t.Fatal(err)
		}
		ch.PaymentRequired = pr
	}
	return ch
}

// PaymentRequired decodes the x402 v2 PaymentRequired of a challenge.
func PaymentRequired(t testing.TB, ch *payment.Challenge) *x402.PaymentRequired {
	t.Helper()
	var pr x402.PaymentRequired
	if err := json.Unmarshal(ch.PaymentRequired, &pr); err != nil {
		t.Fatal(err)
	}
	if len(pr.Accepts) == 0 {
		t.Fatal("PAYMENT-REQUIRED has no accepts")
	}
	return &pr
}

// X402V2 returns a PAYMENT-SIGNATURE header value paying the first
// requirement of ch at time now, as @x402/evm would, changed by opts.
func X402V2(t testing.TB, w evm.Signer, ch *payment.Challenge, now time.Time, opts ...Option) string {
	t.Helper()
	s := build(opts)
	pr := PaymentRequired(t, ch)
	req := pr.Accepts[0]
	def, ok := evm.LookupNetwork(req.Network)
	if !ok {
		t.Fatalf("unknown network %s", req.Network)
	}
	n := s.net(def)
	ex := s.sign(t, w, n, req.PayTo, req.Amount, 0, now.Unix()+req.MaxTimeoutSeconds, randomNonce(t))
	accRaw, err := req.Raw()
	if err != nil {
		t.Fatal(err)
	}
	accepted := edit(t, accRaw, func(m map[string]any) {
		if s.payTo != "" {
			m["payTo"] = s.payTo
		}
		if s.amount != "" {
			m["amount"] = s.amount
		}
		if s.network != "" {
			m["network"] = s.network
		}
		if s.asset != "" {
			m["asset"] = s.asset
		}
		if s.acceptedEdit != nil {
			s.acceptedEdit(m)
		}
	})
	pl := x402.PaymentPayload{X402Version: 2, Resource: pr.Resource, Accepted: accepted, Payload: mustJSON(t, ex), Extensions: pr.Extensions}
	if s.resourceURL != nil {
		r := *pr.Resource
		r.URL = *s.resourceURL
		pl.Resource = &r
	}
	if s.version != 0 {
		pl.X402Version = s.version
	}
	if s.paymentID != "" {
		ext := map[string]json.RawMessage{}
		for k, v := range pl.Extensions {
			ext[k] = v
		}
		ext[x402.ExtensionPaymentIdentifier] = mustJSON(t, map[string]any{"info": map[string]any{"required": false, "id": s.paymentID}})
		pl.Extensions = ext
	}
	return encodeX402(t, edit(t, mustJSON(t, pl), s.payloadEdit))
}

// X402V1 returns an X-PAYMENT header value paying the first requirement of
// the v1 body of ch, as ExactEvmSchemeV1 would, changed by opts.
func X402V1(t testing.TB, w evm.Signer, ch *payment.Challenge, now time.Time, opts ...Option) string {
	t.Helper()
	s := build(opts)
	var doc x402.PaymentRequiredV1
	if err := json.Unmarshal(ch.Body, &doc); err != nil || len(doc.Accepts) == 0 {
		t.Fatalf("v1 body: %v", err)
	}
	req := doc.Accepts[0]
	def, ok := evm.LookupNetwork(req.Network)
	if !ok {
		t.Fatalf("unknown network %s", req.Network)
	}
	n := s.net(def)
	ex := s.sign(t, w, n, req.PayTo, req.MaxAmountRequired, now.Unix()-600, now.Unix()+req.MaxTimeoutSeconds, randomNonce(t))
	pl := x402.PaymentPayload{X402Version: 1, Scheme: req.Scheme, Network: req.Network, Payload: mustJSON(t, ex)}
	if s.network != "" {
		pl.Network = s.network
	}
	if s.version != 0 {
		pl.X402Version = s.version
	}
	return encodeX402(t, edit(t, mustJSON(t, pl), s.payloadEdit))
}

func encodeX402(t testing.TB, b []byte) string {
	return base64.StdEncoding.EncodeToString(b)
}

// MPPChallenges returns the MPP challenges of ch.
func MPPChallenges(t testing.TB, ch *payment.Challenge) []mpp.Challenge {
	t.Helper()
	cs, err := mpp.ParseChallenges(ch.MPP)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// MPPChallenge returns the MPP challenge of ch for method.
func MPPChallenge(t testing.TB, ch *payment.Challenge, method string) mpp.Challenge {
	t.Helper()
	for _, c := range MPPChallenges(t, ch) {
		if c.Method == method {
			return c
		}
	}
	t.Fatalf("no %s challenge", method)
	return mpp.Challenge{}
}

// MPPEVM returns an Authorization header value answering the evm challenge
// of ch as mppx would, changed by opts.
func MPPEVM(t testing.TB, w evm.Signer, ch *payment.Challenge, now time.Time, opts ...Option) string {
	t.Helper()
	return MPPEVMFor(t, w, MPPChallenge(t, ch, mpp.MethodEVM), opts...)
}

// MPPEVMFor answers one evm challenge.
func MPPEVMFor(t testing.TB, w evm.Signer, c mpp.Challenge, opts ...Option) string {
	t.Helper()
	s := build(opts)
	var req mpp.EVMRequest
	if err := c.MPPRequest(&req); err != nil {
		t.Fatal(err)
	}
	n, ok := evm.LookupNetwork(strconv.FormatUint(req.MethodDetails.ChainID, 10))
	if !ok {
		t.Fatalf("chain %d", req.MethodDetails.ChainID)
	}
	n = s.net(n)
	exp, err := time.Parse(time.RFC3339, c.Expires)
	if err != nil {
		t.Fatal(err)
	}
	nonceHex := mpp.Nonce(c.ID, c.Realm)
	var nonce [32]byte
	b, _ := hex.DecodeString(nonceHex[2:])
	copy(nonce[:], b)
	ex := s.sign(t, w, n, req.Recipient, req.Amount, 0, exp.Unix(), nonce)
	payload := map[string]any{"type": "authorization", "from": ex.Authorization.From, "to": ex.Authorization.To,
		"value": ex.Authorization.Value, "validAfter": ex.Authorization.ValidAfter, "validBefore": ex.Authorization.ValidBefore,
		"nonce": ex.Authorization.Nonce, "signature": ex.Signature}
	if s.payloadEdit != nil {
		s.payloadEdit(payload)
	}
	if s.challenge != nil {
		s.challenge(&c)
	}
	src := fmt.Sprintf("did:pkh:eip155:%d:%s", n.ChainID, w.Address().String())
	if s.source != nil {
		src = *s.source
	}
	cred := &mpp.Credential{Challenge: c, Source: src, Payload: mustJSON(t, payload)}
	v, err := cred.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// MPPStripe returns an Authorization header value answering the stripe
// challenge of ch with the shared payment token spt.
func MPPStripe(t testing.TB, ch *payment.Challenge, spt string, opts ...Option) string {
	t.Helper()
	s := build(opts)
	c := MPPChallenge(t, ch, mpp.MethodStripe)
	if s.challenge != nil {
		s.challenge(&c)
	}
	payload := map[string]any{"spt": spt}
	if s.payloadEdit != nil {
		s.payloadEdit(payload)
	}
	cred := &mpp.Credential{Challenge: c, Payload: mustJSON(t, payload)}
	v, err := cred.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// BindMPP computes the HMAC-bound id of a challenge under secret, the way
// the server does (to build challenges that pass the binding but differ in
// terms).
func BindMPP(secret []byte, c mpp.Challenge) string {
	return mpp.ChallengeID(secret, c)
}

// X402FromMPP repackages the EIP-3009 authorization and signature of an
// MPP evm credential (an Authorization header value) as an x402 payment
// for ch: a PAYMENT-SIGNATURE value echoing ch's v2 requirements when
// version is 2, an X-PAYMENT value for ch's v1 body when version is 1. The
// server must treat it as the same payment (the same authorization can
// move the funds once).
func X402FromMPP(t testing.TB, mppHeader string, ch *payment.Challenge, version int) string {
	t.Helper()
	cred, err := mpp.ParseCredential(mppHeader)
	if err != nil || cred == nil {
		t.Fatalf("not an MPP credential: %v", err)
	}
	var pl struct {
		evm.EIP3009Authorization
		Signature string `json:"signature"`
	}
	if err := json.Unmarshal(cred.Payload, &pl); err != nil {
		t.Fatal(err)
	}
	ex := x402.ExactEVMPayload{Signature: pl.Signature, Authorization: pl.EIP3009Authorization}
	if version == 1 {
		var doc x402.PaymentRequiredV1
		if err := json.Unmarshal(ch.Body, &doc); err != nil || len(doc.Accepts) == 0 {
			t.Fatalf("v1 body: %v", err)
		}
		return encodeX402(t, mustJSON(t, x402.PaymentPayload{X402Version: 1, Scheme: doc.Accepts[0].Scheme,
			Network: doc.Accepts[0].Network, Payload: mustJSON(t, ex)}))
	}
	pr := PaymentRequired(t, ch)
	acc, err := pr.Accepts[0].Raw()
	if err != nil {
		t.Fatal(err)
	}
	return encodeX402(t, mustJSON(t, x402.PaymentPayload{X402Version: 2, Resource: pr.Resource, Accepted: acc,
		Payload: mustJSON(t, ex), Extensions: pr.Extensions}))
}
