package payment

import (
	"context"
	"errors"
	"time"
)

// Currency is the currency of every amount the ledger records: amounts are
// micro-USD (USDC atomic units; card payments are recorded in micro-USD
// too).
const Currency = "USD"

// Ledger errors. Stores return them (wrapped or not); callers test with
// errors.Is.
var (
	ErrOrderNotFound    = errors.New("payment: order not found")
	ErrReceiptNotFound  = errors.New("payment: receipt not found")
	ErrQuoteNotFound    = errors.New("payment: quote not found")
	ErrCustomerNotFound = errors.New("payment: customer not found")
	// ErrReservationUsed reports a reservation key that is already
	// reserved or consumed: the payment was used before.
	ErrReservationUsed = errors.New("payment: payment already used")
	// ErrQuoteUnavailable reports a quote that is expired or already used
	// when an order tries to claim it.
	ErrQuoteUnavailable = errors.New("payment: quote expired or already used")
	// ErrIdempotencyInFlight reports an Idempotency-Key whose order is
	// still processing or settling.
	ErrIdempotencyInFlight = errors.New("payment: a request with this Idempotency-Key is in progress")
	// ErrPaymentInFlight reports a retry of a payment whose order is still
	// processing (its first request has not finished): retry later with
	// the same credential.
	ErrPaymentInFlight = errors.New("payment: a request with this payment is still being processed")
	// ErrIdempotencyConflict reports an Idempotency-Key reused for a
	// different request.
	ErrIdempotencyConflict = errors.New("payment: Idempotency-Key was already used for a different request")
	// ErrConflict reports a state transition the order's current state
	// does not allow (for example completing a failed order).
	ErrConflict = errors.New("payment: order state does not allow this change")
	// ErrInvalidCustomerKey reports an X-Agentic-Customer-Key that is
	// unknown or whose customer is not active.
	ErrInvalidCustomerKey = errors.New("payment: invalid customer key")
	// ErrUnknownTier reports a quote request for a tier that does not
	// exist.
	ErrUnknownTier = errors.New("payment: unknown verification tier")
	// ErrBadCursor reports a pagination cursor the ledger did not issue.
	ErrBadCursor = errors.New("payment: invalid cursor")
	// ErrWaiverExhausted reports a payer who used up the waived answers
	// of a day (Ledger.VoidOrder): the answer is charged instead.
	ErrWaiverExhausted = errors.New("payment: no waived answers left for this payer today")
)

// Order is one paid call as the ledger records it.
type Order struct {
	ID string
	// TokenHash is the SHA-256 (hex) of the order token (ort_…) handed to
	// the payer once; the token itself is never stored.
	TokenHash string
	OfferID   string
	Tier      string
	Protocol  string // ProtocolX402, ProtocolMPP, ProtocolMPPStripe
	Method    string // "exact", "evm", "stripe"
	Network   string
	Payer     string
	// CustomerID is the registered customer whose key came with the
	// request, or "".
	CustomerID     string
	AmountMicroUSD int64
	Currency       string
	// ReservationKey is the payment's single-use key (Authorization.
	// ReservationKey).
	ReservationKey string
	// ExtraReservationKeys are further single-use keys of the same payment
	// (Authorization.ExtraReservationKeys), reserved, released and
	// consumed together with ReservationKey. They are not read back by
	// Order.
	ExtraReservationKeys []string
	// ReservedUntil is when the reservation may be forgotten (the
	// payment's ValidUntil).
	ReservedUntil time.Time
	QuoteID       string
	// IdempotencyKey is the request's Idempotency-Key, scoped by payer and
	// offer; cleared when the order fails so that the key may be retried.
	IdempotencyKey string
	// RequestHash identifies the request (method, path, query, body) for
	// idempotency conflicts.
	RequestHash   string
	Status        OrderStatus
	FailureReason string
	// SettlementRef is the transaction hash or PaymentIntent id.
	SettlementRef string
	Dev           bool
	ResultKind    string
	ResultID      string
	// ResultSHA256 is the SHA-256 (hex) of the exact response bytes
	// delivered.
	ResultSHA256 string
	Usage        Usage
	// CostMicroUSD is the provider cost of the call, from Usage and the
	// configured cost prices.
	CostMicroUSD int64
	ReceiptID    string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	CompletedAt  time.Time

	// PaymentRecord is the processor's durable record of the payment
	// (Processor.Record), stored when the order starts settling: what
	// CheckSettlement needs to settle or check it again, also after a
	// restart.
	PaymentRecord []byte
	// SettlementRefs are every transaction reference the processor gave
	// for the payment (a pending settlement's hash, a repeat's), oldest
	// first; SettlementRef is the latest.
	SettlementRefs []string
	// SettleAttempts counts the settlement attempts whose outcome was not
	// known; SettleNote says what the last one learnt.
	SettleAttempts int
	SettleNote     string
	// SettleNextAt is when a settling order is next due for resolution
	// (also the lease of the instance resolving it).
	SettleNextAt time.Time
}

// StoredResponse is the response delivered for an order, kept so that an
// idempotent retry (or the payer, with the order token) gets the same bytes.
type StoredResponse struct {
	Status      int
	ContentType string
	Body        []byte
}

// Settled is what the ledger records when an order completes.
type Settled struct {
	SettlementRef string
	Network       string
	Dev           bool
	ReceiptID     string
	// Receipt is the signed receipt JSON.
	Receipt     []byte
	CompletedAt time.Time
}

// Delivered is what the ledger records when an order moves to settling:
// what the call produced and delivered.
type Delivered struct {
	ResultKind   string
	ResultID     string
	ResultSHA256 string
	Usage        Usage
	CostMicroUSD int64
	Response     StoredResponse
	// PaymentRecord is Order.PaymentRecord.
	PaymentRecord []byte
	// ResolveAfter is when the order becomes due for resolution if the
	// live settlement does not finish it (the live call's own bound).
	ResolveAfter time.Time
}

// Voided is what the ledger records when an order is voided: what the
// call delivered (as MarkSettling records it), its receipt, and the
// waiver quota it used.
type Voided struct {
	Delivered
	// Reason is the waiver's reason (recorded as the order's
	// FailureReason, which says why nothing was charged).
	Reason    string
	ReceiptID string
	// Receipt is the signed receipt JSON (voided, amount 0).
	Receipt     []byte
	CompletedAt time.Time
	// Day is the payer's quota day ("2006-01-02", UTC) and Limit the
	// waived answers a payer may have that day.
	Day   string
	Limit int
}

// SettlementNote is what one settlement attempt whose outcome stayed
// unknown learnt (Ledger.NoteSettlement).
type SettlementNote struct {
	// Refs are transaction references the processor gave; new ones are
	// added to Order.SettlementRefs and the last becomes SettlementRef.
	Refs []string
	// Note says what happened ("facilitator timeout", …).
	Note string
	// NextAt is when the order is next due.
	NextAt time.Time
}

// Quote locks a price for a tier for a short time.
type Quote struct {
	ID             string
	Tier           string
	AmountMicroUSD int64
	CardMicroUSD   int64
	Currency       string
	// OrderID is the order that used the quote, "" while unused.
	OrderID   string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Customer is a registered buyer. Its key (ask_…) is shown once at
// creation; only its SHA-256 is stored.
type Customer struct {
	ID        string
	Name      string
	Email     string
	Status    string // "active"
	CreatedAt time.Time
}

// CustomerActive is the status of a usable customer.
const CustomerActive = "active"

// OrderPage selects a page of a customer's orders, newest first. Cursor
// (from a previous page) wins over Offset.
type OrderPage struct {
	Limit  int
	Offset int
	Cursor string
}

// OfferSummary totals the orders of one offer.
type OfferSummary struct {
	OfferID         string
	Orders          int64
	Completed       int64
	Failed          int64
	Pending         int64 // processing or settling
	Voided          int64 // delivered without charge
	RevenueMicroUSD int64 // completed orders only
	CostMicroUSD    int64 // completed orders only
}

// Ledger records reservations, orders, receipts, quotes and customers.
// store/paymentstore implements it on SQLite and PostgreSQL, paymentmem.Ledger in
// memory; paymenttest.TestLedger is its conformance suite. Every method is
// safe for concurrent use, also from several processes sharing one
// database.
type Ledger interface {
	// OpenOrder atomically reserves o.ReservationKey and every one of
	// o.ExtraReservationKeys (ErrReservationUsed when any is reserved or
	// consumed), claims o.QuoteID when set
	// (ErrQuoteUnavailable when expired, used or unknown), claims
	// (o.Payer, o.OfferID, o.IdempotencyKey) when the key is set
	// (ErrIdempotencyInFlight when another order holds it), and inserts o
	// with status processing. Nothing is written when any step fails.
	OpenOrder(ctx context.Context, o *Order) error
	// Order returns the order with id, or ErrOrderNotFound.
	Order(ctx context.Context, id string) (*Order, error)
	// OrderByIdempotencyKey returns the order holding the key for payer
	// and offer, or ErrOrderNotFound.
	OrderByIdempotencyKey(ctx context.Context, payer, offerID, key string) (*Order, error)
	// OrderByReservation returns the order that holds the reservation key
	// (reserved or consumed: an order that failed gave its keys back), or
	// ErrOrderNotFound. A consumed reservation is kept as long as its
	// order, past the payment's validity: the credential of a completed
	// order is answered from it at any later time.
	OrderByReservation(ctx context.Context, key string) (*Order, error)
	// RotateOrderToken replaces the order's token hash with tokenHash: the
	// previous token stops working, for the order and for the result it
	// delivered (read through OrderByToken). ErrOrderNotFound for an
	// unknown order.
	RotateOrderToken(ctx context.Context, id, tokenHash string) error
	// OrderByToken returns the order whose current token hashes to
	// tokenHash (SHA-256 hex), or ErrOrderNotFound.
	OrderByToken(ctx context.Context, tokenHash string) (*Order, error)
	// MarkSettling moves a processing order to settling and records what
	// was delivered. ErrConflict when the order is not processing (the
	// statuses OrderSettling.From() names; so for every transition).
	MarkSettling(ctx context.Context, id string, d Delivered) error
	// CompleteOrder moves a settling order to completed, stores its
	// receipt (and adds its reference to SettlementRefs) and marks its
	// reservation consumed. ErrConflict when the order is not settling.
	CompleteOrder(ctx context.Context, id string, s Settled) error
	// NoteSettlement records an attempt to settle a settling order whose
	// outcome stayed unknown: it adds n.Refs, sets the note and the next
	// due time and counts the attempt. ErrConflict when the order is not
	// settling.
	NoteSettlement(ctx context.Context, id string, n SettlementNote) error
	// ClaimSettlement leases a settling order for one resolution attempt:
	// when its SettleNextAt is at or before dueBy, it moves SettleNextAt to
	// until and returns the order; otherwise ErrConflict (not settling, or
	// not due: another instance holds it). Concurrent claims of one order
	// have one winner.
	ClaimSettlement(ctx context.Context, id string, dueBy, until time.Time) (*Order, error)
	// SettlementsDue returns up to limit settling orders whose
	// SettleNextAt is at or before t, the earliest due first.
	SettlementsDue(ctx context.Context, t time.Time, limit int) ([]Order, error)
	// OpenOrders returns up to limit orders that are processing or
	// settling, oldest first.
	OpenOrders(ctx context.Context, limit int) ([]Order, error)
	// VoidOrder moves a processing order to voided: it records what was
	// delivered and the receipt, marks the reservation consumed (the
	// payment bought this answer and cannot buy another) and counts one
	// waived answer of the order's payer on v.Day. When the payer already
	// has v.Limit that day it returns ErrWaiverExhausted and writes
	// nothing; concurrent calls never exceed the limit. ErrConflict when
	// the order is not processing.
	VoidOrder(ctx context.Context, id string, v Voided) error
	// FailOrder moves a processing or settling order to failed with
	// reason, releases its reservation and quote (the payer may use them
	// again) and its idempotency key. ErrConflict when the order is
	// completed or failed already.
	FailOrder(ctx context.Context, id, reason string) error
	// OrdersInState returns up to limit orders in status whose last update
	// is before before, oldest first.
	OrdersInState(ctx context.Context, status OrderStatus, before time.Time, limit int) ([]Order, error)
	// Response returns the response stored for an order, or
	// ErrOrderNotFound when there is none.
	Response(ctx context.Context, orderID string) (*StoredResponse, error)
	// Receipt returns the signed receipt JSON of an order, or
	// ErrReceiptNotFound.
	Receipt(ctx context.Context, orderID string) ([]byte, error)

	// CreateQuote stores q.
	CreateQuote(ctx context.Context, q *Quote) error
	// Quote returns the quote with id, or ErrQuoteNotFound.
	Quote(ctx context.Context, id string) (*Quote, error)

	// CreateCustomer stores c with the SHA-256 (hex) of its key.
	CreateCustomer(ctx context.Context, c *Customer, keyHash string) error
	// CustomerByKeyHash returns the customer whose key hashes to keyHash,
	// or ErrCustomerNotFound.
	CustomerByKeyHash(ctx context.Context, keyHash string) (*Customer, error)
	// CustomerOrders returns a page of the customer's orders, newest
	// first, and the cursor of the next page ("" on the last page).
	CustomerOrders(ctx context.Context, customerID string, page OrderPage) ([]Order, string, error)
	// OrderSummary totals orders created at or after since, per offer,
	// sorted by offer id.
	OrderSummary(ctx context.Context, since time.Time) ([]OfferSummary, error)
}
