package httpgate_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
)

func TestGateReportsPaymentEvents(t *testing.T) {
	var mu sync.Mutex
	var got []string
	e := newEnv(t, nil, nil, func(o *httpgate.Options) {
		o.OnEvent = func(ev payment.PaymentEvent) {
			mu.Lock()
			defer mu.Unlock()
			s := ev.Outcome + ":" + ev.OfferID
			if ev.AmountMicroUSD > 0 {
				s += ":" + strconv.FormatInt(ev.AmountMicroUSD, 10)
			}
			got = append(got, s)
		}
	})
	path := "/v1/claims/verify/quick"
	e.do("POST", path, claimBody, nil)                                                   // challenged
	e.do("POST", path, claimBody, pay("0xA", "n1"))                                      // settled
	e.do("POST", path, claimBody, pay("0xA", "n1"))                                      // replayed
	e.do("POST", path, claimBody, pay("0xA", "bad1"))                                    // rejected
	e.do("POST", path, claimBody, map[string]string{"X-Test-Payment": "garbage"})        // rejected (malformed)
	e.do("POST", path, claimBody, with(pay("0xA", "n2"), "X-Test-Behaviour", "fail502")) // voided
	want := []string{
		"challenged:claims.verify.quick", "settled:claims.verify.quick:20000", "replayed:claims.verify.quick",
		"rejected:claims.verify.quick", "rejected:claims.verify.quick", "voided:claims.verify.quick",
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
}
