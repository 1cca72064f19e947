package paymenttest_test

import (
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
)

func TestMemLedgerConforms(t *testing.T) {
	paymenttest.TestLedger(t, func(t *testing.T) payment.Ledger { return paymenttest.NewMemLedger(nil) })
	t.Run("Shared", func(t *testing.T) {
		paymenttest.TestLedgerShared(t, func(t *testing.T) (payment.Ledger, payment.Ledger) {
			l := paymenttest.NewMemLedger(nil)
			return l, l
		})
	})
}
