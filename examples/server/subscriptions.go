package main

import (
	"log/slog"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/stripebilling"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
)

// newSubscriptions sells niche subscriptions through Stripe when
// ASSAY_STRIPE_SECRET_KEY, ASSAY_STRIPE_PRICE_ID and
// ASSAY_STRIPE_WEBHOOK_SECRET are all set (a partial set is refused by
// config.validate). Without the price and webhook
// secret it uses the development billing backend (no money moves) in dev
// mode, and offers no subscriptions otherwise (nil): a production server
// never hands out free subscriptions. The secret key alone may be set for
// card payments. The secrets come from the environment only.
func newSubscriptions(cfg *config, db *store.DB, log *slog.Logger) (*niche.SubscriptionService, error) {
	key, price, whsec := cfg.StripeKey, cfg.StripePrice, cfg.StripeWebhookSecret
	var billing niche.Billing
	switch {
	case key != "" && price != "" && whsec != "":
		b, err := stripebilling.New(&stripebilling.Options{SecretKey: key, PriceID: price, WebhookSecret: whsec, Logger: log})
		if err != nil {
			return nil, err
		}
		log.Info("subscriptions: selling through Stripe", "livemode", b.Livemode(), "price", price)
		billing = b
	case !cfg.Dev:
		log.Info("subscriptions: not offered (set ASSAY_STRIPE_PRICE_ID and ASSAY_STRIPE_WEBHOOK_SECRET to sell them through Stripe)")
		return nil, nil
	default:
		l, err := niche.NewLocalBilling(nil)
		if err != nil {
			return nil, err
		}
		log.Warn("subscriptions: DEVELOPMENT billing, anyone can subscribe for free")
		log.Debug("subscriptions: set ASSAY_STRIPE_SECRET_KEY, ASSAY_STRIPE_PRICE_ID and ASSAY_STRIPE_WEBHOOK_SECRET to sell them through Stripe")
		billing = l
	}
	// The same store keeps the sessions of subscribers signed in with a
	// browser (package pages).
	st := nichestore.New(db)
	return niche.NewSubscriptionService(st, billing, &niche.SubscriptionOptions{Logger: log, Sessions: st})
}
