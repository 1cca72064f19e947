package payment

import (
	"context"
	"sync"
	"time"
)

// Offer is what one paid route sells. Amounts are integer micro-USD, equal
// to USDC atomic units (6 decimals).
type Offer struct {
	// ID names the offer, e.g. "claims.verify.deep", "niche.evaluation".
	ID string
	// Description is shown to payers (x402 resource description).
	Description string
	// AmountMicroUSD is the USDC price (x402 and MPP evm).
	AmountMicroUSD int64
	// CardMicroUSD is the card price (MPP stripe); 0 means cards are not
	// offered for this route.
	CardMicroUSD int64
	// MimeType of the paid response, e.g. "application/json".
	MimeType string
	// WorkTimeout is the longest the paid work may take; challenges allow
	// this plus settlement time.
	WorkTimeout time.Duration
	// Product names what the offer sells within the offers that share
	// quotes (a quote made for one product prices only that product); the
	// host chooses it (server uses the claim tier's name). It is recorded
	// on orders, quotes and receipts, in their "tier" field. Empty means
	// the offer cannot be quoted.
	Product string
	// Waiver, when set, lets the paid work ask that an answer be delivered
	// without charge (Call.Waive): the payment is then voided instead of
	// settled, within the waiver's bound per payer. Nil: every delivered
	// answer is charged.
	Waiver *Waiver
}

// Waiver is an offer's policy of answers delivered without charge (such
// as "no verdict, no charge"): the work decides which answers qualify
// (Call.Waive), the Cashier voids their payment instead of settling it,
// and the order (OrderVoided) and its receipt (voided, amount 0) say so.
// So that a payer cannot farm free answers, each payer has at most
// PerPayerPerDay of them per UTC day; beyond that a qualifying answer is
// charged normally.
type Waiver struct {
	// Reason names what qualifies, e.g. "insufficient_evidence"; a Waive
	// call with another reason is not honoured.
	Reason string
	// PerPayerPerDay bounds the waived answers of one payer per UTC day
	// (at least 1).
	PerPayerPerDay int
}

// Call describes the payment behind the call being served. The Cashier
// creates it; the paid work reads it (CallFrom) and reports what it
// produced.
type Call struct {
	// Payer identifies who paid: a lowercase 0x address for USDC, or a
	// processor customer reference for cards. Idempotency keys and
	// customer views are scoped by it.
	Payer string
	// Protocol is one of the Protocol* constants ("free" under Free).
	Protocol string
	// OrderID is the order opened for this call ("" under Free).
	OrderID string
	// OrderTokenHash is the SHA-256 (hex) of the order token handed to the
	// payer; handlers store it to let the payer read the result later.
	OrderTokenHash string
	// CustomerID is the registered customer, when the payer presented a
	// customer key.
	CustomerID string
	// Offer is the offer being paid.
	Offer Offer

	mu         sync.Mutex
	resultKind string
	resultID   string
	usage      Usage
	waive      string
}

// Waive asks that the answer being delivered not be charged, for reason
// (e.g. "insufficient_evidence"). The Cashier honours it only when the
// offer's Waiver names that reason and the payer has waivers left today;
// otherwise the answer is charged as usual.
func (c *Call) Waive(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waive = reason
}

// Waived returns the reason Waive recorded ("" when none).
func (c *Call) Waived() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waive
}

// Usage is cost-relevant work a paid handler did, for the order's cost
// accounting.
type Usage struct {
	Provider          string
	Model             string
	InputTokens       int
	CachedInputTokens int
	OutputTokens      int
	SearchCalls       int
}

// SetResult records what the call produced, e.g. ("verification", "cv_…")
// or ("niche", "niche_…"); receipts name it.
func (c *Call) SetResult(kind, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resultKind, c.resultID = kind, id
}

// Result returns what SetResult recorded.
func (c *Call) Result() (kind, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resultKind, c.resultID
}

// AddUsage adds provider usage to the call.
func (c *Call) AddUsage(u Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u.Provider != "" {
		c.usage.Provider = u.Provider
	}
	if u.Model != "" {
		c.usage.Model = u.Model
	}
	c.usage.InputTokens += u.InputTokens
	c.usage.CachedInputTokens += u.CachedInputTokens
	c.usage.OutputTokens += u.OutputTokens
	c.usage.SearchCalls += u.SearchCalls
}

// Usage returns the usage added so far.
func (c *Call) Usage() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usage
}

type callKey struct{}

// WithCall returns a context carrying c.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom returns the payment of the request being served, if any.
func CallFrom(ctx context.Context) (*Call, bool) {
	c, ok := ctx.Value(callKey{}).(*Call)
	return c, ok
}
