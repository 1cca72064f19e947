package paymenttest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestLedger is the conformance suite of payment.Ledger. open returns a
// fresh, empty ledger for each subtest.
func TestLedger(t *testing.T, open func(t *testing.T) payment.Ledger) {
	t.Run("OpenAndRead", func(t *testing.T) { ledgerOpenAndRead(t, open(t)) })
	t.Run("ReservationSingleUse", func(t *testing.T) { ledgerReservationSingleUse(t, open(t)) })
	t.Run("ConcurrentReservation", func(t *testing.T) { l := open(t); ledgerConcurrentReservation(t, l, l) })
	t.Run("Quotes", func(t *testing.T) { ledgerQuotes(t, open(t)) })
	t.Run("Idempotency", func(t *testing.T) { ledgerIdempotency(t, open(t)) })
	t.Run("Transitions", func(t *testing.T) { ledgerTransitions(t, open(t)) })
	t.Run("LifeCycle", func(t *testing.T) { ledgerLifeCycle(t, open(t)) })
	t.Run("Waivers", func(t *testing.T) { ledgerWaivers(t, open(t)) })
	t.Run("Settlement", func(t *testing.T) { ledgerSettlement(t, open(t)) })
	t.Run("ByReservation", func(t *testing.T) { ledgerByReservation(t, open(t)) })
	t.Run("Customers", func(t *testing.T) { ledgerCustomers(t, open(t)) })
	t.Run("Summary", func(t *testing.T) { ledgerSummary(t, open(t)) })
}

// TestLedgerShared runs the concurrency tests against two ledgers that
// share one database, as two server instances would.
func TestLedgerShared(t *testing.T, open func(t *testing.T) (payment.Ledger, payment.Ledger)) {
	t.Run("ConcurrentReservation", func(t *testing.T) { a, b := open(t); ledgerConcurrentReservation(t, a, b) })
	t.Run("ConcurrentSettle", func(t *testing.T) { a, b := open(t); ledgerConcurrentTransition(t, a, b) })
}

// NewTestOrder returns a valid order for tests: a fresh id, token hash and
// reservation key.
func NewTestOrder(offer string) *payment.Order {
	return &payment.Order{
		ID: ids.New(ids.Order), TokenHash: ids.Hash(ids.Token(ids.OrderToken)), OfferID: offer, Tier: "quick",
		Protocol: payment.ProtocolX402, Method: "exact", Network: "eip155:8453", Payer: "0xpayer",
		AmountMicroUSD: 20000, ReservationKey: "0xpayer:" + ids.New(""), ReservedUntil: time.Now().Add(time.Hour),
	}
}

var cmpOrder = cmp.Options{cmpopts.EquateApproxTime(time.Millisecond), cmpopts.EquateEmpty()}

func ledgerOpenAndRead(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	o := NewTestOrder("claims.verify.quick")
	o.CustomerID, o.IdempotencyKey, o.RequestHash, o.Dev = "cus_1", "k1", "h1", true
	if err := l.OpenOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	if o.Status != payment.OrderProcessing || o.Currency != payment.Currency || o.CreatedAt.IsZero() {
		t.Fatalf("OpenOrder did not fill status/currency/times: %+v", o)
	}
	got, err := l.Order(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(o, got, cmpOrder); d != "" {
		t.Errorf("Order differs (-opened +read):\n%s", d)
	}
	if _, err := l.Order(ctx, ids.New(ids.Order)); !errors.Is(err, payment.ErrOrderNotFound) {
		t.Errorf("unknown order: %v, want ErrOrderNotFound", err)
	}
	if _, err := l.Response(ctx, o.ID); !errors.Is(err, payment.ErrOrderNotFound) {
		t.Errorf("response before delivery: %v, want ErrOrderNotFound", err)
	}
	if _, err := l.Receipt(ctx, o.ID); !errors.Is(err, payment.ErrReceiptNotFound) {
		t.Errorf("receipt before completion: %v, want ErrReceiptNotFound", err)
	}
	if err := l.OpenOrder(ctx, &payment.Order{ID: ids.New(ids.Order)}); err == nil {
		t.Error("OpenOrder accepted an order without reservation key, payer and offer")
	}
}

func ledgerReservationSingleUse(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	a := NewTestOrder("o")
	if err := l.OpenOrder(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := NewTestOrder("other-offer")
	b.ReservationKey = a.ReservationKey
	if err := l.OpenOrder(ctx, b); !errors.Is(err, payment.ErrReservationUsed) {
		t.Fatalf("second use of a reservation key: %v, want ErrReservationUsed", err)
	}
	if _, err := l.Order(ctx, b.ID); !errors.Is(err, payment.ErrOrderNotFound) {
		t.Fatalf("refused order was stored: %v", err)
	}

	// Extra keys are single use too, in either role, and are released
	// with the order.
	c := NewTestOrder("o")
	extra := "challenge:" + ids.New("")
	c.ExtraReservationKeys = []string{extra}
	if err := l.OpenOrder(ctx, c); err != nil {
		t.Fatal(err)
	}
	d := NewTestOrder("o")
	d.ReservationKey = extra
	if err := l.OpenOrder(ctx, d); !errors.Is(err, payment.ErrReservationUsed) {
		t.Fatalf("an extra key reused as a primary key: %v, want ErrReservationUsed", err)
	}
	e := NewTestOrder("o")
	e.ExtraReservationKeys = []string{c.ReservationKey}
	if err := l.OpenOrder(ctx, e); !errors.Is(err, payment.ErrReservationUsed) {
		t.Fatalf("a primary key reused as an extra key: %v, want ErrReservationUsed", err)
	}
	// Nothing of a refused order is kept: its own fresh key stays free.
	e2 := NewTestOrder("o")
	e2.ReservationKey = e.ReservationKey
	if err := l.OpenOrder(ctx, e2); err != nil {
		t.Fatalf("the fresh key of a refused order was kept: %v", err)
	}
	if err := l.FailOrder(ctx, c.ID, "failed"); err != nil {
		t.Fatal(err)
	}
	if err := l.OpenOrder(ctx, d); err != nil {
		t.Fatalf("extra key not released by FailOrder: %v", err)
	}
}

func ledgerConcurrentReservation(t *testing.T, a, b payment.Ledger) {
	ctx := context.Background()
	key := "0xpayer:" + ids.New("")
	const n = 50
	var wins, used atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := a
			if i%2 == 1 {
				l = b
			}
			o := NewTestOrder("o")
			o.ReservationKey = key
			switch err := l.OpenOrder(ctx, o); {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, payment.ErrReservationUsed):
				used.Add(1)
			default:
				t.Errorf("OpenOrder: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || used.Load() != n-1 {
		t.Fatalf("%d opened, %d refused as used; want 1 and %d", wins.Load(), used.Load(), n-1)
	}
}

func ledgerConcurrentTransition(t *testing.T, a, b payment.Ledger) {
	ctx := context.Background()
	o := NewTestOrder("o")
	if err := a.OpenOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	// race runs step on both ledgers from 20 goroutines and requires
	// exactly one success and conflicts for the rest.
	race := func(stage string, step func(l payment.Ledger, i int) error) {
		var wins atomic.Int64
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := a
				if i%2 == 1 {
					l = b
				}
				switch err := step(l, i); {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, payment.ErrConflict):
				default:
					t.Errorf("%s: %v", stage, err)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%s: %d concurrent transitions succeeded, want exactly 1", stage, wins.Load())
		}
	}
	race("settling", func(l payment.Ledger, _ int) error {
		return l.MarkSettling(ctx, o.ID, payment.Delivered{ResultSHA256: "x", Response: payment.StoredResponse{Status: 200, Body: []byte("{}")}})
	})
	now := time.Now()
	race("claim", func(l payment.Ledger, _ int) error {
		_, err := l.ClaimSettlement(ctx, o.ID, now, now.Add(time.Minute))
		return err
	})
	race("complete or fail", func(l payment.Ledger, i int) error {
		if i%3 == 0 {
			return l.FailOrder(ctx, o.ID, "interrupted")
		}
		return l.CompleteOrder(ctx, o.ID, payment.Settled{SettlementRef: "0xtx"})
	})
}

// ledgerSettlement follows a settling order whose outcome is unknown: its
// record, due times, claims, notes and references.
func ledgerSettlement(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	now := time.Now().Truncate(time.Microsecond)
	o := NewTestOrder("claims.verify.deep")
	other := NewTestOrder("claims.verify.deep")
	for _, x := range []*payment.Order{o, other} {
		if err := l.OpenOrder(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	record := []byte(`{"kind":"x402","version":2}`)
	if err := l.MarkSettling(ctx, o.ID, payment.Delivered{ResultSHA256: "x", Response: payment.StoredResponse{Status: 200, Body: []byte("{}")},
		PaymentRecord: record, ResolveAfter: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	idsOf := func(os []payment.Order, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, x := range os {
			out = append(out, x.ID)
		}
		return out
	}
	if got := idsOf(l.SettlementsDue(ctx, now, 10)); len(got) != 0 {
		t.Errorf("due before ResolveAfter: %v", got)
	}
	if got, want := idsOf(l.OpenOrders(ctx, 10)), []string{o.ID, other.ID}; !cmp.Equal(got, want) && !cmp.Equal(got, []string{other.ID, o.ID}) {
		t.Errorf("OpenOrders = %v, want both", got)
	}
	if _, err := l.ClaimSettlement(ctx, o.ID, now, now.Add(time.Minute)); !errors.Is(err, payment.ErrConflict) {
		t.Errorf("claim before due: %v, want ErrConflict", err)
	}
	if _, err := l.ClaimSettlement(ctx, other.ID, now, now.Add(time.Minute)); !errors.Is(err, payment.ErrConflict) {
		t.Errorf("claim of a processing order: %v, want ErrConflict", err)
	}
	if err := l.NoteSettlement(ctx, other.ID, payment.SettlementNote{Note: "x"}); !errors.Is(err, payment.ErrConflict) {
		t.Errorf("note on a processing order: %v, want ErrConflict", err)
	}
	if err := l.NoteSettlement(ctx, o.ID, payment.SettlementNote{Refs: []string{"0xa"}, Note: "settlement pending", NextAt: now.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	got, err := l.Order(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.SettlementRef != "0xa" || !cmp.Equal(got.SettlementRefs, []string{"0xa"}) || got.SettleAttempts != 1 ||
		got.SettleNote != "settlement pending" || string(got.PaymentRecord) != string(record) || !got.SettleNextAt.Equal(now.Add(-time.Second)) {
		t.Errorf("after a note: ref %q refs %v attempts %d note %q record %s next %v", got.SettlementRef, got.SettlementRefs,
			got.SettleAttempts, got.SettleNote, got.PaymentRecord, got.SettleNextAt)
	}
	if got := idsOf(l.SettlementsDue(ctx, now, 10)); !cmp.Equal(got, []string{o.ID}) {
		t.Errorf("SettlementsDue = %v, want [%s]", got, o.ID)
	}
	claimed, err := l.ClaimSettlement(ctx, o.ID, now, now.Add(time.Minute))
	if err != nil || claimed.ID != o.ID || !claimed.SettleNextAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("claim when due = %+v, %v", claimed, err)
	}
	if _, err := l.ClaimSettlement(ctx, o.ID, now, now.Add(time.Minute)); !errors.Is(err, payment.ErrConflict) {
		t.Errorf("second claim: %v, want ErrConflict", err)
	}
	if _, err := l.ClaimSettlement(ctx, o.ID, now.Add(2*time.Minute), now.Add(3*time.Minute)); err != nil {
		t.Errorf("claim once the lease passed: %v", err)
	}
	if err := l.NoteSettlement(ctx, o.ID, payment.SettlementNote{Refs: []string{"0xa", "", "0xb"}, Note: "timeout", NextAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := l.CompleteOrder(ctx, o.ID, payment.Settled{SettlementRef: "0xc", ReceiptID: ids.New(ids.Receipt)}); err != nil {
		t.Fatal(err)
	}
	got, err = l.Order(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.SettlementRef != "0xc" || !cmp.Equal(got.SettlementRefs, []string{"0xa", "0xb", "0xc"}) || got.SettleAttempts != 2 {
		t.Errorf("completed: ref %q refs %v attempts %d", got.SettlementRef, got.SettlementRefs, got.SettleAttempts)
	}
	if err := l.NoteSettlement(ctx, o.ID, payment.SettlementNote{Note: "late"}); !errors.Is(err, payment.ErrConflict) {
		t.Errorf("note on a completed order: %v, want ErrConflict", err)
	}
	if _, err := l.ClaimSettlement(ctx, o.ID, now.Add(time.Hour), now.Add(time.Hour)); !errors.Is(err, payment.ErrConflict) {
		t.Errorf("claim of a completed order: %v, want ErrConflict", err)
	}
	if got := idsOf(l.OpenOrders(ctx, 10)); !cmp.Equal(got, []string{other.ID}) {
		t.Errorf("OpenOrders after completion = %v, want [%s]", got, other.ID)
	}
	if _, err := l.ClaimSettlement(ctx, "ord_unknown", now, now); !errors.Is(err, payment.ErrOrderNotFound) {
		t.Errorf("claim of an unknown order: %v, want ErrOrderNotFound", err)
	}
	// Settled with the reference an attempt noted: kept once. Then
	// completed again: a conflict, whatever the references.
	if err := l.MarkSettling(ctx, other.ID, payment.Delivered{ResultSHA256: "y", Response: payment.StoredResponse{Status: 200, Body: []byte("{}")},
		PaymentRecord: record, ResolveAfter: now}); err != nil {
		t.Fatal(err)
	}
	if err := l.NoteSettlement(ctx, other.ID, payment.SettlementNote{Refs: []string{"0xd"}, Note: "timeout", NextAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := l.CompleteOrder(ctx, other.ID, payment.Settled{SettlementRef: "0xd", ReceiptID: ids.New(ids.Receipt)}); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Order(ctx, other.ID); err != nil || got.Status != payment.OrderCompleted || got.SettlementRef != "0xd" || !cmp.Equal(got.SettlementRefs, []string{"0xd"}) {
		t.Errorf("completed with the noted reference: %+v, %v", got, err)
	}
	for _, ref := range []string{"0xd", "0xe", ""} {
		if err := l.CompleteOrder(ctx, other.ID, payment.Settled{SettlementRef: ref, ReceiptID: ids.New(ids.Receipt)}); !errors.Is(err, payment.ErrConflict) {
			t.Errorf("completing a completed order (ref %q): %v, want ErrConflict", ref, err)
		}
	}
	if got, err := l.Order(ctx, other.ID); err != nil || !cmp.Equal(got.SettlementRefs, []string{"0xd"}) {
		t.Errorf("a refused completion changed the references: %+v, %v", got, err)
	}
}

func ledgerQuotes(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	now := time.Now().UTC()
	q := &payment.Quote{ID: ids.New(ids.Quote), Tier: "deep", AmountMicroUSD: 120000, CardMicroUSD: 500000, CreatedAt: now, ExpiresAt: now.Add(15 * time.Minute)}
	if err := l.CreateQuote(ctx, q); err != nil {
		t.Fatal(err)
	}
	got, err := l.Quote(ctx, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(q, got, cmpOrder); d != "" {
		t.Errorf("Quote differs:\n%s", d)
	}
	if _, err := l.Quote(ctx, ids.New(ids.Quote)); !errors.Is(err, payment.ErrQuoteNotFound) {
		t.Errorf("unknown quote: %v", err)
	}
	expired := &payment.Quote{ID: ids.New(ids.Quote), Tier: "deep", AmountMicroUSD: 1, CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(-time.Minute)}
	if err := l.CreateQuote(ctx, expired); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		quote string
		want  error
	}{
		{"valid", q.ID, nil},
		{"already used", q.ID, payment.ErrQuoteUnavailable},
		{"expired", expired.ID, payment.ErrQuoteUnavailable},
		{"unknown", ids.New(ids.Quote), payment.ErrQuoteUnavailable},
	}
	var first *payment.Order
	for _, c := range cases {
		o := NewTestOrder("claims.verify.deep")
		o.QuoteID = c.quote
		err := l.OpenOrder(ctx, o)
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Fatalf("%s: OpenOrder = %v, want %v", c.name, err, c.want)
		}
		if c.want != nil {
			// Nothing was written: the reservation key is still free.
			o2 := NewTestOrder("x")
			o2.ReservationKey = o.ReservationKey
			if err := l.OpenOrder(ctx, o2); err != nil {
				t.Fatalf("%s: reservation kept after a refused quote: %v", c.name, err)
			}
		} else {
			first = o
		}
	}
	if got, _ := l.Quote(ctx, q.ID); got.OrderID != first.ID {
		t.Fatalf("quote used by %q, want %q", got.OrderID, first.ID)
	}
	// A failed order gives its quote back.
	if err := l.FailOrder(ctx, first.ID, "provider down"); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Quote(ctx, q.ID); got.OrderID != "" {
		t.Fatalf("quote still used after the order failed: %q", got.OrderID)
	}
}

func ledgerIdempotency(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	a := NewTestOrder("o")
	a.IdempotencyKey = "key-1"
	if err := l.OpenOrder(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := NewTestOrder("o")
	b.IdempotencyKey = "key-1"
	if err := l.OpenOrder(ctx, b); !errors.Is(err, payment.ErrIdempotencyInFlight) {
		t.Fatalf("same payer, offer and key: %v, want ErrIdempotencyInFlight", err)
	}
	// Scoped by payer and by offer.
	c := NewTestOrder("o")
	c.IdempotencyKey, c.Payer = "key-1", "0xother"
	d := NewTestOrder("o2")
	d.IdempotencyKey = "key-1"
	for _, o := range []*payment.Order{c, d} {
		if err := l.OpenOrder(ctx, o); err != nil {
			t.Fatalf("key scoped wrongly: %v", err)
		}
	}
	got, err := l.OrderByIdempotencyKey(ctx, a.Payer, "o", "key-1")
	if err != nil || got.ID != a.ID {
		t.Fatalf("OrderByIdempotencyKey = %v, %v; want %s", got, err, a.ID)
	}
	if _, err := l.OrderByIdempotencyKey(ctx, a.Payer, "o", ""); !errors.Is(err, payment.ErrOrderNotFound) {
		t.Fatalf("empty key: %v", err)
	}
	// Failing releases the key and the reservation.
	if err := l.FailOrder(ctx, a.ID, "handler returned 502"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.OrderByIdempotencyKey(ctx, a.Payer, "o", "key-1"); !errors.Is(err, payment.ErrOrderNotFound) {
		t.Fatalf("key still held after failure: %v", err)
	}
	retry := NewTestOrder("o")
	retry.IdempotencyKey, retry.ReservationKey = "key-1", a.ReservationKey
	if err := l.OpenOrder(ctx, retry); err != nil {
		t.Fatalf("retry with the same credential and key after a failure: %v", err)
	}
}

func ledgerTransitions(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	o := NewTestOrder("o")
	if err := l.OpenOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	unknown := ids.New(ids.Order)
	if err := l.MarkSettling(ctx, unknown, payment.Delivered{}); !errors.Is(err, payment.ErrOrderNotFound) {
		t.Fatalf("MarkSettling(unknown) = %v", err)
	}
	if err := l.CompleteOrder(ctx, o.ID, payment.Settled{}); !errors.Is(err, payment.ErrConflict) {
		t.Fatalf("completing a processing order: %v, want ErrConflict", err)
	}
	d := payment.Delivered{ResultKind: "verification", ResultID: "cv_1", ResultSHA256: "abc",
		Usage:        payment.Usage{Provider: "openai", Model: "m", InputTokens: 10, CachedInputTokens: 2, OutputTokens: 5, SearchCalls: 1},
		CostMicroUSD: 77, Response: payment.StoredResponse{Status: 200, ContentType: "application/json", Body: []byte(`{"ok":true}`)}}
	if err := l.MarkSettling(ctx, o.ID, d); err != nil {
		t.Fatal(err)
	}
	if err := l.MarkSettling(ctx, o.ID, d); !errors.Is(err, payment.ErrConflict) {
		t.Fatalf("MarkSettling twice: %v, want ErrConflict", err)
	}
	old := time.Now().Add(time.Hour)
	settling, err := l.OrdersInState(ctx, payment.OrderSettling, old, 10)
	if err != nil || len(settling) != 1 || settling[0].ID != o.ID {
		t.Fatalf("OrdersInState(settling) = %v, %v", settling, err)
	}
	if none, _ := l.OrdersInState(ctx, payment.OrderSettling, time.Now().Add(-time.Hour), 10); len(none) != 0 {
		t.Fatalf("OrdersInState ignores the time bound: %v", none)
	}
	s := payment.Settled{SettlementRef: "0xtx", Network: "eip155:84532", ReceiptID: ids.New(ids.Receipt), Receipt: []byte(`{"receiptId":"r"}`)}
	if err := l.CompleteOrder(ctx, o.ID, s); err != nil {
		t.Fatal(err)
	}
	got, err := l.Order(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *o
	want.Status, want.SettlementRef, want.Network, want.ReceiptID = payment.OrderCompleted, "0xtx", "eip155:84532", s.ReceiptID
	want.SettlementRefs = []string{"0xtx"}
	want.ResultKind, want.ResultID, want.ResultSHA256, want.Usage, want.CostMicroUSD = d.ResultKind, d.ResultID, d.ResultSHA256, d.Usage, d.CostMicroUSD
	if d := cmp.Diff(&want, got, cmpOrder, cmpopts.IgnoreFields(payment.Order{}, "UpdatedAt", "CompletedAt")); d != "" {
		t.Errorf("completed order differs:\n%s", d)
	}
	if got.CompletedAt.IsZero() {
		t.Error("CompletedAt not set")
	}
	resp, err := l.Response(ctx, o.ID)
	if err != nil || string(resp.Body) != `{"ok":true}` || resp.Status != 200 || resp.ContentType != "application/json" {
		t.Fatalf("Response = %+v, %v", resp, err)
	}
	if r, err := l.Receipt(ctx, o.ID); err != nil || string(r) != `{"receiptId":"r"}` {
		t.Fatalf("Receipt = %s, %v", r, err)
	}
	if err := l.FailOrder(ctx, o.ID, "late"); !errors.Is(err, payment.ErrConflict) {
		t.Fatalf("failing a completed order: %v, want ErrConflict", err)
	}
	// The reservation is consumed: a second use is refused, and the
	// order is found by it, for as long as the order is kept (past the
	// payment's validity).
	again := NewTestOrder("o")
	again.ReservationKey = o.ReservationKey
	if err := l.OpenOrder(ctx, again); !errors.Is(err, payment.ErrReservationUsed) {
		t.Fatalf("reuse after completion: %v", err)
	}
	if got, err := l.OrderByReservation(ctx, o.ReservationKey); err != nil || got.ID != o.ID || got.Status != payment.OrderCompleted {
		t.Fatalf("OrderByReservation of a completed order = %+v, %v", got, err)
	}
}

// ledgerLifeCycle: the Ledger moves orders exactly as
// payment.OrderStatus.Next says. From each status, each move (MarkSettling
// to settling, CompleteOrder to completed, FailOrder to failed, VoidOrder
// to voided) succeeds
// when the table allows it and is otherwise refused with ErrConflict,
// leaving the order as it was.
func ledgerLifeCycle(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	move := func(o *payment.Order, to payment.OrderStatus) error {
		switch to {
		case payment.OrderSettling:
			return l.MarkSettling(ctx, o.ID, payment.Delivered{ResultSHA256: "abc", Response: payment.StoredResponse{Status: 200, Body: []byte("{}")}})
		case payment.OrderCompleted:
			return l.CompleteOrder(ctx, o.ID, payment.Settled{SettlementRef: "0xtx", ReceiptID: ids.New(ids.Receipt), Receipt: []byte("{}")})
		case payment.OrderFailed:
			return l.FailOrder(ctx, o.ID, "test")
		case payment.OrderVoided:
			return l.VoidOrder(ctx, o.ID, payment.Voided{Delivered: payment.Delivered{ResultSHA256: "abc", Response: payment.StoredResponse{Status: 200, Body: []byte("{}")}},
				Reason: "not charged: test", ReceiptID: ids.New(ids.Receipt), Receipt: []byte("{}"), Day: "2026-01-01", Limit: 1000})
		}
		t.Fatalf("no Ledger method moves an order to %q", to)
		return nil
	}
	// in returns a fresh order in status s, moved there along the table.
	in := func(s payment.OrderStatus) *payment.Order {
		o := NewTestOrder("o")
		if err := l.OpenOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		path := map[payment.OrderStatus][]payment.OrderStatus{
			payment.OrderSettling:  {payment.OrderSettling},
			payment.OrderCompleted: {payment.OrderSettling, payment.OrderCompleted},
			payment.OrderFailed:    {payment.OrderFailed},
			payment.OrderVoided:    {payment.OrderVoided},
		}[s]
		for _, to := range path {
			if err := move(o, to); err != nil {
				t.Fatalf("moving a new order to %s: %v", to, err)
			}
		}
		return o
	}
	for _, from := range payment.OrderStatuses() {
		for _, to := range []payment.OrderStatus{payment.OrderSettling, payment.OrderCompleted, payment.OrderFailed, payment.OrderVoided} {
			o := in(from)
			err := move(o, to)
			got, rerr := l.Order(ctx, o.ID)
			if rerr != nil {
				t.Fatal(rerr)
			}
			switch {
			case from.CanMoveTo(to) && (err != nil || got.Status != to):
				t.Errorf("%s → %s is allowed: got %v, status %s", from, to, err, got.Status)
			case !from.CanMoveTo(to) && (!errors.Is(err, payment.ErrConflict) || got.Status != from):
				t.Errorf("%s → %s is not allowed: got %v, status %s, want ErrConflict and %s", from, to, err, got.Status, from)
			}
		}
	}
}

// ledgerWaivers: VoidOrder records the delivered answer and the receipt,
// consumes the reservation (the payment cannot be used again) and counts
// the payer's waived answers per day: at the limit it returns
// ErrWaiverExhausted and leaves the order processing; another day, or
// another payer, has its own count; concurrent voids never exceed the
// limit; the summary counts voided orders apart.
func ledgerWaivers(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	voided := func(day string, limit int) payment.Voided {
		return payment.Voided{Delivered: payment.Delivered{ResultKind: "verification", ResultID: "cv_1", ResultSHA256: "abc",
			Response: payment.StoredResponse{Status: 200, ContentType: "application/json", Body: []byte(`{"v":1}`)}},
			Reason: "not charged: insufficient_evidence", ReceiptID: ids.New(ids.Receipt), Receipt: []byte(`{"voided":true}`), Day: day, Limit: limit}
	}
	open := func(payer string) *payment.Order {
		o := NewTestOrder("claims.verify.quick")
		o.Payer = payer
		if err := l.OpenOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	a := open("0xAAA")
	v := voided("2026-03-01", 2)
	if err := l.VoidOrder(ctx, a.ID, v); err != nil {
		t.Fatal(err)
	}
	got, err := l.Order(ctx, a.ID)
	if err != nil || got.Status != payment.OrderVoided || got.ReceiptID != v.ReceiptID || got.ResultID != "cv_1" ||
		got.FailureReason != v.Reason || got.CompletedAt.IsZero() {
		t.Fatalf("voided order = %+v, %v", got, err)
	}
	if r, err := l.Response(ctx, a.ID); err != nil || string(r.Body) != `{"v":1}` {
		t.Fatalf("response of a voided order: %v, %v", r, err)
	}
	if r, err := l.Receipt(ctx, a.ID); err != nil || string(r) != `{"voided":true}` {
		t.Fatalf("receipt of a voided order: %s, %v", r, err)
	}
	again := NewTestOrder("o")
	again.ReservationKey = a.ReservationKey
	if err := l.OpenOrder(ctx, again); !errors.Is(err, payment.ErrReservationUsed) {
		t.Fatalf("the payment of a voided order used again: %v", err)
	}
	if o, err := l.OrderByReservation(ctx, a.ReservationKey); err != nil || o.ID != a.ID {
		t.Fatalf("OrderByReservation of a voided order: %v, %v", o, err)
	}
	// The payer's second waiver of the day (case-insensitive payer), then
	// none left.
	if err := l.VoidOrder(ctx, open("0xaaa").ID, voided("2026-03-01", 2)); err != nil {
		t.Fatal(err)
	}
	third := open("0xAAA")
	if err := l.VoidOrder(ctx, third.ID, voided("2026-03-01", 2)); !errors.Is(err, payment.ErrWaiverExhausted) {
		t.Fatalf("a third waiver with a limit of 2: %v, want ErrWaiverExhausted", err)
	}
	if o, _ := l.Order(ctx, third.ID); o.Status != payment.OrderProcessing {
		t.Fatalf("an exhausted waiver changed the order to %s", o.Status)
	}
	if err := l.VoidOrder(ctx, third.ID, voided("2026-03-02", 2)); err != nil {
		t.Fatalf("the next day: %v", err)
	}
	if err := l.VoidOrder(ctx, open("0xBBB").ID, voided("2026-03-01", 2)); err != nil {
		t.Fatalf("another payer: %v", err)
	}
	// Concurrent voids of one payer on a fresh day: exactly the limit win.
	const n, limit = 8, 3
	orders := make([]*payment.Order, n)
	for i := range orders {
		orders[i] = open("0xCCC")
	}
	var wins, exhausted atomic.Int32
	var wg sync.WaitGroup
	for _, o := range orders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch err := l.VoidOrder(ctx, o.ID, voided("2026-03-05", limit)); {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, payment.ErrWaiverExhausted):
				exhausted.Add(1)
			default:
				t.Errorf("concurrent void: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != limit || exhausted.Load() != n-limit {
		t.Errorf("concurrent voids: %d won, %d exhausted; want %d and %d", wins.Load(), exhausted.Load(), limit, n-limit)
	}
	sum, err := l.OrderSummary(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sum {
		if s.OfferID == "claims.verify.quick" && (s.Voided != 4+limit || s.Completed != 0 || s.RevenueMicroUSD != 0) {
			t.Errorf("summary %+v: want %d voided, no revenue", s, 4+limit)
		}
	}
}

// ledgerByReservation: the order holding a reservation key (primary or
// extra) is found while it holds it, also once completed, and no longer
// after it failed; a token rotation replaces the token hash.
func ledgerByReservation(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	o := NewTestOrder("o")
	extra := "mpp:" + ids.New("")
	o.ExtraReservationKeys, o.RequestHash = []string{extra}, "h1"
	if err := l.OpenOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{o.ReservationKey, extra} {
		got, err := l.OrderByReservation(ctx, k)
		if err != nil || got.ID != o.ID || got.RequestHash != "h1" || got.Status != payment.OrderProcessing {
			t.Fatalf("OrderByReservation(%s) = %+v, %v", k, got, err)
		}
	}
	if _, err := l.OrderByReservation(ctx, "unknown:"+ids.New("")); !errors.Is(err, payment.ErrOrderNotFound) {
		t.Fatalf("unknown key: %v, want ErrOrderNotFound", err)
	}
	if err := l.MarkSettling(ctx, o.ID, payment.Delivered{ResultSHA256: "abc", Response: payment.StoredResponse{Status: 200, Body: []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	if err := l.CompleteOrder(ctx, o.ID, payment.Settled{SettlementRef: "0xtx", ReceiptID: ids.New(ids.Receipt), Receipt: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if got, err := l.OrderByReservation(ctx, o.ReservationKey); err != nil || got.Status != payment.OrderCompleted {
		t.Fatalf("a consumed reservation: %+v, %v", got, err)
	}
	newHash := ids.Hash(ids.Token(ids.OrderToken))
	if err := l.RotateOrderToken(ctx, o.ID, newHash); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Order(ctx, o.ID); err != nil || got.TokenHash != newHash {
		t.Fatalf("after rotation the token hash is %v (%v)", got, err)
	}
	if err := l.RotateOrderToken(ctx, ids.New(ids.Order), newHash); !errors.Is(err, payment.ErrOrderNotFound) {
		t.Fatalf("rotating an unknown order: %v", err)
	}
	f := NewTestOrder("o")
	if err := l.OpenOrder(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := l.FailOrder(ctx, f.ID, "work failed"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.OrderByReservation(ctx, f.ReservationKey); !errors.Is(err, payment.ErrOrderNotFound) {
		t.Fatalf("a released reservation: %v, want ErrOrderNotFound", err)
	}
}

func ledgerCustomers(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	c := &payment.Customer{ID: ids.New(ids.Customer), Name: "Acme", Email: "ops@acme.test", CreatedAt: time.Now().UTC()}
	key := ids.Token(ids.CustomerKey)
	if err := l.CreateCustomer(ctx, c, ids.Hash(key)); err != nil {
		t.Fatal(err)
	}
	got, err := l.CustomerByKeyHash(ctx, ids.Hash(key))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c, got, cmpOrder); d != "" || got.Status != payment.CustomerActive {
		t.Errorf("customer differs:\n%s", d)
	}
	if _, err := l.CustomerByKeyHash(ctx, ids.Hash("ask_nope")); !errors.Is(err, payment.ErrCustomerNotFound) {
		t.Errorf("unknown key: %v", err)
	}
	var want []string
	for i := range 7 {
		o := NewTestOrder(fmt.Sprintf("o%d", i))
		o.CustomerID = c.ID
		if err := l.OpenOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		want = append([]string{o.ID}, want...) // newest first
		time.Sleep(2 * time.Millisecond)
	}
	other := NewTestOrder("o")
	other.CustomerID = "cus_other"
	if err := l.OpenOrder(ctx, other); err != nil {
		t.Fatal(err)
	}
	var got2 []string
	cursor := ""
	for range 10 {
		page, next, err := l.CustomerOrders(ctx, c.ID, payment.OrderPage{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page {
			got2 = append(got2, o.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if d := cmp.Diff(want, got2); d != "" {
		t.Errorf("cursor pages differ:\n%s", d)
	}
	page, next, err := l.CustomerOrders(ctx, c.ID, payment.OrderPage{Limit: 2, Offset: 5})
	if err != nil || len(page) != 2 || page[0].ID != want[5] || next != "" {
		t.Fatalf("offset page = %v next %q err %v", page, next, err)
	}
	if _, _, err := l.CustomerOrders(ctx, c.ID, payment.OrderPage{Limit: 2, Cursor: "!!"}); !errors.Is(err, payment.ErrBadCursor) {
		t.Fatalf("bad cursor: %v", err)
	}
}

func ledgerSummary(t *testing.T, l payment.Ledger) {
	ctx := context.Background()
	mk := func(offer string, amount int64) *payment.Order {
		o := NewTestOrder(offer)
		o.AmountMicroUSD = amount
		if err := l.OpenOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	done := mk("a", 20000)
	if err := l.MarkSettling(ctx, done.ID, payment.Delivered{CostMicroUSD: 300, Response: payment.StoredResponse{Body: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if err := l.CompleteOrder(ctx, done.ID, payment.Settled{SettlementRef: "r"}); err != nil {
		t.Fatal(err)
	}
	failed := mk("a", 20000)
	if err := l.FailOrder(ctx, failed.ID, "x"); err != nil {
		t.Fatal(err)
	}
	mk("b", 50000)
	got, err := l.OrderSummary(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []payment.OfferSummary{
		{OfferID: "a", Orders: 2, Completed: 1, Failed: 1, RevenueMicroUSD: 20000, CostMicroUSD: 300},
		{OfferID: "b", Orders: 1, Pending: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("summary differs:\n%s", d)
	}
	if got, _ := l.OrderSummary(ctx, time.Now().Add(time.Hour)); len(got) != 0 {
		t.Errorf("summary ignores since: %v", got)
	}
}
