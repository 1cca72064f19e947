package payment

import "slices"

// OrderStatus is where an order is in its life. The Ledger stores it as
// its string.
type OrderStatus string

// Order statuses. An order starts processing when its payment is verified
// and reserved; it becomes settling just before the processor is asked to
// settle, then completed (settled, receipt signed) or failed. A settling
// order whose settlement outcome is unknown stays settling until Reconcile
// or a later check learns the outcome. An order whose answer was delivered
// under a waiver (Offer.Waiver: "no verdict, no charge") is voided instead:
// the answer is kept and receipted, the payment voided, never settled.
// Next states which status may follow which.
const (
	OrderProcessing OrderStatus = "processing"
	OrderSettling   OrderStatus = "settling"
	OrderCompleted  OrderStatus = "completed"
	OrderFailed     OrderStatus = "failed"
	// OrderVoided: the answer was delivered and the payment voided, not
	// charged (a waiver); final, like completed.
	OrderVoided OrderStatus = "voided"
)

// OrderStatuses lists every status, in the order an order goes through
// them.
func OrderStatuses() []OrderStatus {
	return []OrderStatus{OrderProcessing, OrderSettling, OrderCompleted, OrderFailed, OrderVoided}
}

// Next returns the statuses an order in s may move to: the one statement
// of an order's transitions. Processing moves to settling (the work
// delivered; Ledger.MarkSettling), voided (the work delivered under a
// waiver; Ledger.VoidOrder) or failed (the work failed, or was
// interrupted; Ledger.FailOrder); settling moves to completed (settled;
// Ledger.CompleteOrder) or failed (known never to settle). Completed,
// voided and failed are final. The Cashier reports only these moves, and
// paymenttest.TestLedger checks that a Ledger makes exactly these.
func (s OrderStatus) Next() []OrderStatus {
	switch s {
	case OrderProcessing:
		return []OrderStatus{OrderSettling, OrderVoided, OrderFailed}
	case OrderSettling:
		return []OrderStatus{OrderCompleted, OrderFailed}
	}
	return nil
}

// CanMoveTo reports whether an order in s may move to t.
func (s OrderStatus) CanMoveTo(t OrderStatus) bool { return slices.Contains(s.Next(), t) }

// From returns the statuses an order may move to s from, in the order of
// OrderStatuses (a Ledger's conditional update of an order to s accepts
// exactly these).
func (s OrderStatus) From() []OrderStatus {
	var out []OrderStatus
	for _, f := range OrderStatuses() {
		if f.CanMoveTo(s) {
			out = append(out, f)
		}
	}
	return out
}

// Open reports whether an order in s is not finished: processing or
// settling.
func (s OrderStatus) Open() bool { return len(s.Next()) > 0 }

// Valid reports whether s is one of the order statuses.
func (s OrderStatus) Valid() bool { return slices.Contains(OrderStatuses(), s) }

// Delivered reports whether an order in s delivered its answer for good:
// completed (settled) or voided (delivered, not charged). Reads of a paid
// result accept exactly these.
func (s OrderStatus) Delivered() bool { return s == OrderCompleted || s == OrderVoided }
