package paying_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/sqlite"
)

// A buyer's http.Client pays 402 challenges by itself: the Transport reads
// the challenge, signs an x402 payment with the wallet (within its caps),
// and repeats the request once with it. The seller here is a Gate over the
// real protocol layer in dev mode (signatures verified, nothing settled
// on-chain).
func ExampleNewTransport() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	proc, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true})
	if err != nil {
		log.Fatal(err)
	}
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		log.Fatal(err)
	}
	seller := httptest.NewUnstartedServer(nil)
	gate, err := httpgate.New(proc, paymentstore.New(db), &httpgate.Options{
		CashierOptions: payment.CashierOptions{Keys: keys},
		PublicBaseURL:  "http://" + seller.Listener.Addr().String(),
	})
	if err != nil {
		log.Fatal(err)
	}
	seller.Config.Handler = gate.Gate(payment.Offer{ID: "reports.daily", AmountMicroUSD: 20_000, MimeType: "text/plain"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "today's report") }))
	seller.Start()
	defer seller.Close()

	res, err := http.Get(seller.URL + "/report")
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	fmt.Println("without a wallet:", res.StatusCode)

	wallet := paymenttest.DevWallet() // or payment.NewKeySigner(os.Getenv(...))
	t := paying.NewTransport(wallet, nil, &paying.TransportOptions{MaxPerCallMicroUSD: 50_000, BudgetMicroUSD: 100_000})
	buyer := &http.Client{Transport: t}
	res, err = buyer.Get(seller.URL + "/report")
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println("with a wallet:", res.StatusCode, string(body))

	info, paid := paying.ResponseInfo(res)
	fmt.Println(paid, info.Protocol, info.Version, info.AmountMicroUSD, info.Network, info.Settlement.Success)
	fmt.Println(info.OrderID != "" && info.ReceiptID != "", t.Spent())
	// Output:
	// without a wallet: 402
	// with a wallet: 200 today's report
	// true x402 2 20000 eip155:8453 true
	// true 20000
}
