package paymentmem

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/internal/memstore"
	"github.com/assaykit/assay/payment"
)

// Ledger is an in-memory payment.Ledger: orders, reservations, quotes
// and customers in maps under one lock, with the SQL ledger's rules (it
// passes paymenttest.TestLedger): single-use reservation keys, one live
// order per Idempotency-Key, conditional state changes. Times are kept to
// the microsecond, as a database keeps them. Unlike store/paymentstore it
// reaches no claim verifications, so RotateOrderToken changes the order's
// token hash only.
//
// The zero value is not usable: call New. Safe for concurrent use; it is
// one process's ledger, so reservations do not span instances.
type Ledger struct {
	mu           sync.Mutex
	now          func() time.Time
	orders       map[string]*memOrder
	reservations map[string]*memReservation
	quotes       map[string]*payment.Quote
	customers    map[string]*payment.Customer // by key hash
	waivers      map[string]int               // waived answers by payer and day
}

type memOrder struct {
	o        payment.Order // ExtraReservationKeys unset: not read back
	response *payment.StoredResponse
	receipt  []byte
}

type memReservation struct {
	orderID  string
	consumed bool
	expires  time.Time
}

var _ payment.Ledger = (*Ledger)(nil)

// New returns an empty ledger whose clock (for the times it
// records itself) is now; nil means time.Now.
func New(now func() time.Time) *Ledger {
	return &Ledger{now: memstore.Clock(now), orders: map[string]*memOrder{}, reservations: map[string]*memReservation{},
		quotes: map[string]*payment.Quote{}, customers: map[string]*payment.Customer{}, waivers: map[string]int{}}
}

// OpenOrder implements payment.Ledger.
func (l *Ledger) OpenOrder(ctx context.Context, o *payment.Order) error {
	if o.ID == "" || o.ReservationKey == "" || o.Payer == "" || o.OfferID == "" {
		return errors.New("paymentmem: open order: id, reservation key, payer and offer are required")
	}
	keys := append([]string{o.ReservationKey}, o.ExtraReservationKeys...)
	if slices.Contains(keys, "") {
		return errors.New("paymentmem: open order: empty reservation key")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := memstore.Time(l.now())
	if err := l.checkOpen(o, keys, now); err != nil {
		return err
	}
	for _, k := range keys {
		l.reservations[k] = &memReservation{orderID: o.ID, expires: memstore.Time(o.ReservedUntil)}
	}
	if o.QuoteID != "" {
		l.quotes[o.QuoteID].OrderID = o.ID
	}
	stored := *o
	stored.ExtraReservationKeys = nil
	stored.Currency = cmp.Or(o.Currency, payment.Currency)
	stored.Status, stored.ReservedUntil, stored.CreatedAt, stored.UpdatedAt = payment.OrderProcessing, memstore.Time(o.ReservedUntil), now, now
	stored.FailureReason, stored.SettlementRef, stored.ReceiptID, stored.CompletedAt = "", "", "", time.Time{}
	stored.ResultKind, stored.ResultID, stored.ResultSHA256, stored.Usage, stored.CostMicroUSD = "", "", "", payment.Usage{}, 0
	l.orders[o.ID] = &memOrder{o: stored}
	o.Status, o.Currency, o.CreatedAt, o.UpdatedAt = payment.OrderProcessing, payment.Currency, now, now
	return nil
}

// checkOpen returns the error opening o with reservation keys at now
// meets, before anything is written.
func (l *Ledger) checkOpen(o *payment.Order, keys []string, now time.Time) error {
	for i, k := range keys {
		if _, ok := l.reservations[k]; ok || slices.Contains(keys[:i], k) {
			return payment.ErrReservationUsed
		}
	}
	if o.QuoteID != "" {
		q, ok := l.quotes[o.QuoteID]
		if !ok || q.OrderID != "" || !q.ExpiresAt.After(now) {
			return payment.ErrQuoteUnavailable
		}
	}
	if _, ok := l.orders[o.ID]; ok {
		return payment.ErrIdempotencyInFlight // as the SQL ledger: ids are random, a clash is the key's
	}
	if o.IdempotencyKey != "" && l.byIdempotencyKey(o.Payer, o.OfferID, o.IdempotencyKey) != nil {
		return payment.ErrIdempotencyInFlight
	}
	return nil
}

// byIdempotencyKey returns the order holding the key, or nil.
func (l *Ledger) byIdempotencyKey(payer, offerID, key string) *memOrder {
	for _, m := range l.orders {
		if m.o.Payer == payer && m.o.OfferID == offerID && m.o.IdempotencyKey == key {
			return m
		}
	}
	return nil
}

// order returns a copy of the stored order, or ErrOrderNotFound.
func (l *Ledger) order(m *memOrder) (*payment.Order, error) {
	if m == nil {
		return nil, payment.ErrOrderNotFound
	}
	o := m.o
	o.PaymentRecord, o.SettlementRefs = slices.Clone(o.PaymentRecord), slices.Clone(o.SettlementRefs)
	return &o, nil
}

// Order implements payment.Ledger.
func (l *Ledger) Order(ctx context.Context, id string) (*payment.Order, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !ids.Valid(ids.Order, id) {
		return nil, payment.ErrOrderNotFound
	}
	return l.order(l.orders[id])
}

// OrderByIdempotencyKey implements payment.Ledger.
func (l *Ledger) OrderByIdempotencyKey(ctx context.Context, payer, offerID, key string) (*payment.Order, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if key == "" {
		return nil, payment.ErrOrderNotFound
	}
	return l.order(l.byIdempotencyKey(payer, offerID, key))
}

// OrderByReservation implements payment.Ledger.
func (l *Ledger) OrderByReservation(ctx context.Context, key string) (*payment.Order, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.reservations[key]
	if !ok {
		return nil, payment.ErrOrderNotFound
	}
	return l.order(l.orders[r.orderID])
}

// RotateOrderToken implements payment.Ledger.
func (l *Ledger) RotateOrderToken(ctx context.Context, id, tokenHash string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.orders[id]
	if !ok || tokenHash == "" {
		return payment.ErrOrderNotFound
	}
	m.o.TokenHash = tokenHash
	return nil
}

// OrderByToken implements payment.Ledger.
func (l *Ledger) OrderByToken(ctx context.Context, tokenHash string) (*payment.Order, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.orders {
		if tokenHash != "" && m.o.TokenHash == tokenHash {
			return l.order(m)
		}
	}
	return nil, payment.ErrOrderNotFound
}

// transition returns the stored order id when its status is one of from
// (for a move to a status s, s.From()), and otherwise ErrOrderNotFound or
// ErrConflict naming its status.
func (l *Ledger) transition(id string, from ...payment.OrderStatus) (*memOrder, error) {
	m, ok := l.orders[id]
	switch {
	case !ok:
		return nil, payment.ErrOrderNotFound
	case !slices.Contains(from, m.o.Status):
		return nil, fmt.Errorf("%w (order is %s)", payment.ErrConflict, m.o.Status)
	}
	return m, nil
}

// MarkSettling implements payment.Ledger.
func (l *Ledger) MarkSettling(ctx context.Context, id string, d payment.Delivered) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, err := l.transition(id, payment.OrderSettling.From()...)
	if err != nil {
		return err
	}
	m.deliver(d)
	m.o.Status, m.o.UpdatedAt, m.o.SettleNextAt = payment.OrderSettling, memstore.Time(l.now()), memstore.Time(d.ResolveAfter)
	return nil
}

// deliver records on m what its work delivered (d).
func (m *memOrder) deliver(d payment.Delivered) {
	o := &m.o
	o.ResultKind, o.ResultID, o.ResultSHA256 = d.ResultKind, d.ResultID, d.ResultSHA256
	o.Usage, o.CostMicroUSD, o.PaymentRecord = d.Usage, d.CostMicroUSD, slices.Clone(d.PaymentRecord)
	m.response = nil
	if d.Response.Body != nil { // nil: not kept (a streamed response)
		r := d.Response
		r.Body = slices.Clone(r.Body)
		m.response = &r
	}
}

// finish keeps m's signed receipt and consumes the reservations of its
// order (they answer the credential from now on).
func (l *Ledger) finish(m *memOrder, receipt []byte) {
	m.receipt = nil
	if len(receipt) > 0 {
		m.receipt = slices.Clone(receipt)
	}
	for _, r := range l.reservations {
		if r.orderID == m.o.ID {
			r.consumed = true
		}
	}
}

// CompleteOrder implements payment.Ledger.
func (l *Ledger) CompleteOrder(ctx context.Context, id string, s payment.Settled) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, err := l.transition(id, payment.OrderCompleted.From()...)
	if err != nil {
		return err
	}
	if s.ReceiptID != "" && slices.ContainsFunc(slices.Collect(maps.Values(l.orders)), func(other *memOrder) bool {
		return other != m && other.o.ReceiptID == s.ReceiptID
	}) {
		return fmt.Errorf("paymentmem: complete order: receipt %s is another order's", s.ReceiptID)
	}
	now := memstore.Time(l.now())
	o := &m.o
	o.Status, o.SettlementRef, o.Network = payment.OrderCompleted, s.SettlementRef, cmp.Or(s.Network, o.Network)
	o.SettlementRefs = addRefs(o.SettlementRefs, s.SettlementRef)
	o.Dev, o.ReceiptID, o.CompletedAt, o.UpdatedAt = s.Dev, s.ReceiptID, cmp.Or(memstore.Time(s.CompletedAt), now), now
	l.finish(m, s.Receipt)
	return nil
}

// VoidOrder implements payment.Ledger.
func (l *Ledger) VoidOrder(ctx context.Context, id string, v payment.Voided) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, err := l.transition(id, payment.OrderVoided.From()...)
	if err != nil {
		return err
	}
	quota := strings.ToLower(m.o.Payer) + "|" + v.Day
	if l.waivers[quota] >= v.Limit {
		return payment.ErrWaiverExhausted
	}
	l.waivers[quota]++
	now := memstore.Time(l.now())
	m.deliver(v.Delivered)
	o := &m.o
	o.Status, o.FailureReason, o.ReceiptID = payment.OrderVoided, v.Reason, v.ReceiptID
	o.CompletedAt, o.UpdatedAt = cmp.Or(memstore.Time(v.CompletedAt), now), now
	l.finish(m, v.Receipt)
	return nil
}

// addRefs appends the new non-empty references to refs, once each.
func addRefs(refs []string, add ...string) []string {
	for _, r := range add {
		if r != "" && !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	return refs
}

// NoteSettlement implements payment.Ledger.
func (l *Ledger) NoteSettlement(ctx context.Context, id string, n payment.SettlementNote) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, err := l.transition(id, payment.OrderSettling)
	if err != nil {
		return err
	}
	o := &m.o
	o.SettlementRefs = addRefs(o.SettlementRefs, n.Refs...)
	if len(n.Refs) > 0 && n.Refs[len(n.Refs)-1] != "" {
		o.SettlementRef = n.Refs[len(n.Refs)-1]
	}
	o.SettleNote, o.SettleNextAt, o.UpdatedAt = n.Note, memstore.Time(n.NextAt), memstore.Time(l.now())
	o.SettleAttempts++
	return nil
}

// ClaimSettlement implements payment.Ledger.
func (l *Ledger) ClaimSettlement(ctx context.Context, id string, dueBy, until time.Time) (*payment.Order, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, err := l.transition(id, payment.OrderSettling)
	if err != nil {
		return nil, err
	}
	if m.o.SettleNextAt.After(memstore.Time(dueBy)) {
		return nil, fmt.Errorf("%w (settling, not due)", payment.ErrConflict)
	}
	m.o.SettleNextAt = memstore.Time(until)
	return l.order(m)
}

// SettlementsDue implements payment.Ledger.
func (l *Ledger) SettlementsDue(ctx context.Context, t time.Time, limit int) ([]payment.Order, error) {
	return l.list(limit, func(o *payment.Order) bool {
		return o.Status == payment.OrderSettling && !o.SettleNextAt.After(memstore.Time(t))
	}, func(a, b payment.Order) int {
		return cmp.Or(a.SettleNextAt.Compare(b.SettleNextAt), cmp.Compare(a.ID, b.ID))
	})
}

// OpenOrders implements payment.Ledger.
func (l *Ledger) OpenOrders(ctx context.Context, limit int) ([]payment.Order, error) {
	return l.list(limit, func(o *payment.Order) bool {
		return o.Status == payment.OrderProcessing || o.Status == payment.OrderSettling
	}, func(a, b payment.Order) int { return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID)) })
}

// list returns up to limit copies of the orders keep selects, sorted.
func (l *Ledger) list(limit int, keep func(*payment.Order) bool, order func(a, b payment.Order) int) ([]payment.Order, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if limit <= 0 {
		limit = 100
	}
	out := []payment.Order{}
	for _, m := range l.orders {
		if keep(&m.o) {
			o, _ := l.order(m)
			out = append(out, *o)
		}
	}
	slices.SortFunc(out, order)
	return out[:min(limit, len(out))], nil
}

// FailOrder implements payment.Ledger.
func (l *Ledger) FailOrder(ctx context.Context, id, reason string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, err := l.transition(id, payment.OrderFailed.From()...)
	if err != nil {
		return err
	}
	m.o.Status, m.o.FailureReason, m.o.IdempotencyKey, m.o.UpdatedAt = payment.OrderFailed, reason, "", memstore.Time(l.now())
	maps.DeleteFunc(l.reservations, func(_ string, r *memReservation) bool { return r.orderID == id })
	for _, q := range l.quotes {
		if q.OrderID == id {
			q.OrderID = ""
		}
	}
	return nil
}

// OrdersInState implements payment.Ledger.
func (l *Ledger) OrdersInState(ctx context.Context, status payment.OrderStatus, before time.Time, limit int) ([]payment.Order, error) {
	return l.list(limit, func(o *payment.Order) bool {
		return o.Status == status && o.UpdatedAt.Before(memstore.Time(before))
	}, func(a, b payment.Order) int { return cmp.Or(a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.ID, b.ID)) })
}

// Response implements payment.Ledger.
func (l *Ledger) Response(ctx context.Context, orderID string) (*payment.StoredResponse, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.orders[orderID]
	if !ok || m.response == nil {
		return nil, payment.ErrOrderNotFound
	}
	r := *m.response
	r.Body = slices.Clone(r.Body)
	return &r, nil
}

// Receipt implements payment.Ledger.
func (l *Ledger) Receipt(ctx context.Context, orderID string) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.orders[orderID]
	if !ok || m.receipt == nil {
		return nil, payment.ErrReceiptNotFound
	}
	return slices.Clone(m.receipt), nil
}

// CreateQuote implements payment.Ledger.
func (l *Ledger) CreateQuote(ctx context.Context, q *payment.Quote) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.quotes[q.ID]; ok {
		return fmt.Errorf("paymentmem: create quote: %s exists", q.ID)
	}
	q.Currency = cmp.Or(q.Currency, payment.Currency)
	stored := *q
	stored.OrderID, stored.CreatedAt, stored.ExpiresAt = "", memstore.Time(q.CreatedAt), memstore.Time(q.ExpiresAt)
	l.quotes[q.ID] = &stored
	return nil
}

// Quote implements payment.Ledger.
func (l *Ledger) Quote(ctx context.Context, id string) (*payment.Quote, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q, ok := l.quotes[id]
	if !ok {
		return nil, payment.ErrQuoteNotFound
	}
	c := *q
	return &c, nil
}

// CreateCustomer implements payment.Ledger.
func (l *Ledger) CreateCustomer(ctx context.Context, c *payment.Customer, keyHash string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.Status = cmp.Or(c.Status, payment.CustomerActive)
	if _, ok := l.customers[keyHash]; ok || slices.ContainsFunc(slices.Collect(maps.Values(l.customers)), func(o *payment.Customer) bool { return o.ID == c.ID }) {
		return fmt.Errorf("paymentmem: create customer: %s or its key exists", c.ID)
	}
	stored := *c
	stored.CreatedAt = memstore.Time(c.CreatedAt)
	l.customers[keyHash] = &stored
	return nil
}

// CustomerByKeyHash implements payment.Ledger.
func (l *Ledger) CustomerByKeyHash(ctx context.Context, keyHash string) (*payment.Customer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.customers[keyHash]
	if !ok {
		return nil, payment.ErrCustomerNotFound
	}
	out := *c
	return &out, nil
}

// CustomerOrders implements payment.Ledger. The cursor is the base64url
// of "<created microseconds>.<order id>" of the last order returned.
func (l *Ledger) CustomerOrders(ctx context.Context, customerID string, page payment.OrderPage) ([]payment.Order, string, error) {
	after, err := parseCursor(page.Cursor)
	if err != nil {
		return nil, "", err
	}
	l.mu.Lock()
	var orders []payment.Order
	for _, m := range l.orders {
		if m.o.CustomerID == customerID && (after == nil || newestFirst(m.o, *after) > 0) {
			orders = append(orders, m.o)
		}
	}
	l.mu.Unlock()
	slices.SortFunc(orders, newestFirst)
	if page.Cursor == "" {
		orders = orders[min(max(page.Offset, 0), len(orders)):]
	}
	limit := cmp.Or(max(page.Limit, 0), 50)
	if len(orders) <= limit {
		return append([]payment.Order{}, orders...), "", nil
	}
	last := orders[limit-1]
	next := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d.%s", last.CreatedAt.UnixMicro(), last.ID))
	return orders[:limit], next, nil
}

// newestFirst orders orders by creation time, then id, both descending.
func newestFirst(a, b payment.Order) int {
	return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
}

// parseCursor returns the position a cursor names (nil for none).
func parseCursor(c string) (*payment.Order, error) {
	if c == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	at, id, ok := strings.Cut(string(raw), ".")
	us, perr := strconv.ParseInt(at, 10, 64)
	if err != nil || perr != nil || !ok || id == "" {
		return nil, payment.ErrBadCursor
	}
	return &payment.Order{ID: id, CreatedAt: time.UnixMicro(us).UTC()}, nil
}

// OrderSummary implements payment.Ledger.
func (l *Ledger) OrderSummary(ctx context.Context, since time.Time) ([]payment.OfferSummary, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	by := map[string]*payment.OfferSummary{}
	for _, m := range l.orders {
		o := m.o
		if o.CreatedAt.Before(memstore.Time(since)) {
			continue
		}
		s := by[o.OfferID]
		if s == nil {
			s = &payment.OfferSummary{OfferID: o.OfferID}
			by[o.OfferID] = s
		}
		s.Orders++
		switch o.Status {
		case payment.OrderCompleted:
			s.Completed++
			s.RevenueMicroUSD += o.AmountMicroUSD
			s.CostMicroUSD += o.CostMicroUSD
		case payment.OrderFailed:
			s.Failed++
		case payment.OrderVoided:
			s.Voided++
		default:
			s.Pending++
		}
	}
	out := []payment.OfferSummary{}
	for _, id := range slices.Sorted(maps.Keys(by)) {
		out = append(out, *by[id])
	}
	return out, nil
}
