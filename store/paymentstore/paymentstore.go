package paymentstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/store"

	"github.com/assaykit/assay/payment"
)

// The payment ledger: reservations, orders, receipts, quotes and customers
// (payment.Ledger). Single use of a payment rests on the primary key of
// payment_reservations (one row per reservation key of an order: its
// ReservationKey and ExtraReservationKeys, all inserted in the order's
// transaction and deleted together by order_id when the order fails, which
// releases them; a reservation's state is otherwise its order's: reserved
// while it is processing or settling, consumed once it is completed or
// voided); idempotency on the partial unique index over
// (payer, offer_id, idempotency_key); every state change is a conditional
// UPDATE on the current status, so concurrent writers (also on other
// instances sharing PostgreSQL) cannot both win.
//
// Durable steps. A sale commits three times (open, settling, completed)
// but waits for the disk once: only MarkSettling, the commit before money
// may move, is durable at its return (one statement, store.DB.CachedExec).
// OpenOrder, CompleteOrder and FailOrder commit without waiting
// (store.DB.ExecBatchNoSync, InTxNoSync): a crash of the process loses
// none of them, and a power failure can undo only what the ledger
// repairs. An open order lost before MarkSettling moved no money (the
// payer's retry is charged once); MarkSettling's flush of the log makes
// the order's opening durable too; a completion or failure lost leaves the
// order settling, with its stored answer, for the resolver to settle again
// (the facilitator reconciles a repeat, the chain shows a used
// authorization), which may sign a new receipt.
//
// Few writes per step. Each commit writes again every page it touches,
// and on PostgreSQL each statement is a round trip. So a sale's opening
// is one batch (its reservations and its order: one round trip on
// PostgreSQL), the settling mark one statement and the completion one
// statement when its settlement references are plain (the live
// settlement's); a reservation's state is its order's, never written
// again; and the queries by status all ask for orders in flight, served by
// one small partial index (payment_orders_open) rather than indexes that
// every commit of every order updated. Nothing is read back that was just
// written. A sale writes 16 SQLite pages (22 before) and makes 3 round
// trips to PostgreSQL (15 before).

var _ payment.Ledger = (*Store)(nil)

// inFlight selects the orders processing or settling, in the words of the
// index of orders in flight (payment_orders_open), so that the planner
// may use it.
const inFlight = "status IN ('" + string(payment.OrderProcessing) + "', '" + string(payment.OrderSettling) + "')"

const orderColumns = `id, token_hash, offer_id, tier, protocol, method, network, payer, customer_id,
	amount_microusd, currency, reservation_key, reserved_until, quote_id, idempotency_key, request_hash,
	status, failure_reason, settlement_ref, dev, result_kind, result_id, result_sha256,
	usage_provider, usage_model, input_tokens, cached_input_tokens, output_tokens, search_calls,
	cost_microusd, receipt_id, created_at, updated_at, completed_at,
	payment_record, settlement_refs, settle_attempts, settle_note, settle_next_at`

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

type rowScanner interface{ Scan(dest ...any) error }

func scanOrder(r rowScanner) (*payment.Order, error) {
	var o payment.Order
	var customer, quote, idem, receipt sql.NullString
	var reserved, created, updated, completed, nextAt int64
	var dev, attempts int
	var in, cached, out, searches int64
	var refs string
	err := r.Scan(&o.ID, &o.TokenHash, &o.OfferID, &o.Tier, &o.Protocol, &o.Method, &o.Network, &o.Payer, &customer,
		&o.AmountMicroUSD, &o.Currency, &o.ReservationKey, &reserved, &quote, &idem, &o.RequestHash,
		&o.Status, &o.FailureReason, &o.SettlementRef, &dev, &o.ResultKind, &o.ResultID, &o.ResultSHA256,
		&o.Usage.Provider, &o.Usage.Model, &in, &cached, &out, &searches,
		&o.CostMicroUSD, &receipt, &created, &updated, &completed,
		&o.PaymentRecord, &refs, &attempts, &o.SettleNote, &nextAt)
	if err != nil {
		return nil, err
	}
	o.SettlementRefs = splitRefs(refs)
	o.SettleAttempts, o.SettleNextAt = attempts, store.FromMicros(nextAt)
	o.CustomerID, o.QuoteID, o.IdempotencyKey, o.ReceiptID = customer.String, quote.String, idem.String, receipt.String
	o.ReservedUntil, o.CreatedAt, o.UpdatedAt, o.CompletedAt = store.FromMicros(reserved), store.FromMicros(created), store.FromMicros(updated), store.FromMicros(completed)
	o.Dev = dev != 0
	o.Usage.InputTokens, o.Usage.CachedInputTokens, o.Usage.OutputTokens, o.Usage.SearchCalls = int(in), int(cached), int(out), int(searches)
	return &o, nil
}

// OpenOrder implements payment.Ledger.
func (ps *Store) OpenOrder(ctx context.Context, o *payment.Order) error {
	if o.ID == "" || o.ReservationKey == "" || o.Payer == "" || o.OfferID == "" {
		return fmt.Errorf("store: open order: id, reservation key, payer and offer are required")
	}
	now := ps.db.NowMicros()
	keys := append([]string{o.ReservationKey}, o.ExtraReservationKeys...)
	for _, k := range keys {
		if k == "" {
			return fmt.Errorf("store: open order: empty reservation key")
		}
	}
	currency := o.Currency
	if currency == "" {
		currency = payment.Currency
	}
	// The reservations, then the order: one transaction, one batch (one
	// round trip on PostgreSQL). A unique violation names what was taken
	// by the statement that failed: a reservation, or the idempotency key
	// (the order id is random).
	stmts := make([]store.Stmt, 0, len(keys)+1)
	for _, k := range keys {
		stmts = append(stmts, store.Stmt{Query: `INSERT INTO payment_reservations (key, order_id, expires_at, created_at)
			VALUES (?, ?, ?, ?)`, Args: []any{k, o.ID, store.ToMicros(o.ReservedUntil), now}})
	}
	order := store.Stmt{Query: `INSERT INTO payment_orders (id, token_hash, offer_id, tier, protocol, method, network,
		payer, customer_id, amount_microusd, currency, reservation_key, reserved_until, quote_id, idempotency_key,
		request_hash, status, dev, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		Args: []any{o.ID, o.TokenHash, o.OfferID, o.Tier, o.Protocol, o.Method, o.Network,
			o.Payer, store.NullIfEmpty(o.CustomerID), o.AmountMicroUSD, currency, o.ReservationKey, store.ToMicros(o.ReservedUntil),
			store.NullIfEmpty(o.QuoteID), store.NullIfEmpty(o.IdempotencyKey), o.RequestHash, payment.OrderProcessing, boolInt(o.Dev), now, now}}
	var err error
	if o.QuoteID == "" {
		_, err = ps.db.ExecBatchNoSync(ctx, append(stmts, order)...)
	} else {
		// A quote is claimed only while it is available, which the
		// transaction must learn before it commits: not a batch.
		err = ps.db.InTxNoSync(ctx, func(tx *store.Tx) error {
			for i, st := range stmts {
				if _, err := tx.CachedExec(ctx, st.Query, st.Args...); err != nil {
					return &store.BatchError{Index: i, Err: err}
				}
			}
			res, err := tx.CachedExec(ctx, `UPDATE payment_quotes SET order_id = ?
				WHERE id = ? AND order_id IS NULL AND expires_at > ?`, o.ID, o.QuoteID, now)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n != 1 {
				return payment.ErrQuoteUnavailable
			}
			if _, err := tx.CachedExec(ctx, order.Query, order.Args...); err != nil {
				return &store.BatchError{Index: len(stmts), Err: err}
			}
			return nil
		})
	}
	var be *store.BatchError
	switch {
	case errors.As(err, &be) && ps.db.IsUniqueViolation(be.Err) && be.Index < len(keys):
		return payment.ErrReservationUsed
	case errors.As(err, &be) && ps.db.IsUniqueViolation(be.Err):
		return payment.ErrIdempotencyInFlight
	case errors.Is(err, payment.ErrQuoteUnavailable):
		return err
	case err != nil:
		return fmt.Errorf("store: open order: %w", err)
	}
	o.Status = payment.OrderProcessing
	o.Currency = payment.Currency
	o.CreatedAt, o.UpdatedAt = store.FromMicros(now), store.FromMicros(now)
	return nil
}

// Order implements payment.Ledger.
func (ps *Store) Order(ctx context.Context, id string) (*payment.Order, error) {
	if !ids.Valid(ids.Order, id) {
		return nil, payment.ErrOrderNotFound
	}
	o, err := scanOrder(ps.db.QueryRow(ctx, "SELECT "+orderColumns+" FROM payment_orders WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payment.ErrOrderNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: order: %w", err)
	}
	return o, nil
}

// OrderByIdempotencyKey implements payment.Ledger.
func (ps *Store) OrderByIdempotencyKey(ctx context.Context, payer, offerID, key string) (*payment.Order, error) {
	if key == "" {
		return nil, payment.ErrOrderNotFound
	}
	o, err := scanOrder(ps.db.QueryRow(ctx, "SELECT "+orderColumns+` FROM payment_orders
		WHERE payer = ? AND offer_id = ? AND idempotency_key = ?`, payer, offerID, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payment.ErrOrderNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: order by idempotency key: %w", err)
	}
	return o, nil
}

// OrderByReservation implements payment.Ledger.
func (ps *Store) OrderByReservation(ctx context.Context, key string) (*payment.Order, error) {
	if key == "" {
		return nil, payment.ErrOrderNotFound
	}
	o, err := scanOrder(ps.db.CachedQueryRow(ctx, "SELECT "+prefixed("o.", orderColumns)+` FROM payment_reservations r
		JOIN payment_orders o ON o.id = r.order_id WHERE r.key = ?`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payment.ErrOrderNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: order by reservation: %w", err)
	}
	return o, nil
}

// prefixed qualifies every column of a comma-separated list with p.
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// RotateOrderToken implements payment.Ledger.
func (ps *Store) RotateOrderToken(ctx context.Context, id, tokenHash string) error {
	if !ids.Valid(ids.Order, id) || tokenHash == "" {
		return payment.ErrOrderNotFound
	}
	res, err := ps.db.Exec(ctx, "UPDATE payment_orders SET token_hash = ? WHERE id = ?", tokenHash, id)
	if err != nil {
		return wrapLedger("rotate order token", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return wrapLedger("rotate order token", err)
	} else if n != 1 {
		return payment.ErrOrderNotFound
	}
	return nil
}

// OrderByToken implements payment.Ledger.
func (ps *Store) OrderByToken(ctx context.Context, tokenHash string) (*payment.Order, error) {
	if tokenHash == "" {
		return nil, payment.ErrOrderNotFound
	}
	o, err := scanOrder(ps.db.QueryRow(ctx, "SELECT "+orderColumns+" FROM payment_orders WHERE token_hash = ?", tokenHash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payment.ErrOrderNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: order by token: %w", err)
	}
	return o, nil
}

// rowQuerier is a store.Tx or a store.DB.
type rowQuerier interface {
	QueryRow(ctx context.Context, q string, args ...any) *sql.Row
}

// transition checks a conditional status update of order id (res) and
// reports ErrConflict, naming the status read in q, or ErrOrderNotFound
// when no row matched.
func transition(ctx context.Context, q rowQuerier, id string, res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil || n == 1 {
		return err
	}
	var status string
	err = q.QueryRow(ctx, "SELECT status FROM payment_orders WHERE id = ?", id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return payment.ErrOrderNotFound
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%w (order is %s)", payment.ErrConflict, status)
}

// MarkSettling implements payment.Ledger: one statement, the durable
// commit of a sale.
func (ps *Store) MarkSettling(ctx context.Context, id string, d payment.Delivered) error {
	body := d.Response.Body // nil: not kept (a streamed response)
	res, err := ps.db.CachedExec(ctx, `UPDATE payment_orders SET status = ?, result_kind = ?, result_id = ?, result_sha256 = ?,
		usage_provider = ?, usage_model = ?, input_tokens = ?, cached_input_tokens = ?, output_tokens = ?, search_calls = ?,
		cost_microusd = ?, response_status = ?, response_type = ?, response_body = ?, updated_at = ?,
		payment_record = ?, settle_next_at = ?
		WHERE id = ? AND status = ?`,
		payment.OrderSettling, d.ResultKind, d.ResultID, d.ResultSHA256,
		d.Usage.Provider, d.Usage.Model, d.Usage.InputTokens, d.Usage.CachedInputTokens, d.Usage.OutputTokens, d.Usage.SearchCalls,
		d.CostMicroUSD, d.Response.Status, d.Response.ContentType, body, ps.db.NowMicros(),
		d.PaymentRecord, store.ToMicros(d.ResolveAfter),
		id, payment.OrderProcessing)
	if err == nil {
		err = transition(ctx, ps.db, id, res)
	}
	return wrapLedger("mark settling", err)
}

// CompleteOrder implements payment.Ledger. Its reservations are consumed
// by the order's status (completed): they are not written again.
func (ps *Store) CompleteOrder(ctx context.Context, id string, s payment.Settled) error {
	now := ps.db.NowMicros()
	completed := store.ToMicros(s.CompletedAt)
	if completed == 0 {
		completed = now
	}
	ref := s.SettlementRef
	if strings.ContainsAny(ref, " \t\n") {
		ref = "" // never a reference of settlement_refs (joinRefs)
	}
	set := `status = ?, settlement_ref = ?, network = CASE WHEN ? <> '' THEN ? ELSE network END, dev = ?,
		receipt_id = ?, receipt_json = ?, completed_at = ?, updated_at = ?`
	args := []any{payment.OrderCompleted, s.SettlementRef, s.Network, s.Network, boolInt(s.Dev),
		store.NullIfEmpty(s.ReceiptID), store.NullIfEmpty(string(s.Receipt)), completed, now}
	// The settlement references are the order's before plus ref. In one
	// statement when that is plain: none before, or ref itself (the live
	// settlement); else read and joined in a transaction (the
	// resolver's, after attempts that noted references).
	var fast store.Stmt
	if ref == "" {
		fast = store.Stmt{Query: "UPDATE payment_orders SET " + set + " WHERE id = ? AND status = ?",
			Args: append(args, id, payment.OrderSettling)}
	} else {
		fast = store.Stmt{Query: "UPDATE payment_orders SET settlement_refs = ?, " + set +
			" WHERE id = ? AND status = ? AND (settlement_refs = '' OR settlement_refs = ?)",
			Args: append(append([]any{ref}, args...), id, payment.OrderSettling, ref)}
	}
	n, err := ps.db.ExecBatchNoSync(ctx, fast)
	if err != nil || n[0] == 1 {
		return wrapLedger("complete order", err)
	}
	err = ps.db.InTxNoSync(ctx, func(tx *store.Tx) error {
		var refs string
		if err := tx.QueryRow(ctx, "SELECT settlement_refs FROM payment_orders WHERE id = ?", id).Scan(&refs); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		res, err := tx.Exec(ctx, "UPDATE payment_orders SET settlement_refs = ?, "+set+" WHERE id = ? AND status = ?",
			append(append([]any{joinRefs(splitRefs(refs), ref)}, args...), id, payment.OrderSettling)...)
		if err != nil {
			return err
		}
		return transition(ctx, tx, id, res)
	})
	return wrapLedger("complete order", err)
}

// VoidOrder implements payment.Ledger. Its reservations are consumed by
// the order's status (voided). The payer's daily waivers are a
// row of payment_waivers taken by a conditional upsert in the order's
// transaction: it adds one only while the count is under the limit.
func (ps *Store) VoidOrder(ctx context.Context, id string, v payment.Voided) error {
	err := ps.db.InTx(ctx, func(tx *store.Tx) error {
		var payer string
		err := tx.QueryRow(ctx, "SELECT payer FROM payment_orders WHERE id = ? AND status = ?", id, payment.OrderProcessing).Scan(&payer)
		if errors.Is(err, sql.ErrNoRows) {
			return transition(ctx, tx, id, noRows{})
		}
		if err != nil {
			return err
		}
		res, err := tx.Exec(ctx, `INSERT INTO payment_waivers (payer, day, used) VALUES (?, ?, 1)
			ON CONFLICT (payer, day) DO UPDATE SET used = payment_waivers.used + 1 WHERE payment_waivers.used < ?`,
			strings.ToLower(payer), v.Day, v.Limit)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 || v.Limit < 1 {
			return payment.ErrWaiverExhausted
		}
		now := ps.db.NowMicros()
		completed := store.ToMicros(v.CompletedAt)
		if completed == 0 {
			completed = now
		}
		d := v.Delivered
		res, err = tx.Exec(ctx, `UPDATE payment_orders SET status = ?, result_kind = ?, result_id = ?, result_sha256 = ?,
			usage_provider = ?, usage_model = ?, input_tokens = ?, cached_input_tokens = ?, output_tokens = ?, search_calls = ?,
			cost_microusd = ?, response_status = ?, response_type = ?, response_body = ?, payment_record = ?,
			failure_reason = ?, receipt_id = ?, receipt_json = ?, completed_at = ?, updated_at = ?
			WHERE id = ? AND status = ?`,
			payment.OrderVoided, d.ResultKind, d.ResultID, d.ResultSHA256,
			d.Usage.Provider, d.Usage.Model, d.Usage.InputTokens, d.Usage.CachedInputTokens, d.Usage.OutputTokens, d.Usage.SearchCalls,
			d.CostMicroUSD, d.Response.Status, d.Response.ContentType, d.Response.Body, d.PaymentRecord,
			v.Reason, store.NullIfEmpty(v.ReceiptID), store.NullIfEmpty(string(v.Receipt)), completed, now,
			id, payment.OrderProcessing)
		if err != nil {
			return err
		}
		return transition(ctx, tx, id, res)
	})
	if errors.Is(err, payment.ErrWaiverExhausted) {
		return err
	}
	return wrapLedger("void order", err)
}

// NoteSettlement implements payment.Ledger.
func (ps *Store) NoteSettlement(ctx context.Context, id string, n payment.SettlementNote) error {
	if !ids.Valid(ids.Order, id) {
		return payment.ErrOrderNotFound
	}
	err := ps.db.InTx(ctx, func(tx *store.Tx) error {
		var refs, ref string
		err := tx.QueryRow(ctx, "SELECT settlement_refs, settlement_ref FROM payment_orders WHERE id = ? AND status = ?",
			id, payment.OrderSettling).Scan(&refs, &ref)
		if errors.Is(err, sql.ErrNoRows) {
			return transition(ctx, tx, id, noRows{})
		}
		if err != nil {
			return err
		}
		all := joinRefs(splitRefs(refs), n.Refs...)
		if len(n.Refs) > 0 && n.Refs[len(n.Refs)-1] != "" {
			ref = n.Refs[len(n.Refs)-1]
		}
		res, err := tx.Exec(ctx, `UPDATE payment_orders SET settlement_refs = ?, settlement_ref = ?, settle_note = ?,
			settle_attempts = settle_attempts + 1, settle_next_at = ?, updated_at = ?
			WHERE id = ? AND status = ?`,
			all, ref, n.Note, store.ToMicros(n.NextAt), ps.db.NowMicros(), id, payment.OrderSettling)
		if err != nil {
			return err
		}
		return transition(ctx, tx, id, res)
	})
	return wrapLedger("note settlement", err)
}

// noRows is a sql.Result of an update that matched nothing.
type noRows struct{}

func (noRows) LastInsertId() (int64, error) { return 0, nil }
func (noRows) RowsAffected() (int64, error) { return 0, nil }

// ClaimSettlement implements payment.Ledger.
func (ps *Store) ClaimSettlement(ctx context.Context, id string, dueBy, until time.Time) (*payment.Order, error) {
	if !ids.Valid(ids.Order, id) {
		return nil, payment.ErrOrderNotFound
	}
	var o *payment.Order
	err := ps.db.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `UPDATE payment_orders SET settle_next_at = ?
			WHERE id = ? AND status = ? AND settle_next_at <= ?`, store.ToMicros(until), id, payment.OrderSettling, store.ToMicros(dueBy))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			var status payment.OrderStatus
			err := tx.QueryRow(ctx, "SELECT status FROM payment_orders WHERE id = ?", id).Scan(&status)
			if errors.Is(err, sql.ErrNoRows) {
				return payment.ErrOrderNotFound
			}
			if err != nil {
				return err
			}
			if status == payment.OrderSettling {
				return fmt.Errorf("%w (settling, not due)", payment.ErrConflict)
			}
			return fmt.Errorf("%w (order is %s)", payment.ErrConflict, status)
		}
		o, err = scanOrder(tx.QueryRow(ctx, "SELECT "+orderColumns+" FROM payment_orders WHERE id = ?", id))
		return err
	})
	if err != nil {
		return nil, wrapLedger("claim settlement", err)
	}
	return o, nil
}

// SettlementsDue implements payment.Ledger.
func (ps *Store) SettlementsDue(ctx context.Context, t time.Time, limit int) ([]payment.Order, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := ps.db.Query(ctx, "SELECT "+orderColumns+` FROM payment_orders
		WHERE status = '`+string(payment.OrderSettling)+`' AND settle_next_at <= ? ORDER BY settle_next_at, id LIMIT ?`, store.ToMicros(t), limit)
	if err != nil {
		return nil, fmt.Errorf("store: settlements due: %w", err)
	}
	return collectOrders(rows)
}

// OpenOrders implements payment.Ledger.
func (ps *Store) OpenOrders(ctx context.Context, limit int) ([]payment.Order, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := ps.db.Query(ctx, "SELECT "+orderColumns+` FROM payment_orders
		WHERE `+inFlight+` ORDER BY created_at, id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: open orders: %w", err)
	}
	return collectOrders(rows)
}

// splitRefs and joinRefs read and write settlement_refs: references
// separated by spaces (transaction hashes and PaymentIntent ids hold none).
func splitRefs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}

// joinRefs appends the new non-empty references to refs, once each.
func joinRefs(refs []string, add ...string) string {
	for _, r := range add {
		if r != "" && !slices.Contains(refs, r) && !strings.ContainsAny(r, " \t\n") {
			refs = append(refs, r)
		}
	}
	return strings.Join(refs, " ")
}

// FailOrder implements payment.Ledger.
func (ps *Store) FailOrder(ctx context.Context, id, reason string) error {
	err := ps.db.InTxNoSync(ctx, func(tx *store.Tx) error {
		res, err := tx.CachedExec(ctx, `UPDATE payment_orders SET status = ?, failure_reason = ?, idempotency_key = NULL, updated_at = ?
			WHERE id = ? AND status IN (?, ?)`,
			payment.OrderFailed, reason, ps.db.NowMicros(), id, payment.OrderProcessing, payment.OrderSettling)
		if err != nil {
			return err
		}
		if err := transition(ctx, tx, id, res); err != nil {
			return err
		}
		if _, err := tx.CachedExec(ctx, "DELETE FROM payment_reservations WHERE order_id = ?", id); err != nil {
			return err
		}
		_, err = tx.CachedExec(ctx, "UPDATE payment_quotes SET order_id = NULL WHERE order_id = ?", id)
		return err
	})
	return wrapLedger("fail order", err)
}

func wrapLedger(op string, err error) error {
	if err == nil || errors.Is(err, payment.ErrConflict) || errors.Is(err, payment.ErrOrderNotFound) {
		return err
	}
	return fmt.Errorf("store: %s: %w", op, err)
}

// OrdersInState implements payment.Ledger.
func (ps *Store) OrdersInState(ctx context.Context, status payment.OrderStatus, before time.Time, limit int) ([]payment.Order, error) {
	if limit <= 0 {
		limit = 100
	}
	// The statuses in flight are written literally, for the index of
	// orders in flight (payment_orders_open); the others are read
	// without an index (no caller needs them).
	where := "status = ?"
	args := []any{status, store.ToMicros(before), limit}
	if status == payment.OrderProcessing || status == payment.OrderSettling {
		where, args = "status = '"+string(status)+"'", args[1:]
	}
	rows, err := ps.db.Query(ctx, "SELECT "+orderColumns+" FROM payment_orders WHERE "+where+
		" AND updated_at < ? ORDER BY updated_at, id LIMIT ?", args...)
	if err != nil {
		return nil, fmt.Errorf("store: orders in state: %w", err)
	}
	return collectOrders(rows)
}

func collectOrders(rows *sql.Rows) ([]payment.Order, error) {
	defer rows.Close()
	out := []payment.Order{}
	for rows.Next() {
		o, err := scanOrder(rows)
		if err != nil {
			return nil, fmt.Errorf("store: scan order: %w", err)
		}
		out = append(out, *o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: orders: %w", err)
	}
	return out, nil
}

// Response implements payment.Ledger.
func (ps *Store) Response(ctx context.Context, orderID string) (*payment.StoredResponse, error) {
	if !ids.Valid(ids.Order, orderID) {
		return nil, payment.ErrOrderNotFound
	}
	var r payment.StoredResponse
	err := ps.db.QueryRow(ctx, `SELECT response_status, response_type, response_body FROM payment_orders
		WHERE id = ? AND response_body IS NOT NULL`, orderID).Scan(&r.Status, &r.ContentType, &r.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payment.ErrOrderNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: response: %w", err)
	}
	return &r, nil
}

// Receipt implements payment.Ledger.
func (ps *Store) Receipt(ctx context.Context, orderID string) ([]byte, error) {
	if !ids.Valid(ids.Order, orderID) {
		return nil, payment.ErrReceiptNotFound
	}
	var s sql.NullString
	err := ps.db.QueryRow(ctx, "SELECT receipt_json FROM payment_orders WHERE id = ?", orderID).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !s.Valid) {
		return nil, payment.ErrReceiptNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: receipt: %w", err)
	}
	return []byte(s.String), nil
}

// CreateQuote implements payment.Ledger.
func (ps *Store) CreateQuote(ctx context.Context, q *payment.Quote) error {
	currency := q.Currency
	if currency == "" {
		currency = payment.Currency
	}
	_, err := ps.db.Exec(ctx, `INSERT INTO payment_quotes (id, tier, amount_microusd, card_microusd, currency, expires_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, q.ID, q.Tier, q.AmountMicroUSD, q.CardMicroUSD, currency, store.ToMicros(q.ExpiresAt), store.ToMicros(q.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: create quote: %w", err)
	}
	q.Currency = currency
	return nil
}

// Quote implements payment.Ledger.
func (ps *Store) Quote(ctx context.Context, id string) (*payment.Quote, error) {
	if !ids.Valid(ids.Quote, id) {
		return nil, payment.ErrQuoteNotFound
	}
	var q payment.Quote
	var order sql.NullString
	var expires, created int64
	err := ps.db.QueryRow(ctx, `SELECT id, tier, amount_microusd, card_microusd, currency, order_id, expires_at, created_at
		FROM payment_quotes WHERE id = ?`, id).Scan(&q.ID, &q.Tier, &q.AmountMicroUSD, &q.CardMicroUSD, &q.Currency, &order, &expires, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payment.ErrQuoteNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: quote: %w", err)
	}
	q.OrderID, q.ExpiresAt, q.CreatedAt = order.String, store.FromMicros(expires), store.FromMicros(created)
	return &q, nil
}

// CreateCustomer implements payment.Ledger.
func (ps *Store) CreateCustomer(ctx context.Context, c *payment.Customer, keyHash string) error {
	if c.Status == "" {
		c.Status = payment.CustomerActive
	}
	_, err := ps.db.Exec(ctx, `INSERT INTO payment_customers (id, name, email, status, key_hash, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, c.ID, c.Name, c.Email, c.Status, keyHash, store.ToMicros(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: create customer: %w", err)
	}
	return nil
}

// CustomerByKeyHash implements payment.Ledger.
func (ps *Store) CustomerByKeyHash(ctx context.Context, keyHash string) (*payment.Customer, error) {
	var c payment.Customer
	var created int64
	err := ps.db.QueryRow(ctx, "SELECT id, name, email, status, created_at FROM payment_customers WHERE key_hash = ?", keyHash).
		Scan(&c.ID, &c.Name, &c.Email, &c.Status, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, payment.ErrCustomerNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: customer: %w", err)
	}
	c.CreatedAt = store.FromMicros(created)
	return &c, nil
}

// CustomerOrders implements payment.Ledger. The cursor is the base64url
// of "<created_at micros>.<order id>" of the last order returned.
func (ps *Store) CustomerOrders(ctx context.Context, customerID string, page payment.OrderPage) ([]payment.Order, string, error) {
	limit := page.Limit
	if limit <= 0 {
		limit = 50
	}
	q := "SELECT " + orderColumns + " FROM payment_orders WHERE customer_id = ?"
	args := []any{customerID}
	if page.Cursor != "" {
		at, id, err := parseOrderCursor(page.Cursor)
		if err != nil {
			return nil, "", err
		}
		q += " AND (created_at < ? OR (created_at = ? AND id < ?))"
		args = append(args, at, at, id)
	}
	q += " ORDER BY created_at DESC, id DESC LIMIT ?"
	args = append(args, limit+1)
	if page.Cursor == "" && page.Offset > 0 {
		q += " OFFSET ?"
		args = append(args, page.Offset)
	}
	rows, err := ps.db.Query(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: customer orders: %w", err)
	}
	orders, err := collectOrders(rows)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(orders) > limit {
		orders = orders[:limit]
		last := orders[limit-1]
		next = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(store.ToMicros(last.CreatedAt), 10) + "." + last.ID))
	}
	return orders, next, nil
}

func parseOrderCursor(c string) (int64, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", payment.ErrBadCursor
	}
	at, id, ok := strings.Cut(string(raw), ".")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", payment.ErrBadCursor
	}
	return n, id, nil
}

// OrderSummary implements payment.Ledger.
func (ps *Store) OrderSummary(ctx context.Context, since time.Time) ([]payment.OfferSummary, error) {
	rows, err := ps.db.Query(ctx, `SELECT offer_id, COUNT(*),
		CAST(SUM(CASE WHEN status = ? THEN 1 ELSE 0 END) AS BIGINT),
		CAST(SUM(CASE WHEN status = ? THEN 1 ELSE 0 END) AS BIGINT),
		CAST(SUM(CASE WHEN status IN (?, ?) THEN 1 ELSE 0 END) AS BIGINT),
		CAST(SUM(CASE WHEN status = ? THEN amount_microusd ELSE 0 END) AS BIGINT),
		CAST(SUM(CASE WHEN status = ? THEN cost_microusd ELSE 0 END) AS BIGINT),
		CAST(SUM(CASE WHEN status = ? THEN 1 ELSE 0 END) AS BIGINT)
		FROM payment_orders WHERE created_at >= ? GROUP BY offer_id ORDER BY offer_id`,
		payment.OrderCompleted, payment.OrderFailed, payment.OrderProcessing, payment.OrderSettling,
		payment.OrderCompleted, payment.OrderCompleted, payment.OrderVoided, store.ToMicros(since))
	if err != nil {
		return nil, fmt.Errorf("store: order summary: %w", err)
	}
	defer rows.Close()
	out := []payment.OfferSummary{}
	for rows.Next() {
		var s payment.OfferSummary
		if err := rows.Scan(&s.OfferID, &s.Orders, &s.Completed, &s.Failed, &s.Pending, &s.RevenueMicroUSD, &s.CostMicroUSD, &s.Voided); err != nil {
			return nil, fmt.Errorf("store: order summary: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
