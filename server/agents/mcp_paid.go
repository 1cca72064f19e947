package agents

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"github.com/assaykit/assay/evidence"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/shapes"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// _meta keys of the MCP transport.
const (
	metaPayment         = "x402/payment"
	metaPaymentResponse = "x402/payment-response"
	metaProblem         = "io.assaykit/problem"
	metaStatus          = "io.assaykit/status"
	metaIdempotencyKey  = "io.assaykit/idempotencyKey"
	metaCustomerKey     = "io.assaykit/customerKey"
	metaQuoteID         = "io.assaykit/quoteId"
)

// readX402Credential reads params._meta["x402/payment"]: an x402
// PaymentPayload (v1 or v2) as a JSON object (the binding's form) or as
// the base64 of one (the PAYMENT-SIGNATURE header value, which some
// clients pass on unchanged). Verification is the processor's job.
func readX402Credential(raw json.RawMessage) (*payment.Credential, error) {
	b := bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(b, &s) == nil {
		s = strings.TrimSpace(s)
		dec, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			dec, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
		}
		if err != nil {
			return nil, &payment.Problem{Status: http.StatusBadRequest, Type: "malformed-credential", Reason: "invalid_payload",
				Detail: "Malformed x402 payment in _meta[\"x402/payment\"]: a string must be the base64 of a PaymentPayload"}
		}
		b = bytes.TrimSpace(dec)
	}
	return payment.CredentialFromX402(b)
}

// metaString returns a string member of _meta, else the HTTP header.
func metaString(req *mcp.CallToolRequest, key, header string) string {
	if req.Params != nil && req.Params.Meta != nil {
		if v, ok := req.Params.Meta[key].(string); ok {
			return v
		}
	}
	if req.Extra != nil && req.Extra.Header != nil {
		return strings.TrimSpace(req.Extra.Header.Get(header))
	}
	return ""
}

// mcpProgress sends notifications/progress for one call, when the client
// asked for them. Stages come from the verification's goroutine; once the
// call has answered, late stages are dropped.
type mcpProgress struct {
	mu    sync.Mutex
	req   *mcp.CallToolRequest
	ctx   context.Context
	token any
	last  float64
	done  bool
}

const progressTotal = 5

func newMCPProgress(ctx context.Context, req *mcp.CallToolRequest) *mcpProgress {
	p := &mcpProgress{req: req, ctx: ctx, last: -1}
	if req.Params != nil {
		p.token = req.Params.GetProgressToken()
		// JSON numbers arrive as float64; send integral ones back as
		// integers, as the client sent them.
		if f, ok := p.token.(float64); ok && f == float64(int64(f)) {
			p.token = int64(f)
		}
	}
	return p
}

func (p *mcpProgress) report(step float64, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.token == nil || p.done || step <= p.last || p.req.Session == nil {
		return
	}
	p.last = step
	_ = p.req.Session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: step, Total: progressTotal, Message: msg})
}

func (p *mcpProgress) stage(s claims.Stage) {
	switch s {
	case claims.StageSearching:
		p.report(1, "searching the web for evidence")
	case claims.StageReconciling:
		p.report(2, "reconciling the evidence with its sources")
	case claims.StageSnapshotting:
		p.report(3, "snapshotting cited sources")
	}
}

func (p *mcpProgress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
}

// jsonResult is a tool result whose structuredContent is body and whose
// content[0].text is body as text.
func jsonResult(body json.RawMessage, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: body, IsError: isError}
}

// errorResult is the tool error for an HTTP-equivalent status and body,
// with commerce when an order exists.
func errorResult(status int, body any, c *commerce) *mcp.CallToolResult {
	b, err := httpjson.Marshal(body)
	if err != nil {
		b = []byte(`{"detail":"Internal Server Error"}`)
		status = http.StatusInternalServerError
	}
	if c != nil {
		if withC, err := withMember(b, "commerce", c); err == nil {
			b = withC
		}
	}
	r := jsonResult(b, true)
	r.Meta = mcp.Meta{metaStatus: status}
	return r
}

func detailResult(status int, detail string, c *commerce) *mcp.CallToolResult {
	return errorResult(status, httpjson.DetailBody{Detail: detail}, c)
}

// toolFailure is a paid tool's work that failed: the HTTP-equivalent
// status and error body (never charged).
type toolFailure struct {
	status int
	body   any
	detail string // for the order's failure reason
}

// paidWork does a paid tool's work with the payment in ctx and returns the
// delivered JSON object, or a failure.
type paidWork func(ctx context.Context) ([]byte, *toolFailure)

// toolArgs returns the arguments of a call ("{}" when absent or null).
func toolArgs(req *mcp.CallToolRequest) []byte {
	if req.Params != nil {
		if a := bytes.TrimSpace(req.Params.Arguments); len(a) > 0 && !bytes.Equal(a, []byte("null")) {
			return a
		}
	}
	return []byte("{}")
}

// verifyTool is the handler of one paid verification tool.
func (ms *mcpServer) verifyTool(t claims.Tier, offer payment.Offer) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// Arguments and tier rules, exactly as the HTTP route checks the
		// body: never charged.
		creq, eff, ve, err := decodeClaimRequest(ms.s, t.Name, toolArgs(req))
		if err != nil {
			st, d := ms.s.Status(ctx, err)
			return detailResult(st, d, nil), nil
		}
		if ve != nil {
			return errorResult(http.StatusUnprocessableEntity, ve, nil), nil
		}
		idem := metaString(req, metaIdempotencyKey, payment.HeaderIdempotencyKey)
		prog := newMCPProgress(ctx, req)
		defer prog.close()
		work := func(ctx context.Context) ([]byte, *toolFailure) {
			res, err := ms.s.Verify(claims.WithProgress(ctx, prog.stage), t.Name, creq, idem)
			var body []byte
			if err == nil {
				body, err = httpjson.Marshal(res)
			}
			if err != nil {
				st, d := ms.s.Status(ctx, err)
				var re *claims.RequestError
				if errors.As(err, &re) {
					return nil, &toolFailure{status: st, body: shapes.NewValueError(re.Msg, map[string]any{}).WithPrefix("body"), detail: d}
				}
				return nil, &toolFailure{status: st, body: httpjson.DetailBody{Detail: d}, detail: d}
			}
			return body, nil
		}
		return ms.charge(ctx, req, t.Tool, offer, transportRequestHash("mcp", t.Tool, eff), idem, prog, work)
	}
}

// charge runs a paid tool's work: free under payment.Free, refused when
// payments are not configured, else through the Cashier.
func (ms *mcpServer) charge(ctx context.Context, req *mcp.CallToolRequest, tool string, offer payment.Offer,
	requestHash, idem string, prog *mcpProgress, work paidWork) (*mcp.CallToolResult, error) {
	if len(idem) > claims.MaxIdempotencyKeyLength {
		return errorResult(http.StatusUnprocessableEntity, server.IdempotencyKeyError(idem), nil), nil
	}
	switch {
	case ms.pay.free:
		prog.report(0, "started")
		body, fail := work(payment.WithCall(ctx, &payment.Call{Payer: "free", Protocol: payment.ProtocolFree, Offer: offer}))
		if fail != nil {
			return errorResult(fail.status, fail.body, nil), nil
		}
		prog.report(progressTotal, "done")
		return jsonResult(body, false), nil
	case ms.pay.cashier == nil:
		return detailResult(http.StatusServiceUnavailable, "Payments are not configured", nil), nil
	}
	return ms.paidCall(ctx, req, tool, offer, requestHash, idem, prog, work)
}

// resource is the x402 resource of a tool: mcp://<public host>/<tool>, or
// the request's Host when no public base URL is configured.
func (ms *mcpServer) resource(ctx context.Context, tool string, offer payment.Offer, quoteID string) payment.Resource {
	host := ms.host
	if host == "" {
		host, _ = ctx.Value(mcpHostKey{}).(string)
	}
	if host == "" {
		host = "localhost"
	}
	return payment.Resource{URL: "mcp://" + host + "/" + tool, Description: offer.Description, MimeType: "application/json", QuoteID: quoteID}
}

func (ms *mcpServer) orderURL(id string) string {
	if ms.base == "" {
		return ""
	}
	return ms.base + "/v1/orders/" + id
}

// challenge answers with the PaymentRequired object of a fresh challenge;
// p, when set, says why the previous payment was refused.
func (ms *mcpServer) challenge(ctx context.Context, offer payment.Offer, res payment.Resource, p *payment.Problem) (*mcp.CallToolResult, error) {
	ch, err := ms.pay.cashier.Processor().Challenge(ctx, offer, res)
	if errors.Is(err, payment.ErrProcessorUnavailable) {
		ms.s.Logger().WarnContext(ctx, "mcp: payments unavailable", "err", err)
		return detailResult(http.StatusServiceUnavailable, payment.UnavailableDetail(err), nil), nil
	}
	if err != nil || ch == nil || len(ch.PaymentRequired) == 0 {
		ms.s.Logger().ErrorContext(ctx, "mcp: payment challenge", "err", err)
		return detailResult(http.StatusInternalServerError, "Internal Server Error", nil), nil
	}
	pr := ch.PaymentRequired
	reason := "Payment required: pay with x402 and repeat the call with the PaymentPayload in _meta[\"x402/payment\"]"
	if p != nil {
		reason = p.Reason
		if reason == "" {
			reason = p.Detail
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(pr, &m); err == nil {
		if e, err := httpjson.Marshal(reason); err == nil {
			m["error"] = e
			if b, err := httpjson.Marshal(orderedPaymentRequired(m)); err == nil {
				pr = b
			}
		}
	}
	r := jsonResult(pr, true)
	r.Meta = mcp.Meta{metaStatus: http.StatusPaymentRequired}
	if p != nil {
		status := p.Status
		if status == 0 {
			status = http.StatusPaymentRequired
		}
		typ := ""
		if p.Type != "" {
			typ = mpp.ProblemTypeBase + p.Type
		}
		r.Meta[metaProblem] = map[string]any{"type": typ, "reason": p.Reason, "detail": p.Detail, "status": status}
		r.Meta[metaStatus] = status
	}
	return r, nil
}

// orderedPaymentRequired keeps the usual member order of a PaymentRequired
// object (x402Version, error, resource, accepts, extensions, then the rest).
func orderedPaymentRequired(m map[string]json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	put := func(k string, v json.RawMessage) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	order := []string{"x402Version", "error", "resource", "accepts", "extensions"}
	for _, k := range order {
		if v, ok := m[k]; ok {
			put(k, v)
			delete(m, k)
		}
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		rest = append(rest, k)
	}
	slices.Sort(rest)
	for _, k := range rest {
		put(k, m[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// paidCall charges one call through the Cashier: verify and reserve the
// payment, open the order, do the work, settle only on success.
func (ms *mcpServer) paidCall(ctx context.Context, req *mcp.CallToolRequest, tool string, offer payment.Offer,
	requestHash, idem string, prog *mcpProgress, work paidWork) (*mcp.CallToolResult, error) {
	c := ms.pay.cashier
	res := ms.resource(ctx, tool, offer, metaString(req, metaQuoteID, payment.HeaderQuoteID))
	customerKey := metaString(req, metaCustomerKey, payment.HeaderCustomerKey)
	if customerKey != "" {
		if _, err := c.Customer(ctx, customerKey); err != nil {
			st, d, _ := paymentRefusal(err)
			return detailResult(st, d, nil), nil
		}
	}
	priced, err := c.PriceOffer(ctx, offer, res.QuoteID)
	if err != nil {
		unquoted := res
		unquoted.QuoteID = ""
		return ms.refuse(ctx, offer, unquoted, err)
	}
	raw, paid := json.RawMessage(nil), false
	if req.Params != nil && req.Params.Meta != nil {
		if v, ok := req.Params.Meta[metaPayment]; ok && v != nil {
			b, err := json.Marshal(v)
			if err != nil {
				return ms.refuse(ctx, priced, res, &payment.Problem{Status: http.StatusBadRequest, Type: "malformed-credential", Reason: "invalid_payload", Detail: "Malformed x402 payment"})
			}
			raw, paid = b, true
		}
	}
	if !paid {
		return ms.challenge(ctx, priced, res, nil)
	}
	cred, err := ms.readCred(raw)
	if err != nil {
		return ms.refuse(ctx, priced, res, payment.CredentialProblem(err))
	}
	ch, err := c.Begin(ctx, offer, res, cred, &payment.BeginOptions{CustomerKey: customerKey, IdempotencyKey: idem, RequestHash: requestHash})
	if err != nil {
		return ms.refuse(ctx, priced, res, err)
	}
	ord := ch.Order()
	cm := &commerce{OrderID: ord.ID, OrderToken: ch.OrderToken(), OrderURL: ms.orderURL(ord.ID)}
	if stored, ok := ch.Replay(); ok {
		cm.ReceiptID, cm.Status, cm.Replay = ord.ReceiptID, ord.Status, true
		return ms.delivered(stored.Body, cm, nil)
	}
	if ch.Pending() {
		cm.Status = payment.OrderSettling
		return detailResult(http.StatusAccepted, payment.SettlementPendingDetail, cm), nil
	}
	prog.report(0, "started")

	// The one sale: the work runs with the payment in its context and the
	// offer's timeout; a failure voids, success settles.
	var (
		body   []byte
		failed *toolFailure
	)
	comp, err := ch.Run(ctx, func(wctx context.Context) (payment.Response, error) {
		b, fail := work(wctx)
		if fail != nil {
			failed = fail
			return payment.Response{}, errors.New(failureReason(fail.status, fail.detail))
		}
		body = b
		prog.report(4, "settling the payment")
		return payment.Response{Body: b}, nil
	})
	if failed != nil {
		cm.Status = payment.OrderFailed
		return errorResult(failed.status, failed.body, cm), nil
	}
	switch {
	case errors.Is(err, payment.ErrSettlementDeferred):
		cm.Status = payment.OrderSettling
		return detailResult(http.StatusServiceUnavailable, payment.SettlementDeferredDetail, cm), nil
	case errors.Is(err, payment.ErrSettlementPending):
		cm.Status = payment.OrderSettling
		return detailResult(http.StatusAccepted, payment.SettlementPendingDetail, cm), nil
	case errors.Is(err, payment.ErrSettlementFailed):
		var p *payment.Problem
		if !errors.As(err, &p) {
			p = &payment.Problem{}
		}
		sp := *p
		sp.Status, sp.Detail = http.StatusPaymentRequired, "Settlement failed: "+problemText(p)
		if sp.Reason == "" {
			sp.Reason = "settlement_failed"
		}
		if sp.Type == "" {
			sp.Type = "verification-failed"
		}
		return ms.challenge(ctx, priced, res, &sp)
	case err != nil:
		ms.s.Logger().ErrorContext(ctx, "mcp: completing a paid call", "order", ord.ID, "err", err)
		cm.Status = payment.OrderFailed
		return detailResult(http.StatusInternalServerError, "Internal Server Error", cm), nil
	}
	cm.ReceiptID, cm.Status = comp.Order.ReceiptID, comp.Order.Status
	prog.report(progressTotal, "done")
	return ms.delivered(body, cm, comp.Settlement)
}

func problemText(p *payment.Problem) string {
	if p.Detail != "" {
		return p.Detail
	}
	if p.Reason != "" {
		return p.Reason
	}
	return "the payment could not be settled"
}

// delivered is the successful result: the result JSON as text (the bytes
// the receipt hashes), structuredContent with commerce, the settlement in
// _meta.
func (ms *mcpServer) delivered(body []byte, cm *commerce, s *payment.Settlement) (*mcp.CallToolResult, error) {
	structured, err := withMember(body, "commerce", cm)
	if err != nil {
		return nil, err
	}
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: structured}
	// A verification's evidence bundle, as a resource link after the
	// result (content[0] stays the bytes the receipt hashes).
	var v struct {
		VerificationID string `json:"verificationId"`
	}
	if json.Unmarshal(body, &v) == nil {
		if u := evidenceURL(ms.s, ms.base, v.VerificationID); u != "" {
			r.Content = append(r.Content, &mcp.ResourceLink{URI: u, Name: v.VerificationID + ".wacz", Title: "Evidence bundle",
				Description: evidenceText, MIMEType: evidence.MediaType})
		}
	}
	if s != nil && len(s.Meta) > 0 {
		r.Meta = mcp.Meta{metaPaymentResponse: json.RawMessage(s.Meta)}
	}
	return r, nil
}

// refuse answers a failed payment step the way the HTTP gate does: a fresh
// challenge for payment problems, the gate's status and detail otherwise.
func (ms *mcpServer) refuse(ctx context.Context, offer payment.Offer, res payment.Resource, err error) (*mcp.CallToolResult, error) {
	st, d, p := paymentRefusal(err)
	if p != nil {
		if p.Status == 0 || p.Status == http.StatusPaymentRequired {
			switch p.Reason {
			case payment.ReasonQuoteMismatch, payment.ReasonQuoteUsed, payment.ReasonQuoteUnknown, payment.ReasonQuoteExpired:
				res.QuoteID = ""
			}
		}
		// A malformed payment (400) is answered like a refused one: the
		// MCP binding has no other way to carry the requirements again.
		return ms.challenge(ctx, offer, res, p)
	}
	if st >= 500 && !errors.Is(err, payment.ErrProcessorUnavailable) {
		ms.s.Logger().ErrorContext(ctx, "mcp: payment", "err", err)
	}
	return detailResult(st, d, nil), nil
}
