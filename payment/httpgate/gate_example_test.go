package httpgate_test

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

// A host sells one of its own routes: a store for the ledger, a receipt
// key kept in it, a processor (here the test fake), and the Gate.
func ExampleNew() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	keys, err := payment.LoadKeyring(ctx, db, "") // or ParseKeyring(os.Getenv("ASSAY_RECEIPT_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	gate, err := httpgate.New(&gatetest.Processor{}, paymentstore.New(db), &httpgate.Options{
		CashierOptions: payment.CashierOptions{Keys: keys},
		PublicBaseURL:  "https://api.example.com",
		ReadCredential: gatetest.ReadCredential,
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := gate.Cashier().Reconcile(ctx); err != nil {
		log.Fatal(err)
	}
	report := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call, _ := payment.CallFrom(r.Context())
		call.SetResult("report", "r1")
		fmt.Fprintf(w, `{"paidBy":%q}`, call.Payer)
	})
	// gate.Middleware(offer) is the func(http.Handler) http.Handler form of
	// gate.Gate(offer, report), for routers that chain middleware.
	monthly := payment.Offer{ID: "reports.monthly", AmountMicroUSD: 100_000, MimeType: "application/json"}
	h := gate.Middleware(monthly)(report)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/reports/monthly", nil))
	fmt.Println(rec.Code)

	req := httptest.NewRequest("GET", "/reports/monthly", nil)
	req.Header.Set(gatetest.Header, gatetest.Credential("0xBuyer", "n1"))
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Body.String(), rec.Header().Get(httpgate.HeaderReceiptID) != "")
	// Output:
	// 402
	// 200 {"paidBy":"0xbuyer"} true
}
