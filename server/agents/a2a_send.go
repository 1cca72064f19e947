package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/assaykit/assay/evidence"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/discovery/inputschema"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/mpp"
	"github.com/assaykit/assay/shapes"
)

// a2aTierKey is the member of SendMessage params.metadata that chooses the
// tier.
const a2aTierKey = inputschema.A2ATierKey

// a2aJob is a checked SendMessage or SendStreamingMessage request.
type a2aJob struct {
	id        json.RawMessage
	streaming bool
	tier      string
	msg       *a2aMessage
	req       *claims.Request
	idem      string // the Idempotency-Key header
}

func invalidParams(msg string, detail any) *rpcError {
	return newRPCError(rpcInvalidParams, "Invalid params: "+msg, nil, detail)
}

// boundedDetail is the error list of ve as the HTTP 422 body writes it:
// bounded like every 422 (see shapes.ValidationError.MarshalJSON).
func boundedDetail(ve *shapes.ValidationError) json.RawMessage {
	b, err := httpjson.Marshal(ve)
	var body struct {
		Detail json.RawMessage `json:"detail"`
	}
	if err != nil || json.Unmarshal(b, &body) != nil {
		return json.RawMessage("[]")
	}
	return body.Detail
}

// parseSend checks a send request: the message, its parts, the tier and
// the claim (with the tier rules), as the HTTP route checks its body.
func (h *a2aHandler) parseSend(c *rpcCall) (*a2aJob, *rpcError) {
	job := &a2aJob{id: c.id, streaming: c.method == "SendStreamingMessage"}
	var p a2aSendParams
	if len(c.params) == 0 || json.Unmarshal(c.params, &p) != nil {
		return nil, invalidParams("params must be a SendMessageRequest object", nil)
	}
	m := p.Message
	switch {
	case m == nil:
		return nil, invalidParams(`"message" is required`, nil)
	case m.MessageID == "":
		return nil, invalidParams(`"message.messageId" is required`, nil)
	case m.Role != a2aRoleUser:
		return nil, invalidParams(`"message.role" must be ROLE_USER`, nil)
	case m.TaskID != "":
		return nil, newRPCError(a2aUnsupportedOp, "Tasks of this agent take one message: send a new message without taskId", nil, nil)
	case len(m.Parts) == 0:
		return nil, invalidParams(`"message.parts" is empty: send the claim as text, or a ClaimVerificationRequest as a data part`, nil)
	}
	var texts []string
	var data json.RawMessage
	for i, part := range m.Parts {
		n := 0
		for _, set := range []bool{part.Text != nil, len(part.Data) > 0, part.URL != nil, part.Raw != nil} {
			if set {
				n++
			}
		}
		switch {
		case n != 1:
			return nil, invalidParams(fmt.Sprintf("message.parts[%d] must have exactly one of text, data, url or raw", i), nil)
		case part.URL != nil || part.Raw != nil:
			return nil, newRPCError(a2aContentTypeNotSupp, fmt.Sprintf("message.parts[%d]: file parts are not supported; send text or a data part", i), nil, nil)
		case part.Text != nil:
			texts = append(texts, *part.Text)
		case data != nil:
			return nil, invalidParams("at most one data part (a ClaimVerificationRequest) is allowed", nil)
		default:
			if d := bytes.TrimSpace(part.Data); len(d) == 0 || d[0] != '{' {
				return nil, invalidParams(fmt.Sprintf("message.parts[%d].data must be a ClaimVerificationRequest object", i), nil)
			}
			data = part.Data
		}
	}
	job.tier = h.deflt
	if v, ok := p.Metadata[a2aTierKey]; ok {
		s, _ := v.(string)
		if _, known := h.send[s]; !known {
			return nil, invalidParams(`"metadata.tier" must be one of quick, standard, deep, research`, nil)
		}
		job.tier = s
	}
	if _, ok := h.send[job.tier]; !ok {
		return nil, newRPCError(rpcInternalError, "The "+job.tier+" tier is not served", nil, nil)
	}
	raw := []byte(data)
	if data == nil {
		claim := strings.TrimSpace(strings.Join(texts, "\n"))
		if claim == "" {
			return nil, invalidParams("the message carries no claim: send it as text parts, or a ClaimVerificationRequest as a data part", nil)
		}
		b, err := httpjson.Marshal(map[string]string{"claim": claim})
		if err != nil {
			return nil, newRPCError(rpcInternalError, "Internal error", nil, nil)
		}
		raw = b
	}
	req, _, ve, err := decodeClaimRequest(h.s, job.tier, raw)
	switch {
	case err != nil:
		return nil, newRPCError(rpcInternalError, "Internal error", nil, nil)
	case ve != nil:
		return nil, invalidParams("the claim request is not valid", boundedDetail(ve))
	}
	job.req = req
	msg := *m
	job.msg = &msg
	return job, nil
}

// a2aSend is the paid handler of one tier. Precheck checks the request
// before the paywall asks for payment.
type a2aSend struct {
	h     *a2aHandler
	tier  string
	offer payment.Offer
}

type a2aJobKey struct{}

// Precheck implements httpgate.Prechecker.
func (snd *a2aSend) Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		httpjson.Detail(w, http.StatusBadRequest, "There was an error parsing the body")
		return r, false
	}
	c, rerr := parseRPC(r, body)
	if rerr == nil && c.method != "SendMessage" && c.method != "SendStreamingMessage" {
		rerr = newRPCError(rpcMethodNotFound, "Method not found: "+c.method, nil, nil)
	}
	var job *a2aJob
	if rerr == nil {
		job, rerr = snd.h.parseSend(c)
	}
	if rerr == nil && job.tier != snd.tier {
		rerr = invalidParams("the tier of this request does not match the endpoint", nil)
	}
	if rerr == nil {
		job.idem = r.Header.Get(httpgate.HeaderIdempotencyKey)
		if len(job.idem) > claims.MaxIdempotencyKeyLength {
			rerr = invalidParams("the Idempotency-Key header is too long", shapes.IdempotencyKeyError(job.idem).Detail)
		}
	}
	if rerr != nil {
		writeRPC(w, http.StatusOK, c.id, nil, rerr)
		return r, false
	}
	return r.WithContext(context.WithValue(r.Context(), a2aJobKey{}, job)), true
}

// sseSink writes stream events as server-sent events, each a JSON-RPC
// response, flushing after each. Events that come after close are dropped.
type sseSink struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	id     json.RawMessage
	closed bool
}

func (s *sseSink) send(ev a2aEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	b, err := httpjson.Marshal(rpcResponse{JSONRPC: "2.0", ID: rpcID(s.id), Result: ev})
	if err != nil {
		return
	}
	_, _ = fmt.Fprintf(s.w, "data: %s\n\n", b)
	_ = http.NewResponseController(s.w).Flush()
}

func (s *sseSink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
}

// bufSink keeps events for a buffered stream.
type bufSink struct {
	mu     sync.Mutex
	events []a2aEvent
	closed bool
}

func (b *bufSink) send(ev a2aEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.events = append(b.events, ev)
	}
}

func (b *bufSink) close() []a2aEvent {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return b.events
}

// startTask registers the task of a job; cancel stops its work
// (CancelTask). A paid task's id is its order id.
func (h *a2aHandler) startTask(job *a2aJob, pc *payment.Call, cancel context.CancelFunc) *a2aTaskEntry {
	id, tokenHash, paid := ids.New("task_"), "", false
	if pc != nil && pc.OrderID != "" {
		id, tokenHash, paid = pc.OrderID, pc.OrderTokenHash, true
	}
	ctxID := job.msg.ContextID
	if ctxID == "" {
		ctxID = ids.New("ctx_")
	}
	user := *job.msg
	user.TaskID, user.ContextID = id, ctxID
	meta := map[string]any{"tier": job.tier}
	if paid {
		meta["orderId"] = id
	}
	e := &a2aTaskEntry{tokenHash: tokenHash, paid: paid, done: make(chan struct{}), cancel: cancel,
		task: a2aTask{ID: id, ContextID: ctxID, Status: a2aTaskStatus{State: a2aSubmitted, Timestamp: a2aNow()},
			History: []a2aMessage{user}, Metadata: meta}}
	h.tasks.put(e)
	return e
}

// stageText describes a verification stage to the payer.
func stageText(s claims.Stage) string {
	switch s {
	case claims.StageSearching:
		return "Searching the web for evidence"
	case claims.StageReconciling:
		return "Reconciling the evidence with its sources"
	case claims.StageSnapshotting:
		return "Snapshotting cited sources"
	}
	return string(s)
}

// execute runs the verification of a task, reporting its stages to emit.
// ctx carries the payment and is canceled by CancelTask.
func (h *a2aHandler) execute(ctx context.Context, job *a2aJob, e *a2aTaskEntry, emit func(a2aEvent)) (*claims.Result, error) {
	if ev, ok := e.working("Verification started (" + job.tier + " tier)"); ok {
		emit(ev)
	}
	ctx = claims.WithProgress(ctx, func(s claims.Stage) {
		if ev, ok := e.working(stageText(s)); ok {
			emit(ev)
		}
	})
	return h.s.App().Verify(ctx, job.tier, job.req, job.idem)
}

// finish records how a task ended and returns the final events: the
// artifact and the completed status, or the failed or canceled status.
func (h *a2aHandler) failTask(e *a2aTaskEntry, status int, detail string) (a2aEvent, string) {
	e.mu.Lock()
	canceled := e.canceled
	e.mu.Unlock()
	if canceled {
		return e.setStatus(a2aCanceled, "Canceled by the payer; not charged", nil), "canceled by the payer"
	}
	return e.setStatus(a2aFailed, fmt.Sprintf("Verification failed (%d): %s; not charged", status, detail), map[string]any{"httpStatus": status}), ""
}

// statusLabel is a verification status for people.
func statusLabel(s claims.Status) string {
	switch s {
	case "confirmed":
		return "Confirmed"
	case "partially_confirmed":
		return "Partially confirmed"
	case "contradicted":
		return "Contradicted"
	case "insufficient_evidence":
		return "Insufficient evidence"
	case "ambiguous":
		return "Ambiguous"
	}
	return string(s)
}

// resultArtifact is the task artifact of a result: the conclusion as text,
// the whole result as data.
func (h *a2aHandler) resultArtifact(res *claims.Result) (a2aArtifact, error) {
	b, err := httpjson.Marshal(res)
	if err != nil {
		return a2aArtifact{}, err
	}
	text := statusLabel(res.Status) + ": " + res.Conclusion
	parts := []a2aPart{{Text: &text}, {Data: b, MediaType: "application/json"}}
	// The evidence bundle (the order token reads it): a file part by URL.
	if u := evidenceURL(h.s, h.base, res.VerificationID); u != "" {
		parts = append(parts, a2aPart{URL: &u, Filename: res.VerificationID + ".wacz", MediaType: evidence.MediaType,
			Metadata: map[string]any{"description": evidenceText}})
	}
	return a2aArtifact{ArtifactID: res.VerificationID, Name: "claim-verification-result",
		Description: "ClaimVerificationResult of " + res.VerificationID, Parts: parts}, nil
}

// callError is the JSON-RPC error of a call that failed after it was
// accepted (and perhaps paid): -32603 with the task, the order and the HTTP
// route's status and detail.
func callError(taskID, orderID string, status int, detail string) *rpcError {
	meta := map[string]string{"taskId": taskID, "httpStatus": fmt.Sprint(status)}
	if orderID != "" {
		meta["orderId"] = orderID
	}
	return newRPCError(rpcInternalError, "Verification failed: "+detail, meta, detail)
}

// ServeHTTP runs a paid (or free) send behind the paywall. Its answer is
// complete when it returns: a status below 400 only for a delivered result,
// so that the gate settles exactly those.
func (snd *a2aSend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	job, ok := r.Context().Value(a2aJobKey{}).(*a2aJob)
	if !ok {
		if r, ok = snd.Precheck(w, r); !ok {
			return
		}
		job = r.Context().Value(a2aJobKey{}).(*a2aJob)
	}
	h := snd.h
	pc, _ := payment.CallFrom(r.Context())
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	r = r.WithContext(ctx)
	e := h.startTask(job, pc, cancel)
	defer close(e.done)
	orderID := ""
	if e.paid {
		orderID = e.task.ID
	}
	live := job.streaming && (pc == nil || pc.Protocol == payment.ProtocolFree)
	if live {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		sink := &sseSink{w: w, id: job.id}
		defer sink.close()
		sink.send(a2aEvent{Task: new(e.snapshot())})
		res, err := h.execute(r.Context(), job, e, sink.send)
		if err != nil {
			st, d := h.s.Status(r.Context(), err)
			ev, _ := h.failTask(e, st, d)
			sink.send(ev)
			return
		}
		a, err := h.resultArtifact(res)
		if err != nil {
			ev, _ := h.failTask(e, http.StatusInternalServerError, "Internal Server Error")
			sink.send(ev)
			return
		}
		sink.send(e.addArtifact(a))
		sink.send(e.setStatus(a2aCompleted, "", map[string]any{"verificationId": res.VerificationID}))
		return
	}
	buf := &bufSink{}
	if job.streaming {
		buf.send(a2aEvent{Task: new(e.snapshot())})
	}
	res, err := h.execute(r.Context(), job, e, buf.send)
	var a a2aArtifact
	if err == nil {
		a, err = h.resultArtifact(res)
	}
	if err != nil {
		st, d := h.s.Status(r.Context(), err)
		ev, canceled := h.failTask(e, st, d)
		buf.close()
		if canceled != "" {
			// The canceled task, with a non-2xx status: not charged.
			writeRPCDetail(w, http.StatusConflict, job.id, a2aEvent{Task: new(e.snapshot())}, nil, canceled)
			return
		}
		_ = ev
		if st < 400 {
			st = http.StatusInternalServerError
		}
		writeRPCDetail(w, st, job.id, nil, callError(e.task.ID, orderID, st, d), d)
		return
	}
	if !job.streaming {
		e.addArtifact(a)
		e.setStatus(a2aCompleted, "", nil)
		buf.close()
		writeRPC(w, http.StatusOK, job.id, a2aEvent{Task: new(e.snapshot())}, nil)
		return
	}
	buf.send(e.addArtifact(a))
	buf.send(e.setStatus(a2aCompleted, "", map[string]any{"verificationId": res.VerificationID}))
	var out bytes.Buffer
	for _, ev := range buf.close() {
		b, err := httpjson.Marshal(rpcResponse{JSONRPC: "2.0", ID: rpcID(job.id), Result: ev})
		if err != nil {
			writeRPCDetail(w, http.StatusInternalServerError, job.id, nil, callError(e.task.ID, orderID, 500, "Internal Server Error"), "Internal Server Error")
			return
		}
		fmt.Fprintf(&out, "data: %s\n\n", b)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out.Bytes())
}

// liveStream sells a streaming call (payment.Cashier.Sell) so that status
// updates flow while the verification runs and the payment still settles
// before the result is sent. It returns false, having written nothing,
// when the call must go through the gate instead: no gate or public base
// URL, an Idempotency-Key (the gate buffers the stream), or no credential
// (the gate's challenge). Outcomes that end the sale before the work
// starts (refusals, challenges) are rendered as the gate renders them.
func (h *a2aHandler) liveStream(w http.ResponseWriter, r *http.Request, body []byte, job *a2aJob) bool {
	snd := h.senders[job.tier]
	if h.gate == nil || h.base == "" || h.pay.cashier == nil || snd == nil || r.Header.Get(httpgate.HeaderIdempotencyKey) != "" {
		return false
	}
	c := h.pay.cashier
	cred, credErr := h.gate.ReadCredential(r.Header)
	if cred == nil && credErr == nil {
		return false
	}
	res := payment.Resource{URL: h.base + r.URL.EscapedPath(), Method: r.Method, Description: snd.offer.Description,
		MimeType: snd.offer.MimeType, QuoteID: strings.TrimSpace(r.Header.Get(httpgate.HeaderQuoteID))}
	if r.URL.RawQuery != "" {
		res.URL += "?" + r.URL.RawQuery
	}
	res.BodyDigest = mpp.BodyDigest(body)
	p := &payment.Purchase{Offer: snd.offer, Resource: res, Credential: cred, CredentialErr: credErr,
		CustomerKey: r.Header.Get(httpgate.HeaderCustomerKey), RequestHash: httpgate.RequestHash(r, body)}
	live := &liveSale{h: h, w: w, r: r, job: job}
	defer live.close()
	p.Started, p.Work = live.start, live.work
	out := c.Sell(r.Context(), p)
	switch {
	case out.Kind == payment.OutcomeReplayed:
		h.serveAgain(w, job, out)
	case out.Kind == payment.OutcomePending && live.sink == nil:
		h.serveAgain(w, job, out)
	case live.sink == nil:
		h.gate.Render(w, out)
	default:
		live.finish(out)
	}
	return true
}

// serveAgain answers a stream paid by a payment whose order already exists
// (a retry whose first answer was lost): the order headers with the fresh
// token and the receipt id, then the stored final task as the one event of
// the stream (its data is the bytes the receipt hashes), or, while the
// order is settling, a working status that says so.
func (h *a2aHandler) serveAgain(w http.ResponseWriter, job *a2aJob, out *payment.Outcome) {
	ord := out.Order
	hd := w.Header()
	hd.Set(httpgate.HeaderOrderID, ord.ID)
	hd.Set(httpgate.HeaderOrderToken, out.Token)
	if ord.ReceiptID != "" {
		hd.Set(httpgate.HeaderReceiptID, ord.ReceiptID)
	}
	hd.Set("Content-Type", "text/event-stream")
	if out.Kind != payment.OutcomeReplayed {
		hd.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		sink := &sseSink{w: w, id: job.id}
		defer sink.close()
		t := a2aTask{ID: ord.ID, ContextID: ord.ID, Status: a2aTaskStatus{State: a2aWorking, Timestamp: a2aNow(),
			Message: agentMessage(ord.ID, ord.ID, settlingText)}, Metadata: map[string]any{"tier": ord.Tier, "orderId": ord.ID, "orderStatus": payment.OrderSettling}}
		sink.send(a2aEvent{Task: &t})
		return
	}
	stored := out.Response
	hd.Set(httpgate.HeaderReplay, "true")
	hd.Set("Cache-Control", "private")
	w.WriteHeader(http.StatusOK)
	if strings.HasPrefix(stored.ContentType, "text/event-stream") {
		// A stream the gate buffered (sent with an Idempotency-Key).
		_, _ = w.Write(stored.Body)
		return
	}
	_, _ = fmt.Fprintf(w, "data: %s\n\n", bytes.TrimSpace(stored.Body))
}

// settlingText tells a payer whose paid task is settling what to do.
const settlingText = "Payment settlement is pending. Do not pay again: read the task with GetTask (or the order with its token) until it is completed."

// liveSale is the state of a stream sold live.
type liveSale struct {
	h      *a2aHandler
	w      http.ResponseWriter
	r      *http.Request
	job    *a2aJob
	ch     *payment.Charge
	sink   *sseSink
	e      *a2aTaskEntry
	res    *claims.Result
	a      a2aArtifact
	failEv *a2aEvent
}

// start sends the order headers and opens the stream, once the order is
// open.
func (l *liveSale) start(ch *payment.Charge) {
	l.ch = ch
	hd := l.w.Header()
	hd.Set(httpgate.HeaderOrderID, ch.Order().ID)
	hd.Set(httpgate.HeaderOrderToken, ch.OrderToken())
	hd.Set("Cache-Control", "private")
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Trailer", httpgate.HeaderReceiptID+", PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, Payment-Receipt")
	l.w.WriteHeader(http.StatusOK)
	l.sink = &sseSink{w: l.w, id: l.job.id}
}

// work runs the verification, streaming its stages; what it returns is
// what is stored, hashed in the receipt and readable with the order token:
// the final task as a SendMessage response.
func (l *liveSale) work(wctx context.Context) (payment.Response, error) {
	h := l.h
	ctx, cancel := context.WithCancel(wctx)
	defer cancel()
	l.e = h.startTask(l.job, l.ch.Call(), cancel)
	l.sink.send(a2aEvent{Task: new(l.e.snapshot())})
	var err error
	l.res, err = h.execute(ctx, l.job, l.e, l.sink.send)
	if err == nil {
		l.a, err = h.resultArtifact(l.res)
	}
	if err != nil {
		st, d := h.s.Status(l.r.Context(), err)
		ev, canceled := h.failTask(l.e, st, d)
		l.failEv = &ev
		if canceled != "" {
			return payment.Response{}, errors.New(canceled)
		}
		return payment.Response{}, errors.New(failureReason(st, d))
	}
	final := l.e.snapshot()
	final.Artifacts = append(final.Artifacts, l.a)
	final.Status = a2aTaskStatus{State: a2aCompleted, Timestamp: a2aNow()}
	stored, err := httpjson.Marshal(rpcResponse{JSONRPC: "2.0", ID: rpcID(l.job.id), Result: a2aEvent{Task: &final}})
	if err != nil {
		ev, _ := h.failTask(l.e, http.StatusInternalServerError, "Internal Server Error")
		l.failEv = &ev
		return payment.Response{}, errors.New("encoding the result failed")
	}
	l.sink.send(l.e.setStatus(a2aWorking, "Settling the payment", nil))
	return payment.Response{Body: stored}, nil
}

// finish sends the last events of a stream whose work ran.
func (l *liveSale) finish(out *payment.Outcome) {
	e, sink, ord := l.e, l.sink, out.Order
	switch {
	case l.failEv != nil:
		sink.send(*l.failEv)
		return
	case e == nil:
		return
	case out.Kind == payment.OutcomePending || out.Kind == payment.OutcomeDeferred:
		sink.send(e.setStatus(a2aWorking, settlingText, map[string]any{"orderId": ord.ID, "orderStatus": payment.OrderSettling}))
		return
	case out.Kind != payment.OutcomeDelivered:
		detail := "the payment could not be settled"
		if out.Problem != nil {
			detail = problemText(out.Problem)
		}
		if out.Kind == payment.OutcomeFailed {
			l.h.s.Logger().ErrorContext(l.r.Context(), "a2a: completing a paid stream", "order", ord.ID, "err", out.Err)
		}
		sink.send(e.setStatus(a2aFailed, "Settlement failed: "+detail+"; the result was not delivered", map[string]any{"orderId": ord.ID}))
		return
	}
	comp := out.Completion
	sink.send(e.addArtifact(l.a))
	meta := map[string]any{"verificationId": l.res.VerificationID, "orderId": ord.ID, "receiptId": comp.Order.ReceiptID,
		"orderStatus": comp.Order.Status}
	if comp.Settlement != nil && len(comp.Settlement.Meta) > 0 {
		meta["paymentResponse"] = json.RawMessage(comp.Settlement.Meta)
	}
	sink.send(e.setStatus(a2aCompleted, "", meta))
	hd := l.w.Header()
	hd.Set(httpgate.HeaderReceiptID, comp.Order.ReceiptID)
	hd.Set(httpgate.HeaderOrderStatus, string(comp.Order.Status))
	for k, v := range httpgate.SettlementHeader(comp.Settlement) {
		hd[k] = v
	}
}

// close ends the stream and the task.
func (l *liveSale) close() {
	if l.sink != nil {
		l.sink.close()
	}
	if l.e != nil {
		close(l.e.done)
	}
}
