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
	}
	ctx := r.Context()
	res := Resource{URL: g.resourceURL(r), Method: r.Method, Description: h.offer.Description, MimeType: h.offer.MimeType,
		QuoteID: strings.TrimSpace(r.Header.Get(HeaderQuoteID)), BodyDigest: mpp.BodyDigest(body)}
	if r.Method == http.MethodHead {
		// A HEAD answer has no body: never charge for one.
		g.render(w, c.Challenged(ctx, h.offer, res, nil), nil)
		return
	}
	p := &Purchase{Offer: h.offer, Resource: res, CustomerKey: r.Header.Get(HeaderCustomerKey),
		IdempotencyKey: r.Header.Get(HeaderIdempotencyKey), RequestHash: RequestHash(r, body)}
	p.Credential, p.CredentialErr = c.p.ReadCredential(r.Header)
	if s, ok := h.next.(Streamer); ok && s.StreamsPaidResponse() {
		g.serveStreaming(w, r, h.next, p)
		return
	}
	g.serveBuffered(w, r, h.next, p)
}

// serveBuffered sells next's answer buffered: an answer of 400 or more,
// or one over the size limit, fails the order; otherwise the payment
// settles before the response is sent.
func (g *Gate) serveBuffered(w http.ResponseWriter, r *http.Request, next http.Handler, p *Purchase) {
	bw := &bufferWriter{header: http.Header{}, limit: g.maxResp}
	p.Work = func(ctx context.Context) (Response, error) {
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
	}
	g.render(w, g.c.Sell(r.Context(), p), bw)
}

// Render writes the outcome of a sale that ended before its work ran (a
// challenge, a refusal, a replay, a pending order), for a transport that
// sells over HTTP on its own (A2A streams) and answers those as the gate
// does.
func (g *Gate) Render(w http.ResponseWriter, out *Outcome) { g.render(w, out, nil) }

// render writes the outcome of a sale: the one rendering of outcomes for
// HTTP. bw is the buffered work's writer (nil when nothing was buffered).
func (g *Gate) render(w http.ResponseWriter, out *Outcome, bw *bufferWriter) {
	if bw == nil {
		bw = &bufferWriter{header: http.Header{}}
	}
	hd := w.Header()
	if out.Order != nil {
		hd.Set(HeaderOrderID, out.Order.ID)
		if out.Token != "" {
			hd.Set(HeaderOrderToken, out.Token)
		}
	}
	if out.RetryAfter > 0 {
		hd.Set("Retry-After", strconv.Itoa(out.RetryAfter))
	}
	switch out.Kind {
	case OutcomeChallenged:
		g.challenge(w, out.Challenge, out.Problem)
	case OutcomeRefused:
		hd.Set("Cache-Control", "no-store")
		if out.Problem != nil {
			writeProblem(w, out.Problem)
			return
		}
		httpjson.Detail(w, out.Status, out.Detail)
	case OutcomeReplayed:
		if id := out.Order.ReceiptID; id != "" {
			hd.Set(HeaderReceiptID, id)
		}
		hd.Set(HeaderReplay, "true")
		hd.Set("Cache-Control", "private")
		hd.Set("Content-Type", out.Response.ContentType)
		hd.Set("Content-Length", strconv.Itoa(len(out.Response.Body)))
		w.WriteHeader(out.Response.Status)
		_, _ = w.Write(out.Response.Body)
	case OutcomePending:
		hd.Set("Cache-Control", "no-store")
		httpjson.Write(w, http.StatusAccepted, map[string]string{
			"detail":   out.Detail,
			"orderId":  out.Order.ID,
			"status":   string(OrderSettling),
			"orderUrl": g.base + "/v1/orders/" + out.Order.ID,
		})
	case OutcomeDelivered:
		copyHeader(hd, bw.header)
		if s := out.Completion.Settlement; s != nil {
			copyHeader(hd, s.Header)
		}
		hd.Set(HeaderReceiptID, out.Completion.Order.ReceiptID)
		hd.Set("Cache-Control", "private")
		hd.Set("Content-Length", strconv.Itoa(len(out.Response.Body)))
		w.WriteHeader(out.Response.Status)
		_, _ = w.Write(out.Response.Body)
	case OutcomeWorkFailed:
		hd.Set("Cache-Control", "no-store")
		if bw.overflow {
			httpjson.Detail(w, http.StatusInternalServerError, "The response was too large to deliver; the payment was not settled")
			return
		}
		copyHeader(hd, bw.header)
		w.WriteHeader(bw.code())
		_, _ = w.Write(bw.buf.Bytes())
	default: // OutcomeDeferred, OutcomeFailed
		hd.Set("Cache-Control", "no-store")
		httpjson.Detail(w, out.Status, out.Detail)
	}
}

// serveStreaming sells next's answer as it streams to the payer; the
// payment settles at the end and its headers and the receipt id go in
// trailers.
func (g *Gate) serveStreaming(w http.ResponseWriter, r *http.Request, next http.Handler, p *Purchase) {
	sw := &streamWriter{ResponseWriter: w, sum: sha256.New(), limit: g.maxResp}
	hd := w.Header()
	started := false
	p.Started = func(ch *Charge) {
		started = true
		hd.Set(HeaderOrderID, ch.Order().ID)
		hd.Set(HeaderOrderToken, ch.OrderToken())
		hd.Set("Cache-Control", "private")
		hd.Set("Trailer", HeaderReceiptID+", PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, Payment-Receipt")
	}
	p.Work = func(ctx context.Context) (Response, error) {
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
	}
	out := g.c.Sell(r.Context(), p)
	if !started {
		g.render(w, out, nil)
		return
	}
	switch out.Kind {
	case OutcomeDelivered:
		hd.Set(HeaderReceiptID, out.Completion.Order.ReceiptID)
		if s := out.Completion.Settlement; s != nil {
			for k, v := range s.Header {
				hd[k] = v
			}
		}
	case OutcomeWorkFailed:
	default:
		g.c.log.WarnContext(r.Context(), "payment: streamed call not settled", "order", out.Order.ID, "outcome", out.Kind, "err", out.Err)
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

// SettlementPendingDetail tells a payer whose order is settling what to do.
const SettlementPendingDetail = "Payment settlement is pending. Do not pay again: poll the order with its token until it is completed, then read its result."

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

// challenge answers 402 with a fresh challenge; p, when set, explains why
// the previous payment was refused.
func (g *Gate) challenge(w http.ResponseWriter, ch *Challenge, p *Problem) {
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
