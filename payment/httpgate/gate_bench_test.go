package httpgate_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/storetest"
)

// BenchmarkPaidCall compares a handler served directly with the same
// handler behind the gate on an SQLite file (fake processor: no signature
// recovery). bench/payment prints the ratio of the two.
func BenchmarkPaidCall(b *testing.B) {
	h := &paidHandler{kind: "verification"}
	run := func(b *testing.B, target http.Handler, paid bool) {
		n := 0
		for b.Loop() {
			n++
			req := httptest.NewRequest("POST", "/v1/claims/verify/quick", strings.NewReader(claimBody))
			if paid {
				req.Header.Set(gatetest.Header, gatetest.Credential("0xbench", strconv.Itoa(n)))
			}
			rec := httptest.NewRecorder()
			target.ServeHTTP(rec, req)
			if rec.Code != 200 {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
			_, _ = io.Copy(io.Discard, rec.Body)
		}
	}
	b.Run("ungated", func(b *testing.B) { run(b, withCall(h), false) })
	b.Run("gated-sqlite-file", func(b *testing.B) {
		db := openDB(b, storetest.SQLitePath(b))
		g := newBenchGate(b, db)
		run(b, g.Gate(quickOffer, h), true)
	})
}

// withCall serves h with a Call in the context, as a gate would, without
// any payment work: the baseline.
func withCall(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call := &payment.Call{Payer: "0xbench", Protocol: payment.ProtocolFree, OrderID: "ord_bench", Offer: quickOffer}
		h.ServeHTTP(w, r.WithContext(payment.WithCall(r.Context(), call)))
	})
}

func newBenchGate(b *testing.B, db *store.DB) *httpgate.Gate {
	keys, err := payment.LoadKeyring(context.Background(), db, "")
	if err != nil {
		b.Fatal(err)
	}
	g, err := httpgate.New(&gatetest.Processor{}, paymentstore.New(db), &httpgate.Options{
		CashierOptions: payment.CashierOptions{Keys: keys}, PublicBaseURL: publicBase, ReadCredential: gatetest.ReadCredential})
	if err != nil {
		b.Fatal(err)
	}
	return g
}
