package payment

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/assaykit/assay/payment/internal/wire"
)

// Settlement that always ends.
//
// An order whose settlement outcome is not known — the processor timed
// out, answered 5xx, reset the connection, said settlement_pending, or
// could not be reached — stays settling with its answer kept, and is
// resolved in the background by every instance (RunResolver): each
// attempt is one Processor.CheckSettlement, which settles the payment
// again where that is safe or checks it, and ends in one of three ways.
// Settled: the order completes, its receipt is signed, and the payer's
// re-sent credential gets the stored answer. Known unsettled (a
// *Problem): the order fails and its payment is released, so the payer may
// pay again. Unknown: the attempt is noted on the order (every
// transaction reference it learnt, what happened) and the next one waits
// ResolveEvery, doubling, at most six periods. An attempt is leased to one
// instance at a time (Ledger.ClaimSettlement). Transitions are reported
// through CashierOptions.OnTransition, attempts through OnEvent
// (resolved_settled, resolved_failed, resolve_unknown).

// resolveBatch is how many due orders one pass takes, and resolveWorkers
// how many it resolves at once (each attempt may wait out a settle
// timeout).
const (
	resolveBatch   = 200
	resolveWorkers = 8
)

// backoff is the wait before attempt n+1 after n unknown outcomes.
func (c *Cashier) backoff(n int) time.Duration {
	d := c.every
	for i := 1; i < n && d < 6*c.every; i++ {
		d *= 2
	}
	return min(d, 6*c.every)
}

// pendingRefs returns the transaction reference an unknown outcome named.
func pendingRefs(err error) []string {
	var pe *PendingError
	if errors.As(err, &pe) && pe.Transaction != "" {
		return []string{pe.Transaction}
	}
	return nil
}

// noteUnknown records on a settling order that an attempt left its
// outcome unknown (why: err), with the next attempt due after the
// back-off. o is updated in place.
func (c *Cashier) noteUnknown(ctx context.Context, o *Order, err error) {
	n := SettlementNote{Refs: pendingRefs(err), Note: wire.Clip(err.Error(), 300), NextAt: c.now().Add(c.backoff(o.SettleAttempts + 1))}
	gctx, cancel := c.grace(ctx)
	defer cancel()
	if lerr := c.l.NoteSettlement(gctx, o.ID, n); lerr != nil {
		c.log.WarnContext(ctx, "payment: noting a settlement attempt", "order", o.ID, "err", lerr)
		return
	}
	o.SettleAttempts++
	o.SettleNote, o.SettleNextAt = n.Note, n.NextAt
	for _, r := range n.Refs {
		o.SettlementRef = r
		o.SettlementRefs = append(o.SettlementRefs, r)
	}
}

// Resolution outcomes.
const (
	ResolvedSettled = "settled"
	ResolvedFailed  = "failed"
	ResolvedUnknown = "unknown"
	// ResolvedNotOpen: the order is not settling (completed, failed,
	// processing) or another instance holds its attempt now.
	ResolvedNotOpen = "not_open"
)

// Resolution is the outcome of one resolution attempt.
type Resolution struct {
	Order   Order
	Outcome string
	// Detail says what the attempt learnt.
	Detail string
}

// resolve makes one attempt on o, which the caller claimed.
func (c *Cashier) resolve(ctx context.Context, o *Order) Resolution {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.settleTO)
	s, err := c.p.CheckSettlement(actx, o)
	cancel()
	var p *Problem
	switch {
	case err == nil && s != nil:
		comp, cerr := c.completeSettled(ctx, *o, s)
		if cerr != nil || comp.Order.Status != OrderCompleted {
			c.log.ErrorContext(ctx, "payment: recording a resolved settlement", "order", o.ID, "settlement", s.Reference, "err", cerr)
			return Resolution{Order: *o, Outcome: ResolvedUnknown, Detail: "settled as " + s.Reference + ", but the ledger write failed"}
		}
		c.log.InfoContext(ctx, "payment: settlement resolved: settled", "order", o.ID, "settlement", s.Reference, "attempts", o.SettleAttempts+1)
		c.report(PaymentEvent{Protocol: o.Protocol, OfferID: o.OfferID, Outcome: "resolved_settled", AmountMicroUSD: o.AmountMicroUSD})
		return Resolution{Order: comp.Order, Outcome: ResolvedSettled, Detail: "settled: " + s.Reference}
	case errors.As(err, &p):
		reason := "settlement failed: " + problemDetail(err)
		if ferr := c.failOrder(ctx, o.ID, OrderSettling, reason); ferr != nil {
			c.log.ErrorContext(ctx, "payment: recording an unsettled payment", "order", o.ID, "err", ferr)
			return Resolution{Order: *o, Outcome: ResolvedUnknown, Detail: reason + ", but the ledger write failed"}
		}
		c.log.InfoContext(ctx, "payment: settlement resolved: never settled", "order", o.ID, "reason", p.Reason, "attempts", o.SettleAttempts+1)
		c.report(PaymentEvent{Protocol: o.Protocol, OfferID: o.OfferID, Outcome: "resolved_failed"})
		o.Status, o.FailureReason = OrderFailed, reason
		return Resolution{Order: *o, Outcome: ResolvedFailed, Detail: reason}
	}
	if err == nil {
		err = errors.New("the processor returned no settlement")
	}
	c.noteUnknown(ctx, o, err)
	c.log.WarnContext(ctx, "payment: settlement still unknown", "order", o.ID, "attempts", o.SettleAttempts, "next", o.SettleNextAt, "err", err)
	c.report(PaymentEvent{Protocol: o.Protocol, OfferID: o.OfferID, Outcome: "resolve_unknown"})
	return Resolution{Order: *o, Outcome: ResolvedUnknown, Detail: o.SettleNote}
}

// claim leases id for one attempt when it is due by dueBy.
func (c *Cashier) claim(ctx context.Context, id string, dueBy time.Time) (*Order, error) {
	return c.l.ClaimSettlement(ctx, id, dueBy, c.now().Add(c.settleTO+c.commitTO))
}

// Resolve makes one resolution attempt on a settling order now, whether
// or not it is due (the operator's "retry now"). An order that is not
// settling, or whose attempt another instance is making, is
// ResolvedNotOpen.
func (c *Cashier) Resolve(ctx context.Context, id string) (Resolution, error) {
	o, err := c.claim(ctx, id, c.now().Add(c.settleTO+c.commitTO-time.Second))
	switch {
	case errors.Is(err, ErrConflict):
		cur, rerr := c.l.Order(ctx, id)
		if rerr != nil {
			return Resolution{}, rerr
		}
		return Resolution{Order: *cur, Outcome: ResolvedNotOpen, Detail: "the order is " + string(cur.Status) +
			map[bool]string{true: " and another attempt is being made", false: ""}[cur.Status == OrderSettling]}, nil
	case err != nil:
		return Resolution{}, err
	}
	return c.resolve(ctx, o), nil
}

// tryResolve makes an attempt on a settling order that is due, for a
// payer who re-sent its credential: it returns the order after the
// attempt, or o unchanged when it is not due or another instance holds it.
func (c *Cashier) tryResolve(ctx context.Context, o *Order) *Order {
	claimed, err := c.claim(ctx, o.ID, c.now())
	if err != nil {
		return o
	}
	r := c.resolve(ctx, claimed)
	return &r.Order
}

// ResolveReport counts what a resolution pass did.
type ResolveReport struct {
	Settled, Failed, Unknown int
}

// ResolveDue makes one attempt on every settling order that is due (the
// earliest first, at most resolveBatch per pass, resolveWorkers at a
// time). Orders other instances are resolving are skipped.
func (c *Cashier) ResolveDue(ctx context.Context) (ResolveReport, error) {
	return c.resolveDue(ctx, c.now())
}

// resolveDue attempts every settling order due by dueBy.
func (c *Cashier) resolveDue(ctx context.Context, dueBy time.Time) (ResolveReport, error) {
	var rep ResolveReport
	due, err := c.l.SettlementsDue(ctx, dueBy, resolveBatch)
	if err != nil {
		return rep, err
	}
	outcomes := make([]string, len(due))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(resolveWorkers)
	for i := range due {
		g.Go(func() error {
			o, err := c.claim(gctx, due[i].ID, dueBy)
			if err != nil {
				return nil // another instance has it, or it just ended
			}
			outcomes[i] = c.resolve(gctx, o).Outcome
			return nil
		})
	}
	_ = g.Wait()
	for _, o := range outcomes {
		switch o {
		case ResolvedSettled:
			rep.Settled++
		case ResolvedFailed:
			rep.Failed++
		case ResolvedUnknown:
			rep.Unknown++
		}
	}
	return rep, ctx.Err()
}

// RunResolver reconciles the ledger (Reconcile) every ResolveEvery until
// ctx ends. Run it in every instance: attempts are leased, so instances
// never resolve one order at the same moment. It returns once ctx ended
// and the attempts under way ended (each within the settle timeout and
// the commit timeout) and recorded their outcomes: a process should wait
// for it before it exits, or an order it was attempting stays leased to
// no one until the lease runs out.
func (c *Cashier) RunResolver(ctx context.Context) {
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := c.Reconcile(ctx); err != nil && ctx.Err() == nil {
				c.log.WarnContext(ctx, "payment: reconciliation", "err", err)
			}
		}
	}
}

// OpenOrders lists the orders that are processing or settling, oldest
// first (the operator's view of what is not finished).
func (c *Cashier) OpenOrders(ctx context.Context, limit int) ([]Order, error) {
	return c.l.OpenOrders(ctx, limit)
}

// ReconcileReport counts what Reconcile did.
type ReconcileReport struct {
	// Interrupted orders were left processing (a crash mid-call): their
	// reservations were released, nothing was settled.
	Interrupted int
	// Completed and Failed settling orders were resolved (settled, or
	// known never to settle).
	Completed int
	Failed    int
	// StillSettling orders were attempted and are still unknown.
	StillSettling int
}

// Reconcile repairs the ledger, and runs periodically (RunResolver):
// orders processing for longer than StaleAfter are failed as
// "interrupted" and their reservations released (never settled — the
// payer was not charged and may retry); settling orders that are due are
// resolved. Consumed reservations are never purged: they answer a
// completed order's credential at any later time. Orders of live
// instances are safe: only stale or due ones are touched, attempts are
// leased, and every change is a conditional update.
func (c *Cashier) Reconcile(ctx context.Context) (ReconcileReport, error) {
	return c.reconcile(ctx, c.now().Add(-c.staleAfter), c.now())
}

// ReconcileAfterRestart is Reconcile without the age thresholds: every
// order left processing is interrupted and every order left settling is
// resolved now, also those a live call would still be settling. Call it
// only at start-up, and only when no other process uses the ledger (a
// single-instance deployment, for example SQLite with the data directory
// locked): a live request of another process would lose its order.
func (c *Cashier) ReconcileAfterRestart(ctx context.Context) (ReconcileReport, error) {
	now := c.now()
	return c.reconcile(ctx, now, now.Add(c.settleTO+c.commitTO))
}

// reconcile interrupts the orders processing since before staleBefore and
// resolves the settling orders due by dueBy.
func (c *Cashier) reconcile(ctx context.Context, staleBefore, dueBy time.Time) (ReconcileReport, error) {
	var rep ReconcileReport
	stale, err := c.l.OrdersInState(ctx, OrderProcessing, staleBefore, 1000)
	if err != nil {
		return rep, err
	}
	for _, o := range stale {
		switch err := c.l.FailOrder(ctx, o.ID, "interrupted"); {
		case err == nil:
			c.moved(ctx, nil, o.ID, OrderProcessing, OrderFailed, "interrupted")
			rep.Interrupted++
		case errors.Is(err, ErrConflict):
		default:
			return rep, err
		}
	}
	res, err := c.resolveDue(ctx, dueBy)
	rep.Completed, rep.Failed, rep.StillSettling = res.Settled, res.Failed, res.Unknown
	if err != nil {
		return rep, err
	}
	if rep != (ReconcileReport{}) {
		c.log.InfoContext(ctx, "payment: reconciled", "interrupted", rep.Interrupted, "completed", rep.Completed,
			"failed", rep.Failed, "stillSettling", rep.StillSettling)
	}
	return rep, nil
}
