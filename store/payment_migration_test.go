package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/storetest"
)

// TestPaymentReservationsMigration: reservations taken before migration
// 0039 (SQLite's reservations keyed without a rowid) hold after it: a
// reserved and a consumed payment still find their orders and cannot be
// used again, and a failed order still gives its payment back.
func TestPaymentReservationsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.SQLitePath(t)
	old, err := anydb.Open(ctx, dsn, store.StopAfter("0036_niche_tsvector_input.sql"))
	if err != nil {
		t.Fatal(err)
	}
	open := func(l payment.Ledger, id, key string) error {
		return l.OpenOrder(ctx, &payment.Order{ID: id, TokenHash: id + "-token", OfferID: "claims.verify.quick", Protocol: "x402",
			Payer: "0xpayer", AmountMicroUSD: 20000, ReservationKey: key, ExtraReservationKeys: []string{key + "-extra"},
			ReservedUntil: time.Now().Add(time.Hour)})
	}
	ledger := paymentstore.New(old)
	for _, id := range []string{"ord_processing", "ord_completed", "ord_failed"} {
		if err := open(ledger, id, "key-"+id); err != nil {
			t.Fatal(err)
		}
	}
	if err := ledger.MarkSettling(ctx, "ord_completed", payment.Delivered{ResultKind: "verification"}); err != nil {
		t.Fatal(err)
	}
	if err := ledger.CompleteOrder(ctx, "ord_completed", payment.Settled{SettlementRef: "0xtx"}); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := anydb.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(ctx, "SELECT rowid FROM payment_reservations LIMIT 1").Scan(new(int64)); err == nil {
		t.Error("payment_reservations still has a rowid after 0039")
	}
	ledger = paymentstore.New(db)
	for _, id := range []string{"ord_processing", "ord_completed"} {
		for _, key := range []string{"key-" + id, "key-" + id + "-extra"} {
			if o, err := ledger.OrderByReservation(ctx, key); err != nil || o.ID != id {
				t.Errorf("%s: order %v, %v; want %s", key, o, err, id)
			}
			if err := open(ledger, id+"-again", key); !errors.Is(err, payment.ErrReservationUsed) {
				t.Errorf("%s used again: %v, want ErrReservationUsed", key, err)
			}
		}
	}
	if err := ledger.FailOrder(ctx, "ord_failed", "work failed"); err != nil {
		t.Fatal(err)
	}
	if err := open(ledger, "ord_failed-again", "key-ord_failed"); err != nil {
		t.Errorf("the payment of a failed order was not given back: %v", err)
	}
}
