package store

import (
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/store/storetest"
)

func TestLedgerConformance(t *testing.T) {
	for name, open := range openers() {
		t.Run(name, func(t *testing.T) {
			storetest.TestLedger(t, func(t *testing.T) payment.Ledger { return open(t) })
		})
	}
}

// TestLedgerSharedDatabase runs the concurrency tests on two handles to one
// database: two SQLite connections to one file, two PostgreSQL pools on one
// schema (two server instances).
func TestLedgerSharedDatabase(t *testing.T) {
	cases := map[string]func(t *testing.T) (payment.Ledger, payment.Ledger){
		"sqlite-file": func(t *testing.T) (payment.Ledger, payment.Ledger) {
			p := storetest.SQLitePath(t)
			return mustOpen(t, p), mustOpen(t, p)
		},
		"postgres": func(t *testing.T) (payment.Ledger, payment.Ledger) {
			u := storetest.PostgresURL(t)
			return mustOpen(t, u), mustOpen(t, u)
		},
	}
	for name, open := range cases {
		t.Run(name, func(t *testing.T) { storetest.TestLedgerShared(t, open) })
	}
}
