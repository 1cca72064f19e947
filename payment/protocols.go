package payment

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/big"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/payment/x402"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
	"github.com/assaykit/assay/payment/mpp"
)

// ProcessorOptions configures Protocols. PayTo is required; MPP is enabled
// by MPPSecret; cards by Stripe.
type ProcessorOptions struct {
	// PayTo is the seller's address that receives USDC (x402 payTo, MPP
	// evm recipient).
	PayTo string
	// Network is the USDC network: "eip155:8453"/"base" (default) or
	// "eip155:84532"/"base-sepolia".
	Network string
	// Dev verifies every signature for real but settles nothing on-chain:
	// settlements get a fake transaction reference starting "0xdev" and
	// Authorization.Dev / Settlement.Dev are true. Cards still go through
	// the configured Stripe account (use a test key).
	Dev bool
	// Facilitator settles x402 and MPP evm payments (and checks balances
	// at verification). Required unless Dev or Settler is set.
	Facilitator *x402.Facilitator
	// Verifier checks the signature of USDC payments, x402 and MPP evm
	// alike, after this processor's own checks of what the route issues
	// (requirements, recipient, amount, validity window, MPP binding),
	// before the payment is reserved. Nil means &LocalVerifier{}: no
	// network call before the reservation. Its answer's payer, when
	// given, must be the authorization's from.
	//
	// When Verifier is nil and a Facilitator is set (outside dev mode),
	// the facilitator's /verify (balance, simulation) runs as Hold, after
	// the Cashier reserved the payment: the credential's order and its
	// reservation are one step before any facilitator call, so copies of
	// one credential sent at once never reach the facilitator twice.
	Verifier x402.Verifier
	// Chain, when set, is asked about settlements whose outcome is unknown
	// (CheckSettlement): the receipts of the transactions the facilitator
	// named, the token's authorizationState and AuthorizationUsed logs.
	// An *evm.RPC implements it. Nil: resolution rests on the
	// facilitator alone.
	Chain ChainReader
	// Settler settles USDC payments. Nil means Facilitator. Ignored in
	// dev mode, which settles nothing.
	Settler x402.Settler
	// MPPSecret keys the stateless HMAC binding of MPP challenge ids. At
	// least 32 bytes; nil disables MPP.
	MPPSecret []byte
	// MPPPreviousSecrets are still accepted for verification (rotation
	// with overlap); new challenges use MPPSecret.
	MPPPreviousSecrets [][]byte
	// Realm is the MPP realm (usually the public host name). Required with
	// MPPSecret.
	Realm string
	// ChallengeTTL is how long a payer has to answer an MPP challenge
	// (default 5 minutes). The challenge's expires (and so the evm
	// authorisation's validBefore) adds the work and settlement time on
	// top, so that an authorisation presented in time is still valid when
	// it is settled after the work.
	ChallengeTTL time.Duration
	// SettlementTime is the time allowed for settlement after the work
	// (default 60 s). A payment must stay valid for Offer.WorkTimeout +
	// SettlementTime after it is verified.
	SettlementTime time.Duration
	// PresentationTime is the time allowed between an x402 client signing
	// its authorization (validBefore = signing time + maxTimeoutSeconds)
	// and this server verifying it: latency and clock skew (default 30 s).
	// maxTimeoutSeconds = Offer.WorkTimeout + SettlementTime +
	// PresentationTime.
	PresentationTime time.Duration
	// Stripe enables MPP stripe (cards) for offers with a card price.
	Stripe CardCharger
	// RequirePaymentIdentifier makes the x402 payment-identifier extension
	// mandatory (400 without an id).
	RequirePaymentIdentifier bool
	// Extensions returns extra x402 v2 extensions for a challenge, e.g.
	// {"bazaar": BazaarExtension(…)} for discovery.
	Extensions func(offer Offer, res Resource) map[string]json.RawMessage
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Random is the source of challenge nonces (default crypto/rand);
	// tests pass a fixed stream to issue reproducible challenges.
	Random io.Reader
	// Logger receives dev-mode warnings and settlement logs; nil discards.
	Logger *slog.Logger
	// Links are where a payer reads how to pay, published in every 402
	// body as the problem's "links" extension member, e.g.
	// {"discovery": "https://api.example.com/.well-known/x402", "client":
	// "https://github.com/assaykit/assay/tree/main/examples/client"}.
	// Nil: no links member.
	Links map[string]string
}

// Protocols implements Processor for x402 v1 and v2 (exact scheme, USDC by
// EIP-3009) and MPP (evm and stripe charge). It is stateless apart from
// its configuration and safe for concurrent use.
//
// # Wire choices (where the protocols leave room)
//
//   - One 402 answer carries everything: PAYMENT-REQUIRED (x402 v2, with
//     resource and the payment-identifier extension declared), a body that
//     is an RFC 9457 problem and an x402 v1 document at once (its detail
//     says in one sentence which protocols the offer accepts; the
//     extension member "links" carries ProcessorOptions.Links), one
//     WWW-Authenticate: Payment per MPP method (evm; stripe when a card
//     price and Stripe are configured), Cache-Control: no-store and
//     Content-Type application/problem+json.
//   - Validity: every USDC payment, x402 or MPP, must stay valid for the
//     work and the settlement after it is verified: Verify requires
//     validBefore ≥ now + Offer.WorkTimeout (default 120 s) +
//     SettlementTime (default 60 s), else 402 payment-expired
//     (invalid_exact_evm_payload_authorization_valid_before) before any
//     work. (The facilitator's own 6-second margin would let a payment
//     run out during the work and fail at settlement.)
//   - maxTimeoutSeconds = that + PresentationTime (default 30 s, 210 s in
//     all): x402 clients sign validBefore = now + maxTimeoutSeconds, so a
//     payment presented within PresentationTime of signing passes.
//   - MPP challenges expire at issue + ChallengeTTL (5 min) + work +
//     settlement; mppx signs validBefore = expires, so a credential is
//     accepted for ChallengeTTL after issue and always settles in time.
//   - MPP ids are the stateless 7-slot HMAC binding; every echoed field is
//     then pinned to what the route issues now (realm, method, intent,
//     request, digest, opaque, no foreign credential header). description
//     is display-only and not compared. opaque = base64url(JCS
//     {"n": <16 random bytes, base64url>, "resource": Resource.URL,
//     "quoteId": Resource.QuoteID}), quoteId only when a quote is named.
//     The random n makes every id unique: without it, two 402s of one
//     route in the same second carried the same id, and the second payer
//     was refused as a replay. resource names the route the challenge was
//     issued for, inside the HMAC-bound fields, and the evm authorization's
//     nonce is keccak256(id ‖ realm): an MPP payment is bound to its route
//     by its signature, and a credential for one route (one niche's
//     pay-per-call) is refused at another (challenge_mismatch). Verify
//     requires a well-formed n (any value: the HMAC binds it), this
//     request's resource and the quote this request names.
//   - Card prices: ceil(Offer.CardMicroUSD / 10 000) cents, at least 50
//     (Stripe's minimum); the Authorization amount is that many cents.
//   - Status codes: a malformed x402 header is 400; a malformed MPP
//     credential is 402 (as the MPP draft's table says) with a fresh
//     challenge; several credentials are 400; an unknown method or intent
//     is 400 method-unsupported; every verification failure is 402 with a
//     problem type (verification-failed, payment-insufficient when the
//     value is below the price, payment-expired, invalid-challenge) and an
//     x402 reason code (Problem.Reason). Challenge.WithProblem renders a
//     fresh challenge carrying the problem.
//   - Reservation keys: every EIP-3009 payment (x402 v1, v2, MPP evm) is
//     reserved under "eip3009:<chainId>:<token>:<from>:<nonce>" (lowercase
//     hex; TransferAuthorization.ReservationKey), so one signed
//     authorization is used once across protocols — an MPP credential
//     repackaged as x402, or a v2 payload replayed as v1, is "payment
//     already used". MPP payments also reserve "mpp:<challengeId>" (MPP
//     evm as an extra key, cards as their key): a challenge is single
//     use even for a second signer.
//   - x402 v2 payloads must echo the whole accepted object exactly as
//     issued (field-by-field checks first, for precise reasons) and the
//     resource exactly as issued (url, description, mimeType): a payload
//     without a resource, or with another route's, is refused
//     (invalid_payment_requirements). The EIP-3009 signature does not cover
//     the resource (its nonce is the client's), so this binds what honest
//     clients send — the official ones echo the resource verbatim — and
//     not what the payer could edit; a used payload is refused everywhere
//     by its reservation key. v1 payloads carry no resource at all: they
//     are checked through scheme, network and the signature (whose domain
//     pins the asset), so a fresh v1 payment made for one route is accepted
//     at another route of the same price — a limit of x402 v1, not
//     closable here. It never buys twice: the reservation key makes it
//     single use across routes.
//   - Payment ids (x402 payment-identifier) are validated (16–128 of
//     [A-Za-z0-9_-]); an id starting "quo_" is also reported as QuoteID.
//   - Verification of USDC payments: the route checks above, then the
//     Verifier (ProcessorOptions.Verifier; by default LocalVerifier and
//     then the Facilitator, LocalVerifier alone in dev mode); MPP evm is
//     verified as the x402 v2 payload built from its EIP-3009
//     authorization.
//   - Settlement: dev mode records "0xdev…" references; production settles
//     x402 and MPP evm through the Settler (the Facilitator by default;
//     MPP evm as an x402 v2 payload built from the EIP-3009
//     authorization), and cards by capturing the PaymentIntent authorised
//     by Hold (Void cancels it, or refunds it when Stripe captured at
//     once). Unknown outcomes are *PendingError (errors.Is
//     ErrSettlementPending), never failures; a refused settlement is a 402
//     verification-failed *Problem whose Reason is the facilitator's
//     errorReason (only the MPP draft's problem types are used) and, for
//     x402, whose Header carries the failure SettleResponse in
//     PAYMENT-RESPONSE (X-PAYMENT-RESPONSE for v1).
//   - Cards: Verify checks the credential only and names the payer by a
//     hash of the shared payment token; Hold (called by the Cashier after
//     the reservation) creates and confirms the manual-capture
//     PaymentIntent with the idempotency key mpp_<challengeId>_<spt>. When
//     Stripe replays an earlier creation of that key, the intent's current
//     state is read back: one cancelled (its call failed and was voided)
//     or refunded is refused (402 invalid-challenge, card_canceled /
//     card_refunded) before any work, never captured after it.
//   - Receipts: Payment-Receipt {method, challengeId, reference, status
//     "success", timestamp, chainId (evm), externalId (stripe, if sent)};
//     x402 replies in kind (PAYMENT-RESPONSE for v2, X-PAYMENT-RESPONSE
//     with v1 network names for v1).
type Protocols struct {
	payTo       evm.Address
	net         evm.Network
	dev         bool
	verifier    x402.Verifier
	confirmer   x402.Verifier // after the reservation (Hold); nil: none
	settler     x402.Settler
	chain       ChainReader
	support     *supportCache
	secret      []byte
	oldSecrets  [][]byte
	realm       string
	ttl         time.Duration
	settleTime  time.Duration
	presentTime time.Duration
	stripe      CardCharger
	requireID   bool
	extensions  func(Offer, Resource) map[string]json.RawMessage
	now         func() time.Time
	random      io.Reader
	log         *slog.Logger
	defaultWork time.Duration
	links       map[string]string
}

var _ Processor = (*Protocols)(nil)

// minCardCents is Stripe's minimum USD charge.
const minCardCents = 50

// NewProcessor returns the payment protocol layer.
func NewProcessor(opts *ProcessorOptions) (*Protocols, error) {
	if opts == nil {
		return nil, errors.New("payment: processor options are required (PayTo at least)")
	}
	payTo, err := evm.ParseAddress(opts.PayTo)
	if err != nil || payTo.IsZero() {
		return nil, fmt.Errorf("payment: PayTo %q is not a usable address", opts.PayTo)
	}
	netName := opts.Network
	if netName == "" {
		netName = "eip155:8453"
	}
	n, ok := evm.LookupNetwork(netName)
	if !ok {
		return nil, fmt.Errorf("payment: unknown network %q (want eip155:8453 or eip155:84532)", opts.Network)
	}
	p := &Protocols{
		payTo: payTo, net: n, dev: opts.Dev, verifier: opts.Verifier, settler: opts.Settler, chain: opts.Chain, realm: opts.Realm,
		ttl: opts.ChallengeTTL, settleTime: opts.SettlementTime, presentTime: opts.PresentationTime, stripe: opts.Stripe,
		requireID: opts.RequirePaymentIdentifier, extensions: opts.Extensions, now: opts.Now, log: opts.Logger,
		random:      opts.Random,
		defaultWork: 120 * time.Second,
		links:       maps.Clone(opts.Links),
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.random == nil {
		p.random = rand.Reader
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.ttl <= 0 {
		p.ttl = 5 * time.Minute
	}
	if p.settleTime <= 0 {
		p.settleTime = 60 * time.Second
	}
	if p.presentTime <= 0 {
		p.presentTime = 30 * time.Second
	}
	if p.settler == nil && opts.Facilitator != nil {
		p.settler = opts.Facilitator
	}
	if !p.dev && p.settler == nil {
		return nil, errors.New("payment: a Facilitator (or a Settler) is required outside dev mode")
	}
	if p.verifier == nil {
		p.verifier = &x402.LocalVerifier{Now: p.now}
		if !p.dev && opts.Facilitator != nil {
			p.confirmer = opts.Facilitator
		}
	}
	if !p.dev && opts.Facilitator != nil {
		p.support = &supportCache{fac: opts.Facilitator, net: n, now: p.now, log: p.log}
	}
	if opts.MPPSecret != nil {
		if len(opts.MPPSecret) < 32 {
			return nil, errors.New("payment: MPPSecret must be at least 32 bytes")
		}
		if opts.Realm == "" {
			return nil, errors.New("payment: Realm is required with MPPSecret")
		}
		p.secret = append([]byte(nil), opts.MPPSecret...)
		for _, s := range opts.MPPPreviousSecrets {
			if len(s) < 32 {
				return nil, errors.New("payment: MPPPreviousSecrets must be at least 32 bytes each")
			}
			p.oldSecrets = append(p.oldSecrets, append([]byte(nil), s...))
		}
	}
	if p.dev {
		p.log.Warn("payments: DEV MODE, NOTHING IS SETTLED ON-CHAIN; never use it in production")
		p.log.Debug("payments: dev mode verifies signatures for real; settlements carry fake 0xdev… references and receipts say dev: true",
			"network", n.CAIP2, "payTo", payTo.String())
	}
	return p, nil
}

// Network returns the configured USDC network.
func (p *Protocols) Network() evm.Network { return p.net }

// PayTo returns the seller's address.
func (p *Protocols) PayTo() evm.Address { return p.payTo }

// Dev reports whether the processor runs in dev mode.
func (p *Protocols) Dev() bool { return p.dev }

// validFor is how long a payment must stay valid after verification: the
// offer's work plus settlement.
func (p *Protocols) validFor(offer Offer) time.Duration {
	w := offer.WorkTimeout
	if w <= 0 {
		w = p.defaultWork
	}
	return w + p.settleTime
}

// maxTimeout is the x402 maxTimeoutSeconds of an offer: work, settlement
// and the time to present the signed payment.
func (p *Protocols) maxTimeout(offer Offer) time.Duration {
	return p.validFor(offer) + p.presentTime
}

// requirementsV2 is what this route issues for offer (compared whole with
// a credential's "accepted").
func (p *Protocols) requirementsV2(offer Offer) x402.PaymentRequirements {
	return x402.PaymentRequirements{
		Scheme: x402.SchemeExact, Network: p.net.CAIP2, Amount: strconv.FormatInt(offer.AmountMicroUSD, 10),
		Asset: p.net.USDC.String(), PayTo: p.payTo.String(),
		MaxTimeoutSeconds: int64(p.maxTimeout(offer) / time.Second),
		Extra:             map[string]any{"name": p.net.TokenName, "version": p.net.TokenVersion},
	}
}

func (p *Protocols) requirementsV1(offer Offer, res Resource) x402.PaymentRequirementsV1 {
	mime := res.MimeType
	if mime == "" {
		mime = offer.MimeType
	}
	desc := res.Description
	if desc == "" {
		desc = offer.Description
	}
	return x402.PaymentRequirementsV1{
		Scheme: x402.SchemeExact, Network: p.net.V1Name, MaxAmountRequired: strconv.FormatInt(offer.AmountMicroUSD, 10),
		Resource: res.URL, Description: desc, MimeType: mime,
		PayTo: p.payTo.String(), MaxTimeoutSeconds: int64(p.maxTimeout(offer) / time.Second),
		Asset: p.net.USDC.String(), Extra: map[string]any{"name": p.net.TokenName, "version": p.net.TokenVersion},
	}
}

// cardCents is the card price in cents: CardMicroUSD rounded up, at least
// Stripe's 50-cent minimum. 0 when the offer has no card price.
func cardCents(offer Offer) int64 {
	if offer.CardMicroUSD <= 0 {
		return 0
	}
	c := (offer.CardMicroUSD + 9999) / 10000
	return max(c, minCardCents)
}

func (p *Protocols) mppEnabled() bool { return p.secret != nil }

func (p *Protocols) stripeOffered(offer Offer) bool {
	return p.mppEnabled() && p.stripe != nil && cardCents(offer) > 0
}

// mppRequest returns the base64url JCS request parameter for method.
func (p *Protocols) mppRequest(method string, offer Offer) (string, error) {
	switch method {
	case mpp.MethodEVM:
		return mpp.EncodeJCSBase64URL(mpp.EVMRequest{
			Amount: strconv.FormatInt(offer.AmountMicroUSD, 10), Currency: p.net.USDC.String(),
			MethodDetails: mpp.EVMDetails{ChainID: p.net.ChainID, CredentialTypes: []string{"authorization"}, Decimals: p.net.Decimals},
			Recipient:     p.payTo.String(),
		})
	case mpp.MethodStripe:
		return mpp.EncodeJCSBase64URL(mpp.StripeRequest{
			Amount: strconv.FormatInt(cardCents(offer), 10), Currency: "usd",
			MethodDetails: mpp.StripeDetails{NetworkID: p.stripe.ProfileID(), PaymentMethodTypes: []string{"card"}},
		})
	}
	return "", fmt.Errorf("payment: unknown MPP method %q", method)
}

// mppOpaque carries the challenge's random nonce, the resource it is
// issued for and the quote id, if any.
func mppOpaque(nonce string, res Resource) (string, error) {
	o := map[string]string{"n": nonce, "resource": res.URL}
	if res.QuoteID != "" {
		o["quoteId"] = res.QuoteID
	}
	return mpp.EncodeJCSBase64URL(o)
}

// newChallengeNonce returns 16 random bytes in unpadded base64url.
func (p *Protocols) newChallengeNonce() (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(p.random, b[:]); err != nil {
		return "", fmt.Errorf("payment: challenge nonce: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// checkOpaque checks an echoed opaque parameter against what this route
// issues for res: a nonce of the issued form, exactly res's resource and
// exactly res's quote. It returns "" or what differs.
func checkOpaque(opaque string, res Resource) string {
	raw, err := mpp.DecodeBase64URL(opaque)
	if err != nil {
		return "The challenge's opaque parameter is not base64url JSON."
	}
	var o map[string]string
	if err := json.Unmarshal(raw, &o); err != nil {
		return "The challenge's opaque parameter is not a JSON object of strings."
	}
	want := 2
	if res.QuoteID != "" {
		want = 3
	}
	switch n, err := base64.RawURLEncoding.DecodeString(o["n"]); {
	case err != nil || len(n) != 16:
		return "The challenge was not issued by this route."
	case o["resource"] != res.URL:
		return fmt.Sprintf("The challenge was issued for resource %q, not this one.", wire.Clip(o["resource"], 200))
	case o["quoteId"] != res.QuoteID:
		return "The challenge names another quote."
	case len(o) != want:
		return "The challenge was not issued by this route."
	}
	return ""
}

// mppChallenge builds the challenge this route issues for method, expiring
// at expires.
func (p *Protocols) mppChallenge(method string, offer Offer, res Resource, expires time.Time) (mpp.Challenge, error) {
	req, err := p.mppRequest(method, offer)
	if err != nil {
		return mpp.Challenge{}, err
	}
	nonce, err := p.newChallengeNonce()
	if err != nil {
		return mpp.Challenge{}, err
	}
	opaque, err := mppOpaque(nonce, res)
	if err != nil {
		return mpp.Challenge{}, err
	}
	desc := res.Description
	if desc == "" {
		desc = offer.Description
	}
	c := mpp.Challenge{Realm: p.realm, Method: method, Intent: mpp.IntentCharge, Request: req,
		Expires: expires.UTC().Format(time.RFC3339), Digest: res.BodyDigest, Opaque: opaque, Description: desc}
	c.ID = mpp.ChallengeID(p.secret, c)
	return c, nil
}

// resourceInfo is the x402 v2 resource this route issues for res (and
// that a v2 payment presented here must echo).
func resourceInfo(offer Offer, res Resource) x402.ResourceInfo {
	info := x402.ResourceInfo{URL: res.URL, Description: res.Description, MimeType: res.MimeType}
	if info.Description == "" {
		info.Description = offer.Description
	}
	if info.MimeType == "" {
		info.MimeType = offer.MimeType
	}
	return info
}

// ErrInvalidOffer reports an offer or resource that cannot be charged for.
var ErrInvalidOffer = errors.New("payment: invalid offer")

func checkOffer(offer Offer, res Resource) error {
	switch {
	case offer.AmountMicroUSD <= 0:
		return fmt.Errorf("%w: %q has no USDC price", ErrInvalidOffer, offer.ID)
	case res.URL == "":
		return fmt.Errorf("%w: the resource URL is required", ErrInvalidOffer)
	}
	return nil
}

// challengeBody is the 402 body: an RFC 9457 problem and an x402 v1
// document at once (each parser ignores the other's keys).
type challengeBody struct {
	Type        string                       `json:"type"`
	Title       string                       `json:"title"`
	Status      int                          `json:"status"`
	Detail      string                       `json:"detail"`
	Reason      string                       `json:"reason,omitempty"`
	Links       map[string]string            `json:"links,omitempty"`
	X402Version int                          `json:"x402Version"`
	Error       string                       `json:"error"`
	Accepts     []x402.PaymentRequirementsV1 `json:"accepts"`
}

// Challenge implements Processor: one 402 answer with the x402 v2 header,
// an x402 v1 + RFC 9457 body, and one WWW-Authenticate per MPP method.
func (p *Protocols) Challenge(_ context.Context, offer Offer, res Resource) (*Challenge, error) {
	if err := p.accepting(); err != nil {
		return nil, err
	}
	if err := checkOffer(offer, res); err != nil {
		return nil, err
	}
	info := resourceInfo(offer, res)
	ext := map[string]json.RawMessage{x402.ExtensionPaymentIdentifier: x402.PaymentIdentifierExtension(p.requireID)}
	if p.extensions != nil {
		for k, v := range p.extensions(offer, res) {
			if json.Valid(v) {
				ext[k] = v
			}
		}
	}
	pr := x402.PaymentRequired{
		X402Version: 2, Error: x402.HeaderPaymentSignature + " header is required",
		Resource: &info,
		Accepts:  []x402.PaymentRequirements{p.requirementsV2(offer)}, Extensions: ext,
	}
	prJSON, err := wire.Marshal(pr)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(x402.HeaderPaymentRequired, b64std(prJSON))
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/problem+json")
	if p.mppEnabled() {
		expires := p.now().Add(p.ttl + p.validFor(offer)).Truncate(time.Second)
		methods := []string{mpp.MethodEVM}
		if p.stripeOffered(offer) {
			methods = append(methods, mpp.MethodStripe)
		}
		for _, m := range methods {
			c, err := p.mppChallenge(m, offer, res, expires)
			if err != nil {
				return nil, err
			}
			h.Add(mpp.HeaderWWWAuthenticate, c.String())
		}
	}
	body, err := wire.Marshal(challengeBody{
		Type: mpp.ProblemTypeBase + "payment-required", Title: "Payment Required", Status: http.StatusPaymentRequired,
		Detail: p.challengeDetail(offer), Links: p.links,
		X402Version: 1, Error: x402.HeaderXPayment + " header is required",
		Accepts: []x402.PaymentRequirementsV1{p.requirementsV1(offer, res)},
	})
	if err != nil {
		return nil, err
	}
	return &Challenge{Header: h, Body: body, PaymentRequired: prJSON}, nil
}

// challengeDetail is the 402 body's detail: in one sentence, the price and
// every protocol this offer accepts, and what to do.
func (p *Protocols) challengeDetail(offer Offer) string {
	s := fmt.Sprintf("Payment required: %s USDC on %s, paid with x402 v2 (PAYMENT-REQUIRED header) or v1 (accepts below)",
		MicroUSD(offer.AmountMicroUSD).String(), p.net.CAIP2)
	switch {
	case p.stripeOffered(offer):
		s += fmt.Sprintf(" or MPP (WWW-Authenticate: Payment, method evm, or stripe for a USD %s card payment)", MicroUSD(cardCents(offer)*10000).String())
	case p.mppEnabled():
		s += " or MPP (WWW-Authenticate: Payment, method evm)"
	}
	return s + "; pay one and repeat the request."
}

// problemTitles are the RFC 9457 titles of the MPP problem types.
func problemTitle(t string) string {
	switch t {
	case "payment-required":
		return "Payment Required"
	case "malformed-credential":
		return "Malformed Credential"
	case "invalid-challenge":
		return "Invalid Challenge"
	case "payment-expired":
		return "Payment Expired"
	case "verification-failed":
		return "Verification Failed"
	case "payment-insufficient":
		return "Payment Insufficient"
	case "method-unsupported":
		return "Method Unsupported"
	}
	return "Payment Error"
}

// WithProblem returns a copy of c that reports p: the body's problem
// members (type, title, status, detail, reason) describe p, and the x402
// error fields (v1 body "error", v2 PAYMENT-REQUIRED "error") carry
// p.Reason (else its detail, else its type). The payment options stay, so
// the payer can pay again.
func (c *Challenge) WithProblem(p *Problem) *Challenge {
	out := &Challenge{Header: c.Header.Clone(), Body: c.Body, PaymentRequired: c.PaymentRequired}
	reason := p.errorCode()
	var body map[string]any
	if json.Unmarshal(c.Body, &body) == nil {
		body["type"] = mpp.ProblemTypeBase + p.Type
		body["title"] = problemTitle(p.Type)
		body["status"] = p.Status
		body["detail"] = p.Detail
		body["reason"] = p.Reason
		body["error"] = reason
		if b, err := wire.Marshal(body); err == nil {
			out.Body = b
		}
	}
	if pr, err := setJSONField(c.PaymentRequired, "error", reason); err == nil && pr != nil {
		out.PaymentRequired = pr
		out.Header.Set(x402.HeaderPaymentRequired, b64std(pr))
	}
	return out
}

// setJSONField sets one top-level member of a JSON object.
func setJSONField(obj json.RawMessage, key string, value any) (json.RawMessage, error) {
	if len(obj) == 0 {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, err
	}
	v, err := wire.Marshal(value)
	if err != nil {
		return nil, err
	}
	m[key] = v
	return wire.Marshal(m)
}

// ReadCredential implements Processor. It reads PAYMENT-SIGNATURE (x402
// v2), X-PAYMENT (v1), and Authorization / Payment-Authorization with the
// Payment scheme (MPP). More than one credential is a 400 problem; an
// undecodable x402 header is 400 and an undecodable MPP credential 402
// (as the MPP draft specifies).
func (p *Protocols) ReadCredential(h http.Header) (*Credential, error) {
	var creds []*Credential
	var firstErr error
	for _, name := range []string{x402.HeaderPaymentSignature, x402.HeaderXPayment} {
		for _, v := range h.Values(name) {
			c, err := readX402Header(name, v)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			creds = append(creds, c)
		}
	}
	for _, name := range []string{mpp.HeaderAuthorization, mpp.HeaderPaymentAuthorization} {
		for _, v := range h.Values(name) {
			mc, err := mpp.ParseCredential(v)
			switch {
			case errors.Is(err, mpp.ErrSeveralCredentials):
				return nil, severalCredentials()
			case err != nil:
				if firstErr == nil {
					firstErr = &Problem{Status: http.StatusPaymentRequired, Type: "malformed-credential", Reason: "invalid_payload",
						Detail: "The Payment credential is not base64url-encoded JSON: " + err.Error()}
				}
				creds = append(creds, nil)
			case mc != nil:
				raw, err := wire.Marshal(mc)
				if err != nil {
					return nil, err
				}
				creds = append(creds, &Credential{Protocol: ProtocolMPP, Header: name, Method: mc.Challenge.Method, Raw: raw})
			}
		}
	}
	switch {
	case len(creds) > 1:
		return nil, severalCredentials()
	case firstErr != nil:
		return nil, firstErr
	case len(creds) == 0:
		return nil, nil
	}
	return creds[0], nil
}

func severalCredentials() *Problem {
	return &Problem{Status: http.StatusBadRequest, Type: "malformed-credential", Reason: "invalid_payload",
		Detail: "The request carries several payment credentials; send exactly one."}
}

func readX402Header(name, value string) (*Credential, error) {
	b, err := x402.DecodeBase64(value)
	if err != nil {
		return nil, malformedX402(name, err)
	}
	c, err := x402Credential(b)
	if err != nil {
		return nil, malformedX402(name, err)
	}
	c.Header = name
	return c, nil
}

func malformedX402(name string, err error) *Problem {
	return &Problem{Status: http.StatusBadRequest, Type: "malformed-credential", Reason: "invalid_payload",
		Detail: fmt.Sprintf("The %s header is not base64-encoded JSON of a payment payload: %v", name, err)}
}

func x402Credential(b []byte) (*Credential, error) {
	var head struct {
		X402Version int             `json:"x402Version"`
		Scheme      string          `json:"scheme"`
		Accepted    json.RawMessage `json:"accepted"`
	}
	if err := wire.DecodeObject(b, &head); err != nil {
		return nil, err
	}
	scheme := head.Scheme
	if len(head.Accepted) > 0 {
		var acc struct {
			Scheme string `json:"scheme"`
		}
		_ = json.Unmarshal(head.Accepted, &acc)
		scheme = acc.Scheme
	}
	return &Credential{Protocol: ProtocolX402, Version: head.X402Version, Method: scheme, Raw: append(json.RawMessage(nil), b...)}, nil
}

// CredentialFromX402 reads an x402 PaymentPayload that arrived outside HTTP
// headers, e.g. the MCP binding's params._meta["x402/payment"]. Header is
// "" and either version is accepted.
func CredentialFromX402(raw json.RawMessage) (*Credential, error) {
	if len(raw) > wire.MaxHeaderBytes {
		return nil, malformedX402("x402/payment", errors.New("too large"))
	}
	c, err := x402Credential(raw)
	if err != nil {
		return nil, malformedX402("x402/payment", err)
	}
	return c, nil
}

// Verify implements Processor.
func (p *Protocols) Verify(ctx context.Context, offer Offer, res Resource, c *Credential) (*Authorization, error) {
	if err := p.accepting(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, &Problem{Status: http.StatusPaymentRequired, Type: "payment-required", Detail: "No payment credential was presented."}
	}
	if err := checkOffer(offer, res); err != nil {
		return nil, err
	}
	switch c.Protocol {
	case ProtocolX402:
		return p.verifyX402(ctx, offer, res, c)
	case ProtocolMPP, ProtocolMPPStripe:
		return p.verifyMPP(ctx, offer, res, c)
	}
	return nil, &Problem{Status: http.StatusBadRequest, Type: "method-unsupported", Reason: "unsupported_scheme",
		Detail: fmt.Sprintf("Payment protocol %q is not accepted.", c.Protocol)}
}

func fail(status int, typ, reason, detail string, args ...any) *Problem {
	return &Problem{Status: status, Type: typ, Reason: reason, Detail: fmt.Sprintf(detail, args...)}
}

// amountProblem reports a value that is not exactly the price.
func amountProblem(reason string, got *big.Int, want int64) *Problem {
	typ := "verification-failed"
	if got.Cmp(big.NewInt(want)) < 0 {
		typ = "payment-insufficient"
	}
	return fail(http.StatusPaymentRequired, typ, reason, "The payment is for %s atomic units; this route costs exactly %d.", wire.Clip(got.String(), 40), want)
}

// x402State is carried from Verify to Settle for x402 payments.
type x402State struct {
	version      int
	payload      json.RawMessage
	requirements json.RawMessage
	auth         *evm.TransferAuthorization
}

func (p *Protocols) verifyX402(ctx context.Context, offer Offer, res Resource, c *Credential) (*Authorization, error) {
	var pl x402.PaymentPayload
	if err := wire.DecodeObject(c.Raw, &pl); err != nil {
		return nil, fail(http.StatusBadRequest, "malformed-credential", "invalid_payload", "The payment payload is not valid JSON: %v", err)
	}
	want := map[string]int{x402.HeaderPaymentSignature: 2, x402.HeaderXPayment: 1}[c.Header]
	if (pl.X402Version != 1 && pl.X402Version != 2) || (want != 0 && pl.X402Version != want) {
		return nil, fail(http.StatusBadRequest, "malformed-credential", "invalid_x402_version",
			"x402Version %d does not match the %s header (want %d).", pl.X402Version, c.Header, want)
	}
	issued := p.requirementsV2(offer)
	amount := offer.AmountMicroUSD
	var reqRaw json.RawMessage
	var paymentID string
	if pl.X402Version == 2 {
		if len(pl.Accepted) == 0 {
			return nil, fail(http.StatusBadRequest, "malformed-credential", "invalid_payload", "The payment payload does not echo the accepted requirements.")
		}
		var acc x402.PaymentRequirements
		if err := wire.DecodeObject(pl.Accepted, &acc); err != nil {
			return nil, fail(http.StatusBadRequest, "malformed-credential", "invalid_payload", "accepted is not a requirements object: %v", err)
		}
		if pr := p.checkAccepted(&acc, &issued, pl.Accepted); pr != nil {
			return nil, pr
		}
		// The echoed resource names the route the payment was made for;
		// one made for another route (or without a resource) is refused.
		switch want := resourceInfo(offer, res); {
		case pl.Resource == nil || pl.Resource.URL == "":
			return nil, fail(http.StatusPaymentRequired, "verification-failed", "invalid_payment_requirements",
				"The payment does not echo the resource it pays for; send the PaymentPayload with the resource of this route's PAYMENT-REQUIRED.")
		case pl.Resource.URL != want.URL:
			return nil, fail(http.StatusPaymentRequired, "verification-failed", "invalid_payment_requirements",
				"The payment is for resource %q, not this one.", wire.Clip(pl.Resource.URL, 200))
		case *pl.Resource != want:
			return nil, fail(http.StatusPaymentRequired, "verification-failed", "invalid_payment_requirements",
				"The payment's resource does not equal the one this route issues (description or mimeType differ).")
		}
		id, err := x402.PaymentIdentifierOf(pl.Extensions)
		if err != nil {
			return nil, fail(http.StatusBadRequest, "malformed-credential", "invalid_payload", "%v", err)
		}
		if p.requireID && id == "" {
			return nil, fail(http.StatusBadRequest, "malformed-credential", "payment_identifier_required",
				"This route requires the payment-identifier extension with an id.")
		}
		paymentID = id
		reqRaw, _ = issued.Raw()
	} else {
		if pl.Scheme != x402.SchemeExact {
			return nil, fail(http.StatusPaymentRequired, "method-unsupported", "unsupported_scheme", "Scheme %q is not accepted; use exact.", wire.Clip(pl.Scheme, 40))
		}
		if pl.Network != p.net.V1Name {
			return nil, fail(http.StatusPaymentRequired, "verification-failed", "invalid_network", "Network %q is not accepted; use %s.", wire.Clip(pl.Network, 40), p.net.V1Name)
		}
		reqRaw, _ = wire.Marshal(p.requirementsV1(offer, res))
	}
	var ex x402.ExactEVMPayload
	if err := wire.DecodeObject(pl.Payload, &ex); err != nil {
		return nil, fail(http.StatusBadRequest, "malformed-credential", "invalid_payload", "The exact payload is not valid: %v", err)
	}
	auth, err := ex.Authorization.Parse()
	if err != nil {
		return nil, fail(http.StatusBadRequest, "malformed-credential", "invalid_payload", "%v", err)
	}
	_, err = evm.ParseSignature(ex.Signature)
	if err != nil {
		return nil, fail(http.StatusBadRequest, "malformed-credential", "invalid_payload", "%v", err)
	}
	if auth.To != p.payTo {
		return nil, fail(http.StatusPaymentRequired, "verification-failed", "invalid_exact_evm_payload_recipient_mismatch",
			"The authorization pays %s, not %s.", auth.To.String(), p.payTo.String())
	}
	if auth.Value.Cmp(big.NewInt(amount)) != 0 {
		return nil, amountProblem("invalid_exact_evm_payload_authorization_value_mismatch", auth.Value, amount)
	}
	now := p.now()
	// validBefore must outlast the work and the settlement.
	if pr := checkWindow(auth, now, p.validFor(offer)); pr != nil {
		return nil, pr
	}
	if err := p.verifyPayment(ctx, p.verifier, pl.X402Version, c.Raw, reqRaw, auth); err != nil {
		return nil, err
	}
	a := &Authorization{
		Protocol: ProtocolX402, Method: x402.SchemeExact, Payer: auth.From.Hex(),
		ReservationKey: auth.ReservationKey(p.net),
		AmountMicroUSD: amount, Network: p.net.CAIP2, ValidUntil: unixTime(auth.ValidBefore),
		PaymentID: paymentID, Dev: p.dev,
		State: &x402State{version: pl.X402Version, payload: c.Raw, requirements: reqRaw, auth: auth},
	}
	if strings.HasPrefix(paymentID, "quo_") {
		a.QuoteID = paymentID
	}
	return a, nil
}

// checkAccepted compares the echoed requirements with the issued ones,
// field by field for precise reasons, then as whole objects.
func (p *Protocols) checkAccepted(acc, issued *x402.PaymentRequirements, accRaw json.RawMessage) *Problem {
	if acc.Scheme != x402.SchemeExact {
		return fail(http.StatusPaymentRequired, "method-unsupported", "unsupported_scheme", "Scheme %q is not accepted; use exact.", wire.Clip(acc.Scheme, 40))
	}
	if acc.Network != issued.Network {
		return fail(http.StatusPaymentRequired, "verification-failed", "invalid_network", "Network %q is not accepted; use %s.", wire.Clip(acc.Network, 40), issued.Network)
	}
	if a, err := evm.ParseAddress(acc.Asset); err != nil || a != p.net.USDC {
		return fail(http.StatusPaymentRequired, "verification-failed", "invalid_payment_requirements", "Asset %q is not accepted; pay USDC (%s).", wire.Clip(acc.Asset, 60), issued.Asset)
	}
	if a, err := evm.ParseAddress(acc.PayTo); err != nil || a != p.payTo {
		return fail(http.StatusPaymentRequired, "verification-failed", "invalid_exact_evm_payload_recipient_mismatch", "payTo %q is not this seller (%s).", wire.Clip(acc.PayTo, 60), issued.PayTo)
	}
	if acc.Amount != issued.Amount {
		v, err := evm.ParseUint256(acc.Amount)
		if err != nil {
			return fail(http.StatusBadRequest, "malformed-credential", "invalid_payload", "accepted.amount: %v", err)
		}
		return amountProblem("invalid_exact_evm_payload_authorization_value_mismatch", v, mustInt(issued.Amount))
	}
	var got, want any
	issuedRaw, _ := issued.Raw()
	if json.Unmarshal(accRaw, &got) != nil || json.Unmarshal(issuedRaw, &want) != nil || !reflect.DeepEqual(got, want) {
		return fail(http.StatusPaymentRequired, "verification-failed", "invalid_payment_requirements",
			"accepted does not equal the requirements this route issues (maxTimeoutSeconds, extra or other fields differ).")
	}
	return nil
}

func mustInt(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

// checkWindow checks validAfter <= now and validBefore >= now + margin.
func checkWindow(a *evm.TransferAuthorization, now time.Time, margin time.Duration) *Problem {
	if a.ValidAfter.Cmp(big.NewInt(now.Unix())) > 0 {
		return fail(http.StatusPaymentRequired, "verification-failed", "invalid_exact_evm_payload_authorization_valid_after",
			"The authorization is not valid before %s.", wire.Clip(a.ValidAfter.String(), 40))
	}
	if a.ValidBefore.Cmp(big.NewInt(now.Add(margin).Unix())) < 0 {
		return fail(http.StatusPaymentRequired, "payment-expired", "invalid_exact_evm_payload_authorization_valid_before",
			"The authorization expires at %s, too soon: this route needs it valid for %s more (the work and the settlement); sign a new one.",
			validBeforeText(a.ValidBefore), margin)
	}
	return nil
}

// validBeforeText renders validBefore as an RFC 3339 time when it is one.
func validBeforeText(v *big.Int) string {
	if v.IsInt64() && v.Int64() > 0 && v.Int64() < 1<<40 {
		return time.Unix(v.Int64(), 0).UTC().Format(time.RFC3339)
	}
	return wire.Clip(v.String(), 40)
}

// verifyPayment asks the Verifier about an EIP-3009 payment whose route
// checks passed. A refusal is a 402 *Problem with the verifier's reason.
func (p *Protocols) verifyPayment(ctx context.Context, v x402.Verifier, version int, payload, req json.RawMessage, a *evm.TransferAuthorization) error {
	vr, err := v.Verify(ctx, version, payload, req)
	if err != nil {
		return err
	}
	if vr == nil {
		return errors.New("payment: the verifier returned no answer")
	}
	if !vr.IsValid {
		reason := vr.InvalidReason
		if reason == "" {
			reason = "unexpected_verify_error"
		}
		detail := vr.InvalidMessage
		if detail == "" {
			detail = "The payment was refused: " + reason + "."
		}
		typ := "verification-failed"
		if reason == "invalid_exact_evm_payload_authorization_valid_before" {
			typ = "payment-expired"
		}
		return &Problem{Status: http.StatusPaymentRequired, Type: typ, Reason: reason, Detail: detail}
	}
	if vr.Payer != "" {
		if got, err := evm.ParseAddress(vr.Payer); err != nil || got != a.From {
			return fail(http.StatusPaymentRequired, "verification-failed", "invalid_exact_evm_payload_signature",
				"The verifier names payer %q, not the authorization's %s.", wire.Clip(vr.Payer, 60), a.From.String())
		}
	}
	return nil
}

func unixTime(v *big.Int) time.Time {
	if !v.IsInt64() || v.Int64() > 1<<40 {
		return time.Unix(1<<40, 0).UTC()
	}
	return time.Unix(v.Int64(), 0).UTC()
}

// mppEVMState is carried from Verify to Settle for MPP evm payments.
type mppEVMState struct {
	challengeID  string
	payload      json.RawMessage // x402 v2 PaymentPayload built from the authorization
	requirements json.RawMessage
	payer        string
	auth         *evm.TransferAuthorization
}

func (p *Protocols) verifyMPP(ctx context.Context, offer Offer, res Resource, c *Credential) (*Authorization, error) {
	var cred mpp.Credential
	if err := wire.DecodeObject(c.Raw, &cred); err != nil {
		return nil, fail(http.StatusPaymentRequired, "malformed-credential", "invalid_payload", "The Payment credential is not valid JSON: %v", err)
	}
	ch := cred.Challenge
	if !p.mppEnabled() {
		return nil, fail(http.StatusBadRequest, "method-unsupported", "unsupported_scheme", "MPP payments are not accepted here.")
	}
	switch {
	case ch.Method == mpp.MethodEVM:
	case ch.Method == mpp.MethodStripe && p.stripeOffered(offer):
	default:
		return nil, fail(http.StatusBadRequest, "method-unsupported", "unsupported_scheme", "Payment method %q is not accepted for this route.", wire.Clip(ch.Method, 40))
	}
	if ch.Intent != mpp.IntentCharge {
		return nil, fail(http.StatusBadRequest, "method-unsupported", "unsupported_scheme", "Payment intent %q is not accepted; use charge.", wire.Clip(ch.Intent, 40))
	}
	if !p.bound(ch) {
		return nil, fail(http.StatusPaymentRequired, "invalid-challenge", "invalid_challenge", "The challenge id was not issued by this server.")
	}
	expires, err := time.Parse(time.RFC3339, ch.Expires)
	if err != nil {
		return nil, fail(http.StatusPaymentRequired, "invalid-challenge", "invalid_challenge", "The challenge has no valid expires.")
	}
	now := p.now()
	if now.After(expires) {
		return nil, fail(http.StatusPaymentRequired, "payment-expired", "challenge_expired", "The challenge expired at %s.", ch.Expires)
	}
	wantReq, err := p.mppRequest(ch.Method, offer)
	if err != nil {
		return nil, err
	}
	switch {
	case ch.Realm != p.realm:
		return nil, fail(http.StatusPaymentRequired, "invalid-challenge", "challenge_mismatch", "The challenge is for realm %q, not %q.", wire.Clip(ch.Realm, 80), p.realm)
	case ch.Request != wantReq:
		return nil, fail(http.StatusPaymentRequired, "invalid-challenge", "challenge_mismatch", "The challenge request is not what this route charges.")
	case ch.Digest != res.BodyDigest:
		return nil, fail(http.StatusPaymentRequired, "invalid-challenge", "challenge_mismatch", "The challenge was issued for another request body.")
	case checkOpaque(ch.Opaque, res) != "":
		return nil, fail(http.StatusPaymentRequired, "invalid-challenge", "challenge_mismatch", "%s", checkOpaque(ch.Opaque, res))
	case ch.Header != "" && !strings.EqualFold(ch.Header, mpp.HeaderAuthorization):
		return nil, fail(http.StatusPaymentRequired, "invalid-challenge", "challenge_mismatch", "The challenge names a credential header this server did not issue.")
	}
	if ch.Method == mpp.MethodStripe {
		return p.verifyStripe(ctx, offer, res, &cred)
	}
	return p.verifyMPPEVM(ctx, offer, res, &cred, now)
}

// bound reports whether the challenge id is the HMAC of its fields under
// the current or a previous secret.
func (p *Protocols) bound(ch mpp.Challenge) bool {
	if hmac.Equal([]byte(mpp.ChallengeID(p.secret, ch)), []byte(ch.ID)) {
		return true
	}
	for _, s := range p.oldSecrets {
		if hmac.Equal([]byte(mpp.ChallengeID(s, ch)), []byte(ch.ID)) {
			return true
		}
	}
	return false
}

func (p *Protocols) verifyMPPEVM(ctx context.Context, offer Offer, res Resource, cred *mpp.Credential, now time.Time) (*Authorization, error) {
	var pl mpp.EVMPayload
	if err := wire.DecodeObject(cred.Payload, &pl); err != nil {
		return nil, fail(http.StatusPaymentRequired, "malformed-credential", "invalid_payload", "The evm payload is not valid: %v", err)
	}
	if pl.Type != "authorization" {
		return nil, fail(http.StatusBadRequest, "method-unsupported", "unsupported_scheme", "Credential type %q is not accepted; use authorization.", wire.Clip(pl.Type, 40))
	}
	auth, err := pl.EIP3009Authorization.Parse()
	if err != nil {
		return nil, fail(http.StatusPaymentRequired, "malformed-credential", "invalid_payload", "%v", err)
	}
	_, err = evm.ParseSignature(pl.Signature)
	if err != nil {
		return nil, fail(http.StatusPaymentRequired, "malformed-credential", "invalid_payload", "%v", err)
	}
	ch := cred.Challenge
	if auth.To != p.payTo {
		return nil, fail(http.StatusPaymentRequired, "verification-failed", "invalid_exact_evm_payload_recipient_mismatch",
			"The authorization pays %s, not %s.", auth.To.String(), p.payTo.String())
	}
	if auth.Value.Cmp(big.NewInt(offer.AmountMicroUSD)) != 0 {
		return nil, amountProblem("invalid_exact_evm_payload_authorization_value_mismatch", auth.Value, offer.AmountMicroUSD)
	}
	if got := fmt.Sprintf("0x%x", auth.Nonce); got != mpp.Nonce(ch.ID, ch.Realm) {
		return nil, fail(http.StatusPaymentRequired, "verification-failed", "invalid_nonce",
			"The authorization nonce is not keccak256(challenge id ‖ realm).")
	}
	// validBefore must outlast the work and the settlement.
	if pr := checkWindow(auth, now, p.validFor(offer)); pr != nil {
		return nil, pr
	}
	issued := p.requirementsV2(offer)
	reqRaw, _ := issued.Raw()
	payload, err := wire.Marshal(x402.PaymentPayload{
		X402Version: 2, Accepted: reqRaw,
		Payload: mustJSON(x402.ExactEVMPayload{Signature: pl.Signature, Authorization: pl.EIP3009Authorization}),
	})
	if err != nil {
		return nil, err
	}
	if err := p.verifyPayment(ctx, p.verifier, 2, payload, reqRaw, auth); err != nil {
		return nil, err
	}
	if cred.Source != "" {
		want := fmt.Sprintf("did:pkh:eip155:%d:%s", p.net.ChainID, auth.From.Hex())
		if !strings.EqualFold(cred.Source, want) {
			return nil, fail(http.StatusPaymentRequired, "verification-failed", "source_mismatch", "The credential source is not the signer.")
		}
	}
	return &Authorization{
		Protocol: ProtocolMPP, Method: mpp.MethodEVM, Payer: auth.From.Hex(), ReservationKey: auth.ReservationKey(p.net),
		ExtraReservationKeys: []string{"mpp:" + ch.ID},
		AmountMicroUSD:       offer.AmountMicroUSD, Network: p.net.CAIP2, ValidUntil: unixTime(auth.ValidBefore),
		QuoteID: res.QuoteID, Dev: p.dev,
		State: &mppEVMState{challengeID: ch.ID, payload: payload, requirements: reqRaw, payer: auth.From.String(), auth: auth},
	}, nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := wire.Marshal(v)
	return b
}

func (p *Protocols) verifyStripe(_ context.Context, offer Offer, res Resource, cred *mpp.Credential) (*Authorization, error) {
	var pl mpp.StripePayload
	if err := wire.DecodeObject(cred.Payload, &pl); err != nil || pl.SPT == "" || len(pl.SPT) > 512 {
		return nil, fail(http.StatusPaymentRequired, "malformed-credential", "invalid_payload", "The stripe payload must carry an spt.")
	}
	cents := cardCents(offer)
	meta := map[string]string{"challenge_id": cred.Challenge.ID, "offer": offer.ID}
	if res.QuoteID != "" {
		meta["quote_id"] = res.QuoteID
	}
	st := &CardPayment{ChallengeID: cred.Challenge.ID, SPT: pl.SPT, Cents: cents, Metadata: meta}
	st.Receipt.ExternalID = pl.ExternalID
	expires, _ := time.Parse(time.RFC3339, cred.Challenge.Expires)
	return &Authorization{
		Protocol: ProtocolMPPStripe, Method: mpp.MethodStripe, Payer: stripePayer(pl.SPT), ReservationKey: "mpp:" + cred.Challenge.ID,
		AmountMicroUSD: cents * 10000, Network: "stripe", ValidUntil: expires,
		QuoteID: res.QuoteID, State: st,
	}, nil
}

var _ Holder = (*Protocols)(nil)

// Hold implements Holder, once the Cashier has reserved the payment: it
// authorises a card payment (a manual-capture PaymentIntent confirmed
// with the shared payment token), and has the facilitator verify a USDC
// payment (/verify: balance, simulation) when it confirms payments
// (ProcessorOptions.Verifier). Declines and unusable or spent credentials
// are *Problem; a facilitator that cannot answer is any other error.
func (p *Protocols) Hold(ctx context.Context, a *Authorization) error {
	switch st := a.State.(type) {
	case *CardPayment:
		if st.IntentID == "" {
			return p.stripe.Authorize(ctx, st)
		}
	case *x402State:
		if p.confirmer != nil {
			return p.verifyPayment(ctx, p.confirmer, st.version, st.payload, st.requirements, st.auth)
		}
	case *mppEVMState:
		if p.confirmer != nil {
			return p.verifyPayment(ctx, p.confirmer, 2, st.payload, st.requirements, st.auth)
		}
	}
	return nil
}

// Settle implements Processor.
func (p *Protocols) Settle(ctx context.Context, a *Authorization) (*Settlement, error) {
	if a == nil {
		return nil, errors.New("payment: nothing to settle")
	}
	switch st := a.State.(type) {
	case *x402State:
		if a.Dev {
			return p.devSettleX402(a, st)
		}
		sr, err := p.settler.Settle(ctx, st.version, st.payload, st.requirements)
		if err != nil {
			p.logSettleError(a, err)
			return nil, err
		}
		if !sr.Success {
			pr := settlementRefused(sr)
			// Reply in kind: the x402 failure SettleResponse goes back in
			// PAYMENT-RESPONSE (X-PAYMENT-RESPONSE for v1) with the 402.
			if s, err := x402Settlement(st.version, p.net, sr, false); err == nil {
				pr.Header = s.Header
			}
			return nil, pr
		}
		return x402Settlement(st.version, p.net, sr, false)
	case *mppEVMState:
		ref := devReference(a.ReservationKey)
		if !a.Dev {
			sr, err := p.settler.Settle(ctx, 2, st.payload, st.requirements)
			if err != nil {
				p.logSettleError(a, err)
				return nil, err
			}
			if !sr.Success {
				return nil, settlementRefused(sr)
			}
			ref = sr.Transaction
		}
		return p.mppSettlement(mpp.MethodEVM, st.challengeID, ref, p.net.CAIP2, p.net.ChainID, "", a.Dev)
	case *CardPayment:
		ref, err := p.stripe.Capture(ctx, st)
		if err != nil {
			p.logSettleError(a, err)
			return nil, err
		}
		return p.mppSettlement(mpp.MethodStripe, st.ChallengeID, ref, "stripe", 0, st.Receipt.ExternalID, false)
	}
	return nil, fmt.Errorf("payment: authorization of protocol %q was not made by this processor", a.Protocol)
}

func (p *Protocols) logSettleError(a *Authorization, err error) {
	if errors.Is(err, ErrSettlementPending) {
		p.log.Warn("payment settlement pending", "protocol", a.Protocol, "reservation", a.ReservationKey, "err", err)
		return
	}
	p.log.Error("payment settlement failed", "protocol", a.Protocol, "reservation", a.ReservationKey, "err", err)
}

func settlementRefused(sr *x402.SettleResponse) *Problem {
	reason := sr.ErrorReason
	if reason == "" {
		reason = "unexpected_settle_error"
	}
	detail := sr.ErrorMessage
	if detail == "" {
		detail = "The payment could not be settled: " + reason + "."
	}
	return &Problem{Status: http.StatusPaymentRequired, Type: "verification-failed", Reason: reason, Detail: detail}
}

func x402Settlement(version int, n evm.Network, sr *x402.SettleResponse, dev bool) (*Settlement, error) {
	// Reply in kind: v1 network names in X-PAYMENT-RESPONSE.
	out := *sr
	name := x402.HeaderPaymentResponse
	if version == 1 {
		name = x402.HeaderXPaymentResponse
		out.Network = n.V1Name
	} else if out.Network == "" {
		out.Network = n.CAIP2
	}
	meta, err := wire.Marshal(out)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(name, b64std(meta))
	return &Settlement{Reference: sr.Transaction, Network: n.CAIP2, Header: h, Meta: meta, Dev: dev}, nil
}

func (p *Protocols) mppSettlement(method, challengeID, ref, network string, chainID uint64, externalID string, dev bool) (*Settlement, error) {
	r := &mpp.Receipt{Method: method, ChallengeID: challengeID, Reference: ref, Status: "success",
		Timestamp: p.now().UTC().Format(time.RFC3339), ChainID: chainID, ExternalID: externalID}
	v, err := r.Encode()
	if err != nil {
		return nil, err
	}
	meta, _ := wire.Marshal(r)
	h := http.Header{}
	h.Set(mpp.HeaderPaymentReceipt, v)
	return &Settlement{Reference: ref, Network: network, Header: h, Meta: meta, Dev: dev}, nil
}

// Void implements Processor: it cancels a card authorisation; EIP-3009
// authorisations are left to expire (nothing was moved).
func (p *Protocols) Void(ctx context.Context, a *Authorization) error {
	if a == nil {
		return nil
	}
	if st, ok := a.State.(*CardPayment); ok {
		return p.stripe.Void(ctx, st)
	}
	return nil
}
