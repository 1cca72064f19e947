package protocols

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/internal/wire"
	mppseller "github.com/assaykit/assay/payment/mpp/seller"
	"github.com/assaykit/assay/payment/x402"
	x402seller "github.com/assaykit/assay/payment/x402/seller"
)

// Options configure New. PayTo is required; MPP is enabled by MPPSecret;
// cards by Stripe.
type Options struct {
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
	Stripe mppseller.CardCharger
	// RequirePaymentIdentifier makes the x402 payment-identifier extension
	// mandatory (400 without an id).
	RequirePaymentIdentifier bool
	// Extensions returns extra x402 v2 extensions for a challenge, e.g.
	// {"bazaar": x402seller.BazaarExtension(…)} for discovery.
	Extensions func(offer payment.Offer, res payment.Resource) map[string]json.RawMessage
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

// Processor implements payment.Processor for x402 v1 and v2 (exact
// scheme, USDC by EIP-3009; payment/x402/seller) and MPP (evm and stripe
// charge; payment/mpp/seller), composed: one challenge carries both
// protocols, a credential goes to the mechanism of its protocol, and the
// settlement of an EIP-3009 payment whose outcome is unknown is resolved
// here, through the facilitator and the chain. It is stateless apart from
// its configuration and safe for concurrent use.
//
// # Wire choices (where the protocols leave room)
//
//   - One 402 answer carries everything: PAYMENT-REQUIRED (x402 v2, with
//     resource and the payment-identifier extension declared), a body that
//     is an RFC 9457 problem and an x402 v1 document at once (its detail
//     says in one sentence which protocols the offer accepts; the
//     extension member "links" carries Options.Links), one
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
//     Verifier (Options.Verifier; by default LocalVerifier and
//     then the Facilitator, LocalVerifier alone in dev mode); MPP evm is
//     verified as the x402 v2 payload built from its EIP-3009
//     authorization.
//   - Settlement: dev mode records "0xdev…" references; production settles
//     x402 and MPP evm through the Settler (the Facilitator by default;
//     MPP evm as an x402 v2 payload built from the EIP-3009
//     authorization), and cards by capturing the PaymentIntent authorised
//     by Hold (Void cancels it, or refunds it when Stripe captured at
//     once). Unknown outcomes are *payment.PendingError (errors.Is
//     ErrSettlementPending), never failures; a refused settlement is a 402
//     verification-failed *payment.Problem whose Reason is the
//     facilitator's errorReason (only the MPP draft's problem types are
//     used) and, for x402, whose Settlement is the failure SettleResponse
//     (sent in PAYMENT-RESPONSE, X-PAYMENT-RESPONSE for v1).
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
type Processor struct {
	x       *x402seller.Exact
	m       *mppseller.Charge
	payTo   evm.Address
	net     evm.Network
	dev     bool
	settler x402.Settler
	chain   ChainReader
	support *supportCache
	now     func() time.Time
	log     *slog.Logger
	links   map[string]string
}

var _ payment.Processor = (*Processor)(nil)

// New returns the payment protocol layer.
func New(opts *Options) (*Processor, error) {
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
	p := &Processor{payTo: payTo, net: n, dev: opts.Dev, settler: opts.Settler, chain: opts.Chain, now: opts.Now, log: opts.Logger,
		links: maps.Clone(opts.Links)}
	if p.now == nil {
		p.now = time.Now
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.settler == nil && opts.Facilitator != nil {
		p.settler = opts.Facilitator
	}
	if !p.dev && p.settler == nil {
		return nil, errors.New("payment: a Facilitator (or a Settler) is required outside dev mode")
	}
	xo := &x402seller.Options{Network: n, PayTo: payTo, Dev: p.dev, Verifier: opts.Verifier, Settler: p.settler,
		RequirePaymentIdentifier: opts.RequirePaymentIdentifier, Extensions: opts.Extensions,
		SettlementTime: opts.SettlementTime, PresentationTime: opts.PresentationTime, Now: p.now, Logger: p.log}
	if opts.Verifier == nil && !p.dev && opts.Facilitator != nil {
		// The local verifier before the reservation, the facilitator's
		// /verify after it (Hold).
		xo.Confirmer = opts.Facilitator
	}
	if !p.dev && opts.Facilitator != nil {
		p.support = &supportCache{fac: opts.Facilitator, net: n, now: p.now, log: p.log}
	}
	p.x = x402seller.New(xo)
	p.m, err = mppseller.New(&mppseller.Options{Exact: p.x, Secret: opts.MPPSecret, PreviousSecrets: opts.MPPPreviousSecrets,
		Realm: opts.Realm, ChallengeTTL: opts.ChallengeTTL, Cards: opts.Stripe, Random: opts.Random, Now: p.now, Logger: p.log})
	if err != nil {
		return nil, err
	}
	if p.dev {
		p.log.Warn("payments: DEV MODE, NOTHING IS SETTLED ON-CHAIN; never use it in production")
		p.log.Debug("payments: dev mode verifies signatures for real; settlements carry fake 0xdev… references and receipts say dev: true",
			"network", n.CAIP2, "payTo", payTo.String())
	}
	return p, nil
}

// Network returns the configured USDC network.
func (p *Processor) Network() evm.Network { return p.net }

// PayTo returns the seller's address.
func (p *Processor) PayTo() evm.Address { return p.payTo }

// Dev reports whether the processor runs in dev mode.
func (p *Processor) Dev() bool { return p.dev }

// ErrInvalidOffer reports an offer or resource that cannot be charged for.
var ErrInvalidOffer = errors.New("payment: invalid offer")

func checkOffer(offer payment.Offer, res payment.Resource) error {
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

// Challenge implements payment.Processor: one answer with the x402 v2
// PaymentRequired, an x402 v1 + RFC 9457 body, and one challenge per MPP
// method.
func (p *Processor) Challenge(_ context.Context, offer payment.Offer, res payment.Resource) (*payment.Challenge, error) {
	if err := p.accepting(); err != nil {
		return nil, err
	}
	if err := checkOffer(offer, res); err != nil {
		return nil, err
	}
	prJSON, err := wire.Marshal(p.x.PaymentRequired(offer, res))
	if err != nil {
		return nil, err
	}
	mppChallenges, err := p.m.Challenges(offer, res)
	if err != nil {
		return nil, err
	}
	body, err := wire.Marshal(challengeBody{
		Type: payment.ProblemTypeBase + "payment-required", Title: "Payment Required", Status: http.StatusPaymentRequired,
		Detail: p.challengeDetail(offer), Links: p.links,
		X402Version: 1, Error: x402.HeaderXPayment + " header is required",
		Accepts: []x402.PaymentRequirementsV1{p.x.RequirementsV1(offer, res)},
	})
	if err != nil {
		return nil, err
	}
	return &payment.Challenge{PaymentRequired: prJSON, Body: body, MPP: mppChallenges}, nil
}

// challengeDetail is the 402 body's detail: in one sentence, the price and
// every protocol this offer accepts, and what to do.
func (p *Processor) challengeDetail(offer payment.Offer) string {
	s := fmt.Sprintf("Payment required: %s USDC on %s, paid with x402 v2 (PAYMENT-REQUIRED header) or v1 (accepts below)",
		payment.MicroUSD(offer.AmountMicroUSD).String(), p.net.CAIP2)
	switch {
	case p.m.CardsOffered(offer):
		s += fmt.Sprintf(" or MPP (WWW-Authenticate: Payment, method evm, or stripe for a USD %s card payment)", payment.MicroUSD(mppseller.CardCents(offer)*10000).String())
	case p.m.Enabled():
		s += " or MPP (WWW-Authenticate: Payment, method evm)"
	}
	return s + "; pay one and repeat the request."
}

// Verify implements payment.Processor: a credential goes to the
// mechanism of its protocol.
func (p *Processor) Verify(ctx context.Context, offer payment.Offer, res payment.Resource, c *payment.Credential) (*payment.Authorization, error) {
	if err := p.accepting(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, &payment.Problem{Status: http.StatusPaymentRequired, Type: "payment-required", Detail: "No payment credential was presented."}
	}
	if err := checkOffer(offer, res); err != nil {
		return nil, err
	}
	switch c.Protocol {
	case payment.ProtocolX402:
		return p.x.Verify(ctx, offer, res, c)
	case payment.ProtocolMPP, payment.ProtocolMPPStripe:
		return p.m.Verify(ctx, offer, res, c)
	}
	return nil, payment.NewProblem(http.StatusBadRequest, "method-unsupported", "unsupported_scheme", "Payment protocol %q is not accepted.", c.Protocol)
}

// Hold implements payment.Processor, once the Cashier has reserved the
// payment: it authorises a card payment (a manual-capture PaymentIntent
// confirmed with the shared payment token), and has the facilitator
// verify a USDC payment (/verify: balance, simulation) when it confirms
// payments (Options.Verifier). Declines and unusable or spent credentials
// are *payment.Problem; a facilitator that cannot answer is any other
// error.
func (p *Processor) Hold(ctx context.Context, a *payment.Authorization) error {
	switch a.Protocol {
	case payment.ProtocolX402:
		return p.x.Hold(ctx, a)
	case payment.ProtocolMPP, payment.ProtocolMPPStripe:
		return p.m.Hold(ctx, a)
	}
	return nil
}

// Settle implements payment.Processor.
func (p *Processor) Settle(ctx context.Context, a *payment.Authorization) (*payment.Settlement, error) {
	if a == nil {
		return nil, errors.New("payment: nothing to settle")
	}
	switch a.Protocol {
	case payment.ProtocolX402:
		return p.x.Settle(ctx, a)
	case payment.ProtocolMPP, payment.ProtocolMPPStripe:
		return p.m.Settle(ctx, a)
	}
	return nil, fmt.Errorf("payment: authorization of protocol %q was not made by this processor", a.Protocol)
}

// Void implements payment.Processor: it cancels a card authorisation;
// EIP-3009 authorisations are left to expire (nothing was moved).
func (p *Processor) Void(ctx context.Context, a *payment.Authorization) error {
	if a == nil {
		return nil
	}
	return p.m.Void(ctx, a)
}
