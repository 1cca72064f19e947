package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/paymentstore"
)

// fetchJWKS reads the receipt keys from every base and checks that all
// instances publish the same set.
func fetchJWKS(ctx context.Context, hc *http.Client, st *stats, bases []string) (payment.JWKS, bool) {
	var first []byte
	var jwks payment.JWKS
	for i, base := range bases {
		a := do(ctx, hc, st, "audit: jwks", base, http.MethodGet, "/.well-known/jwks.json", nil, nil)
		if !a.is(http.StatusOK) {
			st.fail("jwks", "%s: %d %v", base, a.status, a.err)
			return jwks, false
		}
		if i == 0 {
			first = a.body
			if err := json.Unmarshal(a.body, &jwks); err != nil || len(jwks.Keys) == 0 {
				st.fail("jwks", "%s: unreadable: %v", base, err)
				return jwks, false
			}
		} else if !bytes.Equal(first, a.body) {
			st.fail("jwks", "instances publish different key sets: %s vs %s", snippet(first), snippet(a.body))
		}
	}
	return jwks, true
}

// orderView is the part of GET /v1/orders/{id} the audit reads.
type orderView struct {
	OrderID             string          `json:"orderId"`
	Status              string          `json:"status"`
	SettlementReference *string         `json:"settlementReference"`
	ResultSHA256        *string         `json:"resultSha256"`
	ReceiptID           *string         `json:"receiptId"`
	FailureReason       *string         `json:"failureReason"`
	Receipt             json.RawMessage `json:"receipt"`
}

// auditDeliveries looks every delivery's order up with its token (on
// another instance than the one that served it, when there are several)
// and checks that it is completed and that its receipt verifies offline
// against the JWKS and names the delivered bytes. It returns the number of
// receipts verified.
// Deliveries recovered by an idempotent replay carry no token (a replay
// does not repeat it); they are looked up with the admin key.
func auditDeliveries(ctx context.Context, hc *http.Client, st *stats, bases []string, adminKey string, ds []*delivery, workers int) int {
	jwks, ok := fetchJWKS(ctx, hc, st, bases)
	if !ok {
		return 0
	}
	var verified atomic.Int64
	var g errgroup.Group
	g.SetLimit(workers)
	for i, d := range ds {
		base := bases[i%len(bases)]
		if len(bases) > 1 && base == d.Base {
			base = bases[(i+1)%len(bases)]
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			if auditOne(ctx, hc, st, base, adminKey, d, jwks) {
				verified.Add(1)
			}
			return nil
		})
	}
	_ = g.Wait()
	return int(verified.Load())
}

func auditOne(ctx context.Context, hc *http.Client, st *stats, base, adminKey string, d *delivery, jwks payment.JWKS) bool {
	h := http.Header{}
	path := "/v1/orders/" + d.OrderID
	if d.Token != "" {
		h.Set(httpgate.HeaderOrderToken, d.Token)
	} else {
		h.Set("X-Admin-Key", adminKey)
		path = "/v1/admin/orders/" + d.OrderID
	}
	a := do(ctx, hc, st, "audit: order lookup", base, http.MethodGet, path, nil, h)
	if a.err != nil {
		st.fail("audit", "order %s: %v", d.OrderID, a.err)
		return false
	}
	if a.status != http.StatusOK {
		st.fail("audit: delivered order not found", "order %s -> %d %s", d.OrderID, a.status, snippet(a.body))
		return false
	}
	var o orderView
	if err := json.Unmarshal(a.body, &o); err != nil {
		st.fail("audit", "order %s: %v", d.OrderID, err)
		return false
	}
	if o.Status != string(payment.OrderCompleted) {
		st.fail("audit: delivered order not completed", "order %s is %s (%v)", d.OrderID, o.Status, deref(o.FailureReason))
		return false
	}
	if len(o.Receipt) == 0 {
		st.fail("audit: no receipt", "order %s", d.OrderID)
		return false
	}
	rc, err := payment.VerifyReceipt(o.Receipt, jwks)
	if err != nil {
		st.fail("audit: receipt does not verify", "order %s: %v", d.OrderID, err)
		return false
	}
	switch {
	case rc.OrderID != d.OrderID:
		st.fail("audit: receipt mismatch", "order %s: receipt names order %s", d.OrderID, rc.OrderID)
	case rc.ReceiptID != d.ReceiptID:
		st.fail("audit: receipt mismatch", "order %s: receipt id %s, header said %s", d.OrderID, rc.ReceiptID, d.ReceiptID)
	case rc.ResultSHA256 != d.SHA256:
		st.fail("audit: receipt does not match the delivered bytes", "order %s: resultSha256 %s, received %s", d.OrderID, rc.ResultSHA256, d.SHA256)
	case !rc.Dev:
		st.fail("audit: receipt mismatch", "order %s: not a dev-mode receipt", d.OrderID)
	default:
		return true
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// dbFacts is what the database says after a scenario.
type dbFacts struct {
	Completed, Processing, Settling, Failed int
	DuplicateSettlements                    int
	UndeliveredCompleted                    []string
	Integrity                               string
}

// farFuture bounds "every order" queries.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// checkDatabase opens the store (the servers must be stopped when it is
// SQLite), runs the integrity check and counts orders per state; it
// reports completed orders that share a reservation (a payment settled
// twice) and completed orders that no client received.
func checkDatabase(ctx context.Context, dsn string, led *ledger) (dbFacts, error) {
	var f dbFacts
	db, err := anydb.Open(ctx, dsn, nil)
	if err != nil {
		return f, err
	}
	defer db.Close()
	f.Integrity = "ok"
	if err := db.CheckIntegrity(ctx); err != nil {
		f.Integrity = err.Error()
	}
	count := func(state payment.OrderStatus) ([]payment.Order, error) {
		return paymentstore.New(db).OrdersInState(ctx, state, farFuture, 10_000_000)
	}
	completed, err := count(payment.OrderCompleted)
	if err != nil {
		return f, err
	}
	for _, s := range []struct {
		state payment.OrderStatus
		n     *int
	}{{payment.OrderProcessing, &f.Processing}, {payment.OrderSettling, &f.Settling}, {payment.OrderFailed, &f.Failed}} {
		os, err := count(s.state)
		if err != nil {
			return f, err
		}
		*s.n = len(os)
	}
	f.Completed = len(completed)
	byKey := map[string]int{}
	led.mu.Lock()
	defer led.mu.Unlock()
	for _, o := range completed {
		byKey[o.ReservationKey]++
		if byKey[o.ReservationKey] == 2 {
			f.DuplicateSettlements++
		}
		if len(led.byOrder[o.ID]) == 0 {
			f.UndeliveredCompleted = append(f.UndeliveredCompleted, o.ID)
		}
	}
	return f, nil
}

// describe renders the facts for the summary.
func (f dbFacts) describe() string {
	return fmt.Sprintf("orders completed %d, failed %d, processing %d, settling %d; payments settled twice %d; completed but not received by any client %d; integrity %s",
		f.Completed, f.Failed, f.Processing, f.Settling, f.DuplicateSettlements, len(f.UndeliveredCompleted), f.Integrity)
}
