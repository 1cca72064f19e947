package payment_test

import (
	"slices"
	"testing"

	"github.com/assaykit/assay/payment"
)

// TestOrderLifeCycle pins the one statement of an order's transitions:
// processing → settling → completed, processing → voided,
// processing|settling → failed, and nothing out of completed, voided or
// failed.
func TestOrderLifeCycle(t *testing.T) {
	p, s, c, f, v := payment.OrderProcessing, payment.OrderSettling, payment.OrderCompleted, payment.OrderFailed, payment.OrderVoided
	allowed := map[[2]payment.OrderStatus]bool{{p, s}: true, {p, v}: true, {p, f}: true, {s, c}: true, {s, f}: true}
	for _, from := range payment.OrderStatuses() {
		for _, to := range payment.OrderStatuses() {
			if got := from.CanMoveTo(to); got != allowed[[2]payment.OrderStatus{from, to}] {
				t.Errorf("%s → %s allowed = %v", from, to, got)
			}
		}
		if from.Open() != (from == p || from == s) || !from.Valid() || from.Delivered() != (from == c || from == v) {
			t.Errorf("%s: Open %v, Valid %v, Delivered %v", from, from.Open(), from.Valid(), from.Delivered())
		}
	}
	for to, want := range map[payment.OrderStatus][]payment.OrderStatus{p: nil, s: {p}, c: {s}, f: {p, s}, v: {p}} {
		if got := to.From(); !slices.Equal(got, want) {
			t.Errorf("%s.From() = %v, want %v", to, got, want)
		}
	}
	if payment.OrderStatus("done").Valid() || payment.OrderStatus("").CanMoveTo(p) {
		t.Error("unknown statuses are not order statuses")
	}
}
