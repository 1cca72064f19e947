package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
)

// The judge of the faults scenario. Every answer a payer gets is judged
// as it arrives, and the orders (read-only SQL of payment_orders: status,
// reservation key, settlement reference) are judged against the chain
// after every fault. The invariants:
const (
	// (1) No 200 carries paid bytes — a paid route's answer, the order's
	// result (/v1/orders/{id}/result) or the verification read with the
	// order token — unless the payment is on the chain and the order
	// completed with it.
	invUnpaid = "1 nothing delivered unpaid"
	// (2) No payment settled twice: one transfer per payer on the chain
	// (every payment has a fresh wallet), one completed order per
	// reservation key, and every completed order names a successful
	// transfer of its payer, amount and payee that no other order names.
	invTwice = "2 nothing settled twice"
	// (3) No order processing or settling once the fault has healed and
	// the resolver's bound has passed.
	invOpen = "3 no order open after healing"
	// (4) A payer whose payment reached the chain gets the stored answer
	// (200, replay, receipt id) when it re-sends its credential — never a
	// 402; and once the resolver's bound has passed every such payment
	// has its completed order.
	invRecover = "4 every settled payer recovers its answer"
	// (5) Every refusal names its reason: a 402 carries a problem with the
	// reason (error), other 4xx a detail; a 503 carries Retry-After; no
	// answer carries the facilitator's (or the chain's) address.
	invReason = "5 every refusal names its reason"
	// (6) Copies of one credential sent at once never get a 402 (only the
	// answer, its replay, 202, 409 or 503) and reach the facilitator once.
	invConcurrent = "6 concurrent re-sends never refused, facilitator once"
	// The status contract of each fault (503, not 402, on outages; paid
	// routes 503 while the facilitator lacks the network; …).
	invContract = "contract"
	// No 5xx other than 503 (the instance's last log lines are attached).
	inv5xx = "no 5xx other than 503"
)

// violation is one broken invariant, with everything needed to find it:
// fault, backend, phase, the credential (route, protocol, payer), the
// order and what was seen.
type violation struct {
	Invariant string `json:"invariant"`
	Fault     string `json:"fault"`
	Backend   string `json:"backend"`
	Phase     string `json:"phase"`
	Route     string `json:"route"`
	Protocol  string `json:"protocol"`
	Payer     string `json:"payer"`
	Order     string `json:"order"`
	Seen      string `json:"seen"`
}

func (v violation) String() string {
	return fmt.Sprintf("[%s] fault %s on %s, phase %s, credential %s %s payer %s, order %s: %s",
		v.Invariant, v.Fault, v.Backend, v.Phase, v.Route, v.Protocol, v.Payer, orNone(v.Order), v.Seen)
}

// judge collects violations.
type judge struct {
	mu   sync.Mutex
	list []violation
}

func (j *judge) add(vs ...violation) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.list = append(j.list, vs...)
}

func (j *judge) violations() []violation {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.list)
}

// count returns the number of violations per invariant.
func (j *judge) count() map[string]int {
	m := map[string]int{}
	for _, v := range j.violations() {
		m[v.Invariant]++
	}
	return m
}

// problemBody is what the judge reads of an error answer.
type problemBody struct {
	Type   string `json:"type"`
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

// reasonOf returns the reason a refusal names: the 402's error (body or
// PAYMENT-REQUIRED), else its problem type, else the detail.
func reasonOf(a answer) string {
	var p problemBody
	_ = json.Unmarshal(a.body, &p)
	if a.status == http.StatusPaymentRequired {
		if p.Error != "" {
			return p.Error
		}
		if v := a.header.Get(x402.HeaderPaymentRequired); v != "" {
			var pr x402.PaymentRequired
			if x402.DecodeHeader(v, &pr) == nil && pr.Error != "" {
				return pr.Error
			}
		}
		return ""
	}
	if p.Detail != "" {
		return p.Detail
	}
	return p.Error
}

// answerFacts is what the judge knows around one answer to a paid request.
type answerFacts struct {
	// PaidBefore: the chain showed the credential's payment before the
	// request was sent; PaidAfter: after the answer arrived.
	PaidBefore, PaidAfter bool
	// Concurrent: the answer is one of many copies sent at once.
	Concurrent bool
	// Secrets are strings no answer may carry (the facilitator's and the
	// chain's addresses).
	Secrets []string
}

// judgeAnswer checks one answer to a paid request (invariants 1, 4, 5, 6
// and the 5xx rule). Seen and Invariant are filled in; the caller adds
// the context.
func judgeAnswer(a answer, f answerFacts) []violation {
	var out []violation
	bad := func(inv, format string, args ...any) {
		out = append(out, violation{Invariant: inv, Seen: fmt.Sprintf(format, args...)})
	}
	if a.err != nil {
		return nil // no answer (a killed server): judged by what follows
	}
	replay := a.header.Get(httpgate.HeaderReplay) == "true"
	for _, s := range f.Secrets {
		if s == "" {
			continue
		}
		if strings.Contains(string(a.body), s) {
			bad(invReason, "%d answer carries the address %s: %s", a.status, s, snippet(a.body))
		}
		for k, vs := range a.header {
			for _, v := range vs {
				if strings.Contains(v, s) {
					bad(invReason, "%d answer's header %s carries the address %s", a.status, k, s)
				}
			}
		}
	}
	switch {
	case a.status == http.StatusOK:
		if !f.PaidAfter {
			bad(invUnpaid, "200 (replay %t, %d bytes) but the payment is not on the chain", replay, len(a.body))
		}
		if a.header.Get(httpgate.HeaderOrderID) == "" || a.header.Get(httpgate.HeaderReceiptID) == "" {
			bad(invRecover, "200 without order id or receipt id")
		}
		if f.PaidBefore && !replay {
			bad(invTwice, "a fresh 200 (not a replay) for a payment already on the chain")
		}
	case a.status == http.StatusPaymentRequired:
		if reasonOf(a) == "" {
			bad(invReason, "402 without a reason: %s", snippet(a.body))
		}
		if f.PaidBefore {
			bad(invRecover, "402 %q to a payer whose payment is on the chain", reasonOf(a))
		}
		if f.Concurrent {
			bad(invConcurrent, "402 %q to a copy sent at once", reasonOf(a))
		}
	case a.status == http.StatusServiceUnavailable:
		if a.header.Get("Retry-After") == "" {
			bad(invReason, "503 without Retry-After: %s", snippet(a.body))
		}
		if reasonOf(a) == "" {
			bad(invReason, "503 without a detail: %s", snippet(a.body))
		}
		if f.PaidBefore {
			bad(invRecover, "503 to a payer whose payment is on the chain: %s", snippet(a.body))
		}
	case a.status == http.StatusAccepted:
		if a.header.Get(httpgate.HeaderOrderID) == "" || a.header.Get(httpgate.HeaderOrderToken) == "" {
			bad(invReason, "202 without order id or token")
		}
		if strings.Contains(string(a.body), `"verificationId"`) || strings.Contains(string(a.body), `"nicheId"`) {
			bad(invUnpaid, "202 carries paid content: %s", snippet(a.body))
		}
	case a.status >= 500:
		bad(inv5xx, "%d: %s", a.status, snippet(a.body))
	case a.status >= 400:
		if reasonOf(a) == "" {
			bad(invReason, "%d without a detail: %s", a.status, snippet(a.body))
		}
		if a.status == http.StatusConflict && a.header.Get("Retry-After") == "" {
			bad(invReason, "409 without Retry-After: %s", snippet(a.body))
		}
	default:
		bad(invContract, "unexpected status %d: %s", a.status, snippet(a.body))
	}
	if f.Concurrent && !slices.Contains([]int{200, 202, 409, 503}, a.status) {
		bad(invConcurrent, "a copy sent at once got %d: %s", a.status, snippet(a.body))
	}
	if f.PaidBefore && a.status != http.StatusOK && a.status != http.StatusAccepted && a.status != http.StatusConflict &&
		a.status != http.StatusPaymentRequired && a.status != http.StatusServiceUnavailable {
		bad(invRecover, "%d to a payer whose payment is on the chain: %s", a.status, snippet(a.body))
	}
	return out
}

// orderRow is one row of payment_orders, as the judge reads it.
type orderRow struct {
	ID, Status, ReservationKey, Payer, OfferID, Protocol string
	SettlementRef, SettlementRefs                        string
	ResultKind, ResultID, ResultSHA256, ReceiptID        string
	Amount                                               int64
}

// orderColumns are the columns orderRow reads.
const orderColumns = `id, status, reservation_key, payer, offer_id, protocol, settlement_ref, settlement_refs,
	result_kind, result_id, result_sha256, COALESCE(receipt_id, ''), amount_microusd`

// orderColumnsBefore16 reads a schema older than migration 0016 (no
// settlement_refs): the suite can judge a server from before settlement
// resolution existed, to show what it catches.
const orderColumnsBefore16 = `id, status, reservation_key, payer, offer_id, protocol, settlement_ref, '' AS settlement_refs,
	result_kind, result_id, result_sha256, COALESCE(receipt_id, ''), amount_microusd`

// columnsFor returns the column list the schema of db has.
func columnsFor(ctx context.Context, db *sql.DB) string {
	if _, err := db.ExecContext(ctx, "SELECT settlement_refs FROM payment_orders WHERE 1 = 0"); err != nil {
		return orderColumnsBefore16
	}
	return orderColumns
}

func scanOrder(rows interface{ Scan(...any) error }) (orderRow, error) {
	var o orderRow
	err := rows.Scan(&o.ID, &o.Status, &o.ReservationKey, &o.Payer, &o.OfferID, &o.Protocol, &o.SettlementRef, &o.SettlementRefs,
		&o.ResultKind, &o.ResultID, &o.ResultSHA256, &o.ReceiptID, &o.Amount)
	return o, err
}

// readOrders reads every order (read-only).
func readOrders(ctx context.Context, db *sql.DB) ([]orderRow, error) {
	rows, err := db.QueryContext(ctx, "SELECT "+columnsFor(ctx, db)+" FROM payment_orders ORDER BY created_at, id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []orderRow
	for rows.Next() {
		o, err := scanOrder(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// readOrder reads one order (read-only); ok is false when it is unknown.
func readOrder(ctx context.Context, db *sql.DB, id string, placeholder string) (orderRow, bool, error) {
	o, err := scanOrder(db.QueryRowContext(ctx, "SELECT "+columnsFor(ctx, db)+" FROM payment_orders WHERE id = "+placeholder, id))
	if err == sql.ErrNoRows {
		return o, false, nil
	}
	return o, err == nil, err
}

// chainView is what the judge reads of the chain.
type chainView struct {
	// Transfers are the successful transactions.
	Transfers []paymenttest.ChainTx
	// Tx looks a transaction up by hash (nil: unknown).
	Tx      func(hash string) *paymenttest.ChainTx
	Network evm.Network
	Payee   evm.Address
}

// judgeOrders checks the orders against the chain (invariant 2), and
// when closed — the fault healed and the resolver's bound passed — also
// that no order is open (3) and that every payment on the chain has its
// completed order (4). open says which open orders are excused (an order
// a SIGKILL left processing on PostgreSQL waits for the 10-minute stale
// window, which the suite does not wait out); it may be nil.
func judgeOrders(orders []orderRow, ch chainView, closed bool, excused func(orderRow) bool) []violation {
	var out []violation
	bad := func(inv string, o orderRow, format string, args ...any) {
		out = append(out, violation{Invariant: inv, Order: o.ID, Payer: o.Payer, Seen: fmt.Sprintf(format, args...)})
	}
	completedByKey := map[string][]string{}
	byRef := map[string][]string{}
	for _, o := range orders {
		switch o.Status {
		case "completed":
			completedByKey[o.ReservationKey] = append(completedByKey[o.ReservationKey], o.ID)
			byRef[strings.ToLower(o.SettlementRef)] = append(byRef[strings.ToLower(o.SettlementRef)], o.ID)
			tx := ch.Tx(o.SettlementRef)
			switch {
			case o.SettlementRef == "" || tx == nil:
				bad(invUnpaid, o, "completed with settlement %q, which the chain does not know", o.SettlementRef)
			case !tx.Success:
				bad(invUnpaid, o, "completed with settlement %s, a transaction that reverted (%s)", o.SettlementRef, tx.Reason)
			case !strings.EqualFold(tx.Authorization.From.Hex(), o.Payer):
				bad(invTwice, o, "completed with settlement %s, a transfer from %s, not from its payer", o.SettlementRef, tx.Authorization.From.Hex())
			case tx.Authorization.To != ch.Payee:
				bad(invUnpaid, o, "completed with settlement %s, a transfer to %s, not to the payee %s", o.SettlementRef, tx.Authorization.To.Hex(), ch.Payee.Hex())
			case tx.Authorization.Value.Int64() != o.Amount:
				bad(invUnpaid, o, "completed for %d with settlement %s of %s", o.Amount, o.SettlementRef, tx.Authorization.Value)
			case tx.Authorization.ReservationKey(ch.Network) != o.ReservationKey:
				bad(invTwice, o, "completed with settlement %s of another authorization (%s)", o.SettlementRef, tx.Authorization.ReservationKey(ch.Network))
			}
		case "processing", "settling":
			if closed && (excused == nil || !excused(o)) {
				bad(invOpen, o, "still %s after healing and the resolver's bound (settlement refs %q)", o.Status, o.SettlementRefs)
			}
		}
	}
	byID := map[string]orderRow{}
	for _, o := range orders {
		byID[o.ID] = o
	}
	for key, ids := range completedByKey {
		if len(ids) > 1 {
			bad(invTwice, byID[ids[0]], "reservation %s has %d completed orders: %s", key, len(ids), strings.Join(ids, ", "))
		}
	}
	for ref, ids := range byRef {
		if ref != "" && len(ids) > 1 {
			bad(invTwice, byID[ids[0]], "settlement %s is named by %d completed orders: %s", ref, len(ids), strings.Join(ids, ", "))
		}
	}
	perPayer := map[string][]string{}
	for _, tx := range ch.Transfers {
		from := strings.ToLower(tx.Authorization.From.Hex())
		perPayer[from] = append(perPayer[from], tx.Hash)
		if closed {
			key := tx.Authorization.ReservationKey(ch.Network)
			if len(completedByKey[key]) == 0 {
				out = append(out, violation{Invariant: invRecover, Payer: tx.Authorization.From.Hex(),
					Seen: fmt.Sprintf("paid on the chain (%s) but no completed order holds the answer", tx.Hash)})
			}
		}
	}
	for payer, hs := range perPayer {
		if len(hs) > 1 {
			out = append(out, violation{Invariant: invTwice, Payer: payer, Seen: fmt.Sprintf("%d transfers on the chain: %s", len(hs), strings.Join(hs, ", "))})
		}
	}
	slices.SortFunc(out, func(a, b violation) int { return strings.Compare(a.String(), b.String()) })
	return out
}
