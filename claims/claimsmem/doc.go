// Package claimsmem is an in-memory claims.Store (Store), for tests, demos
// and one-process programs that keep nothing across restarts: the engine
// runs on it exactly as on SQL (store/claimsstore). It passes the same
// conformance suite, claimstest.TestStore. It imports no testing package
// and no database.
package claimsmem
