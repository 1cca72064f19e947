package agents

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
)

// a2aTaskEntry is a task this instance runs or ran: its current state, who
// may read it, and how to cancel it.
type a2aTaskEntry struct {
	mu        sync.Mutex
	task      a2aTask
	tokenHash string // SHA-256 of the order token; "" under httpgate.Free
	paid      bool   // the id is an order id
	cancel    context.CancelFunc
	canceled  bool
	done      chan struct{}
	touched   time.Time
}

// snapshot returns a deep copy of the task.
func (e *a2aTaskEntry) snapshot() a2aTask {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, _ := json.Marshal(e.task)
	var t a2aTask
	_ = json.Unmarshal(b, &t)
	return t
}

// setStatus changes the task's status and returns the update event.
func (e *a2aTaskEntry) setStatus(state, text string, meta map[string]any) a2aEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := a2aTaskStatus{State: state, Timestamp: a2aNow()}
	if text != "" {
		st.Message = agentMessage(e.task.ID, e.task.ContextID, text)
	}
	e.task.Status = st
	e.touched = time.Now()
	return a2aEvent{StatusUpdate: &a2aStatusUpdate{TaskID: e.task.ID, ContextID: e.task.ContextID, Status: st, Metadata: meta}}
}

// working records a progress stage, unless the task has already ended (a
// stage can come late from a verification that outlives its caller).
func (e *a2aTaskEntry) working(text string) (a2aEvent, bool) {
	e.mu.Lock()
	ended := a2aTerminal(e.task.Status.State)
	e.mu.Unlock()
	if ended {
		return a2aEvent{}, false
	}
	return e.setStatus(a2aWorking, text, nil), true
}

// addArtifact records the result artifact and returns its event.
func (e *a2aTaskEntry) addArtifact(a a2aArtifact) a2aEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.task.Artifacts = append(e.task.Artifacts, a)
	e.touched = time.Now()
	return a2aEvent{ArtifactUpdate: &a2aArtifactUpdate{TaskID: e.task.ID, ContextID: e.task.ContextID, Artifact: a, LastChunk: true}}
}

func agentMessage(taskID, contextID, text string) *a2aMessage {
	return &a2aMessage{MessageID: ids.New("msg_"), TaskID: taskID, ContextID: contextID, Role: a2aRoleAgent, Parts: []a2aPart{{Text: &text}}}
}

// a2aTasks keeps the tasks of this instance, for at most ttl after their
// last change and at most max of them (the oldest finished ones go first).
type a2aTasks struct {
	mu    sync.Mutex
	byID  map[string]*a2aTaskEntry
	ttl   time.Duration
	max   int
	clock func() time.Time
}

func newA2ATasks(ttl time.Duration, max int) *a2aTasks {
	return &a2aTasks{byID: map[string]*a2aTaskEntry{}, ttl: ttl, max: max, clock: time.Now}
}

func (ts *a2aTasks) put(e *a2aTaskEntry) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := ts.clock()
	for id, old := range ts.byID {
		old.mu.Lock()
		expired := now.Sub(old.touched) > ts.ttl && a2aTerminal(old.task.Status.State)
		old.mu.Unlock()
		if expired {
			delete(ts.byID, id)
		}
	}
	for len(ts.byID) >= ts.max {
		var oldest string
		var at time.Time
		for id, old := range ts.byID {
			old.mu.Lock()
			t, term := old.touched, a2aTerminal(old.task.Status.State)
			old.mu.Unlock()
			if term && (oldest == "" || t.Before(at)) {
				oldest, at = id, t
			}
		}
		if oldest == "" {
			break // every kept task is still running
		}
		delete(ts.byID, oldest)
	}
	e.touched = now
	ts.byID[e.task.ID] = e
}

func (ts *a2aTasks) get(id string) *a2aTaskEntry {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	e := ts.byID[id]
	if e != nil {
		e.mu.Lock()
		expired := ts.clock().Sub(e.touched) > ts.ttl && a2aTerminal(e.task.Status.State)
		e.mu.Unlock()
		if expired {
			delete(ts.byID, id)
			return nil
		}
	}
	return e
}

// taskNotFound is the answer for unknown tasks and for callers who may not
// see them.
func taskNotFound(id string) *rpcError {
	return newRPCError(a2aTaskNotFound, "Task not found: "+id+" (GetTask and CancelTask need the X-Agentic-Order-Token of the call that created the task)", nil, nil)
}

// lookup finds a task the caller may see: this instance's entry, checked
// against the ledger for paid tasks, or (paid tasks of other instances or
// of before a restart) the order and its stored verification.
func (h *a2aHandler) lookup(ctx context.Context, r *http.Request, id string) (*a2aTaskEntry, a2aTask, *rpcError) {
	token := strings.TrimSpace(r.Header.Get(httpgate.HeaderOrderToken))
	entry := h.tasks.get(id)
	if entry != nil {
		if entry.paid && h.pay.cashier != nil {
			// The ledger has the current token: a retry with the task's
			// payment rotates it.
			o, err := h.pay.cashier.Ledger().Order(ctx, id)
			if err != nil {
				return nil, a2aTask{}, h.internal(ctx, err)
			}
			if token == "" || !ids.Equal(ids.Hash(token), o.TokenHash) {
				return nil, a2aTask{}, taskNotFound(id)
			}
			return entry, withOrderState(entry.snapshot(), o), nil
		}
		if entry.tokenHash != "" && (token == "" || !ids.Equal(ids.Hash(token), entry.tokenHash)) {
			return nil, a2aTask{}, taskNotFound(id)
		}
		return entry, entry.snapshot(), nil
	}
	if h.pay.cashier == nil || token == "" || !ids.Valid(ids.Order, id) {
		return nil, a2aTask{}, taskNotFound(id)
	}
	o, err := h.pay.cashier.Ledger().Order(ctx, id)
	switch {
	case errors.Is(err, payment.ErrOrderNotFound):
		return nil, a2aTask{}, taskNotFound(id)
	case err != nil:
		return nil, a2aTask{}, h.internal(ctx, err)
	case !ids.Equal(ids.Hash(token), o.TokenHash) || !strings.HasPrefix(o.OfferID, "claims.verify."):
		return nil, a2aTask{}, taskNotFound(id)
	}
	t := a2aTask{ID: o.ID, ContextID: o.ID, Status: a2aTaskStatus{State: a2aWorking, Timestamp: o.UpdatedAt.UTC().Format(time.RFC3339Nano)},
		Metadata: map[string]any{"tier": o.Tier, "orderId": o.ID}}
	if o.Status.Delivered() && o.ResultKind == "verification" {
		rec, err := h.s.App().Claims.Verification(ctx, o.ResultID)
		if err != nil && !errors.Is(err, claims.ErrNotFound) {
			return nil, a2aTask{}, h.internal(ctx, err)
		}
		if rec != nil {
			a, err := h.resultArtifact(rec.Result)
			if err != nil {
				return nil, a2aTask{}, h.internal(ctx, err)
			}
			t.Artifacts = []a2aArtifact{a}
			t.Metadata["verificationId"] = rec.Result.VerificationID
		}
	}
	return nil, withOrderState(t, o), nil
}

// withOrderState makes a paid task say what its order says: the result is
// only shown once the payment has settled.
func withOrderState(t a2aTask, o *payment.Order) a2aTask {
	if t.Metadata == nil {
		t.Metadata = map[string]any{}
	}
	t.Metadata["orderStatus"] = o.Status
	if o.ReceiptID != "" {
		t.Metadata["receiptId"] = o.ReceiptID
	}
	ts := o.UpdatedAt.UTC().Format(time.RFC3339Nano)
	switch o.Status {
	case payment.OrderCompleted, payment.OrderVoided:
		if t.Status.State != a2aCompleted {
			t.Status = a2aTaskStatus{State: a2aCompleted, Timestamp: ts}
		}
	case payment.OrderSettling:
		t.Artifacts = nil
		t.Status = a2aTaskStatus{State: a2aWorking, Timestamp: ts,
			Message: agentMessage(t.ID, t.ContextID, "The result is ready; the payment is being settled. Do not pay again.")}
	case payment.OrderFailed:
		t.Artifacts = nil
		if t.Status.State != a2aCanceled {
			t.Status = a2aTaskStatus{State: a2aFailed, Timestamp: ts, Message: agentMessage(t.ID, t.ContextID, "Not charged: "+o.FailureReason)}
		}
	default: // processing
		t.Artifacts = nil
		if a2aTerminal(t.Status.State) {
			t.Status = a2aTaskStatus{State: a2aWorking, Timestamp: ts}
		}
	}
	return t
}

func (h *a2aHandler) internal(ctx context.Context, err error) *rpcError {
	h.s.Logger().ErrorContext(ctx, "a2a: internal error", "err", err)
	return newRPCError(rpcInternalError, "Internal error", nil, nil)
}

func parseTaskParams(c *rpcCall) (*a2aTaskParams, *rpcError) {
	var p a2aTaskParams
	if len(c.params) == 0 || json.Unmarshal(c.params, &p) != nil || p.ID == "" {
		return nil, newRPCError(rpcInvalidParams, `Invalid params: "id" (the task id) is required`, nil, nil)
	}
	if p.HistoryLength != nil && *p.HistoryLength < 0 {
		return nil, newRPCError(rpcInvalidParams, `Invalid params: "historyLength" must not be negative`, nil, nil)
	}
	return &p, nil
}

func (h *a2aHandler) getTask(w http.ResponseWriter, r *http.Request, c *rpcCall) {
	p, rerr := parseTaskParams(c)
	if rerr != nil {
		writeRPC(w, http.StatusOK, c.id, nil, rerr)
		return
	}
	_, t, rerr := h.lookup(r.Context(), r, p.ID)
	if rerr != nil {
		writeRPC(w, http.StatusOK, c.id, nil, rerr)
		return
	}
	if p.HistoryLength != nil && len(t.History) > *p.HistoryLength {
		t.History = t.History[len(t.History)-*p.HistoryLength:]
	}
	w.Header().Set("Cache-Control", "private, no-store")
	writeRPC(w, http.StatusOK, c.id, t, nil)
}

// cancelWait bounds how long CancelTask waits for the task to stop.
const cancelWait = 10 * time.Second

func (h *a2aHandler) cancelTask(w http.ResponseWriter, r *http.Request, c *rpcCall) {
	p, rerr := parseTaskParams(c)
	if rerr != nil {
		writeRPC(w, http.StatusOK, c.id, nil, rerr)
		return
	}
	entry, t, rerr := h.lookup(r.Context(), r, p.ID)
	if rerr != nil {
		writeRPC(w, http.StatusOK, c.id, nil, rerr)
		return
	}
	if entry == nil {
		msg := "Task " + p.ID + " is " + t.Status.State + " and cannot be canceled"
		if !a2aTerminal(t.Status.State) {
			msg = "Task " + p.ID + " runs on another instance and cannot be canceled here"
		}
		writeRPC(w, http.StatusOK, c.id, nil, newRPCError(a2aTaskNotCancelable, msg, nil, nil))
		return
	}
	entry.mu.Lock()
	cancel, state := entry.cancel, entry.task.Status.State
	if !a2aTerminal(state) && cancel != nil {
		entry.canceled = true
	}
	entry.mu.Unlock()
	if a2aTerminal(t.Status.State) || a2aTerminal(state) || cancel == nil {
		writeRPC(w, http.StatusOK, c.id, nil, newRPCError(a2aTaskNotCancelable, "Task "+p.ID+" is "+t.Status.State+" and cannot be canceled", nil, nil))
		return
	}
	cancel()
	timer := time.NewTimer(cancelWait)
	defer timer.Stop()
	select {
	case <-entry.done:
	case <-timer.C:
	case <-r.Context().Done():
		return
	}
	_, t, rerr = h.lookup(r.Context(), r, p.ID)
	if rerr != nil {
		writeRPC(w, http.StatusOK, c.id, nil, rerr)
		return
	}
	if t.Status.State != a2aCanceled {
		writeRPC(w, http.StatusOK, c.id, nil, newRPCError(a2aTaskNotCancelable, "Task "+p.ID+" is "+t.Status.State+" and cannot be canceled", nil, nil))
		return
	}
	writeRPC(w, http.StatusOK, c.id, t, nil)
}
