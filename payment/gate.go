package payment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment/mpp"
)

// HTTP headers of paid calls.
const (
	HeaderOrderID        = "X-Agentic-Order-Id"
	HeaderOrderToken     = "X-Agentic-Order-Token"
	HeaderReceiptID      = "X-Agentic-Receipt-Id"
	HeaderQuoteID        = "X-Agentic-Quote-Id"
	HeaderCustomerKey    = "X-Agentic-Customer-Key"
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderReplay is "true" on a response replayed for a retried
	// Idempotency-Key.
	HeaderReplay = "X-Agentic-Idempotent-Replay"
)

// DefaultMaxResponseBytes bounds the buffered response of a paid handler
// when GateOptions.MaxResponseBytes is 0.
const DefaultMaxResponseBytes = 8 << 20

// DefaultMaxRequestBytes bounds the request body the gate reads (to hash
// it and hand it to the handler) when GateOptions.MaxRequestBytes is 0:
// 1 MiB, the server package's default body limit.
const DefaultMaxRequestBytes = 1 << 20

// exposed lists the headers browsers may read on paid responses.
const exposed = "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, WWW-Authenticate, Payment-Receipt, " +
	HeaderOrderID + ", " + HeaderOrderToken + ", " + HeaderReceiptID + ", " + HeaderReplay + ", Retry-After"

// GateOptions configure NewGate.
type GateOptions struct {
	// CashierOptions configure the Cashier the gate is built on (Keys is
	// required).
	CashierOptions
	// PublicBaseURL is the scheme, host and mount path under which clients
	// reach the server, e.g. "https://api.example.com". Payment resources
	// are this plus the request path and query. Required unless
	// TrustForwardedHeaders is set.
	PublicBaseURL string
	// TrustForwardedHeaders builds resource URLs from X-Forwarded-Proto
	// and X-Forwarded-Host (else the Host header) when PublicBaseURL is
	// empty. Only set it behind a proxy that overwrites those headers.
	TrustForwardedHeaders bool
	// MaxResponseBytes bounds the buffered response of a paid handler.
	// A larger response is not delivered and the order fails. Zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// MaxRequestBytes bounds the request body the gate reads; a larger
	// body is answered 413 before any payment step. Zero means
	// DefaultMaxRequestBytes; a negative value means no limit of the
	// gate's own (for a host that already limits bodies). Behind a server
	// whose own body limit is higher, raise this to match.
	MaxRequestBytes int64
}

// Gate is the HTTP Paywall: it turns a handler into a paid one. See the
// package documentation for the order of events.
type Gate struct {
	c        *Cashier
	base     string
	trustFwd bool
	maxResp  int64
	maxReq   int64
}

var _ Paywall = (*Gate)(nil)

// NewGate returns a Gate that charges through p and records in l.
func NewGate(p Processor, l Ledger, o *GateOptions) (*Gate, error) {
	if o == nil {
		o = &GateOptions{}
	}
	c, err := NewCashier(p, l, &o.CashierOptions)
	if err != nil {
		return nil, err
	}
	return NewGateFor(c, o)
}

// NewGateFor returns a Gate built on an existing Cashier (the one MCP and
// A2A share); o's CashierOptions are ignored.
func NewGateFor(c *Cashier, o *GateOptions) (*Gate, error) {
	if o == nil {
		o = &GateOptions{}
	}
	g := &Gate{c: c, trustFwd: o.TrustForwardedHeaders, maxResp: o.MaxResponseBytes, maxReq: o.MaxRequestBytes}
	if g.maxResp <= 0 {
		g.maxResp = DefaultMaxResponseBytes
	}
	if g.maxReq == 0 {
		g.maxReq = DefaultMaxRequestBytes
	}
	if o.PublicBaseURL != "" {
		u, err := url.Parse(o.PublicBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("payment: PublicBaseURL %q is not an http(s) base URL", o.PublicBaseURL)
		}
		g.base = strings.TrimRight(o.PublicBaseURL, "/")
	} else if !g.trustFwd {
		return nil, errors.New("payment: NewGate needs PublicBaseURL (or TrustForwardedHeaders behind a trusted proxy)")
	}
	return g, nil
}

// Cashier returns the cashier the gate is built on.
func (g *Gate) Cashier() *Cashier { return g.c }

// Streamer is implemented by paid handlers that must write as they go
// (for example server-sent events) and accept that their output reaches
// the payer before settlement. Their response is not buffered: order id
// and token are sent before the handler runs, the receipt id and the
// settlement header follow as HTTP trailers, and if settlement then fails
// the content has already been delivered (the order is failed all the
// same). Only opt out of buffering where that is acceptable.
type Streamer interface {
	StreamsPaidResponse() bool
}

// Gate implements Paywall: it returns next, sold for offer.
func (g *Gate) Gate(offer Offer, next http.Handler) http.Handler {
	return &gated{g: g, offer: offer, next: next}
}

// Middleware returns the gate for offer as a middleware, the
// func(http.Handler) http.Handler shape that routers chain:
//
//	mux.Handle("POST /v1/report", gate.Middleware(offer)(reportHandler))
//
// It is the same as g.Gate(offer, next).
func (g *Gate) Middleware(offer Offer) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return g.Gate(offer, next) }
}

type gated struct {
	g     *Gate
	offer Offer
	next  http.Handler
}

func (h *gated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g, c := h.g, h.g.c
	ctx := r.Context()
	if r.Header.Get("Origin") != "" && w.Header().Get("Access-Control-Expose-Headers") == "" {
		w.Header().Set("Access-Control-Expose-Headers", exposed)
	}
	body, err := readBody(w, r, g.maxReq)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeProblem(w, &Problem{Status: http.StatusRequestEntityTooLarge,
				Detail: fmt.Sprintf("Request body too large (at most %d bytes)", mbe.Limit)})
			return
		}
		httpjson.Detail(w, http.StatusBadRequest, "There was an error parsing the body")
		return
	}
	if pc, ok := h.next.(Prechecker); ok {
		var proceed bool
		if r, proceed = pc.Precheck(w, r); !proceed {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		ctx = r.Context()
	}
	customerKey := r.Header.Get(HeaderCustomerKey)
	if customerKey != "" {
		if _, err := c.Customer(ctx, customerKey); err != nil {
			if errors.Is(err, ErrInvalidCustomerKey) {
				httpjson.Detail(w, http.StatusUnauthorized, "A valid X-Agentic-Customer-Key is required")
				return
			}
			g.internal(w, r, "customer lookup", err)
			return
		}
	}
	res := Resource{URL: g.resourceURL(r), Method: r.Method, Description: h.offer.Description, MimeType: h.offer.MimeType,
		QuoteID: strings.TrimSpace(r.Header.Get(HeaderQuoteID))}
	res.BodyDigest = mpp.BodyDigest(body)
	// challengeWith answers 402 for the offer priced by the request's
	// quote; a quote that cannot be used is reported, and the challenge
	// is then at the offer's own price without it.
	challengeWith := func(p *Problem) {
		priced, err := c.PriceOffer(ctx, h.offer, res.QuoteID)
		if err != nil {
			unquoted := res
			unquoted.QuoteID = ""
			g.refuse(w, r, h.offer, unquoted, err)
			return
		}
		g.challenge(w, r, priced, res, p)
	}
	if r.Method == http.MethodHead {
		// A HEAD answer has no body: never charge for one.
		challengeWith(nil)
		return
	}
	cred, err := c.p.ReadCredential(r.Header)
	if err != nil {
		p := CredentialProblem(err)
		c.report(PaymentEvent{Outcome: "rejected", OfferID: h.offer.ID})
		if p.Status == http.StatusPaymentRequired || p.Status == 0 {
			challengeWith(p)
			return
		}
		writeProblem(w, p)
		return
	}
	if cred == nil {
		c.report(PaymentEvent{Outcome: "challenged", OfferID: h.offer.ID})
		challengeWith(nil)
		return
	}
	// Begin prices the offer itself (after answering an idempotent retry,
	// whose quote is already used, from its stored order).
	reqHash := RequestHash(r, body)
	ch, err := c.Begin(ctx, h.offer, res, cred, &BeginOptions{
		CustomerKey: customerKey, IdempotencyKey: r.Header.Get(HeaderIdempotencyKey), RequestHash: reqHash})
	if err != nil {
		var p *Problem
		if errors.As(err, &p) && (p.Status == http.StatusPaymentRequired || p.Status == 0) && !isQuoteProblem(p) {
			challengeWith(p)
			return
		}
		g.refuse(w, r, h.offer, res, err)
		return
	}
	w.Header().Set(HeaderOrderID, ch.Order().ID)
	w.Header().Set(HeaderOrderToken, ch.OrderToken())
	if stored, ok := ch.Replay(); ok {
		hd := w.Header()
		if id := ch.Order().ReceiptID; id != "" {
			hd.Set(HeaderReceiptID, id)
		}
		hd.Set(HeaderReplay, "true")
		hd.Set("Cache-Control", "private")
		hd.Set("Content-Type", stored.ContentType)
		hd.Set("Content-Length", strconv.Itoa(len(stored.Body)))
		w.WriteHeader(stored.Status)
		_, _ = w.Write(stored.Body)
		return
	}
	if ch.Pending() {
		g.pending(w, ch.Order().ID)
		return
	}
	if s, ok := h.next.(Streamer); ok && s.StreamsPaidResponse() {
		g.serveStreaming(w, r, h.next, ch)
		return
	}
	g.serveBuffered(w, r, h.next, ch)
}

// serveBuffered runs next through the sale (Charge.Run) into a buffer:
// an answer of 400 or more, or one over the size limit, fails the order;
// otherwise the payment settles before the response is sent.
func (g *Gate) serveBuffered(w http.ResponseWriter, r *http.Request, next http.Handler, ch *Charge) {
	bw := &bufferWriter{header: http.Header{}, limit: g.maxResp}
	comp, err := ch.Run(r.Context(), func(ctx context.Context) (Response, error) {
		next.ServeHTTP(bw, r.WithContext(ctx))
		if bw.overflow {
			return Response{}, fmt.Errorf("response exceeded %d bytes", g.maxResp)
		}
		if status := bw.code(); status >= 400 {
			return Response{}, errors.New(failureReason(status, bw.buf.Bytes()))
		}
		out := bw.buf.Bytes()
		if out == nil {
			out = []byte{}
		}
		return Response{Status: bw.code(), ContentType: bw.header.Get("Content-Type"), Body: out}, nil
	})
	status := bw.code()
	hd := w.Header()
	switch {
	case errors.Is(err, ErrWorkFailed) && bw.overflow:
		hd.Set("Cache-Control", "no-store")
		httpjson.Detail(w, http.StatusInternalServerError, "The response was too large to deliver; the payment was not settled")
		return
	case errors.Is(err, ErrWorkFailed):
		copyHeader(hd, bw.header)
		hd.Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_, _ = w.Write(bw.buf.Bytes())
		return
	case err != nil:
		g.completionError(w, r, ch, err)
		return
	}
	out := bw.buf.Bytes()
	if out == nil {
		out = []byte{}
	}
	copyHeader(hd, bw.header)
	if comp.Settlement != nil {
		copyHeader(hd, comp.Settlement.Header)
	}
	hd.Set(HeaderReceiptID, comp.Order.ReceiptID)
	hd.Set("Cache-Control", "private")
	hd.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// serveStreaming runs next through the sale (Charge.Run) while its answer
// streams to the payer; the payment settles at the end and its headers
// and the receipt id go in trailers.
func (g *Gate) serveStreaming(w http.ResponseWriter, r *http.Request, next http.Handler, ch *Charge) {
	hd := w.Header()
	hd.Set("Cache-Control", "private")
	hd.Set("Trailer", HeaderReceiptID+", PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, Payment-Receipt")
	sw := &streamWriter{ResponseWriter: w, sum: sha256.New(), limit: g.maxResp}
	comp, err := ch.Run(r.Context(), func(ctx context.Context) (Response, error) {
		next.ServeHTTP(sw, r.WithContext(ctx))
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		if status >= 400 {
			return Response{}, errors.New(failureReason(status, sw.keep.Bytes()))
		}
		resp := Response{Status: status, ContentType: hd.Get("Content-Type"), SHA256: hex.EncodeToString(sw.sum.Sum(nil))}
		if !sw.dropped {
			resp.Body = sw.keep.Bytes()
			if resp.Body == nil {
				resp.Body = []byte{}
			}
		}
		return resp, nil
	})
	switch {
	case errors.Is(err, ErrWorkFailed):
		return
	case err != nil:
		g.c.log.WarnContext(r.Context(), "payment: streamed call not settled", "order", ch.Order().ID, "err", err)
		return
	}
	hd.Set(HeaderReceiptID, comp.Order.ReceiptID)
	if comp.Settlement != nil {
		for k, v := range comp.Settlement.Header {
			hd[k] = v
		}
	}
}

func failureReason(status int, body []byte) string {
	const max = 300
	detail := strings.TrimSpace(string(body))
	var d struct {
		Detail any `json:"detail"`
	}
	if json.Unmarshal(body, &d) == nil {
		if s, ok := d.Detail.(string); ok {
			detail = s
		}
	}
	if len(detail) > max {
		detail = detail[:max]
	}
	return fmt.Sprintf("handler answered %d: %s", status, detail)
}

// completionError answers a call whose work succeeded but whose payment
// did not settle (yet).
func (g *Gate) completionError(w http.ResponseWriter, r *http.Request, ch *Charge, err error) {
	switch {
	case errors.Is(err, ErrSettlementDeferred):
		// The answer is kept with the order (id and token already in the
		// headers) and settles once the processor is back.
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Retry-After", RetryAfterSeconds)
		httpjson.Detail(w, http.StatusServiceUnavailable, SettlementDeferredDetail)
	case errors.Is(err, ErrSettlementPending):
		g.pending(w, ch.Order().ID)
	case errors.Is(err, ErrSettlementFailed):
		// The fresh challenge is for this very request: its resource, body
		// digest and quote (released by the failure), so that it can be
		// paid on a POST or quoted route.
		g.challenge(w, r, ch.Call().Offer, ch.Resource(), asProblem(err, "Settlement failed: "+problemDetail(err)))
	default:
		g.internal(w, r, "completing a paid call", err)
	}
}

// pending answers 202 for an order whose settlement outcome is not known
// yet: the payer must not pay again but poll the order.
func (g *Gate) pending(w http.ResponseWriter, id string) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("Retry-After", "5")
	httpjson.Write(w, http.StatusAccepted, map[string]string{
		"detail":   SettlementPendingDetail,
		"orderId":  id,
		"status":   OrderSettling,
		"orderUrl": g.base + "/v1/orders/" + id,
	})
}

// SettlementPendingDetail tells a payer whose order is settling what to do.
const SettlementPendingDetail = "Payment settlement is pending. Do not pay again: poll the order with its token until it is completed, then read its result."

func asProblem(err error, detail string) *Problem {
	p := &Problem{Status: http.StatusPaymentRequired, Type: "verification-failed", Reason: "settlement_failed"}
	var pp *Problem
	if errors.As(err, &pp) {
		*p = *pp
		p.Status = http.StatusPaymentRequired
	}
	p.Detail = detail
	return p
}

// refuse answers a failed payment step: a *Problem with its status (402
// with a fresh challenge), customer and idempotency errors with theirs.
func (g *Gate) refuse(w http.ResponseWriter, r *http.Request, offer Offer, res Resource, err error) {
	var p *Problem
	switch {
	case errors.As(err, &p):
		if p.Status == http.StatusPaymentRequired || p.Status == 0 {
			if isQuoteProblem(p) {
				res.QuoteID = ""
			}
			g.challenge(w, r, offer, res, p)
			return
		}
		writeProblem(w, p)
	case errors.Is(err, ErrInvalidCustomerKey):
		httpjson.Detail(w, http.StatusUnauthorized, "A valid X-Agentic-Customer-Key is required")
	case errors.Is(err, ErrIdempotencyConflict):
		httpjson.Detail(w, http.StatusConflict, "Idempotency-Key was already used for a different request")
	case errors.Is(err, ErrIdempotencyInFlight):
		w.Header().Set("Retry-After", "1")
		httpjson.Detail(w, http.StatusConflict, "A request with this Idempotency-Key is still being processed")
	case errors.Is(err, ErrPaymentInFlight):
		w.Header().Set("Retry-After", "1")
		httpjson.Detail(w, http.StatusConflict, PaymentInFlightDetail)
	case errors.Is(err, ErrProcessorUnavailable):
		g.unavailable(w, r, err)
	default:
		g.internal(w, r, "payment", err)
	}
}

// unavailable answers 503 for a processor that cannot take payments now
// (UnavailableDetail); the cause goes to the log only.
func (g *Gate) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	g.c.log.WarnContext(r.Context(), "payment: processor unavailable", "path", r.URL.Path, "err", err)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Retry-After", RetryAfterSeconds)
	httpjson.Detail(w, http.StatusServiceUnavailable, UnavailableDetail(err))
}

// RetryAfterSeconds is the Retry-After of every 503 of the payment steps.
const RetryAfterSeconds = "5"

// SettlementDeferredDetail tells a payer whose settlement is deferred
// (ErrSettlementDeferred) what to do.
const SettlementDeferredDetail = "The payment service is temporarily unavailable. Your payment is held, not charged yet, and your answer is kept: retry with the same payment credential after Retry-After (or poll the order with its token). Do not pay again."

// UnavailableDetail is the detail of a payment step that failed because
// the processor cannot take payments now (ErrProcessorUnavailable): the
// payment was not used. It names no address and no internal error.
func UnavailableDetail(err error) string {
	if errors.Is(err, ErrNetworkUnsupported) {
		return "Payments are temporarily unavailable: the payment facilitator does not accept payments on this network now. Nothing was charged; retry later."
	}
	return "Payment verification is temporarily unavailable; the payment was not used"
}

// PaymentInFlightDetail is the 409 detail for a retry of a payment whose
// first request is still being processed.
const PaymentInFlightDetail = "A request with this payment is still being processed; retry with the same payment shortly"

func isQuoteProblem(p *Problem) bool {
	return p.Reason == ReasonQuoteMismatch || p.Reason == ReasonQuoteUsed || p.Reason == ReasonQuoteUnknown || p.Reason == ReasonQuoteExpired
}

// challenge answers 402 with a fresh challenge; p, when set, explains why
// the previous payment was refused.
func (g *Gate) challenge(w http.ResponseWriter, r *http.Request, offer Offer, res Resource, p *Problem) {
	ch, err := g.c.p.Challenge(r.Context(), offer, res)
	if errors.Is(err, ErrProcessorUnavailable) {
		g.unavailable(w, r, err)
		return
	}
	if err != nil || ch == nil {
		g.internal(w, r, "payment challenge", fmt.Errorf("challenge: %v", err))
		return
	}
	body := ch.Body
	if p != nil {
		body = withProblem(body, p)
		// x402 v2 clients read only PAYMENT-REQUIRED: its error names the
		// reason too.
		ch = ch.WithProblem(p)
	}
	hd := w.Header()
	for k, v := range ch.Header {
		for _, s := range v {
			hd.Add(k, s)
		}
	}
	if p != nil {
		// For example PAYMENT-RESPONSE {"success":false,…} of a refused
		// x402 settlement.
		for k, v := range p.Header {
			hd[k] = append([]string(nil), v...)
		}
	}
	hd.Set("Cache-Control", "no-store")
	if hd.Get("Content-Type") == "" {
		hd.Set("Content-Type", "application/json")
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusPaymentRequired)
	_, _ = w.Write(body)
}

// withProblem merges p into a challenge body (an RFC 9457 problem that is
// also an x402 v1 document): detail, type and the x402 error field.
func withProblem(body []byte, p *Problem) []byte {
	m := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		m = map[string]any{}
	}
	m["status"] = http.StatusPaymentRequired
	m["title"] = "Payment Required"
	if p.Type != "" {
		m["type"] = mpp.ProblemTypeBase + p.Type
	}
	if p.Detail != "" {
		m["detail"] = p.Detail
	}
	if e := p.errorCode(); e != "" {
		m["error"] = e
	}
	out, err := httpjson.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

func writeProblem(w http.ResponseWriter, p *Problem) {
	status := p.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	m := map[string]any{"status": status, "title": http.StatusText(status), "detail": p.Detail}
	if p.Type != "" {
		m["type"] = mpp.ProblemTypeBase + p.Type
	}
	if p.Reason != "" {
		m["error"] = p.Reason
	}
	if p.Detail == "" {
		m["detail"] = http.StatusText(status)
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, status, m)
}

func (g *Gate) internal(w http.ResponseWriter, r *http.Request, what string, err error) {
	g.c.log.ErrorContext(r.Context(), "payment: "+what, "path", r.URL.Path, "err", err)
	httpjson.Detail(w, http.StatusInternalServerError, "Internal Server Error")
}

// readBody reads the request body (at most limit bytes when limit > 0)
// and leaves it readable for the handler.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if limit > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	b, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, err
}

// resourceURL is the URL the client called, on the configured public base.
func (g *Gate) resourceURL(r *http.Request) string {
	base := g.base
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		host := r.Host
		if g.trustFwd {
			if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
				scheme = p
			}
			if h := firstValue(r.Header.Get("X-Forwarded-Host")); h != "" {
				host = h
			}
		}
		base = scheme + "://" + host
	}
	u := base + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	return u
}

func firstValue(v string) string {
	v, _, _ = strings.Cut(v, ",")
	return strings.TrimSpace(v)
}

// RequestHash identifies an HTTP request for idempotency and for the
// recovery of a purchase by its credential (BeginOptions.RequestHash):
// method, path, query and body. Transports that charge HTTP requests
// through the Cashier directly use it so that their orders and the gate's
// agree.
func RequestHash(r *http.Request, body []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", r.Method, r.URL.EscapedPath(), r.URL.RawQuery)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = append([]string(nil), v...)
	}
}

// bufferWriter holds a paid handler's response until the payment settles.
type bufferWriter struct {
	header   http.Header
	status   int
	buf      bytes.Buffer
	limit    int64
	overflow bool
}

func (b *bufferWriter) Header() http.Header { return b.header }

func (b *bufferWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	if int64(b.buf.Len()+len(p)) > b.limit {
		b.overflow = true
		return 0, errors.New("payment: response exceeds the gate's buffer limit")
	}
	return b.buf.Write(p)
}

func (b *bufferWriter) code() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}

// streamWriter passes a streaming handler's output through, hashing it
// and keeping a copy up to limit.
type streamWriter struct {
	http.ResponseWriter
	status  int
	sum     hash.Hash
	keep    bytes.Buffer
	limit   int64
	dropped bool
}

func (s *streamWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *streamWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(p)
	s.sum.Write(p[:n])
	if !s.dropped {
		if int64(s.keep.Len()+n) > s.limit {
			s.dropped = true
			s.keep = bytes.Buffer{}
		} else {
			s.keep.Write(p[:n])
		}
	}
	return n, err
}

func (s *streamWriter) Flush() { _ = http.NewResponseController(s.ResponseWriter).Flush() }

func (s *streamWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
