// Package paymenttest helps test code that takes or makes payments: a dev
// wallet, helpers that sign x402 v1/v2 and MPP credentials for a challenge
// (honest ones and deliberately broken ones), a fake x402 facilitator
// replaying recorded payloads, and a fake Stripe PaymentIntents API.
//
// Everything here runs on loopback httptest servers and public test keys;
// nothing moves real money.
package paymenttest
