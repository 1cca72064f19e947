package main

import (
	"errors"
	"log/slog"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/stripebilling"
	"github.com/assaykit/assay/store"
)

// newSubscriptions sells niche subscriptions through Stripe when
// ASSAY_STRIPE_SECRET_KEY, ASSAY_STRIPE_PRICE_ID and
// ASSAY_STRIPE_WEBHOOK_SECRET are all set, and through the development
// billing backend (no money moves) when none is. The secrets come from the
// environment only.
func newSubscriptions(getenv func(string) string, db *store.DB, log *slog.Logger) (*niche.SubscriptionService, error) {
	key, price, whsec := getenv("ASSAY_STRIPE_SECRET_KEY"), getenv("ASSAY_STRIPE_PRICE_ID"), getenv("ASSAY_STRIPE_WEBHOOK_SECRET")
	var billing niche.Billing
	switch {
	case key != "" && price != "" && whsec != "":
		b, err := stripebilling.New(&stripebilling.Options{SecretKey: key, PriceID: price, WebhookSecret: whsec, Logger: log})
		if err != nil {
			return nil, err
		}
		log.Info("subscriptions: selling through Stripe", "livemode", b.Livemode(), "price", price)
		billing = b
	case key == "" && price == "" && whsec == "":
		l, err := niche.NewLocalBilling(nil)
		if err != nil {
			return nil, err
		}
		log.Warn("subscriptions: DEVELOPMENT billing backend, anyone can subscribe for free; set ASSAY_STRIPE_SECRET_KEY, ASSAY_STRIPE_PRICE_ID and ASSAY_STRIPE_WEBHOOK_SECRET to sell through Stripe")
		billing = l
	default:
		return nil, errors.New("subscriptions: set all of ASSAY_STRIPE_SECRET_KEY, ASSAY_STRIPE_PRICE_ID and ASSAY_STRIPE_WEBHOOK_SECRET, or none of them")
	}
	return niche.NewSubscriptionService(db, billing, &niche.SubscriptionOptions{Logger: log})
}
