// Package conformance runs the conformance suite of every domain store
// (claimstest, nichetest, paymenttest, snapshottest: each written beside
// its interface) on every backend: the in-memory implementations
// (claims/claimsmem, niche/nichemem, snapshot/snapshotmem,
// payment/paymentmem) and the SQL ones (store/claimsstore,
// store/nichestore, store/snapshotstore, store/paymentstore) on in-memory
// SQLite, file SQLite and PostgreSQL (storetest.Backends), alone and,
// where instances share a database, on two handles of one database (one
// in-memory store plays both instances).
//
// It holds only tests. They live apart from package store's own tests
// (migrations, SQL search, locks) so that go test ./... runs the two
// packages beside each other: the suites wait mostly for PostgreSQL and
// the disk, and as part of package store they were the last and longest
// package of the run. The tests run in parallel, four at a time unless
// -test.parallel says otherwise (TestMain).
package conformance
