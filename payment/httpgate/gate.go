package httpgate

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
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/mpp"
)

// DefaultMaxResponseBytes bounds the buffered response of a paid handler
// when Options.MaxResponseBytes is 0.
const DefaultMaxResponseBytes = 8 << 20

// DefaultMaxRequestBytes bounds the request body the gate reads (to hash
// it and hand it to the handler) when Options.MaxRequestBytes is 0:
// 1 MiB, the server package's default body limit.
const DefaultMaxRequestBytes = 1 << 20

// exposed lists the headers browsers may read on paid responses.
const exposed = "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, WWW-Authenticate, Payment-Receipt, " +
	HeaderOrderID + ", " + HeaderOrderToken + ", " + HeaderReceiptID + ", " + HeaderOrderStatus + ", " + HeaderReplay + ", Retry-After"

// Options configure New. A nil *Options is not enough: the Cashier's Keys
// and PublicBaseURL (or TrustForwardedHeaders) are required.
type Options struct {
	// CashierOptions configure the Cashier the gate is built on (Keys is
	// required).
	payment.CashierOptions
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
	// ReadCredential reads the payment credential of a request: nil and
	// no error when there is none, a *payment.Problem for a malformed one.
	// Nil means ReadCredential (x402 and MPP headers); a Processor that
	// takes credentials of its own form (gatetest's) comes with its own.
	ReadCredential func(h http.Header) (*payment.Credential, error)
}

// Gate is the HTTP Paywall: it turns a handler into a paid one. See the
// package documentation for the order of events.
type Gate struct {
	c        *payment.Cashier
	read     func(http.Header) (*payment.Credential, error)
	base     string
	trustFwd bool
	maxResp  int64
	maxReq   int64
}

var _ Paywall = (*Gate)(nil)

// New returns a Gate that charges through p and records in l.
func New(p payment.Processor, l payment.Ledger, o *Options) (*Gate, error) {
	if o == nil {
		o = &Options{}
	}
	c, err := payment.NewCashier(p, l, &o.CashierOptions)
	if err != nil {
		return nil, err
	}
	return NewFor(c, o)
}

// NewFor returns a Gate built on an existing Cashier (the one MCP and A2A
// share); o's CashierOptions are ignored.
func NewFor(c *payment.Cashier, o *Options) (*Gate, error) {
	if o == nil {
		o = &Options{}
	}
	g := &Gate{c: c, read: o.ReadCredential, trustFwd: o.TrustForwardedHeaders, maxResp: o.MaxResponseBytes, maxReq: o.MaxRequestBytes}
	if g.read == nil {
		g.read = ReadCredential
	}
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
		return nil, errors.New("payment: httpgate.New needs PublicBaseURL (or TrustForwardedHeaders behind a trusted proxy)")
	}
	return g, nil
}

// Cashier returns the cashier the gate is built on.
func (g *Gate) Cashier() *payment.Cashier { return g.c }

// ReadCredential reads the payment credential of a request as the gate
// does (Options.ReadCredential), for a transport that sells HTTP requests
// through the Cashier on its own (A2A streams).
func (g *Gate) ReadCredential(h http.Header) (*payment.Credential, error) { return g.read(h) }

// Gate implements Paywall: it returns next, sold for offer.
func (g *Gate) Gate(offer payment.Offer, next http.Handler) http.Handler {
	return &gated{g: g, offer: offer, next: next}
}

// Middleware returns the gate for offer as a middleware, the
// func(http.Handler) http.Handler shape that routers chain:
//
//	mux.Handle("POST /v1/report", gate.Middleware(offer)(reportHandler))
//
// It is the same as g.Gate(offer, next).
func (g *Gate) Middleware(offer payment.Offer) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return g.Gate(offer, next) }
}

type gated struct {
	g     *Gate
	offer payment.Offer
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
			writeProblem(w, &payment.Problem{Status: http.StatusRequestEntityTooLarge,
				Detail: fmt.Sprintf("Request body too large (at most %d bytes)", mbe.Limit)})
			return
		}
		httpjson.Detail(w, http.StatusBadRequest, "There was an error parsing the body")
		return
	}
	r, checked, proceed := precheck(w, r, h.next)
	if !proceed {
		return
	}
	if checked {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	ctx := r.Context()
	res := payment.Resource{URL: g.resourceURL(r), Method: r.Method, Description: h.offer.Description, MimeType: h.offer.MimeType,
		QuoteID: strings.TrimSpace(r.Header.Get(HeaderQuoteID)), BodyDigest: mpp.BodyDigest(body)}
	if r.Method == http.MethodHead {
		// A HEAD answer has no body: never charge for one.
		g.render(w, c.Challenged(ctx, h.offer, res, nil), nil)
		return
	}
	p := &payment.Purchase{Offer: h.offer, Resource: res, CustomerKey: r.Header.Get(HeaderCustomerKey),
		IdempotencyKey: r.Header.Get(HeaderIdempotencyKey), RequestHash: RequestHash(r, body)}
	p.Credential, p.CredentialErr = g.read(r.Header)
	if s, ok := h.next.(Streamer); ok && s.StreamsPaidResponse() {
		g.serveStreaming(w, r, h.next, p)
		return
	}
	g.serveBuffered(w, r, h.next, p)
}

// serveBuffered sells next's answer buffered: an answer of 400 or more,
// or one over the size limit, fails the order; otherwise the payment
// settles before the response is sent.
func (g *Gate) serveBuffered(w http.ResponseWriter, r *http.Request, next http.Handler, p *payment.Purchase) {
	bw := &bufferWriter{header: http.Header{}, limit: g.maxResp}
	p.Work = func(ctx context.Context) (payment.Response, error) {
		next.ServeHTTP(bw, r.WithContext(ctx))
		if bw.overflow {
			return payment.Response{}, fmt.Errorf("response exceeded %d bytes", g.maxResp)
		}
		if status := bw.code(); status >= 400 {
			return payment.Response{}, errors.New(failureReason(status, bw.buf.Bytes()))
		}
		out := bw.buf.Bytes()
		if out == nil {
			out = []byte{}
		}
		return payment.Response{Status: bw.code(), ContentType: bw.header.Get("Content-Type"), Body: out}, nil
	}
	g.render(w, g.c.Sell(r.Context(), p), bw)
}

// Render writes the outcome of a sale that ended before its work ran (a
// challenge, a refusal, a replay, a pending order), for a transport that
// sells over HTTP on its own (A2A streams) and answers those as the gate
// does.
func (g *Gate) Render(w http.ResponseWriter, out *payment.Outcome) { g.render(w, out, nil) }

// render writes the outcome of a sale: the one rendering of outcomes for
// HTTP. bw is the buffered work's writer (nil when nothing was buffered).
func (g *Gate) render(w http.ResponseWriter, out *payment.Outcome, bw *bufferWriter) {
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
	case payment.OutcomeChallenged:
		g.challenge(w, out.Challenge, out.Problem)
	case payment.OutcomeRefused:
		hd.Set("Cache-Control", "no-store")
		if out.Problem != nil {
			writeProblem(w, out.Problem)
			return
		}
		httpjson.Detail(w, out.Status, out.Detail)
	case payment.OutcomeReplayed:
		if id := out.Order.ReceiptID; id != "" {
			hd.Set(HeaderReceiptID, id)
		}
		hd.Set(HeaderReplay, "true")
		hd.Set(HeaderOrderStatus, string(out.Order.Status))
		hd.Set("Cache-Control", "private")
		hd.Set("Content-Type", out.Response.ContentType)
		hd.Set("Content-Length", strconv.Itoa(len(out.Response.Body)))
		w.WriteHeader(out.Response.Status)
		_, _ = w.Write(out.Response.Body)
	case payment.OutcomePending:
		hd.Set("Cache-Control", "no-store")
		httpjson.Write(w, http.StatusAccepted, map[string]string{
			"detail":   out.Detail,
			"orderId":  out.Order.ID,
			"status":   string(payment.OrderSettling),
			"orderUrl": g.base + "/v1/orders/" + out.Order.ID,
		})
	case payment.OutcomeDelivered:
		copyHeader(hd, bw.header)
		copyHeader(hd, SettlementHeader(out.Completion.Settlement))
		hd.Set(HeaderReceiptID, out.Completion.Order.ReceiptID)
		hd.Set(HeaderOrderStatus, string(out.Completion.Order.Status))
		hd.Set("Cache-Control", "private")
		hd.Set("Content-Length", strconv.Itoa(len(out.Response.Body)))
		w.WriteHeader(out.Response.Status)
		_, _ = w.Write(out.Response.Body)
	case payment.OutcomeWorkFailed:
		hd.Set("Cache-Control", "no-store")
		if bw.overflow {
			httpjson.Detail(w, http.StatusInternalServerError, "The response was too large to deliver; the payment was not settled")
			return
		}
		copyHeader(hd, bw.header)
		w.WriteHeader(bw.code())
		_, _ = w.Write(bw.buf.Bytes())
	default: // payment.OutcomeDeferred, payment.OutcomeFailed
		hd.Set("Cache-Control", "no-store")
		httpjson.Detail(w, out.Status, out.Detail)
	}
}

// serveStreaming sells next's answer as it streams to the payer; the
// payment settles at the end and its headers and the receipt id go in
// trailers.
func (g *Gate) serveStreaming(w http.ResponseWriter, r *http.Request, next http.Handler, p *payment.Purchase) {
	sw := &streamWriter{ResponseWriter: w, sum: sha256.New(), limit: g.maxResp}
	hd := w.Header()
	started := false
	p.Started = func(ch *payment.Charge) {
		started = true
		hd.Set(HeaderOrderID, ch.Order().ID)
		hd.Set(HeaderOrderToken, ch.OrderToken())
		hd.Set("Cache-Control", "private")
		hd.Set("Trailer", HeaderReceiptID+", PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, Payment-Receipt")
	}
	p.Work = func(ctx context.Context) (payment.Response, error) {
		next.ServeHTTP(sw, r.WithContext(ctx))
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		if status >= 400 {
			return payment.Response{}, errors.New(failureReason(status, sw.keep.Bytes()))
		}
		resp := payment.Response{Status: status, ContentType: hd.Get("Content-Type"), SHA256: hex.EncodeToString(sw.sum.Sum(nil))}
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
	case payment.OutcomeDelivered:
		hd.Set(HeaderReceiptID, out.Completion.Order.ReceiptID)
		for k, v := range SettlementHeader(out.Completion.Settlement) {
			hd[k] = v
		}
	case payment.OutcomeWorkFailed:
	default:
		g.c.Logger().WarnContext(r.Context(), "payment: streamed call not settled", "order", out.Order.ID, "outcome", out.Kind, "err", out.Err)
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

// challenge answers 402 with a fresh challenge; p, when set, explains why
// the previous payment was refused.
func (g *Gate) challenge(w http.ResponseWriter, ch *payment.Challenge, p *payment.Problem) {
	body := ch.Body
	if p != nil {
		body = withProblem(body, p)
		// x402 v2 clients read only PAYMENT-REQUIRED: its error names the
		// reason too.
		ch = ch.WithProblem(p)
	}
	hd := w.Header()
	for k, v := range ChallengeHeader(ch) {
		for _, s := range v {
			hd.Add(k, s)
		}
	}
	if p != nil {
		// For example PAYMENT-RESPONSE {"success":false,…} of a refused
		// x402 settlement.
		copyHeader(hd, SettlementHeader(p.Settlement))
	}
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusPaymentRequired)
	_, _ = w.Write(body)
}

// withProblem merges p into a challenge body (an RFC 9457 problem that is
// also an x402 v1 document): detail, type and the x402 error field.
func withProblem(body []byte, p *payment.Problem) []byte {
	m := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		m = map[string]any{}
	}
	m["status"] = http.StatusPaymentRequired
	m["title"] = "Payment Required"
	if p.Type != "" {
		m["type"] = payment.ProblemTypeBase + p.Type
	}
	if p.Detail != "" {
		m["detail"] = p.Detail
	}
	if e := p.ErrorCode(); e != "" {
		m["error"] = e
	}
	out, err := httpjson.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

func writeProblem(w http.ResponseWriter, p *payment.Problem) {
	status := p.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	m := map[string]any{"status": status, "title": http.StatusText(status), "detail": p.Detail}
	if p.Type != "" {
		m["type"] = payment.ProblemTypeBase + p.Type
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
