package agents

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/discovery/inputschema"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server/route"
	"github.com/assaykit/assay/shapes"
)

// A2AConfig configures the A2A endpoint: the A2A protocol 1.0, JSON-RPC
// binding, at POST {prefix}/a2a ("/claim-verification/a2a").
//
// # Methods
//
//   - SendMessage (paid): the text parts of the message, joined by
//     newlines, are the claim; or one data part carries a whole
//     ClaimVerificationRequest (then text parts are only commentary). The
//     tier is params.metadata.tier (quick, standard, deep, research;
//     default DefaultTier, else standard). The answer is a Task in
//     TASK_STATE_COMPLETED with one artifact of two parts: a text part
//     (the status and the conclusion) and a data part (the whole
//     ClaimVerificationResult, mediaType application/json).
//   - SendStreamingMessage (paid): the same, as server-sent events, each a
//     JSON-RPC response with one event: the task (submitted), status
//     updates (working: started, searching, reconciling, snapshotting,
//     settling), the artifact, and the final status (completed, failed or
//     canceled).
//   - GetTask, CancelTask (free): only for the payer's own tasks: the
//     request must carry the X-Agentic-Order-Token header of the call that
//     created the task (any other caller gets TaskNotFound, -32001). A
//     paid task's id is its order id (ord_…), so GetTask works on every
//     instance sharing the database and after a restart (from the ledger
//     and the stored result); history and in-progress stages are known to
//     the instance that runs the task. Canceling stops the verification;
//     the payment is not settled.
//   - Other 1.0 methods: push notification configuration answers -32003,
//     GetExtendedAgentCard -32007, ListTasks and SubscribeToTask -32004;
//     anything else -32601.
//
// # Versions
//
// Requests must say A2A-Version: 1.0 (header or query parameter; patch
// versions are accepted). A missing version means 0.3, which this agent
// does not speak: -32009 VersionNotSupported, with the supported versions in
// the error's metadata.
//
// # Payment ("x402-or-mpp")
//
// The paid methods sit behind Config.Paywall, the same 402 gate as the
// HTTP tier routes, with the same offers: without a credential the answer
// is HTTP 402 with the x402 PAYMENT-REQUIRED header and the MPP
// WWW-Authenticate challenges; the credential goes in the HTTP headers
// (PAYMENT-SIGNATURE / X-PAYMENT, or Authorization: Payment). Before any
// challenge the JSON-RPC envelope, the version, the method, the message
// and the claim (with the tier rules) are checked: a malformed request gets
// its JSON-RPC error (HTTP 200) and is never charged. Successful paid calls
// answer with X-Agentic-Order-Id, X-Agentic-Order-Token and
// X-Agentic-Receipt-Id, like HTTP.
//
// A verification that fails after payment (provider failure, time-out, the
// task canceled) is answered with a non-2xx HTTP status — the same status
// the HTTP route gives (502, 503, 504; 409 for a canceled task) — so that
// the gate voids the payment and fails the order; the body is a JSON-RPC
// error (-32603, or the canceled Task for a cancellation) carrying the task
// id, the order id and the HTTP route's detail. Clients see an error and
// are not charged.
//
// # Why a hand-written handler
//
// The a2a-go server answers every JSON-RPC error with HTTP 200. Behind the
// payment gate that would settle failed verifications: the gate settles
// exactly the responses with a status below 400. The handler here chooses
// its statuses, validates before the gate challenges, and streams.
//
// # Streaming and settlement
//
// The gate buffers a paid response until it has settled. For
// SendStreamingMessage that would deliver every event at the end, so when
// the paywall is a *httpgate.Gate and PublicBaseURL is set, a streaming
// request that carries a credential (and no Idempotency-Key) is charged
// directly through the gate's Cashier, with the gate's rules: the credential
// is verified and reserved and the order opened before the stream starts;
// status updates flow live; the payment is settled before the artifact is
// sent; a failure voids it. The receipt id follows in the final status
// update's metadata and in the X-Agentic-Receipt-Id trailer. Any problem
// before the order is open (no or bad credential, customer key, quote) is
// answered by the gate itself, so refusals are exactly the HTTP ones.
// Otherwise (other paywalls, idempotent retries) streams are buffered by
// the gate and settle before delivery. For streamed calls the receipt's
// resultSha256 is the SHA-256 of the final task as a SendMessage response
// (the stored result, readable at GET /v1/orders/{id}/result).
//
// # Other choices
//
//   - The Idempotency-Key header works as on HTTP (per payer and tier);
//     messageId is not an idempotency key.
//   - Under httpgate.Free tasks have random ids (task_…) that are their only
//     secret: no order token exists.
//   - File parts (url, raw) are refused with -32005.
type A2A struct {
	// PublicBaseURL is the scheme, host and mount path under which clients
	// reach this server; it must be the gate's (httpgate.Options.PublicBaseURL).
	// Empty means Config.PublicBaseURL; without either, streamed calls are
	// buffered by the gate.
	PublicBaseURL string
	// Cashier is the gate's Cashier (nil: taken from Config.Paywall when it
	// is a *httpgate.Gate). It reads orders for GetTask and charges live
	// streams.
	Cashier *payment.Cashier
	// DefaultTier is the tier of messages that name none; "" means
	// standard (or, when ClaimsConfig.Tiers leaves it out, the first tier
	// sold).
	DefaultTier string
	// TaskTTL is how long this instance keeps a task's history and live
	// state in memory after its last change; 0 means one hour.
	TaskTTL time.Duration
	// MaxTasks bounds the tasks kept in memory; 0 means 10000.
	MaxTasks int
}

// a2aSupportedVersions are the A2A versions served.
var a2aSupportedVersions = []string{"1.0"}

// Routes implements route.Mount: the A2A endpoint, when claim
// verification is configured.
func (cfg A2A) Routes(s route.Host) ([]*route.Route, error) {
	if s.App().Claims == nil {
		return nil, nil
	}
	h, err := newA2AHandler(s, cfg)
	if err != nil {
		return nil, err
	}
	in, err := a2aInputSchema(h.deflt)
	if err != nil {
		return nil, err
	}
	// The route's offer is the default tier's: what a message that names
	// no tier costs (discovery documents advertise it).
	var offer *payment.Offer
	if o, ok := s.App().TierOffers()[h.deflt]; ok {
		offer = &o
	}
	return []*route.Route{{
		ID:          "a2a",
		Summary:     "A2A 1.0 JSON-RPC endpoint: SendMessage and SendStreamingMessage verify a claim (paid, x402 or MPP), GetTask and CancelTask (free, order token).",
		Status:      "paid-preview",
		Method:      http.MethodPost,
		Path:        s.ClaimsPrefix() + "/a2a",
		Handler:     h,
		Offer:       offer,
		InputSchema: in,
	}}, nil
}

// a2aHandler serves the A2A endpoint: it parses the JSON-RPC envelope and
// dispatches; paid methods go through the paywall of their tier.
type a2aHandler struct {
	s       route.Host
	tasks   *a2aTasks
	pay     billing
	gate    *httpgate.Gate
	base    string
	deflt   string
	send    map[string]http.Handler // tier → paid SendMessage / SendStreamingMessage
	senders map[string]*a2aSend
}

func newA2AHandler(s route.Host, cfg A2A) (*a2aHandler, error) {
	raw := cfg.PublicBaseURL
	if raw == "" {
		raw = s.PublicBaseURL()
	}
	base, _, err := publicBase("a2a", raw)
	if err != nil {
		return nil, err
	}
	h := &a2aHandler{s: s, pay: billingFor(s, cfg.Cashier), base: base, deflt: cfg.DefaultTier,
		send: map[string]http.Handler{}, senders: map[string]*a2aSend{}}
	offers := s.App().TierOffers()
	if h.deflt == "" {
		// standard, or the first tier sold when the host sells a subset.
		h.deflt = claims.Standard
		if _, ok := offers[h.deflt]; !ok {
			for _, t := range claims.Tiers() {
				if _, ok := offers[t.Name]; ok {
					h.deflt = t.Name
					break
				}
			}
		}
	}
	if _, ok := claims.TierByName(h.deflt); !ok {
		return nil, errorf("a2a: unknown default tier %q", cfg.DefaultTier)
	}
	if _, ok := offers[h.deflt]; !ok {
		return nil, errorf("a2a: default tier %q is not sold (ClaimsConfig.Tiers)", h.deflt)
	}
	h.gate, _ = s.Paywall().(*httpgate.Gate)
	ttl, maxTasks := cfg.TaskTTL, cfg.MaxTasks
	if ttl <= 0 {
		ttl = time.Hour
	}
	if maxTasks <= 0 {
		maxTasks = 10000
	}
	h.tasks = newA2ATasks(ttl, maxTasks)
	for tier, offer := range s.App().TierOffers() {
		snd := &a2aSend{h: h, tier: tier, offer: offer}
		h.senders[tier] = snd
		h.send[tier] = s.Paid(offer, snd)
	}
	return h, nil
}

// rpcCall is a parsed JSON-RPC request.
type rpcCall struct {
	id     json.RawMessage
	method string
	params json.RawMessage
}

// parseRPC reads a JSON-RPC request and checks the envelope and the A2A
// version. On failure it returns the error to answer with.
func parseRPC(r *http.Request, body []byte) (*rpcCall, *rpcError) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		if json.Valid(body) {
			return &rpcCall{}, newRPCError(rpcInvalidRequest, "Invalid Request: the body must be a JSON-RPC 2.0 request object", nil, nil)
		}
		return &rpcCall{}, newRPCError(rpcParseError, "Parse error: the body is not valid JSON", nil, nil)
	}
	c := &rpcCall{id: raw["id"], params: raw["params"]}
	if id := bytes.TrimSpace(c.id); len(id) > 0 {
		switch id[0] {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			if !bytes.Equal(id, []byte("null")) {
				c.id = nil
				return c, newRPCError(rpcInvalidRequest, "Invalid Request: id must be a string, a number or null", nil, nil)
			}
		}
	}
	var version string
	if err := json.Unmarshal(raw["jsonrpc"], &version); err != nil || version != "2.0" {
		return c, newRPCError(rpcInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`, nil, nil)
	}
	if err := json.Unmarshal(raw["method"], &c.method); err != nil || c.method == "" {
		return c, newRPCError(rpcInvalidRequest, `Invalid Request: "method" must be a non-empty string`, nil, nil)
	}
	if len(bytes.TrimSpace(c.id)) == 0 {
		return c, newRPCError(rpcInvalidRequest, "Invalid Request: notifications are not served; send an id", nil, nil)
	}
	if p := bytes.TrimSpace(c.params); len(p) > 0 && p[0] != '{' && !bytes.Equal(p, []byte("null")) {
		return c, newRPCError(rpcInvalidParams, "Invalid params: params must be an object", nil, nil)
	}
	if v, ok := a2aVersion(r); !ok {
		shown := v
		if shown == "" {
			shown = "0.3 (no A2A-Version)"
		}
		return c, newRPCError(a2aVersionNotSupported, "A2A version "+shown+" is not supported; send A2A-Version: 1.0",
			map[string]string{"requestedVersion": v, "supportedVersions": strings.Join(a2aSupportedVersions, ",")}, nil)
	}
	return c, nil
}

// a2aVersion returns the requested version and whether it is served: 1.0
// (any patch). Empty means 0.3.
func a2aVersion(r *http.Request) (string, bool) {
	v := strings.TrimSpace(r.Header.Get("A2A-Version"))
	if v == "" {
		v = strings.TrimSpace(shapes.ParseQuery(r.URL.RawQuery).Get("A2A-Version"))
	}
	parts := strings.Split(v, ".")
	if v == "" || len(parts) > 3 {
		return v, false
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return v, false
		}
	}
	return v, parts[0] == "1" && (len(parts) == 1 || parts[1] == "0")
}

// writeRPC answers with a JSON-RPC response.
func writeRPC(w http.ResponseWriter, status int, id json.RawMessage, result any, e *rpcError) {
	writeRPCDetail(w, status, id, result, e, "")
}

// writeRPCDetail answers with a JSON-RPC response that also carries the
// HTTP route's detail (see rpcResponse.Detail).
func writeRPCDetail(w http.ResponseWriter, status int, id json.RawMessage, result any, e *rpcError, detail string) {
	resp := rpcResponse{JSONRPC: "2.0", ID: rpcID(id), Result: result, Error: e, Detail: detail}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, status, resp)
}

func (h *a2aHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := httpjson.ReadBody(w, r)
	if !ok {
		return
	}
	c, rerr := parseRPC(r, body)
	if rerr != nil {
		writeRPC(w, http.StatusOK, c.id, nil, rerr)
		return
	}
	switch c.method {
	case "SendMessage", "SendStreamingMessage":
		job, rerr := h.parseSend(c)
		if rerr != nil {
			writeRPC(w, http.StatusOK, c.id, nil, rerr)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if job.streaming && h.liveStream(w, r, body, job) {
			return
		}
		h.send[job.tier].ServeHTTP(w, r)
	case "GetTask":
		h.getTask(w, r, c)
	case "CancelTask":
		h.cancelTask(w, r, c)
	case "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig":
		writeRPC(w, http.StatusOK, c.id, nil, newRPCError(a2aPushNotSupported, "Push notifications are not supported", nil, nil))
	case "GetExtendedAgentCard":
		writeRPC(w, http.StatusOK, c.id, nil, newRPCError(a2aExtendedCardMissing, "No extended agent card is configured", nil, nil))
	case "ListTasks", "SubscribeToTask":
		writeRPC(w, http.StatusOK, c.id, nil, newRPCError(a2aUnsupportedOp, c.method+" is not supported; use GetTask with the task id", nil, nil))
	default:
		writeRPC(w, http.StatusOK, c.id, nil, newRPCError(rpcMethodNotFound, "Method not found: "+c.method, nil, nil))
	}
}

// a2aInputSchema is the JSON Schema of the SendMessage params of the A2A
// endpoint: a user message whose parts are text (joined, the claim) or one
// data part holding a ClaimVerificationRequest — with the same rules as
// the HTTP body and the MCP tools (inputschema), each tier's cap on
// minimumSources applying as metadata.tier chooses it (default: the
// handler's default tier, standard) — and the tier chosen with
// metadata.tier.
func a2aInputSchema(defaultTier string) (json.RawMessage, error) {
	claim, err := inputschema.Inline("ClaimVerificationRequest")
	if err != nil {
		return nil, err
	}
	defs, _ := claim["$defs"].(map[string]any)
	delete(claim, "$defs")
	delete(claim, "$schema")
	inputschema.WithClaimRules(claim, nil)
	text := map[string]any{"type": "object", "required": []string{"text"}, "properties": map[string]any{"text": map[string]any{"type": "string"}},
		"description": "Text parts are joined with newlines into the claim."}
	data := map[string]any{"type": "object", "required": []string{"data"}, "properties": map[string]any{"data": claim},
		"description": "At most one data part: a full ClaimVerificationRequest."}
	out := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "object", "title": "SendMessage params", "required": []string{"message"},
		"properties": map[string]any{
			"message": map[string]any{"type": "object", "required": []string{"messageId", "role", "parts"},
				"properties": map[string]any{
					"messageId": map[string]any{"type": "string", "minLength": 1},
					"role":      map[string]any{"const": a2aRoleUser},
					"parts":     map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"anyOf": []any{text, data}}},
				}},
			"metadata": map[string]any{"type": "object", "properties": map[string]any{
				a2aTierKey: map[string]any{"enum": tierNames(), "description": "The verification tier (its price); default standard."}}},
		},
	}
	inData := func(request map[string]any) map[string]any {
		return map[string]any{"properties": map[string]any{"message": map[string]any{"properties": map[string]any{
			"parts": map[string]any{"items": map[string]any{"properties": map[string]any{"data": request}}}}}}}
	}
	if caps := inputschema.TierCaps([]string{"metadata", a2aTierKey}, defaultTier, inData); len(caps) > 0 {
		out["allOf"] = caps
	}
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	return json.Marshal(out)
}

// tierNames are the names of the claim tiers, in order.
func tierNames() []string {
	var out []string
	for _, t := range claims.Tiers() {
		out = append(out, t.Name)
	}
	return out
}
