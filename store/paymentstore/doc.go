// Package paymentstore is the SQL implementation of payment.Ledger:
// reservations, orders, stored responses, receipts, quotes and customers
// (migration 0005 and later), on a database opened with store/sqlite or
// store/postgres (package store holds the shared SQL helper and the
// migrations). An application that sells nothing does not import it, and
// links no payment package.
//
// It passes paymenttest.TestLedger and, two instances on one database,
// paymenttest.TestLedgerShared; internal/conformance runs them on every
// backend. payment/paymentmem is the in-memory implementation.
//
// One statement reaches outside the ledger's tables: RotateOrderToken
// moves the order's claim verification grant (claim_verification_access)
// with its token, in the same transaction.
package paymentstore

import "github.com/assaykit/assay/store"

// Store is the payment ledger of one database. Safe for concurrent use;
// any number of Stores (and instances) may share the database.
type Store struct{ db *store.DB }

// New returns the payment ledger of db.
func New(db *store.DB) *Store { return &Store{db: db} }
