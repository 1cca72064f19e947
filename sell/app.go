package sell

import (
	"context"
	"errors"
	"strings"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
)

// Version is the version of the services the application sells, as the
// capabilities, documents and MCP servers publish it.
const Version = "0.3.1"

// App is the application: the engines, the catalogue they are sold from,
// the cashier that sells them, and the product rules every transport
// applies. A nil engine is a service not served.
type App struct {
	// Catalogue prices every offer (never nil in an App built by the
	// server).
	Catalogue *Catalogue
	// Claims verifies claims; Tiers are the tiers sold (every tier when
	// empty).
	Claims *claims.Engine
	Tiers  []string
	// Niche is the niche catalogue as sold; Subscriptions sells its
	// subscription (nil: none).
	Niche         *Niche
	Subscriptions *niche.SubscriptionService
	// Cashier sells the paid offers; nil when payments are not configured
	// (Free says whether paid offers are then served free).
	Cashier *payment.Cashier
	Free    bool
}

// Sells reports whether the claim tier is sold.
func (a *App) Sells(tier string) bool {
	if a.Claims == nil {
		return false
	}
	if len(a.Tiers) == 0 {
		_, ok := claims.TierByName(tier)
		return ok
	}
	for _, t := range a.Tiers {
		if t == tier {
			return true
		}
	}
	return false
}

// Verify runs one verification for the payment in ctx (payment.CallFrom;
// none for a free call), whatever the transport: the engine call with the
// payment's idempotency scope, the provider usage and the result reported
// to the payment (its order then names the verification it delivered,
// and the order's token reads it: Verification). An insufficient_evidence
// verdict asks the payment for the "no verdict, no charge" waiver
// (payment.Call.Waive), which the cashier grants on the tiers that have
// it (NoVerdictNoCharge).
func (a *App) Verify(ctx context.Context, tier string, req *claims.Request, idempotencyKey string) (*claims.Result, error) {
	pc, _ := payment.CallFrom(ctx)
	call := &claims.Call{IdempotencyKey: idempotencyKey, Scope: IdempotencyScope(pc)}
	res, err := a.Claims.Verify(ctx, tier, req, call)
	if pc != nil && call.ProviderCalled {
		u := call.Usage
		pc.AddUsage(payment.Usage{Provider: u.Provider, Model: u.Model, InputTokens: u.InputTokens,
			CachedInputTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens, SearchCalls: u.SearchCalls})
	}
	if err != nil {
		return nil, err
	}
	if pc != nil {
		pc.SetResult("verification", res.VerificationID)
		if res.Status == claims.StatusInsufficientEvidence {
			// Free only where the tier's offer has the waiver ("no
			// verdict, no charge") and within its daily bound: the
			// cashier decides.
			pc.Waive(WaiverInsufficientEvidence)
		}
	}
	return res, nil
}

// IdempotencyScope is who an Idempotency-Key belongs to: the registered
// customer, else the payer, else "anonymous".
func IdempotencyScope(pc *payment.Call) string {
	switch {
	case pc == nil:
		return "anonymous"
	case pc.CustomerID != "":
		return "customer:" + pc.CustomerID
	case pc.Payer != "":
		return "payer:" + strings.ToLower(pc.Payer)
	}
	return "anonymous"
}

// TierOffers returns the offer of every claim tier sold, by tier name:
// every transport sells exactly these (same offer ids, prices and work
// timeouts: orders and receipts compare across transports). Empty when
// claim verification is not served.
func (a *App) TierOffers() map[string]payment.Offer {
	out := map[string]payment.Offer{}
	for _, t := range claims.Tiers() {
		if !a.Sells(t.Name) {
			continue
		}
		if l, ok := a.Catalogue.Tier(t.Name); ok {
			out[t.Name] = l.Offer
		}
	}
	return out
}

// ReadAccess is who reads a stored verification: the operator (Admin), or
// the holder of an order token.
type ReadAccess struct {
	Admin      bool
	OrderToken string
}

// ErrOrderTokenRequired is a read of a paid result without an order token
// (401).
var ErrOrderTokenRequired = errors.New("sell: X-Agentic-Order-Token is required")

// Verification returns a stored verification to the admin, or to the
// holder of the current token of a completed order that delivered it,
// with that order (nil for the admin). An unknown id, a token of another
// order or of another result are all claims.ErrNotFound; an order that is
// not completed is a *NotDeliveredError; no token is
// ErrOrderTokenRequired.
func (a *App) Verification(ctx context.Context, id string, acc ReadAccess) (*claims.Record, *payment.Order, error) {
	if a.Claims == nil {
		return nil, nil, claims.ErrNotFound
	}
	if !acc.Admin && acc.OrderToken == "" {
		return nil, nil, ErrOrderTokenRequired
	}
	var ord *payment.Order
	if !acc.Admin {
		if a.Cashier == nil {
			return nil, nil, claims.ErrNotFound
		}
		o, err := a.Cashier.Ledger().OrderByToken(ctx, ids.Hash(acc.OrderToken))
		switch {
		case errors.Is(err, payment.ErrOrderNotFound):
			return nil, nil, claims.ErrNotFound
		case err != nil:
			return nil, nil, err
		case o.ResultKind != "verification" || o.ResultID != id:
			return nil, nil, claims.ErrNotFound
		}
		if err := DeliveredOrder(o); err != nil {
			return nil, nil, err
		}
		ord = o
	}
	rec, err := a.Claims.Verification(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return rec, ord, nil
}
