package seller

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/x402"
)

// Options configure New.
type Options struct {
	// Network is the USDC network (evm.LookupNetwork) and PayTo the
	// seller's address on it. Required.
	Network evm.Network
	PayTo   evm.Address
	// Dev verifies every signature for real but settles nothing: Settle
	// records a reference starting DevReferencePrefix.
	Dev bool
	// Verifier checks a payment after this mechanism's own checks, before
	// it is reserved. Nil means &x402.LocalVerifier{Now: Now}.
	Verifier x402.Verifier
	// Confirmer, when set, checks a payment again once it is reserved
	// (Hold): a facilitator's /verify (balance, simulation).
	Confirmer x402.Verifier
	// Settler settles payments. Required outside dev mode.
	Settler x402.Settler
	// RequirePaymentIdentifier makes the payment-identifier extension
	// mandatory.
	RequirePaymentIdentifier bool
	// Extensions returns extra x402 v2 extensions for a challenge.
	Extensions func(offer payment.Offer, res payment.Resource) map[string]json.RawMessage
	// SettlementTime is the time allowed for settlement after the work
	// (default 60 s); PresentationTime the time between signing and
	// presenting a payment (default 30 s).
	SettlementTime   time.Duration
	PresentationTime time.Duration
	// Now is the clock (default time.Now); Logger receives settlement
	// logs (nil discards).
	Now    func() time.Time
	Logger *slog.Logger
}

// Exact is the x402 exact-EVM seller mechanism for one payee on one
// network. It is stateless apart from its configuration and safe for
// concurrent use.
type Exact struct {
	net         evm.Network
	separator   [32]byte // net.DomainSeparator()
	payTo       evm.Address
	dev         bool
	verifier    x402.Verifier
	localOnly   bool // verifier is the default LocalVerifier
	confirmer   x402.Verifier
	settler     x402.Settler
	requireID   bool
	extensions  func(payment.Offer, payment.Resource) map[string]json.RawMessage
	settleTime  time.Duration
	presentTime time.Duration
	defaultWork time.Duration
	now         func() time.Time
	log         *slog.Logger
}

// New returns the mechanism o describes.
func New(o *Options) *Exact {
	e := &Exact{net: o.Network, payTo: o.PayTo, dev: o.Dev, verifier: o.Verifier, confirmer: o.Confirmer, settler: o.Settler,
		requireID: o.RequirePaymentIdentifier, extensions: o.Extensions, settleTime: o.SettlementTime,
		presentTime: o.PresentationTime, defaultWork: 120 * time.Second, now: o.Now, log: o.Logger}
	e.separator = e.net.DomainSeparator()
	if e.now == nil {
		e.now = time.Now
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.settleTime <= 0 {
		e.settleTime = 60 * time.Second
	}
	if e.presentTime <= 0 {
		e.presentTime = 30 * time.Second
	}
	if e.verifier == nil {
		e.verifier = &x402.LocalVerifier{Now: e.now}
		e.localOnly = true
	}
	return e
}

// Network returns the configured network.
func (e *Exact) Network() evm.Network { return e.net }

// Dev reports whether payments are verified in dev mode (settled without
// moving funds).
func (e *Exact) Dev() bool { return e.dev }

// PayTo returns the seller's address.
func (e *Exact) PayTo() evm.Address { return e.payTo }

// ValidFor is how long a payment must stay valid after verification: the
// offer's work (WorkTimeout, default 120 s) plus settlement.
func (e *Exact) ValidFor(offer payment.Offer) time.Duration {
	w := offer.WorkTimeout
	if w <= 0 {
		w = e.defaultWork
	}
	return w + e.settleTime
}

// maxTimeout is the x402 maxTimeoutSeconds of an offer: work, settlement
// and the time to present the signed payment.
func (e *Exact) maxTimeout(offer payment.Offer) time.Duration {
	return e.ValidFor(offer) + e.presentTime
}

// Requirements is what this route issues for offer in x402 v2 (compared
// whole with a credential's "accepted").
func (e *Exact) Requirements(offer payment.Offer) x402.PaymentRequirements {
	return x402.PaymentRequirements{
		Scheme: x402.SchemeExact, Network: e.net.CAIP2, Amount: strconv.FormatInt(offer.AmountMicroUSD, 10),
		Asset: e.net.USDC.String(), PayTo: e.payTo.String(),
		MaxTimeoutSeconds: int64(e.maxTimeout(offer) / time.Second),
		Extra:             map[string]any{"name": e.net.TokenName, "version": e.net.TokenVersion},
	}
}

// RequirementsV1 is what this route issues for offer at res in x402 v1.
func (e *Exact) RequirementsV1(offer payment.Offer, res payment.Resource) x402.PaymentRequirementsV1 {
	mime := res.MimeType
	if mime == "" {
		mime = offer.MimeType
	}
	desc := res.Description
	if desc == "" {
		desc = offer.Description
	}
	return x402.PaymentRequirementsV1{
		Scheme: x402.SchemeExact, Network: e.net.V1Name, MaxAmountRequired: strconv.FormatInt(offer.AmountMicroUSD, 10),
		Resource: res.URL, Description: desc, MimeType: mime,
		PayTo: e.payTo.String(), MaxTimeoutSeconds: int64(e.maxTimeout(offer) / time.Second),
		Asset: e.net.USDC.String(), Extra: map[string]any{"name": e.net.TokenName, "version": e.net.TokenVersion},
	}
}

// resourceInfo is the x402 v2 resource this route issues for res (and
// that a v2 payment presented here must echo).
func resourceInfo(offer payment.Offer, res payment.Resource) x402.ResourceInfo {
	info := x402.ResourceInfo{URL: res.URL, Description: res.Description, MimeType: res.MimeType}
	if info.Description == "" {
		info.Description = offer.Description
	}
	if info.MimeType == "" {
		info.MimeType = offer.MimeType
	}
	return info
}

// PaymentRequired is the x402 v2 PaymentRequired object of offer at res:
// its resource, its requirements, and the payment-identifier extension
// declared (with Options.Extensions' own).
func (e *Exact) PaymentRequired(offer payment.Offer, res payment.Resource) x402.PaymentRequired {
	info := resourceInfo(offer, res)
	ext := map[string]json.RawMessage{x402.ExtensionPaymentIdentifier: x402.PaymentIdentifierExtension(e.requireID)}
	if e.extensions != nil {
		for k, v := range e.extensions(offer, res) {
			if json.Valid(v) {
				ext[k] = v
			}
		}
	}
	return x402.PaymentRequired{
		X402Version: 2, Error: x402.HeaderPaymentSignature + " header is required",
		Resource: &info,
		Accepts:  []x402.PaymentRequirements{e.Requirements(offer)}, Extensions: ext,
	}
}
