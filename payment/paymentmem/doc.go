// Package paymentmem is an in-memory payment.Ledger (Ledger), for tests,
// demos and one-process sellers that keep nothing across restarts. It
// passes the conformance suite the SQL ledger (store/paymentstore) passes,
// paymenttest.TestLedger. It imports no testing package and no database.
package paymentmem
