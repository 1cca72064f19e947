package gatetest_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/sqlite"
)

// The fake processor lets a test pay with a readable header and then count
// what was settled and what was voided: a handler that fails is never
// charged, and a payment is used once.
func ExampleProcessor() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		log.Fatal(err)
	}
	proc := &gatetest.Processor{}
	gate, err := httpgate.New(proc, paymentstore.New(db), &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys}, PublicBaseURL: "https://api.example.com",
		ReadCredential: gatetest.ReadCredential})
	if err != nil {
		log.Fatal(err)
	}
	offer := payment.Offer{ID: "work", AmountMicroUSD: 10_000, MimeType: "text/plain"}
	ok := gate.Gate(offer, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "done") }))
	failing := gate.Gate(offer, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream down", http.StatusBadGateway)
	}))

	pay := func(h http.Handler, nonce string) int {
		req := httptest.NewRequest("GET", "/work", nil)
		req.Header.Set(gatetest.Header, gatetest.Credential("0xbuyer", nonce))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	fmt.Println(pay(failing, "n1"), proc.Settled("0xbuyer", "n1"), proc.Voided("0xbuyer", "n1"))
	fmt.Println(pay(ok, "n1"), proc.Settled("0xbuyer", "n1")) // a voided payment may be retried
	fmt.Println(pay(ok, "n1"), proc.TotalSettled())           // but not reused once settled
	fmt.Println(pay(ok, "bad-signature"))                     // nonces starting "bad" fail verification
	// Output:
	// 502 0 1
	// 200 1
	// 402 1
	// 402
}
