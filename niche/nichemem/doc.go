// Package nichemem holds in-memory stores of the niche catalogue, for
// tests, demos and one-process programs that keep nothing across restarts:
// Store, a niche.Store (with the optional niche.EvidenceStore,
// niche.IndexSource, niche.ChangeFeed and niche.LanguageReporter), and
// Subscriptions, a niche.SubscriptionStore. They pass the conformance
// suites the SQL stores (store/nichestore) pass: nichetest.TestStore and
// nichetest.TestSubscriptionStore. The package imports no testing package
// and no database.
package nichemem
