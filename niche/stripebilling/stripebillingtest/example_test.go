package stripebillingtest_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/stripebilling/stripebillingtest"
)

// Event and Sign build a webhook delivery exactly as Stripe signs it, so a
// test can post the payload to POST /v1/subscription/webhook with the
// header as Stripe-Signature.
func ExampleSign() {
	secret := "whsec_example"
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	payload := stripebillingtest.EventWithID("evt_1", "invoice.paid", stripebillingtest.InvoiceObject("sub_1", "paid"))
	header := stripebillingtest.Sign(payload, secret, at)

	fmt.Println(strings.HasPrefix(header, "t=1795176000,v1="))
	fmt.Println(niche.VerifySignedPayload(payload, header, []byte(secret), 5*time.Minute, at) == nil)
	// Output:
	// true
	// true
}
