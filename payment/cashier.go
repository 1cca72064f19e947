package payment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/ids"
)

// CashierOptions configure NewCashier. A nil *CashierOptions is not
// enough: Keys is required.
type CashierOptions struct {
	// Keys signs receipts. Required (see LoadKeyring).
	Keys *Keyring
	// Logger receives settlement and reconciliation events. Nil discards.
	Logger *slog.Logger
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
	// Costs prices provider usage for the order cost accounting.
	Costs CostPrices
	// SettleTimeout bounds one Settle call; the payer's disconnection
	// does not cancel it. Zero means 90 seconds.
	SettleTimeout time.Duration
	// CommitTimeout bounds each ledger write that records finished work:
	// moving an order to settling with its response, completing it,
	// failing it. Once the work is done these writes are not cut short by
	// the caller's deadline or disconnection, only by this grace period;
	// a write whose outcome is unknown (a commit cut short) is read back.
	// Zero means 30 seconds.
	CommitTimeout time.Duration
	// StaleAfter is how long an order may stay processing before
	// Reconcile treats it as interrupted by a crash. It must exceed the
	// longest paid call. Zero means 10 minutes.
	StaleAfter time.Duration
	// ReserveFor is how long a reservation is kept when the payment does
	// not say when it stops being usable. Zero means 7 days.
	ReserveFor time.Duration
	// QuoteTTL is the validity of quotes. Zero means 15 minutes.
	QuoteTTL time.Duration
	// OnEvent, when set, is told the outcome of every payment step
	// (metrics). It is called synchronously and must be fast.
	OnEvent func(PaymentEvent)
	// OnTransition, when set, is told every change of an order's status
	// (metrics). It is called synchronously and must be fast.
	OnTransition func(OrderTransition)
	// ResolveEvery is the period of the settlement resolver (RunResolver)
	// and the first back-off of an order whose settlement outcome is
	// unknown; each further attempt waits twice as long, at most six
	// periods. Zero means 10 seconds.
	ResolveEvery time.Duration
}

// Cashier is the transport-neutral core of paid calls: it verifies a
// credential, reserves it atomically, opens an order, and after the work
// settles only on success, completes the order and signs a receipt. Every
// transport sells through Sell: the HTTP gate (payment/httpgate), the MCP
// tools and the A2A messages (server/agents).
type Cashier struct {
	p            Processor
	l            Ledger
	keys         *Keyring
	log          *slog.Logger
	now          func() time.Time
	costs        CostPrices
	settleTO     time.Duration
	commitTO     time.Duration
	staleAfter   time.Duration
	reserveFor   time.Duration
	quoteTTL     time.Duration
	onEvent      func(PaymentEvent)
	onTransition func(OrderTransition)
	every        time.Duration
}

// PaymentEvent is one outcome of a paid call, for metrics.
type PaymentEvent struct {
	// Protocol is the credential's protocol (ProtocolX402, ProtocolMPP,
	// ProtocolMPPStripe), "" when there was no credential.
	Protocol string
	// Outcome is one of: challenged (no credential), rejected (invalid
	// payment), replayed (payment already used), idempotent (a retry
	// answered from a completed order, not charged), settled, pending
	// (settlement outcome unknown), deferred (the processor could not be
	// asked to settle), settlement_failed, voided (the paid work failed;
	// nothing charged), error (processor or store failure); and for the
	// resolution of unknown outcomes: resolved_settled, resolved_failed,
	// resolve_unknown.
	Outcome string
	// OfferID is the offer being paid.
	OfferID string
	// AmountMicroUSD is the amount settled (settled and resolved_settled).
	AmountMicroUSD int64
}

func (c *Cashier) report(e PaymentEvent) {
	if c.onEvent != nil {
		c.onEvent(e)
	}
}

// NewCashier returns a Cashier that charges through p and records in l.
func NewCashier(p Processor, l Ledger, o *CashierOptions) (*Cashier, error) {
	if p == nil || l == nil {
		return nil, errors.New("payment: NewCashier needs a Processor and a Ledger")
	}
	if o == nil || o.Keys == nil {
		return nil, errors.New("payment: NewCashier needs receipt keys (CashierOptions.Keys)")
	}
	c := &Cashier{p: p, l: l, keys: o.Keys, log: o.Logger, now: o.Now, costs: o.Costs,
		settleTO: o.SettleTimeout, commitTO: o.CommitTimeout, staleAfter: o.StaleAfter, reserveFor: o.ReserveFor, quoteTTL: o.QuoteTTL, onEvent: o.OnEvent,
		onTransition: o.OnTransition, every: o.ResolveEvery}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.settleTO <= 0 {
		c.settleTO = 90 * time.Second
	}
	if c.commitTO <= 0 {
		c.commitTO = 30 * time.Second
	}
	if c.staleAfter <= 0 {
		c.staleAfter = 10 * time.Minute
	}
	if c.reserveFor <= 0 {
		c.reserveFor = 7 * 24 * time.Hour
	}
	if c.quoteTTL <= 0 {
		c.quoteTTL = 15 * time.Minute
	}
	if c.every <= 0 {
		c.every = 10 * time.Second
	}
	return c, nil
}

// Processor returns the processor the cashier charges through.
func (c *Cashier) Processor() Processor { return c.p }

// Ledger returns the ledger the cashier records in.
func (c *Cashier) Ledger() Ledger { return c.l }

// Keys returns the receipt keyring.
func (c *Cashier) Keys() *Keyring { return c.keys }

// Costs returns the configured cost prices.
func (c *Cashier) Costs() CostPrices { return c.costs }

// Logger returns the logger of payment events (a discarding one when none
// was configured).
func (c *Cashier) Logger() *slog.Logger { return c.log }

// ErrProcessorUnavailable reports a verification that failed for a reason
// other than the payment itself (the processor or its facilitator could
// not answer): the payment was not used and may be presented again.
var ErrProcessorUnavailable = errors.New("payment: processor unavailable")

// ErrNetworkUnsupported reports a processor that cannot take payments on
// its configured network now (the facilitator's /supported does not list
// it): paid calls answer 503. Processors report it matching
// ErrProcessorUnavailable too.
var ErrNetworkUnsupported = errors.New("payment: the facilitator does not support the configured network")

// ErrSettlementFailed reports a settlement the processor refused: nothing
// is delivered, the order is failed, and errors.As finds the processor's
// *Problem when it gave one.
var ErrSettlementFailed = errors.New("payment: settlement failed")

type settlementFailed struct{ err error }

func (e *settlementFailed) Error() string   { return "payment: settlement failed: " + e.err.Error() }
func (e *settlementFailed) Unwrap() []error { return []error{ErrSettlementFailed, e.err} }
func settlementFailure(err error) error     { return &settlementFailed{err: err} }

// Payment problems the cashier reports itself (the processor reports the
// others).
const (
	ReasonPaymentUsed   = "payment_already_used"
	ReasonQuoteUnknown  = "quote_unknown"
	ReasonQuoteExpired  = "quote_expired"
	ReasonQuoteUsed     = "quote_already_used"
	ReasonQuoteMismatch = "quote_mismatch"
	ReasonAmount        = "amount_mismatch"
)

// PriceOffer applies a quote to offer: the quote's amounts replace the
// offer's. An unknown, expired, used or other-tier quote is a 402 *Problem
// whose detail says why.
func (c *Cashier) PriceOffer(ctx context.Context, offer Offer, quoteID string) (Offer, error) {
	if quoteID == "" {
		return offer, nil
	}
	q, err := c.l.Quote(ctx, quoteID)
	switch {
	case errors.Is(err, ErrQuoteNotFound):
		return offer, NewProblem(402, "invalid-challenge", ReasonQuoteUnknown, "Unknown quote "+quoteID)
	case err != nil:
		return offer, err
	case !c.now().Before(q.ExpiresAt):
		return offer, NewProblem(402, "payment-expired", ReasonQuoteExpired, "Quote "+quoteID+" expired at "+q.ExpiresAt.UTC().Format(time.RFC3339))
	case q.OrderID != "":
		return offer, NewProblem(402, "invalid-challenge", ReasonQuoteUsed, "Quote "+quoteID+" was already used")
	case offer.Product == "" || q.Tier != offer.Product:
		return offer, NewProblem(402, "invalid-challenge", ReasonQuoteMismatch, fmt.Sprintf("Quote %s is for the %s tier, not for this operation", quoteID, q.Tier))
	}
	offer.AmountMicroUSD = q.AmountMicroUSD
	if offer.CardMicroUSD > 0 {
		offer.CardMicroUSD = q.CardMicroUSD
	}
	return offer, nil
}

// CreateQuote stores a quote that locks offer's current price for the
// quote validity. offer.Product must be set.
func (c *Cashier) CreateQuote(ctx context.Context, offer Offer) (*Quote, error) {
	if offer.Product == "" {
		return nil, ErrUnknownTier
	}
	now := c.now().UTC().Truncate(time.Microsecond) // the stored precision
	q := &Quote{ID: ids.New(ids.Quote), Tier: offer.Product, AmountMicroUSD: offer.AmountMicroUSD, CardMicroUSD: offer.CardMicroUSD,
		Currency: Currency, CreatedAt: now, ExpiresAt: now.Add(c.quoteTTL)}
	if err := c.l.CreateQuote(ctx, q); err != nil {
		return nil, err
	}
	return q, nil
}

// CreateCustomer registers a customer and returns it with its key
// (ask_…), which is shown this once: only its hash is stored.
func (c *Cashier) CreateCustomer(ctx context.Context, name, email string) (*Customer, string, error) {
	cu := &Customer{ID: ids.New(ids.Customer), Name: name, Email: email, Status: CustomerActive, CreatedAt: c.now().UTC().Truncate(time.Microsecond)}
	key := ids.Token(ids.CustomerKey)
	if err := c.l.CreateCustomer(ctx, cu, ids.Hash(key)); err != nil {
		return nil, "", err
	}
	return cu, key, nil
}

// Customer returns the active customer whose key is key, or
// ErrInvalidCustomerKey.
func (c *Cashier) Customer(ctx context.Context, key string) (*Customer, error) {
	cu, err := c.l.CustomerByKeyHash(ctx, ids.Hash(key))
	if errors.Is(err, ErrCustomerNotFound) || (err == nil && cu.Status != CustomerActive) {
		return nil, ErrInvalidCustomerKey
	}
	return cu, err
}

// BeginOptions are the optional inputs of Begin.
type BeginOptions struct {
	// CustomerKey attaches the order to a registered customer; an invalid
	// key fails Begin with ErrInvalidCustomerKey before any payment check.
	CustomerKey string
	// IdempotencyKey makes retries of the same request by the same payer
	// return the first order's stored response instead of charging again.
	IdempotencyKey string
	// RequestHash identifies the request (idempotency conflicts are
	// detected with it).
	RequestHash string
}

// Charge is one paid call in progress: verified, reserved, order open.
// Exactly one of Complete or Fail must be called, unless Replay or Pending
// reports an order answered again.
type Charge struct {
	c     *Cashier
	auth  *Authorization
	order Order
	token string
	call  *Call
	res   Resource
	// replay is the stored response of an order answered again; pending
	// is true for an order answered again while it is settling.
	replay  *StoredResponse
	pending bool

	mu   sync.Mutex
	done bool
}

// Begin verifies cred for offer at res and opens an order. res.QuoteID
// names a quote that prices the offer. Errors: a *Problem (malformed,
// invalid or already used payment, quote problems; the caller answers
// with a fresh challenge), ErrInvalidCustomerKey, ErrIdempotencyConflict,
// ErrIdempotencyInFlight, ErrPaymentInFlight, or a storage error.
//
// The credential is the purchase. A credential the processor identifies
// offline (Processor.IdentifyPayment: the payer proved by its signature)
// that already opened an order is answered from that order whatever
// pricing and verification say, so also after it expired (it is looked
// up once one of them, or the reservation, refuses it):
// for the same request (same offer and opts.RequestHash, which the
// transports compute from the method, resource and body; recovery needs
// it) a completed order's stored response (Replay) or a settling order
// (Pending), each with a fresh order token; while the order is still
// processing, ErrPaymentInFlight; for another request, 402
// payment_already_used. An order that failed released the payment, which
// is then charged again normally.
//
// When opts.IdempotencyKey names a completed order of the same payer and
// offer for the same request, Begin returns a replay Charge with a fresh
// order token: Replay returns the stored response, nothing is reserved or
// settled, and the new credential (a different payment) is voided and
// stays unused. A credential that names a quote prices the call with it
// when res names none. The processor's hold (Processor.Hold) is placed
// after the payment is reserved.
func (c *Cashier) Begin(ctx context.Context, offer Offer, res Resource, cred *Credential, opts *BeginOptions) (*Charge, error) {
	ch, err := c.begin(ctx, offer, res, cred, opts)
	if c.onEvent != nil {
		ev := PaymentEvent{OfferID: offer.ID}
		if cred != nil {
			ev.Protocol = cred.Protocol
		}
		var p *Problem
		switch {
		case err == nil && (ch.replay != nil || ch.pending):
			ev.Outcome = "idempotent"
		case err == nil:
			return ch, nil // reported when the charge completes or fails
		case errors.As(err, &p) && p.Type == "payment-required":
			ev.Outcome = "challenged"
		case errors.As(err, &p) && p.Reason == ReasonPaymentUsed:
			ev.Outcome = "replayed"
		case errors.As(err, &p):
			ev.Outcome = "rejected"
		default:
			ev.Outcome = "error"
		}
		c.report(ev)
	}
	return ch, err
}

func (c *Cashier) begin(ctx context.Context, offer Offer, res Resource, cred *Credential, opts *BeginOptions) (*Charge, error) {
	var o BeginOptions
	if opts != nil {
		o = *opts
	}
	var customer *Customer
	if o.CustomerKey != "" {
		cu, err := c.Customer(ctx, o.CustomerKey)
		if err != nil {
			return nil, err
		}
		customer = cu
	}
	var ident *PaymentIdentity
	if cred != nil {
		res, ident = c.identify(res, cred)
	}
	if ident != nil && o.IdempotencyKey != "" {
		// The Idempotency-Key may name this very payment's order: the
		// payment answers first (recoverPurchase), as it would without
		// the key, before the key's own lookup.
		if ch, err := c.recoverPurchase(ctx, offer, ident, o); ch != nil || err != nil {
			return ch, err
		}
	}
	ch, err := c.charge(ctx, offer, res, cred, customer, o)
	var p *Problem
	if err != nil && ident != nil && (o.IdempotencyKey == "" || errors.As(err, &p) && p.Reason == ReasonPaymentUsed) {
		// The credential is the purchase. A payment that opened an order
		// already is answered from that order (recoverPurchase), whatever
		// refused it on the way: its own reservation, its expiry, its
		// used quote, an unavailable processor. Looked up only now: a
		// first payment, the common case, is not read before it is
		// reserved (OpenOrder's ErrReservationUsed is the lookup's
		// trigger, and every check before it is offline for an
		// identified payment). With an Idempotency-Key the payment was
		// looked up above; a reservation taken since is a concurrent
		// request with this very payment.
		if rch, rerr := c.recoverPurchase(ctx, offer, ident, o); rch != nil || rerr != nil {
			return rch, rerr
		}
	}
	return ch, err
}

// charge prices the offer, verifies cred, answers an Idempotency-Key
// retry, opens the order and places the processor's hold: the steps of a
// payment that no order holds yet.
func (c *Cashier) charge(ctx context.Context, offer Offer, res Resource, cred *Credential, customer *Customer, o BeginOptions) (*Charge, error) {
	priced, err := c.PriceOffer(ctx, offer, res.QuoteID)
	if err != nil {
		return nil, err
	}
	if cred == nil {
		return nil, NewProblem(402, "payment-required", "", "Payment required")
	}
	auth, err := c.verify(ctx, priced, res, cred)
	if err != nil {
		return nil, err
	}
	if o.IdempotencyKey != "" {
		prev, err := c.l.OrderByIdempotencyKey(ctx, auth.Payer, priced.ID, o.IdempotencyKey)
		switch {
		case errors.Is(err, ErrOrderNotFound):
		case err != nil:
			return nil, err
		default:
			if ch, err := c.replay(ctx, prev, auth, o.RequestHash); ch != nil || err != nil {
				return ch, err
			}
		}
	}
	ord, token, err := c.openOrder(ctx, priced, res, auth, customer, o)
	if err != nil {
		return nil, err
	}
	if err := c.hold(ctx, auth, ord.ID); err != nil {
		return nil, err
	}
	call := &Call{Payer: auth.Payer, Protocol: auth.Protocol, OrderID: ord.ID, OrderTokenHash: ord.TokenHash, Offer: priced}
	if customer != nil {
		call.CustomerID = customer.ID
	}
	return &Charge{c: c, auth: auth, order: *ord, token: token, call: call, res: res}, nil
}

// identify runs the offline steps of a credential: it names the quote the
// payment names (when res names none) and has the processor identify the
// payment. It returns res, possibly with its quote set, and the
// credential's identity (nil when the processor cannot identify it
// offline).
func (c *Cashier) identify(res Resource, cred *Credential) (Resource, *PaymentIdentity) {
	if res.QuoteID == "" {
		// A payment that names its quote (x402 payment-identifier
		// "quo_…", MPP opaque) is priced with it even without
		// X-Agentic-Quote-Id.
		res.QuoteID = c.p.NamedQuote(cred)
	}
	// The payer is proved offline by the credential's signature, so that
	// a retry of a payment that already opened an order can be answered
	// from that order whatever time (validBefore, challenge expiry), a
	// used quote or a facilitator says (begin).
	// Verify may rely on what is proved here (one signature recovery
	// per sale, not two), and on nothing else: an Identity the caller
	// set is dropped.
	cred.Identity = nil
	id, err := c.p.IdentifyPayment(cred)
	if err != nil {
		return res, nil
	}
	cred.Identity = id
	return res, id
}

// verify has the processor verify cred for the priced offer and checks
// what it returns against the request: the quote it names and the amount.
func (c *Cashier) verify(ctx context.Context, priced Offer, res Resource, cred *Credential) (*Authorization, error) {
	auth, err := c.p.Verify(ctx, priced, res, cred)
	if err != nil {
		var p *Problem
		if !errors.As(err, &p) {
			return nil, fmt.Errorf("%w: %v", ErrProcessorUnavailable, err)
		}
		return nil, err
	}
	if auth == nil || auth.Payer == "" || auth.ReservationKey == "" {
		return nil, errors.New("payment: processor verified a payment without payer or reservation key")
	}
	if auth.QuoteID != "" && auth.QuoteID != res.QuoteID {
		return nil, NewProblem(402, "invalid-challenge", ReasonQuoteMismatch,
			fmt.Sprintf("The payment names quote %q but the request names quote %q (send it in X-Agentic-Quote-Id)", auth.QuoteID, res.QuoteID))
	}
	if auth.AmountMicroUSD != priced.AmountMicroUSD && (priced.CardMicroUSD == 0 || auth.AmountMicroUSD != priced.CardMicroUSD) {
		return nil, NewProblem(402, "payment-insufficient", ReasonAmount,
			fmt.Sprintf("The payment is for %d micro-USD; this operation costs %d", auth.AmountMicroUSD, priced.AmountMicroUSD))
	}
	return auth, nil
}

// openOrder reserves auth's payment by opening the order of the priced
// offer, and returns it with its token. A payment another order holds is
// refused as used (begin answers it from that order when the credential
// was identified offline).
func (c *Cashier) openOrder(ctx context.Context, priced Offer, res Resource, auth *Authorization, customer *Customer, o BeginOptions) (*Order, string, error) {
	until := auth.ValidUntil
	if until.IsZero() {
		until = c.now().Add(c.reserveFor)
	}
	token := ids.Token(ids.OrderToken)
	ord := &Order{
		ID: ids.New(ids.Order), TokenHash: ids.Hash(token), OfferID: priced.ID, Tier: priced.Product,
		Protocol: auth.Protocol, Method: auth.Method, Network: auth.Network, Payer: auth.Payer,
		AmountMicroUSD: auth.AmountMicroUSD, Currency: Currency, ReservationKey: auth.ReservationKey,
		ExtraReservationKeys: auth.ExtraReservationKeys, ReservedUntil: until, QuoteID: res.QuoteID, IdempotencyKey: o.IdempotencyKey, RequestHash: o.RequestHash, Dev: auth.Dev,
	}
	if customer != nil {
		ord.CustomerID = customer.ID
	}
	switch err := c.l.OpenOrder(ctx, ord); {
	case errors.Is(err, ErrReservationUsed):
		// Never void here: the payment belongs to the order that holds it.
		// A concurrent request with this very payment (a client that
		// retried at once) may have opened it since.
		return nil, "", paymentUsed("")
	case errors.Is(err, ErrQuoteUnavailable):
		return nil, "", NewProblem(402, "invalid-challenge", ReasonQuoteUsed, "Quote "+res.QuoteID+" expired or was already used")
	case errors.Is(err, ErrIdempotencyInFlight):
		c.void(ctx, auth)
		return nil, "", err
	case err != nil:
		return nil, "", err
	}
	c.moved(ctx, nil, ord.ID, "", OrderProcessing, "")
	return ord, token, nil
}

// hold places the processor's hold on a reserved payment. Reserved first,
// held second: a credential refused earlier never placed a hold, and a
// failed hold gives the reservation back (the order fails).
func (c *Cashier) hold(ctx context.Context, auth *Authorization, orderID string) error {
	err := c.p.Hold(ctx, auth)
	if err == nil {
		return nil
	}
	if ferr := c.fail(context.WithoutCancel(ctx), auth, orderID, OrderProcessing, "payment not authorised: "+problemDetail(err)); ferr != nil {
		c.log.ErrorContext(ctx, "payment: releasing a payment whose hold failed", "order", orderID, "err", ferr)
	}
	var p *Problem
	if !errors.As(err, &p) {
		return fmt.Errorf("%w: %v", ErrProcessorUnavailable, err)
	}
	return err
}

// paymentUsed is the refusal of a payment that opened an order for
// another request (or whose order cannot answer again).
func paymentUsed(why string) *Problem {
	detail := "Payment already used"
	if why != "" {
		detail += ": " + why
	}
	return NewProblem(402, "invalid-challenge", ReasonPaymentUsed, detail)
}

// recoverPurchase answers a payment that already opened an order (id is
// the credential's identity, proved offline). For the same request (same
// offer and request hash: method, resource, body) it returns the
// purchase: a completed order's stored response with a fresh order token
// (Charge.Replay), or a settling order with a fresh token
// (Charge.Pending); a processing order is ErrPaymentInFlight. For another
// request the payment is used (402 payment_already_used; the same
// Idempotency-Key for another request is ErrIdempotencyConflict). It
// returns (nil, nil) when no order holds the payment (never used, or
// released by a failure): the caller then charges it normally.
func (c *Cashier) recoverPurchase(ctx context.Context, offer Offer, id *PaymentIdentity, o BeginOptions) (*Charge, error) {
	prev, err := c.l.OrderByReservation(ctx, id.ReservationKey)
	switch {
	case errors.Is(err, ErrOrderNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case prev.Status == OrderFailed:
		return nil, nil
	case !strings.EqualFold(prev.Payer, id.Payer):
		// A key shared by two payers (an MPP challenge id paid by
		// another signer): never answer one with the other's purchase.
		return nil, paymentUsed("")
	case prev.OfferID != offer.ID || o.RequestHash == "" || prev.RequestHash != o.RequestHash:
		if o.IdempotencyKey != "" && prev.IdempotencyKey == o.IdempotencyKey && prev.OfferID == offer.ID {
			return nil, ErrIdempotencyConflict
		}
		return nil, paymentUsed("")
	case prev.Status == OrderProcessing:
		return nil, ErrPaymentInFlight
	case prev.Status == OrderSettling:
		// The payer is back: when the order is due, try to learn its
		// outcome now rather than at the resolver's next pass.
		if prev = c.tryResolve(ctx, prev); prev.Status == OrderFailed {
			return nil, nil // never settled, released: charged anew
		}
	}
	var stored *StoredResponse
	if prev.Status.Delivered() {
		stored, err = c.l.Response(ctx, prev.ID)
		if errors.Is(err, ErrOrderNotFound) {
			return nil, paymentUsed("its response was streamed and not kept; read the order with its token")
		}
		if err != nil {
			return nil, err
		}
	}
	return c.answerAgain(ctx, prev, stored)
}

// answerAgain returns the charge that answers prev again (stored is its
// response, nil while it is settling) with a fresh order token: the
// previous token stops working, so that a payer whose answer was lost gets
// a token nobody else holds.
func (c *Cashier) answerAgain(ctx context.Context, prev *Order, stored *StoredResponse) (*Charge, error) {
	token := ids.Token(ids.OrderToken)
	if err := c.l.RotateOrderToken(ctx, prev.ID, ids.Hash(token)); err != nil {
		return nil, err
	}
	ord := *prev
	ord.TokenHash = ids.Hash(token)
	call := &Call{Payer: ord.Payer, Protocol: ord.Protocol, OrderID: ord.ID, OrderTokenHash: ord.TokenHash, CustomerID: ord.CustomerID}
	return &Charge{c: c, order: ord, token: token, call: call, replay: stored, pending: stored == nil, done: true}, nil
}

// replay answers a retry whose Idempotency-Key is held by prev; auth is
// the retry's verified payment, nil when it is prev's own payment
// (identified offline). It returns (nil, nil) when prev does not decide
// the outcome.
func (c *Cashier) replay(ctx context.Context, prev *Order, auth *Authorization, requestHash string) (*Charge, error) {
	samePayment := auth == nil || prev.ReservationKey == auth.ReservationKey
	voidNew := func() {
		if !samePayment {
			c.void(ctx, auth)
		}
	}
	if prev.RequestHash != requestHash {
		voidNew()
		return nil, ErrIdempotencyConflict
	}
	switch prev.Status {
	case OrderCompleted, OrderVoided:
		resp, err := c.l.Response(ctx, prev.ID)
		if errors.Is(err, ErrOrderNotFound) {
			// A streamed response that was not kept cannot be replayed.
			voidNew()
			return nil, ErrIdempotencyConflict
		}
		if err != nil {
			return nil, err
		}
		voidNew()
		return c.answerAgain(ctx, prev, resp)
	case OrderProcessing, OrderSettling:
		voidNew()
		return nil, ErrIdempotencyInFlight
	}
	return nil, nil
}

func (c *Cashier) void(ctx context.Context, a *Authorization) {
	if err := c.p.Void(context.WithoutCancel(ctx), a); err != nil {
		c.log.WarnContext(ctx, "payment: void failed", "payer", a.Payer, "err", err)
	}
}

// Call returns the payment description to hand to the paid handler.
func (ch *Charge) Call() *Call { return ch.call }

// Order returns the order as opened (or, for a replay, as stored).
func (ch *Charge) Order() Order { return ch.order }

// OrderToken returns the order token (ort_…) to hand to the payer; it is
// not stored and cannot be shown again. An order answered again (Replay,
// Pending) has a fresh token: the previous one no longer works.
func (ch *Charge) OrderToken() string { return ch.token }

// Resource returns the resource the charge pays for, with the quote the
// payment was priced with (a fresh challenge for the same request, e.g.
// after a failed settlement, is built from it).
func (ch *Charge) Resource() Resource { return ch.res }

// Authorization returns the verified payment (nil for a replay).
func (ch *Charge) Authorization() *Authorization { return ch.auth }

// Replay returns the stored response when Begin answered a retry from a
// completed order: a retry with the payment that opened it (for the same
// request), or an Idempotency-Key retry. Nothing is charged; Order has
// the order as stored and OrderToken a fresh token.
func (ch *Charge) Replay() (*StoredResponse, bool) { return ch.replay, ch.replay != nil }

// Pending reports that Begin answered a retry with the payment of an order
// that is settling (its outcome not known yet, for example after a
// crash): answer as for ErrSettlementPending, with the order id and the
// fresh OrderToken, so that the payer can poll the order and must not pay
// again. Nothing is charged.
func (ch *Charge) Pending() bool { return ch.pending }

func (ch *Charge) finish() error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.done {
		return errors.New("payment: charge already completed or failed")
	}
	ch.done = true
	return nil
}

// Response is what a paid call delivers.
type Response struct {
	// Status is the HTTP status (0 means 200).
	Status int
	// ContentType of Body ("" means application/json).
	ContentType string
	// Body is the exact bytes delivered; the receipt's resultSha256 is
	// their SHA-256. It is also stored for idempotent replays and for
	// the payer's later retrieval.
	Body []byte
	// SHA256, when set (lowercase hex), is the digest of the delivered
	// bytes and Body may be nil: streamed responses too large to keep
	// are hashed as they are written and not stored.
	SHA256 string
}

// Completion is the outcome of Complete.
type Completion struct {
	// Order is the order after completion (status completed, settling or
	// failed).
	Order Order
	// Receipt and ReceiptJSON are set when the order completed.
	Receipt     *Receipt
	ReceiptJSON []byte
	// Settlement is the processor's settlement (its Header carries the
	// protocol's success header).
	Settlement *Settlement
	// Pending is true when the settlement outcome is not known yet.
	Pending bool
	// Response is what the call delivered (Status and ContentType
	// defaulted).
	Response Response
	// Voided is true when the answer was delivered without charge (a
	// waiver): the order is voided, Settlement is nil and the receipt is
	// a voided one.
	Voided bool
}

// Complete records what the call delivered, settles the payment and, when
// the settlement succeeds, completes the order and signs its receipt.
// Only call it when the work succeeded; otherwise call Fail.
//
// Errors: ErrSettlementPending (wrapped) when the outcome is unknown — the
// order stays settling, the reservation is kept, the response must not be
// delivered yet and the payer must not pay again (Reconcile or a later
// check finishes the order); ErrSettlementFailed (with the processor's
// *Problem) when the processor refused — the order is failed, its
// reservation released, nothing may be delivered. The Completion is
// returned in every case where the order was touched.
func (ch *Charge) Complete(ctx context.Context, resp Response) (*Completion, error) {
	comp, err := ch.complete(ctx, resp)
	if ch.c.onEvent != nil && ch.replay == nil && (comp == nil || !comp.Voided) {
		ev := PaymentEvent{Protocol: ch.order.Protocol, OfferID: ch.order.OfferID}
		switch {
		case err == nil:
			ev.Outcome, ev.AmountMicroUSD = "settled", ch.order.AmountMicroUSD
		case errors.Is(err, ErrSettlementDeferred):
			ev.Outcome = "deferred"
		case errors.Is(err, ErrSettlementPending):
			ev.Outcome = "pending"
		case errors.Is(err, ErrSettlementFailed):
			ev.Outcome = "settlement_failed"
		default:
			ev.Outcome = "error"
		}
		ch.c.report(ev)
	}
	return comp, err
}

func (ch *Charge) complete(ctx context.Context, resp Response) (*Completion, error) {
	if err := ch.finish(); err != nil {
		return nil, err
	}
	c := ch.c
	wctx := context.WithoutCancel(ctx)
	if resp.Status == 0 {
		resp.Status = 200
	}
	if resp.ContentType == "" {
		resp.ContentType = "application/json"
	}
	digest := resp.SHA256
	if digest == "" {
		sum := sha256.Sum256(resp.Body)
		digest = hex.EncodeToString(sum[:])
	}
	kind, id := ch.call.Result()
	usage := ch.call.Usage()
	d := Delivered{ResultKind: kind, ResultID: id, ResultSHA256: digest, Usage: usage,
		CostMicroUSD: c.costs.Cost(usage), Response: StoredResponse{Status: resp.Status, ContentType: resp.ContentType, Body: resp.Body},
		// If this call cannot finish the settlement, the resolver may
		// take it over once the call's own bound has passed.
		ResolveAfter: c.now().Add(c.settleTO + c.commitTO)}
	rec, err := c.p.Record(ch.auth)
	if err != nil {
		c.log.WarnContext(ctx, "payment: no record of the payment to settle it again", "order", ch.order.ID, "err", err)
	}
	d.PaymentRecord = rec
	if comp, ok := ch.waive(ctx, d, resp); ok {
		return comp, nil
	}
	if err := c.markSettling(ctx, ch.order.ID, d); err != nil {
		c.fail(wctx, ch.auth, ch.order.ID, OrderProcessing, "ledger error before settlement")
		return nil, err
	}
	ord := ch.order
	ord.Status, ord.ResultKind, ord.ResultID, ord.ResultSHA256, ord.Usage, ord.CostMicroUSD, ord.PaymentRecord =
		OrderSettling, d.ResultKind, d.ResultID, d.ResultSHA256, d.Usage, d.CostMicroUSD, rec
	sctx, cancel := context.WithTimeout(wctx, c.settleTO)
	defer cancel()
	s, err := c.p.Settle(sctx, ch.auth)
	var p *Problem
	switch {
	case err == nil && s == nil:
		err = errors.New("processor returned no settlement")
	case err == nil:
		comp, err := c.completeSettled(ctx, ord, s)
		if comp != nil {
			comp.Response = resp
		}
		return comp, err
	case errors.As(err, &p):
		// A refusal: nothing moved and nothing will.
		reason := "settlement failed: " + problemDetail(err)
		c.void(wctx, ch.auth)
		if ferr := c.failOrder(ctx, ord.ID, OrderSettling, reason); ferr != nil {
			c.log.ErrorContext(ctx, "payment: recording a failed settlement", "order", ord.ID, "err", ferr)
		}
		ord.Status, ord.FailureReason = OrderFailed, reason
		return &Completion{Order: ord}, settlementFailure(err)
	}
	// The outcome is unknown (pending, timeout), or the processor could
	// not be asked (unreachable, not answering in kind): the order stays
	// settling, its answer kept, and the resolver finishes it.
	c.noteUnknown(wctx, &ord, err)
	if errors.Is(err, ErrSettlementPending) || errors.Is(err, context.DeadlineExceeded) {
		c.log.WarnContext(ctx, "payment: settlement pending", "order", ord.ID, "err", err)
		return &Completion{Order: ord, Pending: true}, fmt.Errorf("%w: %v", ErrSettlementPending, err)
	}
	c.log.WarnContext(ctx, "payment: settlement deferred, the processor is unavailable", "order", ord.ID, "err", err)
	return &Completion{Order: ord, Pending: true}, &deferred{err: err}
}

// waive delivers the answer without charge when the work asked for it
// (Call.Waive) under the offer's Waiver and the payer has waived answers
// left today: the order is voided with its answer and a voided receipt,
// and the payment voided, never settled. ok is false when the answer is
// to be charged as usual (no waiver, another reason, the day's waivers
// used up, or the ledger could not record the void: charging is then the
// safe way, and is logged).
func (ch *Charge) waive(ctx context.Context, d Delivered, resp Response) (*Completion, bool) {
	c, w := ch.c, ch.call.Offer.Waiver
	reason := ch.call.Waived()
	if w == nil || reason == "" || reason != w.Reason || w.PerPayerPerDay < 1 {
		return nil, false
	}
	now := c.now().UTC()
	ord := ch.order
	ord.ReceiptID = ids.New(ids.Receipt)
	ord.Status, ord.ResultKind, ord.ResultID, ord.ResultSHA256, ord.Usage, ord.CostMicroUSD, ord.PaymentRecord =
		OrderVoided, d.ResultKind, d.ResultID, d.ResultSHA256, d.Usage, d.CostMicroUSD, d.PaymentRecord
	ord.FailureReason, ord.CompletedAt = "not charged: "+reason, now
	r := receiptFor(&ord, now)
	r.AmountMicroUSD, r.Voided = 0, true
	data, err := SignReceipt(c.keys, r)
	if err != nil {
		c.log.ErrorContext(ctx, "payment: signing a voided receipt", "order", ord.ID, "err", err)
		return nil, false
	}
	v := Voided{Delivered: d, Reason: ord.FailureReason, ReceiptID: ord.ReceiptID, Receipt: data, CompletedAt: now,
		Day: now.Format(time.DateOnly), Limit: w.PerPayerPerDay}
	err = c.recorded(ctx, ord.ID, func(ctx context.Context) error { return c.l.VoidOrder(ctx, ord.ID, v) },
		func(o *Order) bool { return o.Status == OrderVoided && o.ReceiptID == v.ReceiptID })
	if errors.Is(err, ErrWaiverExhausted) {
		c.report(PaymentEvent{Protocol: ord.Protocol, OfferID: ord.OfferID, Outcome: "waiver_exhausted"})
		return nil, false
	}
	if err != nil {
		c.log.ErrorContext(ctx, "payment: recording a waived answer; charging it instead", "order", ord.ID, "err", err)
		return nil, false
	}
	c.moved(ctx, nil, ord.ID, OrderProcessing, OrderVoided, reason)
	c.void(context.WithoutCancel(ctx), ch.auth)
	c.report(PaymentEvent{Protocol: ord.Protocol, OfferID: ord.OfferID, Outcome: "waived"})
	return &Completion{Order: ord, Receipt: r, ReceiptJSON: data, Response: resp, Voided: true}, true
}

// ErrSettlementDeferred reports a settlement the processor could not be
// asked for (unreachable, or not answering in kind). The order stays
// settling with its answer kept, as for ErrSettlementPending (which it
// also matches), and is settled in the background once the processor is
// back: the payer is told to retry later with the same credential (HTTP
// 503 with Retry-After), never to pay again.
var ErrSettlementDeferred = errors.New("payment: settlement deferred: the payment processor is unavailable")

type deferred struct{ err error }

func (e *deferred) Error() string { return ErrSettlementDeferred.Error() + ": " + e.err.Error() }
func (e *deferred) Unwrap() []error {
	return []error{ErrSettlementDeferred, ErrSettlementPending, e.err}
}

// completeSettled signs the receipt of a settled order and records it. A
// ledger failure here is logged, not returned: the money moved, so the
// response is delivered (Reconcile can finish the record).
func (c *Cashier) completeSettled(ctx context.Context, ord Order, s *Settlement) (*Completion, error) {
	now := c.now().UTC()
	ord.ReceiptID = ids.New(ids.Receipt)
	ord.SettlementRef, ord.Dev = s.Reference, ord.Dev || s.Dev
	if s.Network != "" {
		ord.Network = s.Network
	}
	r := receiptFor(&ord, now)
	data, err := SignReceipt(c.keys, r)
	if err != nil {
		return nil, err
	}
	st := Settled{SettlementRef: s.Reference, Network: s.Network, Dev: ord.Dev, ReceiptID: ord.ReceiptID, Receipt: data, CompletedAt: now}
	if err := c.completeOrder(ctx, ord.ID, st); err != nil {
		c.log.ErrorContext(ctx, "payment: recording a settled order", "order", ord.ID, "settlement", s.Reference, "err", err)
	} else {
		ord.Status, ord.CompletedAt = OrderCompleted, now
	}
	return &Completion{Order: ord, Receipt: r, ReceiptJSON: data, Settlement: s}, nil
}

// grace returns the context of a ledger write that records finished work:
// detached from ctx's deadline and cancellation, bounded by CommitTimeout.
func (c *Cashier) grace(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), c.commitTO)
}

// recorded runs a ledger write in its own grace period and, when it
// reports an error, reads the order back: a commit cut short may have
// succeeded (PostgreSQL answers a cancelled COMMIT with an error whatever
// it did). done tells from the order read back whether the write took
// effect; then the error is dropped.
func (c *Cashier) recorded(ctx context.Context, id string, write func(context.Context) error, done func(*Order) bool) error {
	gctx, cancel := c.grace(ctx)
	err := write(gctx)
	cancel()
	if err == nil || errors.Is(err, ErrOrderNotFound) {
		return err
	}
	rctx, cancel := c.grace(ctx)
	defer cancel()
	if o, rerr := c.l.Order(rctx, id); rerr == nil && done(o) {
		c.log.WarnContext(ctx, "payment: a ledger write reported an error but took effect", "order", id, "err", err)
		return nil
	}
	return err
}

// markSettling records what the work delivered (MarkSettling).
func (c *Cashier) markSettling(ctx context.Context, id string, d Delivered) error {
	err := c.recorded(ctx, id, func(ctx context.Context) error { return c.l.MarkSettling(ctx, id, d) },
		func(o *Order) bool { return o.Status == OrderSettling && o.ResultSHA256 == d.ResultSHA256 })
	c.moved(ctx, err, id, OrderProcessing, OrderSettling, "")
	return err
}

// completeOrder records a settled order (CompleteOrder).
func (c *Cashier) completeOrder(ctx context.Context, id string, st Settled) error {
	err := c.recorded(ctx, id, func(ctx context.Context) error { return c.l.CompleteOrder(ctx, id, st) },
		func(o *Order) bool { return o.Status == OrderCompleted && o.ReceiptID == st.ReceiptID })
	c.moved(ctx, err, id, OrderSettling, OrderCompleted, st.SettlementRef)
	return err
}

// failOrder records a failed order (FailOrder); from is the status it
// leaves.
func (c *Cashier) failOrder(ctx context.Context, id string, from OrderStatus, reason string) error {
	err := c.recorded(ctx, id, func(ctx context.Context) error { return c.l.FailOrder(ctx, id, reason) },
		func(o *Order) bool { return o.Status == OrderFailed })
	c.moved(ctx, err, id, from, OrderFailed, reason)
	return err
}

// OrderTransition is one change of an order's status
// (CashierOptions.OnTransition): From is "" for an order just opened.
type OrderTransition struct {
	OrderID  string
	From, To OrderStatus
	// Detail is the failure reason, or the settlement reference of a
	// completion.
	Detail string
}

// moved logs and reports a transition once its ledger write err
// succeeded. An order is opened processing (from ""); every other move
// must be one OrderStatus.Next allows, else it is logged as an error and
// not reported.
func (c *Cashier) moved(ctx context.Context, err error, id string, from, to OrderStatus, detail string) {
	if err != nil {
		return
	}
	if ok := from.CanMoveTo(to) || (from == "" && to == OrderProcessing); !ok {
		c.log.ErrorContext(ctx, "payment: an order made a move its life cycle does not allow", "order", id, "from", from, "to", to)
		return
	}
	level := slog.LevelDebug // the happy path of every paid call
	if to == OrderFailed {
		level = slog.LevelInfo
	}
	c.log.Log(ctx, level, "payment: order "+string(to), "order", id, "from", from, "detail", detail)
	if c.onTransition != nil {
		c.onTransition(OrderTransition{OrderID: id, From: from, To: to, Detail: detail})
	}
}

func receiptFor(o *Order, issued time.Time) *Receipt {
	return &Receipt{
		ReceiptID: o.ReceiptID, OrderID: o.ID, OfferID: o.OfferID, Tier: o.Tier, AmountMicroUSD: o.AmountMicroUSD,
		Currency: Currency, PaymentProtocol: o.Protocol, PaymentMethod: o.Method, Network: o.Network, Payer: o.Payer,
		SettlementReference: o.SettlementRef, Dev: o.Dev, ResultKind: o.ResultKind, ResultID: o.ResultID,
		ResultSHA256: o.ResultSHA256, IssuedAt: issued.UTC().Format(time.RFC3339),
	}
}

func problemDetail(err error) string {
	var p *Problem
	if errors.As(err, &p) {
		if p.Detail != "" {
			return p.Detail
		}
		return p.Reason
	}
	return err.Error()
}

// Fail abandons the charge: the payment is voided (never settled), the
// reservation and quote are released so the payer may retry with the same
// credential, and the order is failed with reason.
func (ch *Charge) Fail(ctx context.Context, reason string) error {
	if err := ch.finish(); err != nil {
		return err
	}
	if ch.replay == nil {
		ch.c.report(PaymentEvent{Protocol: ch.order.Protocol, OfferID: ch.order.OfferID, Outcome: "voided"})
	}
	return ch.c.fail(context.WithoutCancel(ctx), ch.auth, ch.order.ID, OrderProcessing, reason)
}

func (c *Cashier) fail(ctx context.Context, a *Authorization, orderID string, from OrderStatus, reason string) error {
	c.void(ctx, a)
	if err := c.failOrder(ctx, orderID, from, reason); err != nil {
		c.log.ErrorContext(ctx, "payment: failing order", "order", orderID, "err", err)
		return err
	}
	return nil
}
