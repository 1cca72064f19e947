package paymentstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/sqlite"
)

// The payment ledger of a database: a reservation key is spent once, also
// by instances sharing the database (the key is the table's primary key).
func Example() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	l := paymentstore.New(db)
	o := paymenttest.NewTestOrder("claims.verify.quick")
	if err := l.OpenOrder(ctx, o); err != nil {
		log.Fatal(err)
	}
	again := paymenttest.NewTestOrder("claims.verify.quick")
	again.ReservationKey = o.ReservationKey // the same payment, presented again
	err = l.OpenOrder(ctx, again)
	got, _ := l.Order(ctx, o.ID)
	fmt.Println(got.Status, errors.Is(err, payment.ErrReservationUsed))
	// Output: processing true
}
