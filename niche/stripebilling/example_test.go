package stripebilling_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/stripebilling"
	"github.com/assaykit/assay/niche/stripebilling/stripebillingtest"
)

// The backend checks the configured price before selling anything, then
// creates Checkout Sessions. In production APIURL is empty (api.stripe.com)
// and the keys come from the environment; here a fake Stripe API on
// loopback stands in.
func ExampleNew() {
	ctx := context.Background()
	stripe := stripebillingtest.NewServer()
	defer stripe.Close()
	stripe.SetPrice(stripebillingtest.MonthlyPrice("price_monthly"))

	b, err := stripebilling.New(&stripebilling.Options{
		SecretKey:           "sk_test_example",
		PriceID:             "price_monthly",
		WebhookSecret:       "whsec_example",
		ExpectedAmountCents: 999,
		APIURL:              stripe.URL,
	})
	if err != nil {
		log.Fatal(err)
	}
	offer, err := b.Offer(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Provider(), b.Livemode(), offer.Currency, offer.AmountMicroUSD, offer.Interval)

	session, err := b.CreateCheckout(ctx, niche.CheckoutParams{
		SuccessURL: "https://api.example.com/niche-discovery/v1/subscription/success?session_id=" + niche.CheckoutSessionPlaceholder,
		CancelURL:  "https://api.example.com/niche-discovery/v1/subscription/cancelled",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.HasPrefix(session.ID, "cs_"), session.URL != "")

	// A price that is not what we sell makes checkout unavailable rather
	// than selling the wrong product.
	wrong := stripebillingtest.MonthlyPrice("price_yearly")
	wrong.Interval = "year"
	stripe.SetPrice(wrong)
	b2, err := stripebilling.New(&stripebilling.Options{SecretKey: "sk_test_example", PriceID: "price_yearly", WebhookSecret: "whsec_example", APIURL: stripe.URL})
	if err != nil {
		log.Fatal(err)
	}
	_, err = b2.Offer(ctx)
	fmt.Println(errors.Is(err, niche.ErrBillingUnavailable))
	// Output:
	// stripe false USD 9990000 month
	// true true
	// true
}
