package paymentmem_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymentmem"
	"github.com/assaykit/assay/payment/paymenttest"
)

// A Ledger keeps orders in memory with the SQL ledger's rules: a
// reservation key is spent once.
func Example() {
	ctx := context.Background()
	l := paymentmem.New(nil)
	o := paymenttest.NewTestOrder("claims.verify.quick")
	if err := l.OpenOrder(ctx, o); err != nil {
		log.Fatal(err)
	}
	again := paymenttest.NewTestOrder("claims.verify.quick")
	again.ReservationKey = o.ReservationKey // the same payment, presented again
	err := l.OpenOrder(ctx, again)
	got, _ := l.Order(ctx, o.ID)
	fmt.Println(got.Status, errors.Is(err, payment.ErrReservationUsed))
	// Output: processing true
}
