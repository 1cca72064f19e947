package agents

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/assaykit/assay/payment/httpgate"
	x402seller "github.com/assaykit/assay/payment/x402/seller"

	"github.com/assaykit/assay/evidence"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/shapes"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpPayHow says how a paid MCP call is paid: x402 or MPP, each in its
// _meta key (the tool descriptions, the instructions and the tier list
// say it).
const mcpPayHow = "x402 (the PaymentPayload in _meta[\"x402/payment\"]) or MPP (the evm charge credential in _meta[\"org.paymentauth/credential\"])"

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
	return x402seller.CredentialFromX402(b)
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
func (ms *mcpServer) verifyTool(t claims.Tier, tool string, offer payment.Offer) mcp.ToolHandler {
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
		idem := metaString(req, metaIdempotencyKey, httpgate.HeaderIdempotencyKey)
		prog := newMCPProgress(ctx, req)
		defer prog.close()
		work := func(ctx context.Context) ([]byte, *toolFailure) {
			res, err := ms.s.App().Verify(claims.WithProgress(ctx, prog.stage), t.Name, creq, idem)
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
		return ms.charge(ctx, req, tool, offer, transportRequestHash("mcp", tool, eff), idem, prog, work)
	}
}

// charge runs a paid tool's work: free under httpgate.Free, refused when
// payments are not configured, else through the Cashier.
func (ms *mcpServer) charge(ctx context.Context, req *mcp.CallToolRequest, tool string, offer payment.Offer,
	requestHash, idem string, prog *mcpProgress, work paidWork) (*mcp.CallToolResult, error) {
	if len(idem) > claims.MaxIdempotencyKeyLength {
		return errorResult(http.StatusUnprocessableEntity, shapes.IdempotencyKeyError(idem), nil), nil
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

// challenge answers with the PaymentRequired object of a fresh challenge
// ch; p, when set, says why the previous payment was refused.
func (ms *mcpServer) challenge(ch *payment.Challenge, p *payment.Problem) (*mcp.CallToolResult, error) {
	if ch == nil || len(ch.PaymentRequired) == 0 {
		return detailResult(http.StatusInternalServerError, "Internal Server Error", nil), nil
	}
	pr := ch.PaymentRequired
	reason := "Payment required: pay with x402 and repeat the call with the PaymentPayload in _meta[\"x402/payment\"], " +
		"or with MPP (the challenges in _meta[\"" + metaMPPPaymentRequired + "\"]) and the credential in _meta[\"" + metaMPPCredential + "\"]"
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
	if m := mppPaymentRequired(ch, p); m != nil {
		r.Meta[metaMPPPaymentRequired] = m
	}
	if p != nil {
		status := p.Status
		if status == 0 {
			status = http.StatusPaymentRequired
		}
		typ := ""
		if p.Type != "" {
			typ = payment.ProblemTypeBase + p.Type
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

// paidCall sells one call (payment.Cashier.Sell) and renders its outcome
// as a tool result.
func (ms *mcpServer) paidCall(ctx context.Context, req *mcp.CallToolRequest, tool string, offer payment.Offer,
	requestHash, idem string, prog *mcpProgress, work paidWork) (*mcp.CallToolResult, error) {
	p := &payment.Purchase{Offer: offer, Resource: ms.resource(ctx, tool, offer, metaString(req, metaQuoteID, httpgate.HeaderQuoteID)),
		CustomerKey: metaString(req, metaCustomerKey, httpgate.HeaderCustomerKey), IdempotencyKey: idem, RequestHash: requestHash}
	var mppChallengeID string
	p.Credential, mppChallengeID, p.CredentialErr = ms.readCredentials(req)
	var (
		body   []byte
		failed *toolFailure
	)
	p.Started = func(*payment.Charge) { prog.report(0, "started") }
	p.Work = func(wctx context.Context) (payment.Response, error) {
		b, fail := work(wctx)
		if fail != nil {
			failed = fail
			return payment.Response{}, errors.New(failureReason(fail.status, fail.detail))
		}
		body = b
		prog.report(4, "settling the payment")
		return payment.Response{Body: b}, nil
	}
	out := ms.pay.cashier.Sell(ctx, p)
	var cm *commerce
	if out.Order != nil {
		cm = &commerce{OrderID: out.Order.ID, OrderToken: out.Token, OrderURL: ms.orderURL(out.Order.ID), Status: string(out.Order.Status)}
	}
	switch out.Kind {
	case payment.OutcomeChallenged:
		return ms.challenge(out.Challenge, out.Problem)
	case payment.OutcomeRefused:
		if out.Problem != nil && out.Challenge != nil {
			// A malformed payment (400) is answered like a refused one:
			// the MCP binding has no other way to carry the requirements
			// again.
			return ms.challenge(out.Challenge, out.Problem)
		}
		return detailResult(out.Status, out.Detail, nil), nil
	case payment.OutcomeReplayed:
		cm.ReceiptID, cm.Replay, cm.Status = out.Order.ReceiptID, true, string(out.Order.Status)
		return ms.delivered(out.Response.Body, cm, nil, "")
	case payment.OutcomePending, payment.OutcomeDeferred:
		cm.Status = string(payment.OrderSettling)
		return detailResult(out.Status, out.Detail, cm), nil
	case payment.OutcomeWorkFailed:
		cm.Status = string(payment.OrderFailed)
		if failed != nil {
			return errorResult(failed.status, failed.body, cm), nil
		}
		return detailResult(http.StatusInternalServerError, "Internal Server Error", cm), nil
	case payment.OutcomeDelivered:
		cm.ReceiptID, cm.Status = out.Completion.Order.ReceiptID, string(out.Completion.Order.Status)
		prog.report(progressTotal, "done")
		return ms.delivered(body, cm, out.Completion.Settlement, mppChallengeID)
	}
	if cm != nil {
		cm.Status = string(out.Order.Status)
	}
	return detailResult(out.Status, out.Detail, cm), nil
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

// readCredentials reads the payment of a call: an x402 PaymentPayload in
// params._meta["x402/payment"] or an MPP credential in
// params._meta["org.paymentauth/credential"] (with the id of the MPP
// challenge it pays); both at once are refused as several credentials.
func (ms *mcpServer) readCredentials(req *mcp.CallToolRequest) (*payment.Credential, string, error) {
	if req.Params == nil || req.Params.Meta == nil {
		return nil, "", nil
	}
	x, hasX := req.Params.Meta[metaPayment]
	m, hasM := req.Params.Meta[metaMPPCredential]
	hasX, hasM = hasX && x != nil, hasM && m != nil
	switch {
	case hasX && hasM:
		return nil, "", &payment.Problem{Status: http.StatusBadRequest, Type: "malformed-credential", Reason: "invalid_payload",
			Detail: "The call carries two payments (_meta[\"" + metaPayment + "\"] and _meta[\"" + metaMPPCredential + "\"]); send exactly one."}
	case hasX:
		raw, err := json.Marshal(x)
		if err != nil {
			return nil, "", &payment.Problem{Status: http.StatusBadRequest, Type: "malformed-credential", Reason: "invalid_payload", Detail: "Malformed x402 payment"}
		}
		c, err := ms.readCred(raw)
		return c, "", err
	case hasM:
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, "", &payment.Problem{Status: http.StatusBadRequest, Type: "malformed-credential", Reason: "invalid_payload", Detail: "Malformed MPP credential"}
		}
		return readMPPCredential(raw)
	}
	return nil, "", nil
}

// delivered is the successful result: the result JSON as text (the bytes
// the receipt hashes), structuredContent with commerce, the settlement in
// _meta: x402's SettleResponse in "x402/payment-response", or MPP's
// receipt (with mppChallengeID, the challenge paid) in
// "org.paymentauth/receipt".
func (ms *mcpServer) delivered(body []byte, cm *commerce, s *payment.Settlement, mppChallengeID string) (*mcp.CallToolResult, error) {
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
	switch {
	case s == nil || len(s.Meta) == 0:
	case s.Protocol == payment.ProtocolMPP || s.Protocol == payment.ProtocolMPPStripe:
		if rc := mppReceipt(s, mppChallengeID); rc != nil {
			r.Meta = mcp.Meta{metaMPPReceipt: rc}
		}
	default:
		r.Meta = mcp.Meta{metaPaymentResponse: json.RawMessage(s.Meta)}
	}
	return r, nil
}
