package httpgate_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/store/paymentstore"
)

// lyingLedger reports an error for writes that took effect (a COMMIT cut
// short whose outcome the driver could not know), or fails them for real.
type lyingLedger struct {
	payment.Ledger
	mode atomic.Value // "lie" (commit, then report an error), "fail" (report an error, write nothing), "" (honest)
}

var errCommitUnknown = errors.New("store: commit: context deadline exceeded")

func (l *lyingLedger) write(f func() error) error {
	switch l.mode.Load() {
	case "lie":
		if err := f(); err != nil {
			return err
		}
		return errCommitUnknown
	case "fail":
		return errCommitUnknown
	}
	return f()
}

func (l *lyingLedger) MarkSettling(ctx context.Context, id string, d payment.Delivered) error {
	return l.write(func() error { return l.Ledger.MarkSettling(ctx, id, d) })
}

func (l *lyingLedger) CompleteOrder(ctx context.Context, id string, s payment.Settled) error {
	return l.write(func() error { return l.Ledger.CompleteOrder(ctx, id, s) })
}

// A write of finished work whose commit reports an error but took effect
// is read back: the call is delivered and its order completed, never a
// stored result without its order. A write that really failed fails the
// order, unsettled.
func TestCashierReadsBackACommitOfUnknownOutcome(t *testing.T) {
	db := emptyDB.Open(t, nil)
	l := &lyingLedger{Ledger: paymentstore.New(db)}
	l.mode.Store("lie")
	proc := &gatetest.Processor{}
	keys, err := payment.LoadKeyring(context.Background(), db, "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := httpgate.New(proc, l, &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys}, PublicBaseURL: publicBase,
		ReadCredential: gatetest.ReadCredential})
	if err != nil {
		t.Fatal(err)
	}
	h := &paidHandler{kind: "verification"}
	srv := httptest.NewServer(g.Gate(quickOffer, h))
	defer srv.Close()
	e := &env{t: t, db: db, url: srv.URL, proc: proc}

	r := e.do("POST", "/v1/claims/verify/quick", claimBody, pay("0xA", "n1"))
	if r.status != http.StatusOK || r.header.Get(httpgate.HeaderReceiptID) == "" {
		t.Fatalf("a commit that took effect: %d %s", r.status, r.body)
	}
	if o := e.order(r.header.Get(httpgate.HeaderOrderID)); o.Status != payment.OrderCompleted || o.ReceiptID != r.header.Get(httpgate.HeaderReceiptID) {
		t.Fatalf("order %+v", o)
	}
	l.mode.Store("fail")
	r = e.do("POST", "/v1/claims/verify/quick", claimBody, pay("0xA", "n2"))
	if r.status != http.StatusInternalServerError || proc.Settled("0xa", "n2") != 0 {
		t.Fatalf("a commit that failed: %d %s (settled %d)", r.status, r.body, proc.Settled("0xa", "n2"))
	}
	if o := e.order(r.header.Get(httpgate.HeaderOrderID)); o.Status != payment.OrderFailed {
		t.Fatalf("order %+v", o)
	}
}
