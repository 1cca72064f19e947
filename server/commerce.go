package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/sell"
	"github.com/assaykit/assay/shapes"
)

// CommerceConfig configures quotes, orders, receipts, customers and the
// receipt keys (JWKS). The zero value mounts nothing.
//
// Choices made for what the interface documents leave open:
//   - POST /v1/quotes takes {"tier": "..."} (default standard) and answers
//     200 with the locked price, valid 15 minutes; pay with the quote by
//     sending its id in X-Agentic-Quote-Id.
//   - Receipt verification is GET (re-checks the stored receipt) and POST
//     (checks a presented receipt, {"receipt": {...}}, validated as the
//     ReceiptVerifyRequest shape: 422 otherwise); both answer 200 with the
//     outcome, and 404 when no receipt of that order is on record.
//   - Customers are registered by an admin (POST /v1/admin/customers); the
//     key (ask_…) is returned once.
//   - An unknown order and a wrong order token both answer 404 "Order not
//     found", so that a token cannot probe for order ids.
type CommerceConfig struct {
	// Cashier sells paid calls and keeps their records (usually
	// Gate.Cashier()). Nil mounts no commerce routes.
	Cashier *payment.Cashier
	// Prefixes are the service prefixes the commerce routes are also
	// served under. Nil means "/claim-verification" and, for the routes
	// of orders and receipts (which any paid call hands out), also the
	// niche prefix when niche discovery is mounted, so that each service
	// serves the order lookups its paid answers name; an empty non-nil
	// slice means the root only.
	Prefixes []string
	// JWKSPrefixes are the prefixes /.well-known/jwks.json is also served
	// under. Nil means "/claim-verification" and "/niche-discovery".
	JWKSPrefixes []string
}

// commerceRoutes returns the routes of quotes, orders, receipts, customers
// and the JWKS (none until a Cashier is configured).
func (s *Server) commerceRoutes() ([]*Route, error) {
	c := s.cfg.Commerce.Cashier
	if c == nil {
		return nil, nil
	}
	pre := s.cfg.Commerce.Prefixes
	orderPre := pre
	if pre == nil {
		pre = []string{"/claim-verification"}
		orderPre = pre
		if p, err := s.cfg.Niche.resolvedPrefix(); err == nil && s.cfg.Niche.Engine != nil && p != "" && p != pre[0] {
			orderPre = []string{pre[0], p}
		}
	}
	jwksPre := s.cfg.Commerce.JWKSPrefixes
	if jwksPre == nil {
		jwksPre = []string{"/claim-verification", "/niche-discovery"}
	}
	ch := &commerceHandlers{s: s, c: c}
	return []*Route{
		{ID: "commerce.quotes.create", Summary: "Lock the price of a verification tier for 15 minutes.", Status: "paid-preview",
			Method: "POST", Path: "/v1/quotes", Prefixes: pre, Body: "QuoteRequest", Handler: http.HandlerFunc(ch.createQuote)},
		{ID: "commerce.orders.get", Summary: "Read an order with its order token.", Status: "paid-preview",
			Method: "GET", Path: "/v1/orders/{order_id}", Prefixes: orderPre, Handler: http.HandlerFunc(ch.getOrder)},
		{ID: "commerce.orders.result", Summary: "Read the response delivered for a completed order, with its order token.", Status: "paid-preview",
			Method: "GET", Path: "/v1/orders/{order_id}/result", Prefixes: orderPre, Handler: http.HandlerFunc(ch.getResult)},
		{ID: "commerce.customer.orders.list", Summary: "List a registered customer's orders, newest first.", Status: "paid-preview",
			Method: "GET", Path: "/v1/customer/orders", Prefixes: orderPre, Query: "CustomerOrdersQuery", Handler: http.HandlerFunc(ch.listCustomerOrders)},
		{ID: "commerce.customer.orders.get", Summary: "Read one order of a registered customer.", Status: "paid-preview",
			Method: "GET", Path: "/v1/customer/orders/{order_id}", Prefixes: orderPre, Handler: http.HandlerFunc(ch.getCustomerOrder)},
		{ID: "commerce.receipts.verify.stored", Summary: "Re-check the signed receipt stored for an order.", Status: "paid-preview",
			Method: "GET", Path: "/v1/receipts/{order_id}/verify", Prefixes: orderPre, Handler: http.HandlerFunc(ch.verifyStored)},
		{ID: "commerce.receipts.verify", Summary: "Check a presented receipt: signature, key id, contents and our records.", Status: "paid-preview",
			Method: "POST", Path: "/v1/receipts/{order_id}/verify", Prefixes: orderPre, Body: "ReceiptVerifyRequest", Handler: http.HandlerFunc(ch.verifyPresented)},
		{ID: "commerce.jwks", Summary: "Public keys (JWKS) that verify receipt signatures offline.", Status: "stable",
			Method: "GET", Path: "/.well-known/jwks.json", Prefixes: jwksPre, Handler: http.HandlerFunc(ch.jwks)},
		{ID: "commerce.admin.customers.create", Summary: "Register a customer and issue its key (shown once).", Status: "stable",
			Method: "POST", Path: "/v1/admin/customers", Prefixes: pre, Body: "CustomerCreateRequest", Admin: true,
			Handler: s.requireAdmin(http.HandlerFunc(ch.createCustomer))},
		{ID: "commerce.admin.orders.get", Summary: "An order with its provider usage, cost and margin.", Status: "stable",
			Method: "GET", Path: "/v1/admin/orders/{order_id}", Prefixes: pre, Admin: true,
			Handler: s.requireAdmin(http.HandlerFunc(ch.adminOrder))},
		{ID: "commerce.admin.orders.summary", Summary: "Orders, revenue, cost and margin per offer over recent days.", Status: "stable",
			Method: "GET", Path: "/v1/admin/orders/summary", Prefixes: pre, Query: "AdminOrderSummaryQuery", Admin: true,
			Handler: s.requireAdmin(http.HandlerFunc(ch.adminSummary))},
		{ID: "commerce.admin.orders.open", Summary: "Orders not finished (processing or settling), oldest first, with their age and what their settlement is waiting for.", Status: "stable",
			Method: "GET", Path: "/v1/admin/orders/open", Prefixes: pre, Admin: true,
			Handler: s.requireAdmin(http.HandlerFunc(ch.adminOpenOrders))},
		{ID: "commerce.admin.orders.resolve", Summary: "Make one attempt now to settle, or learn the fate of, a settling order.", Status: "stable",
			Method: "POST", Path: "/v1/admin/orders/{order_id}/resolve", Prefixes: pre, Admin: true, MaxBodyBytes: 1 << 10,
			Handler: s.requireAdmin(http.HandlerFunc(ch.adminResolve))},
	}, nil
}

// commerceStatus maps the payment ledger's errors to statuses.
func commerceStatus(err error) (int, string, bool) {
	switch {
	case errors.Is(err, payment.ErrOrderNotFound):
		return http.StatusNotFound, "Order not found", true
	case errors.Is(err, payment.ErrReceiptNotFound):
		return http.StatusNotFound, "Receipt not found", true
	case errors.Is(err, payment.ErrQuoteNotFound):
		return http.StatusNotFound, "Quote not found", true
	case errors.Is(err, payment.ErrUnknownTier):
		return http.StatusUnprocessableEntity, "Unknown verification tier", true
	case errors.Is(err, payment.ErrInvalidCustomerKey):
		return http.StatusUnauthorized, "A valid X-Agentic-Customer-Key is required", true
	case errors.Is(err, payment.ErrBadCursor):
		return http.StatusUnprocessableEntity, "Invalid cursor", true
	}
	return 0, "", false
}

type commerceHandlers struct {
	s *Server
	c *payment.Cashier
}

func (h *commerceHandlers) createQuote(w http.ResponseWriter, r *http.Request) {
	var req shapes.QuoteRequest
	if !h.s.decodeBody(w, r, &req) {
		return
	}
	t, ok := claims.TierByName(req.Tier)
	if !ok {
		// The tier names are a Literal for the answer (and the published
		// schema), as FastAPI would report them.
		httpjson.Write(w, http.StatusUnprocessableEntity, unknownTierError(req.Tier))
		return
	}
	l, _ := h.s.cfg.Catalogue.Tier(t.Name)
	offer := l.Offer
	q, err := h.c.CreateQuote(r.Context(), offer)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	httpjson.Write(w, http.StatusOK, Quote{
		QuoteID: q.ID, Tier: q.Tier, Operation: l.HTTPPath, AmountMicroUSD: q.AmountMicroUSD, CardAmountMicroUSD: q.CardMicroUSD,
		Currency: q.Currency, CreatedAt: rfc3339(q.CreatedAt), ExpiresAt: rfc3339(q.ExpiresAt), QuoteHeader: httpgate.HeaderQuoteID,
		PaymentMethods: []string{payment.ProtocolX402, payment.ProtocolMPP}, PaymentOptions: h.c.PaymentOptions(offer),
	})
}

// tierNames are the names of the verification tiers, in table order.
func tierNames() []string {
	var out []string
	for _, t := range claims.Tiers() {
		out = append(out, t.Name)
	}
	return out
}

// unknownTierError is the 422 of a quote for a tier that does not exist:
// Pydantic's literal_error at ["body", "tier"].
func unknownTierError(tier string) *shapes.ValidationError {
	var quoted []string
	for _, n := range tierNames() {
		quoted = append(quoted, "'"+n+"'")
	}
	expected := strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
	return &shapes.ValidationError{Detail: []shapes.ErrorDetail{{Type: "literal_error", Loc: []any{"body", "tier"},
		Msg: "Input should be " + expected, Input: tier, Ctx: map[string]any{"expected": expected}}}}
}

func newOrderView(o *payment.Order, receipt []byte) Order {
	v := Order{
		OrderID: o.ID, Status: string(o.Status), OfferID: o.OfferID, Tier: optional(o.Tier), Currency: o.Currency,
		AmountMicroUSD: o.AmountMicroUSD, PaymentProtocol: o.Protocol, PaymentMethod: o.Method, Network: optional(o.Network),
		Payer: o.Payer, CustomerID: optional(o.CustomerID), QuoteID: optional(o.QuoteID), SettlementReference: optional(o.SettlementRef),
		Dev: o.Dev, ResultKind: optional(o.ResultKind), ResultID: optional(o.ResultID), ResultSHA256: optional(o.ResultSHA256),
		FailureReason: optional(o.FailureReason), CreatedAt: rfc3339(o.CreatedAt), UpdatedAt: rfc3339(o.UpdatedAt),
		CompletedAt: optionalTime(o.CompletedAt), ReceiptID: optional(o.ReceiptID),
	}
	if len(receipt) > 0 {
		v.Receipt = receipt
	}
	return v
}

// orderByToken returns the order named in the path when the request
// carries its token; otherwise it has answered 401 or 404.
func (h *commerceHandlers) orderByToken(w http.ResponseWriter, r *http.Request) (*payment.Order, bool) {
	token := strings.TrimSpace(r.Header.Get(httpgate.HeaderOrderToken))
	if token == "" {
		httpjson.Detail(w, http.StatusUnauthorized, "X-Agentic-Order-Token is required")
		return nil, false
	}
	id := r.PathValue("order_id")
	if !ids.Valid(ids.Order, id) {
		h.s.writeError(w, r, payment.ErrOrderNotFound)
		return nil, false
	}
	o, err := h.c.Ledger().Order(r.Context(), id)
	if err == nil && !ids.Equal(ids.Hash(token), o.TokenHash) {
		err = payment.ErrOrderNotFound
	}
	if err != nil {
		h.s.writeError(w, r, err)
		return nil, false
	}
	return o, true
}

func (h *commerceHandlers) receiptOf(r *http.Request, o *payment.Order) ([]byte, error) {
	if o.ReceiptID == "" {
		return nil, nil
	}
	b, err := h.c.Ledger().Receipt(r.Context(), o.ID)
	if errors.Is(err, payment.ErrReceiptNotFound) {
		return nil, nil
	}
	return b, err
}

func (h *commerceHandlers) getOrder(w http.ResponseWriter, r *http.Request) {
	o, ok := h.orderByToken(w, r)
	if !ok {
		return
	}
	receipt, err := h.receiptOf(r, o)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	httpjson.Write(w, http.StatusOK, newOrderView(o, receipt))
}

func (h *commerceHandlers) getResult(w http.ResponseWriter, r *http.Request) {
	o, ok := h.orderByToken(w, r)
	if !ok {
		return
	}
	if err := sell.DeliveredOrder(o); err != nil {
		h.s.writeError(w, r, err)
		return
	}
	resp, err := h.c.Ledger().Response(r.Context(), o.ID)
	if errors.Is(err, payment.ErrOrderNotFound) {
		httpjson.Detail(w, http.StatusNotFound, "The result of this order was streamed and not kept")
		return
	}
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set(httpgate.HeaderOrderID, o.ID)
	hd.Set(httpgate.HeaderReceiptID, o.ReceiptID)
	hd.Set("Cache-Control", "private")
	hd.Set("Content-Type", resp.ContentType)
	hd.Set("Content-Length", strconv.Itoa(len(resp.Body)))
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

func (h *commerceHandlers) customer(w http.ResponseWriter, r *http.Request) (*payment.Customer, bool) {
	key := strings.TrimSpace(r.Header.Get(httpgate.HeaderCustomerKey))
	if key == "" {
		h.s.writeError(w, r, payment.ErrInvalidCustomerKey)
		return nil, false
	}
	cu, err := h.c.Customer(r.Context(), key)
	if err != nil {
		h.s.writeError(w, r, err)
		return nil, false
	}
	return cu, true
}

func (h *commerceHandlers) listCustomerOrders(w http.ResponseWriter, r *http.Request) {
	cu, ok := h.customer(w, r)
	if !ok {
		return
	}
	var q shapes.CustomerOrdersQuery
	if !h.s.decodeQuery(w, r, &q) {
		return
	}
	orders, next, err := h.c.Ledger().CustomerOrders(r.Context(), cu.ID, payment.OrderPage{Limit: q.Limit, Offset: q.Offset, Cursor: q.Cursor})
	if errors.Is(err, payment.ErrBadCursor) {
		// An HTTPValidationError, as every 422 of the documents.
		httpjson.Write(w, http.StatusUnprocessableEntity, &shapes.ValidationError{Detail: []shapes.ErrorDetail{{
			Type: "value_error", Loc: []any{"query", "cursor"}, Msg: "Value error, Invalid cursor: use the nextCursor of a previous page",
			Input: q.Cursor, Ctx: map[string]any{"error": map[string]any{}}}}})
		return
	}
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	v := CustomerOrders{Orders: make([]Order, 0, len(orders)), Limit: q.Limit, Offset: q.Offset, NextCursor: optional(next)}
	for i := range orders {
		v.Orders = append(v.Orders, newOrderView(&orders[i], nil))
	}
	w.Header().Set("Cache-Control", "private, no-store")
	httpjson.Write(w, http.StatusOK, v)
}

func (h *commerceHandlers) getCustomerOrder(w http.ResponseWriter, r *http.Request) {
	cu, ok := h.customer(w, r)
	if !ok {
		return
	}
	o, err := h.c.Ledger().Order(r.Context(), r.PathValue("order_id"))
	if err == nil && o.CustomerID != cu.ID {
		err = payment.ErrOrderNotFound
	}
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	receipt, err := h.receiptOf(r, o)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	httpjson.Write(w, http.StatusOK, newOrderView(o, receipt))
}

// checkReceipt verifies data with our keys and compares it with the order
// (nil when we have no such order).
func (h *commerceHandlers) checkReceipt(orderID string, data []byte, o *payment.Order) ReceiptCheck {
	v := ReceiptCheck{OrderID: orderID, SignatureAlgorithm: payment.ReceiptAlgorithm, Problems: []string{}}
	rc, err := payment.VerifyReceipt(data, h.c.Keys())
	if rc != nil {
		v.ReceiptID, v.KeyID = optional(rc.ReceiptID), optional(rc.KeyID)
	}
	switch {
	case err == nil:
		v.SignatureValid, v.KeyKnown, v.ContentsValid = true, true, true
	case errors.Is(err, payment.ErrReceiptContents):
		v.SignatureValid, v.KeyKnown = true, true
	case errors.Is(err, payment.ErrReceiptSignature):
		v.KeyKnown = true
	}
	if err != nil {
		v.Problems = append(v.Problems, strings.TrimPrefix(err.Error(), "payment: "))
	}
	switch {
	case o == nil:
		v.Problems = append(v.Problems, "no order "+orderID+" with a receipt is on record")
	case rc == nil:
	case rc.OrderID != orderID:
		v.Problems = append(v.Problems, "the receipt is for order "+rc.OrderID+", not "+orderID)
	default:
		diffs := rc.MatchesOrder(o)
		v.Problems = append(v.Problems, diffs...)
		v.MatchesRecords = len(diffs) == 0
	}
	v.Valid = v.SignatureValid && v.KeyKnown && v.ContentsValid && v.MatchesRecords
	return v
}

func (h *commerceHandlers) verifyStored(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("order_id")
	o, err := h.c.Ledger().Order(r.Context(), id)
	var data []byte
	if err == nil {
		data, err = h.c.Ledger().Receipt(r.Context(), id)
	}
	if errors.Is(err, payment.ErrOrderNotFound) || errors.Is(err, payment.ErrReceiptNotFound) {
		h.s.writeError(w, r, payment.ErrReceiptNotFound)
		return
	}
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, h.checkReceipt(id, data, o))
}

// verifyPresented checks a presented receipt ({"receipt": {...}}, the
// ReceiptVerifyRequest shape) against our keys and the records of the
// order: an invalid body is a 422 as FastAPI would answer it; an order
// without a receipt on record (or an id that names none) is a 404, as for
// the stored receipt.
func (h *commerceHandlers) verifyPresented(w http.ResponseWriter, r *http.Request) {
	var req shapes.ReceiptVerifyRequest
	body, ok := h.s.decodeBodyBytes(w, r, &req)
	if !ok {
		return
	}
	// The receipt's own bytes, for the signature: the last "receipt"
	// member, the one Decode kept.
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		h.s.writeError(w, r, err) // unreachable: Decode accepted the body
		return
	}
	id := r.PathValue("order_id")
	o, err := h.c.Ledger().Order(r.Context(), id)
	switch {
	case errors.Is(err, payment.ErrOrderNotFound) || err == nil && o.ReceiptID == "":
		h.s.writeError(w, r, payment.ErrReceiptNotFound)
		return
	case err != nil:
		h.s.writeError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, h.checkReceipt(id, members["receipt"], o))
}

func (h *commerceHandlers) jwks(w http.ResponseWriter, r *http.Request) {
	b, err := httpjson.Marshal(h.s.PublishedKeys())
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// Customer is a registered customer as the admin routes show it.
type Customer struct {
	CustomerID       string  `json:"customerId"`
	Name             string  `json:"name"`
	Email            *string `json:"email"`
	Status           string  `json:"status"`
	CreatedAt        string  `json:"createdAt"`
	APIKey           string  `json:"apiKey"`
	APIKeyShownOnce  bool    `json:"apiKeyShownOnce"`
	APIKeyHeaderName string  `json:"apiKeyHeader"`
}

func (h *commerceHandlers) createCustomer(w http.ResponseWriter, r *http.Request) {
	var req shapes.CustomerCreateRequest
	if !h.s.decodeBody(w, r, &req) {
		return
	}
	email := ""
	if req.Email != nil {
		email = *req.Email
	}
	cu, key, err := h.c.CreateCustomer(r.Context(), req.Name, email)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, Customer{CustomerID: cu.ID, Name: cu.Name, Email: optional(cu.Email), Status: cu.Status,
		CreatedAt: rfc3339(cu.CreatedAt), APIKey: key, APIKeyShownOnce: true, APIKeyHeaderName: httpgate.HeaderCustomerKey})
}

// ProviderUsage is the evidence provider's usage of an order (admin routes).
type ProviderUsage struct {
	Provider          *string `json:"provider"`
	Model             *string `json:"model"`
	InputTokens       int     `json:"inputTokens"`
	CachedInputTokens int     `json:"cachedInputTokens"`
	OutputTokens      int     `json:"outputTokens"`
	SearchCalls       int     `json:"searchCalls"`
}

// AdminOrder is an order as the admin routes show it: the payer's view and
// the ledger's keys and usage.
type AdminOrder struct {
	Order
	ReservationKey string        `json:"reservationKey"`
	IdempotencyKey *string       `json:"idempotencyKey"`
	Usage          ProviderUsage `json:"usage"`
	CostMicroUSD   int64         `json:"costMicrousd"`
	// MarginMicroUSD is amount minus cost for completed orders, null
	// otherwise (nothing was earned).
	MarginMicroUSD *int64 `json:"marginMicrousd"`
}

func (h *commerceHandlers) adminOrder(w http.ResponseWriter, r *http.Request) {
	o, err := h.c.Ledger().Order(r.Context(), r.PathValue("order_id"))
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	receipt, err := h.receiptOf(r, o)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	v := AdminOrder{Order: newOrderView(o, receipt), ReservationKey: o.ReservationKey, IdempotencyKey: optional(o.IdempotencyKey),
		Usage: ProviderUsage{Provider: optional(o.Usage.Provider), Model: optional(o.Usage.Model), InputTokens: o.Usage.InputTokens,
			CachedInputTokens: o.Usage.CachedInputTokens, OutputTokens: o.Usage.OutputTokens, SearchCalls: o.Usage.SearchCalls},
		CostMicroUSD: o.CostMicroUSD}
	if o.Status == payment.OrderCompleted {
		m := o.AmountMicroUSD - o.CostMicroUSD
		v.MarginMicroUSD = &m
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, v)
}

// OpenOrder is one unfinished order in the operator's view.
type OpenOrder struct {
	OrderID    string `json:"orderId"`
	Status     string `json:"status"`
	OfferID    string `json:"offerId"`
	Protocol   string `json:"protocol"`
	Payer      string `json:"payer"`
	AgeSeconds int64  `json:"ageSeconds"`
	// Reason says what the order waits for: the last settlement attempt's
	// note, or that its call is running.
	Reason        string   `json:"reason"`
	Attempts      int      `json:"attempts"`
	NextAttemptAt *string  `json:"nextAttemptAt"`
	SettlementRef []string `json:"settlementRefs"`
}

// OpenOrders is the answer of GET /v1/admin/orders/open.
type OpenOrders struct {
	Orders []OpenOrder `json:"orders"`
	Count  int         `json:"count"`
}

// openOrdersLimit bounds the list of open orders.
const openOrdersLimit = 500

func (h *commerceHandlers) adminOpenOrders(w http.ResponseWriter, r *http.Request) {
	orders, err := h.c.OpenOrders(r.Context(), openOrdersLimit)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	now := time.Now()
	v := OpenOrders{Orders: make([]OpenOrder, 0, len(orders)), Count: len(orders)}
	for _, o := range orders {
		oo := OpenOrder{OrderID: o.ID, Status: string(o.Status), OfferID: o.OfferID, Protocol: o.Protocol, Payer: o.Payer,
			AgeSeconds: int64(now.Sub(o.CreatedAt).Seconds()), Reason: o.SettleNote, Attempts: o.SettleAttempts,
			SettlementRef: o.SettlementRefs}
		if oo.SettlementRef == nil {
			oo.SettlementRef = []string{}
		}
		switch {
		case o.Status == payment.OrderProcessing:
			oo.Reason = "the paid call is running"
		case oo.Reason == "":
			oo.Reason = "settling: the first settlement attempt is in progress"
		}
		if o.Status == payment.OrderSettling {
			oo.NextAttemptAt = optionalTime(o.SettleNextAt)
		}
		v.Orders = append(v.Orders, oo)
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, v)
}

// Resolution is the answer of POST /v1/admin/orders/{order_id}/resolve.
type Resolution struct {
	OrderID string `json:"orderId"`
	// Status is the order's status after the attempt.
	Status string `json:"status"`
	// Outcome is settled, failed, unknown or not_open.
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
}

func (h *commerceHandlers) adminResolve(w http.ResponseWriter, r *http.Request) {
	res, err := h.c.Resolve(r.Context(), r.PathValue("order_id"))
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, Resolution{OrderID: res.Order.ID, Status: string(res.Order.Status), Outcome: res.Outcome, Detail: res.Detail})
}

// OfferSummary is one offer's sales and costs over the summary's period.
type OfferSummary struct {
	OfferID         string `json:"offerId"`
	Orders          int64  `json:"orders"`
	Completed       int64  `json:"completed"`
	Failed          int64  `json:"failed"`
	Pending         int64  `json:"pending"`
	RevenueMicroUSD int64  `json:"revenueMicrousd"`
	CostMicroUSD    int64  `json:"costMicrousd"`
	MarginMicroUSD  int64  `json:"marginMicrousd"`
}

// SalesSummary is the answer of the admin sales summary: each offer's
// orders, revenue, cost and margin since a date.
type SalesSummary struct {
	Since  string         `json:"since"`
	Days   int            `json:"days"`
	Offers []OfferSummary `json:"offers"`
	Totals OfferSummary   `json:"totals"`
}

func (h *commerceHandlers) adminSummary(w http.ResponseWriter, r *http.Request) {
	var q shapes.AdminOrderSummaryQuery
	if !h.s.decodeQuery(w, r, &q) {
		return
	}
	since := time.Now().UTC().Add(-time.Duration(q.Days) * 24 * time.Hour)
	sums, err := h.c.Ledger().OrderSummary(r.Context(), since)
	if err != nil {
		h.s.writeError(w, r, err)
		return
	}
	v := SalesSummary{Since: rfc3339(since), Days: q.Days, Offers: []OfferSummary{}, Totals: OfferSummary{OfferID: "*"}}
	for _, s := range sums {
		o := OfferSummary{OfferID: s.OfferID, Orders: s.Orders, Completed: s.Completed, Failed: s.Failed, Pending: s.Pending,
			RevenueMicroUSD: s.RevenueMicroUSD, CostMicroUSD: s.CostMicroUSD, MarginMicroUSD: s.RevenueMicroUSD - s.CostMicroUSD}
		v.Offers = append(v.Offers, o)
		t := &v.Totals
		t.Orders, t.Completed, t.Failed, t.Pending = t.Orders+o.Orders, t.Completed+o.Completed, t.Failed+o.Failed, t.Pending+o.Pending
		t.RevenueMicroUSD, t.CostMicroUSD, t.MarginMicroUSD = t.RevenueMicroUSD+o.RevenueMicroUSD, t.CostMicroUSD+o.CostMicroUSD, t.MarginMicroUSD+o.MarginMicroUSD
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, v)
}
