// Package claimstest helps test code that uses the claims engine: a
// scripted SearchProvider (responses, errors, delays, call counting), a
// fake Snapshotter that serves pages from memory (also a
// claims.PageFetcher, for the quick tier's quote checks), a minimal concurrent
// HTTP snapshotter for loopback tests and benchmarks, and recorded provider
// fixtures (ProviderResponse JSON with the pages they cite) that exercise
// every reconciliation rule.
package claimstest
