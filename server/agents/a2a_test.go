package agents

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/google/go-cmp/cmp"
)

const a2aPath = "/claim-verification/a2a"

// sendBody is a SendMessage (or SendStreamingMessage) request with the
// claim as one text part, and optional params metadata.
func sendBody(method, claim string, meta map[string]any) string {
	p := map[string]any{"message": map[string]any{"messageId": "m-1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": claim}}}}
	if meta != nil {
		p["metadata"] = meta
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": p})
	return string(b)
}

func a2aHeaders(extra ...string) map[string]string {
	h := map[string]string{"A2A-Version": "1.0"}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return h
}

// rpcAnswer is a decoded JSON-RPC response.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    []map[string]any
	} `json:"error"`
}

func decodeRPC(t testing.TB, b []byte) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("not a JSON-RPC response: %s", b)
	}
	return a
}

func (a rpcAnswer) task(t testing.TB) a2aTask {
	t.Helper()
	var r struct {
		Task *a2aTask `json:"task"`
	}
	if err := json.Unmarshal(a.Result, &r); err == nil && r.Task != nil {
		return *r.Task
	}
	var task a2aTask
	if err := json.Unmarshal(a.Result, &task); err != nil || task.ID == "" {
		t.Fatalf("no task in %s", a.Result)
	}
	return task
}

// errorDetail returns the detail carried by the error's Struct, if any.
func (a rpcAnswer) errorDetail() any {
	if a.Error == nil {
		return nil
	}
	for _, d := range a.Error.Data {
		if d["@type"] == typeStruct {
			v, _ := d["value"].(map[string]any)
			return v["detail"]
		}
	}
	return nil
}

func (a rpcAnswer) errorMeta() map[string]any {
	if a.Error == nil {
		return nil
	}
	for _, d := range a.Error.Data {
		if d["@type"] == typeErrorInfo {
			m, _ := d["metadata"].(map[string]any)
			return m
		}
	}
	return nil
}

// Envelope, version and method errors are answered before any payment
// talk, with the spec's codes.
func TestA2AEnvelopeErrors(t *testing.T) {
	env := newPaidEnv(t, nil)
	good := sendBody("SendMessage", testClaim, nil)
	tests := []struct {
		name    string
		body    string
		headers map[string]string
		code    int
		reason  string
	}{
		{"parse error", `{"jsonrpc":`, a2aHeaders(), -32700, "PARSE_ERROR"},
		{"not an object", `[1,2]`, a2aHeaders(), -32600, "INVALID_REQUEST"},
		{"no jsonrpc", `{"id":1,"method":"SendMessage","params":{}}`, a2aHeaders(), -32600, "INVALID_REQUEST"},
		{"no id", `{"jsonrpc":"2.0","method":"SendMessage","params":{}}`, a2aHeaders(), -32600, "INVALID_REQUEST"},
		{"bad id", `{"jsonrpc":"2.0","id":{},"method":"SendMessage","params":{}}`, a2aHeaders(), -32600, "INVALID_REQUEST"},
		{"no version", good, map[string]string{}, -32009, "VERSION_NOT_SUPPORTED"},
		{"version 0.3", good, map[string]string{"A2A-Version": "0.3"}, -32009, "VERSION_NOT_SUPPORTED"},
		{"version 2.0", good, map[string]string{"A2A-Version": "2.0"}, -32009, "VERSION_NOT_SUPPORTED"},
		{"v0.3 method", strings.Replace(good, "SendMessage", "message/send", 1), a2aHeaders(), -32601, "METHOD_NOT_FOUND"},
		{"unknown method", strings.Replace(good, "SendMessage", "Frobnicate", 1), a2aHeaders(), -32601, "METHOD_NOT_FOUND"},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":[1]}`, a2aHeaders(), -32602, "INVALID_PARAMS"},
		{"no message", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, a2aHeaders(), -32602, "INVALID_PARAMS"},
		{"agent role", strings.Replace(good, "ROLE_USER", "ROLE_AGENT", 1), a2aHeaders(), -32602, "INVALID_PARAMS"},
		{"no parts", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}}`, a2aHeaders(), -32602, "INVALID_PARAMS"},
		{"file part", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"url":"https://x"}]}}}`, a2aHeaders(), -32005, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"two kinds in a part", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"abc","data":{}}]}}}`, a2aHeaders(), -32602, "INVALID_PARAMS"},
		{"bad tier", sendBody("SendMessage", testClaim, map[string]any{"tier": "platinum"}), a2aHeaders(), -32602, "INVALID_PARAMS"},
		{"follow-up", strings.Replace(good, `"messageId"`, `"taskId":"t1","messageId"`, 1), a2aHeaders(), -32004, "UNSUPPORTED_OPERATION"},
		{"push config", `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{}}`, a2aHeaders(), -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{"extended card", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`, a2aHeaders(), -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
		{"list tasks", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`, a2aHeaders(), -32004, "UNSUPPORTED_OPERATION"},
		{"get task without id", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`, a2aHeaders(), -32602, "INVALID_PARAMS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.headers
			if h != nil {
				h["X-Test-Payment"] = gatetest.Credential("0xaaa", "env-"+tt.name)
			}
			st, b := env.post(a2aPath, tt.body, h)
			if st != 200 {
				t.Fatalf("status %d %s", st, b)
			}
			a := decodeRPC(t, b)
			if a.Error == nil || a.Error.Code != tt.code || len(a.Error.Data) == 0 || a.Error.Data[0]["reason"] != tt.reason ||
				a.Error.Data[0]["@type"] != typeErrorInfo || a.Error.Data[0]["domain"] != a2aDomain {
				t.Fatalf("answer %s", b)
			}
		})
	}
	if env.prov.Calls() != 0 || env.countOrders() != 0 || len(env.proc.Challenges()) != 0 {
		t.Fatalf("bad requests did work: provider %d, orders %d, challenges %d", env.prov.Calls(), env.countOrders(), len(env.proc.Challenges()))
	}
	// The version may also come as a query parameter; the id is echoed.
	st, _, b := env.do("POST", a2aPath+"?A2A-Version=1.0", `{"jsonrpc":"2.0","id":"abc","method":"GetTask","params":{"id":"ord_x"}}`, nil)
	if a := decodeRPC(t, b); st != 200 || string(a.ID) != `"abc"` || a.Error == nil || a.Error.Code != -32001 {
		t.Fatalf("query version: %d %s", st, b)
	}
}

// An invalid claim gets -32602 whose detail is the HTTP route's 422 list.
func TestA2AInvalidClaim(t *testing.T) {
	env := newPaidEnv(t, nil)
	tests := []struct{ name, tier, claim, data, httpPath, httpBody string }{
		{"short text", "", "ab", "", "/v1/claims/verify", `{"claim":"ab"}`},
		{"data part tier cap", "quick", "", `{"claim":"Some claim.","minimumSources":4}`, "/v1/claims/verify/quick", `{"claim":"Some claim.","minimumSources":4}`},
		{"data part extra key", "deep", "", `{"claim":"Some claim.","bogus":true}`, "/v1/claims/verify/deep", `{"claim":"Some claim.","bogus":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			part := `{"text":` + string(mustJSON(tt.claim)) + `}`
			if tt.data != "" {
				part = `{"data":` + tt.data + `}`
			}
			meta := ""
			if tt.tier != "" {
				meta = `,"metadata":{"tier":"` + tt.tier + `"}`
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[` + part + `]}` + meta + `}}`
			st, b := env.post(a2aPath, body, a2aHeaders("X-Test-Payment", gatetest.Credential("0xaaa", "inv-"+tt.name)))
			a := decodeRPC(t, b)
			if st != 200 || a.Error == nil || a.Error.Code != -32602 {
				t.Fatalf("%d %s", st, b)
			}
			hst, hb := env.post(tt.httpPath, tt.httpBody, nil)
			var httpErr struct{ Detail any }
			if err := json.Unmarshal(hb, &httpErr); err != nil || hst != 422 {
				t.Fatalf("HTTP %d %s", hst, hb)
			}
			if diff := cmp.Diff(httpErr.Detail, a.errorDetail()); diff != "" {
				t.Fatalf("A2A and HTTP refusals differ (-http +a2a):\n%s", diff)
			}
		})
	}
	if env.prov.Calls() != 0 || env.countOrders() != 0 {
		t.Fatal("invalid claims did work")
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// Unpaid: the gate's 402 with both protocols' challenges, priced by tier.
func TestA2AUnpaid(t *testing.T) {
	env := newPaidEnv(t, nil)
	for _, tc := range []struct {
		meta   map[string]any
		amount string
	}{{nil, "50000"}, {map[string]any{"tier": "quick"}, "20000"}, {map[string]any{"tier": "research"}, "250000"}} {
		st, hd, b := env.do("POST", a2aPath, sendBody("SendMessage", testClaim, tc.meta), a2aHeaders())
		if st != 402 || hd.Get("Payment-Required") == "" || hd.Get("Www-Authenticate") == "" {
			t.Fatalf("unpaid: %d %v %s", st, hd, b)
		}
		raw, _ := base64.StdEncoding.DecodeString(hd.Get("Payment-Required"))
		var pr struct {
			Resource struct{ URL string }
			Accepts  []struct{ Amount string }
		}
		if err := json.Unmarshal(raw, &pr); err != nil || pr.Resource.URL != agentsTestBase+a2aPath || pr.Accepts[0].Amount != tc.amount {
			t.Fatalf("challenge %s", raw)
		}
	}
	if env.prov.Calls() != 0 || env.countOrders() != 0 {
		t.Fatal("unpaid calls did work")
	}
}

// A paid SendMessage: a completed task with the conclusion and the result,
// the order headers, a receipt over the exact body; the payment cannot be
// used twice; GetTask is the payer's alone.
func TestA2APaidSendMessage(t *testing.T) {
	env := newPaidEnv(t, nil)
	pay := a2aHeaders("X-Test-Payment", gatetest.Credential("0xaaa", "a2a-1"))
	st, hd, b := env.do("POST", a2aPath, sendBody("SendMessage", testClaim, nil), pay)
	if st != 200 {
		t.Fatalf("paid: %d %s", st, b)
	}
	orderID, token, receiptID := hd.Get(httpgate.HeaderOrderID), hd.Get(httpgate.HeaderOrderToken), hd.Get(httpgate.HeaderReceiptID)
	if !strings.HasPrefix(orderID, "ord_") || !strings.HasPrefix(token, "ort_") || !strings.HasPrefix(receiptID, "rcpt_") {
		t.Fatalf("headers %v", hd)
	}
	a := decodeRPC(t, b)
	if string(a.ID) != "7" {
		t.Fatalf("id %s", a.ID)
	}
	task := a.task(t)
	if task.ID != orderID || task.Status.State != a2aCompleted || len(task.Artifacts) != 1 || len(task.History) != 1 ||
		task.History[0].TaskID != orderID || task.History[0].ContextID != task.ContextID {
		t.Fatalf("task %+v", task)
	}
	parts := task.Artifacts[0].Parts
	var res claims.Result
	if len(parts) != 2 || parts[0].Text == nil || !strings.HasPrefix(*parts[0].Text, "Confirmed: ") || parts[1].MediaType != "application/json" ||
		json.Unmarshal(parts[1].Data, &res) != nil || res.Status != "confirmed" || task.Artifacts[0].ArtifactID != res.VerificationID {
		t.Fatalf("artifact %+v", task.Artifacts[0])
	}
	o := env.order(orderID)
	if o.Status != payment.OrderCompleted || o.OfferID != "claims.verify.standard" || o.ResultID != res.VerificationID {
		t.Fatalf("order %+v", o)
	}
	sum := sha256.Sum256(b)
	if rc := env.receipt(orderID); rc.ResultSHA256 != hex.EncodeToString(sum[:]) || rc.ReceiptID != receiptID {
		t.Fatalf("receipt %+v", rc)
	}
	if env.proc.Settled("0xaaa", "a2a-1") != 1 {
		t.Fatal("not settled once")
	}

	// The same payment again: the gate's 402 "Payment already used".
	st, _, b = env.do("POST", a2aPath, sendBody("SendMessage", testClaim, nil), pay)
	if st != 402 || !strings.Contains(string(b), "Payment already used") {
		t.Fatalf("replay: %d %s", st, b)
	}

	// GetTask: the order token of the call, and nobody else.
	get := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":%q}}`, orderID)
	for _, tc := range []struct {
		name  string
		token string
		ok    bool
	}{{"own token", token, true}, {"no token", "", false}, {"other token", "ort_someoneelse", false}} {
		h := a2aHeaders()
		if tc.token != "" {
			h[httpgate.HeaderOrderToken] = tc.token
		}
		st, b := env.post(a2aPath, get, h)
		a := decodeRPC(t, b)
		if tc.ok {
			got := a.task(t)
			if st != 200 || got.ID != orderID || got.Status.State != a2aCompleted || len(got.Artifacts) != 1 || len(got.History) != 1 {
				t.Fatalf("%s: %d %s", tc.name, st, b)
			}
		} else if a.Error == nil || a.Error.Code != -32001 {
			t.Fatalf("%s: %s", tc.name, b)
		}
	}
	st, b = env.post(a2aPath, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":%q,"historyLength":0}}`, orderID),
		a2aHeaders(httpgate.HeaderOrderToken, token))
	if got := decodeRPC(t, b).task(t); st != 200 || len(got.History) != 0 {
		t.Fatalf("historyLength 0: %s", b)
	}
	// A finished task cannot be canceled.
	st, b = env.post(a2aPath, fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":%q}}`, orderID), a2aHeaders(httpgate.HeaderOrderToken, token))
	if a := decodeRPC(t, b); st != 200 || a.Error == nil || a.Error.Code != -32002 {
		t.Fatalf("cancel a completed task: %s", b)
	}

	// Another instance on the same database reads the task from the ledger.
	other, err := New(Config{Paywall: env.gate, Claims: ClaimsConfig{Engine: env.eng}, NoMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := doHandler(other, a2aPath, get, a2aHeaders(httpgate.HeaderOrderToken, token))
	got := decodeRPC(t, rec).task(t)
	if got.ID != orderID || got.Status.State != a2aCompleted || len(got.Artifacts) != 1 || got.Metadata["verificationId"] != res.VerificationID {
		t.Fatalf("other instance: %s", rec)
	}
	if rec := doHandler(other, a2aPath, get, a2aHeaders(httpgate.HeaderOrderToken, "ort_wrong")); decodeRPC(t, rec).Error.Code != -32001 {
		t.Fatalf("other instance, wrong token: %s", rec)
	}
}

// doHandler serves one request with h directly.
func doHandler(h http.Handler, path, body string, headers map[string]string) []byte {
	req, _ := http.NewRequest("POST", "http://127.0.0.1"+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := &recorder{header: http.Header{}}
	h.ServeHTTP(rec, req)
	return []byte(rec.body.String())
}

type recorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(b []byte) (int, error) { return r.body.WriteString(string(b)) }

// A verification that fails after payment: a non-2xx status with the
// JSON-RPC error, the order failed, nothing settled.
func TestA2AProviderFailure(t *testing.T) {
	prov := claimstest.NewProvider(claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderFailed, Err: errors.New("boom")}})
	env := newPaidEnv(t, &envOptions{provider: prov})
	st, hd, b := env.do("POST", a2aPath, sendBody("SendMessage", testClaim, nil), a2aHeaders("X-Test-Payment", gatetest.Credential("0xaaa", "f-1")))
	a := decodeRPC(t, b)
	meta := a.errorMeta()
	orderID := hd.Get(httpgate.HeaderOrderID)
	if st != 502 || a.Error == nil || a.Error.Code != -32603 || a.errorDetail() != "Evidence provider failed" ||
		meta["orderId"] != orderID || meta["taskId"] != orderID || meta["httpStatus"] != "502" {
		t.Fatalf("failure: %d %s", st, b)
	}
	if o := env.order(orderID); o.Status != payment.OrderFailed {
		t.Fatalf("order %s", o.Status)
	}
	if env.proc.TotalSettled() != 0 || env.proc.Voided("0xaaa", "f-1") != 1 {
		t.Fatal("a failed verification was settled")
	}
	get := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":%q}}`, orderID)
	_, b = env.post(a2aPath, get, a2aHeaders(httpgate.HeaderOrderToken, hd.Get(httpgate.HeaderOrderToken)))
	if task := decodeRPC(t, b).task(t); task.Status.State != a2aFailed || len(task.Artifacts) != 0 {
		t.Fatalf("failed task: %s", b)
	}
}

// sseEvents reads server-sent events, one JSON-RPC response each, calling
// each for every event until it returns false.
func sseEvents(t *testing.T, r io.Reader, each func(rpcAnswer, a2aEvent) bool) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		a := decodeRPC(t, []byte(data))
		var ev a2aEvent
		if a.Result != nil {
			if err := json.Unmarshal(a.Result, &ev); err != nil {
				t.Fatalf("event %s: %v", data, err)
			}
		}
		if !each(a, ev) {
			return
		}
	}
}

// describe names an event for comparisons.
func describe(ev a2aEvent) string {
	switch {
	case ev.Task != nil:
		return "task " + ev.Task.Status.State
	case ev.ArtifactUpdate != nil:
		return "artifact"
	case ev.StatusUpdate != nil:
		s := "status " + ev.StatusUpdate.Status.State
		if m := ev.StatusUpdate.Status.Message; m != nil && len(m.Parts) > 0 && m.Parts[0].Text != nil {
			s += ": " + *m.Parts[0].Text
		}
		return s
	}
	return "?"
}

// gatedProvider blocks every Search until release is closed, after telling
// started.
type gatedProvider struct {
	*claimstest.Provider
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGatedProvider(t *testing.T) *gatedProvider {
	f, err := claimstest.LoadFixture("confirmed")
	if err != nil {
		t.Fatal(err)
	}
	return &gatedProvider{Provider: f.Provider(), started: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedProvider) Search(ctx context.Context, q *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	g.once.Do(func() { close(g.started) })
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, &claims.ProviderError{Kind: claims.ProviderTimeout, Err: ctx.Err()}
	}
	return g.Provider.Search(ctx, q)
}

// newGatedEnv is a paid environment whose provider waits for the test.
func newGatedEnv(t *testing.T, o *envOptions) (*paidEnv, *gatedProvider) {
	g := newGatedProvider(t)
	if o == nil {
		o = &envOptions{}
	}
	o.provider, o.search = g.Provider, g
	return newPaidEnv(t, o), g
}

// A paid stream is live: status updates arrive while the provider is still
// working; the payment settles before the artifact; the receipt follows in
// the final status and the trailer.
func TestA2AStreamLive(t *testing.T) {
	env, g := newGatedEnv(t, nil)
	req, _ := http.NewRequest("POST", env.hs.URL+a2aPath, strings.NewReader(sendBody("SendStreamingMessage", testClaim, map[string]any{"tier": "deep"})))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Test-Payment", gatetest.Credential("0xaaa", "s-1"))
	resp, err := env.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	orderID := resp.Header.Get(httpgate.HeaderOrderID)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(orderID, "ord_") ||
		!strings.HasPrefix(resp.Header.Get(httpgate.HeaderOrderToken), "ort_") {
		t.Fatalf("stream: %d %v", resp.StatusCode, resp.Header)
	}
	var got []string
	var final *a2aStatusUpdate
	released := false
	sseEvents(t, resp.Body, func(a rpcAnswer, ev a2aEvent) bool {
		if string(a.ID) != "7" {
			t.Fatalf("event id %s", a.ID)
		}
		got = append(got, describe(ev))
		if ev.StatusUpdate != nil && strings.Contains(describe(ev), "Searching") && !released {
			// The provider cannot answer before release: the update
			// came live, while the verification was running.
			released = true
			close(g.release)
		}
		if ev.StatusUpdate != nil && a2aTerminal(ev.StatusUpdate.Status.State) {
			final = ev.StatusUpdate
		}
		return true
	})
	want := []string{
		"task TASK_STATE_SUBMITTED",
		"status TASK_STATE_WORKING: Verification started (deep tier)",
		"status TASK_STATE_WORKING: Searching the web for evidence",
		"status TASK_STATE_WORKING: Reconciling the evidence with its sources",
		"status TASK_STATE_WORKING: Snapshotting cited sources",
		"status TASK_STATE_WORKING: Settling the payment",
		"artifact",
		"status TASK_STATE_COMPLETED",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	receiptID := resp.Trailer.Get(httpgate.HeaderReceiptID)
	if final == nil || final.Metadata["receiptId"] != receiptID || !strings.HasPrefix(receiptID, "rcpt_") || final.Metadata["orderId"] != orderID {
		t.Fatalf("final %+v trailer %v", final, resp.Trailer)
	}
	o := env.order(orderID)
	if o.Status != payment.OrderCompleted || o.Tier != "deep" || env.proc.Settled("0xaaa", "s-1") != 1 {
		t.Fatalf("order %+v", o)
	}
	// The receipt hashes the stored final task, which the token reads.
	stored, err := paymentstore.New(env.db).Response(context.Background(), orderID)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(stored.Body)
	if rc := env.receipt(orderID); rc.ResultSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatal("receipt does not hash the stored result")
	}
	if task := decodeRPC(t, stored.Body).task(t); task.ID != orderID || task.Status.State != a2aCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("stored %s", stored.Body)
	}
}

// A failed streamed verification ends with a failed status and is not
// charged.
func TestA2AStreamFailure(t *testing.T) {
	prov := claimstest.NewProvider(claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderRateLimited, Err: errors.New("429")}})
	env := newPaidEnv(t, &envOptions{provider: prov})
	st, hd, b := env.do("POST", a2aPath, sendBody("SendStreamingMessage", testClaim, nil), a2aHeaders("X-Test-Payment", gatetest.Credential("0xaaa", "sf-1")))
	if st != 200 {
		t.Fatalf("%d %s", st, b)
	}
	var last string
	sseEvents(t, strings.NewReader(string(b)), func(_ rpcAnswer, ev a2aEvent) bool { last = describe(ev); return true })
	if last != "status TASK_STATE_FAILED: Verification failed (503): Evidence provider is busy; retry later; not charged" {
		t.Fatalf("last event %q", last)
	}
	if o := env.order(hd.Get(httpgate.HeaderOrderID)); o.Status != payment.OrderFailed || env.proc.TotalSettled() != 0 {
		t.Fatalf("order %s, settled %d", o.Status, env.proc.TotalSettled())
	}
}

// A streamed call with an Idempotency-Key goes through the gate (buffered,
// settled before delivery) and replays.
func TestA2AStreamBuffered(t *testing.T) {
	env := newPaidEnv(t, nil)
	body := sendBody("SendStreamingMessage", testClaim, nil)
	h1 := a2aHeaders("X-Test-Payment", gatetest.Credential("0xaaa", "b-1"), "Idempotency-Key", "k-1")
	st, hd, b := env.do("POST", a2aPath, body, h1)
	if st != 200 || hd.Get(httpgate.HeaderReceiptID) == "" {
		t.Fatalf("%d %v %s", st, hd, b)
	}
	var got []string
	sseEvents(t, strings.NewReader(string(b)), func(_ rpcAnswer, ev a2aEvent) bool { got = append(got, describe(ev)); return true })
	if len(got) != 7 || got[0] != "task TASK_STATE_SUBMITTED" || got[5] != "artifact" || got[6] != "status TASK_STATE_COMPLETED" {
		t.Fatalf("events %v", got)
	}
	st, hd2, b2 := env.do("POST", a2aPath, body, a2aHeaders("X-Test-Payment", gatetest.Credential("0xaaa", "b-2"), "Idempotency-Key", "k-1"))
	if st != 200 || hd2.Get(httpgate.HeaderReplay) != "true" || string(b2) != string(b) || env.proc.Settled("0xaaa", "b-2") != 0 {
		t.Fatalf("replay %d %v", st, hd2)
	}
}

// CancelTask stops a running task of the payer: the stream ends canceled,
// the order fails, nothing is settled.
func TestA2ACancelTask(t *testing.T) {
	env, g := newGatedEnv(t, nil)
	req, _ := http.NewRequest("POST", env.hs.URL+a2aPath, strings.NewReader(sendBody("SendStreamingMessage", testClaim, nil)))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("X-Test-Payment", gatetest.Credential("0xaaa", "c-1"))
	resp, err := env.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	orderID, token := resp.Header.Get(httpgate.HeaderOrderID), resp.Header.Get(httpgate.HeaderOrderToken)
	cancelBody := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"CancelTask","params":{"id":%q}}`, orderID)
	var last string
	canceled := make(chan []byte, 1)
	sseEvents(t, resp.Body, func(_ rpcAnswer, ev a2aEvent) bool {
		last = describe(ev)
		if strings.Contains(last, "Searching") {
			<-g.started
			// Someone else cannot cancel it.
			if _, b := env.post(a2aPath, cancelBody, a2aHeaders(httpgate.HeaderOrderToken, "ort_other")); decodeRPC(t, b).Error.Code != -32001 {
				t.Errorf("a stranger canceled: %s", b)
			}
			go func() {
				_, b := env.post(a2aPath, cancelBody, a2aHeaders(httpgate.HeaderOrderToken, token))
				canceled <- b
			}()
		}
		return true
	})
	if last != "status TASK_STATE_CANCELED: Canceled by the payer; not charged" {
		t.Fatalf("last event %q", last)
	}
	task := decodeRPC(t, <-canceled).task(t)
	if task.ID != orderID || task.Status.State != a2aCanceled {
		t.Fatalf("cancel answer %+v", task)
	}
	if o := env.order(orderID); o.Status != payment.OrderFailed || o.FailureReason != "canceled by the payer" || env.proc.TotalSettled() != 0 {
		t.Fatalf("order %+v", o)
	}
	close(g.release)
}

// Under httpgate.Free tasks are free and have task_ ids.
func TestA2AFree(t *testing.T) {
	env := newPaidEnv(t, &envOptions{paywall: httpgate.Free{}})
	st, b := env.post(a2aPath, sendBody("SendMessage", testClaim, nil), a2aHeaders())
	task := decodeRPC(t, b).task(t)
	if st != 200 || !strings.HasPrefix(task.ID, "task_") || task.Status.State != a2aCompleted {
		t.Fatalf("%d %s", st, b)
	}
	_, b = env.post(a2aPath, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":%q}}`, task.ID), a2aHeaders())
	if got := decodeRPC(t, b).task(t); got.ID != task.ID {
		t.Fatalf("get %s", b)
	}
	st, b = env.post(a2aPath, sendBody("SendStreamingMessage", testClaim, nil), a2aHeaders())
	var got []string
	sseEvents(t, strings.NewReader(string(b)), func(_ rpcAnswer, ev a2aEvent) bool { got = append(got, describe(ev)); return true })
	if st != 200 || len(got) != 7 || got[6] != "status TASK_STATE_COMPLETED" || env.countOrders() != 0 {
		t.Fatalf("free stream %d %v", st, got)
	}
}

// A stage that comes after the task ended (from a verification that
// outlived its caller) does not bring the task back to working.
func TestA2ALateStage(t *testing.T) {
	e := &a2aTaskEntry{task: a2aTask{ID: "t", ContextID: "c", Status: a2aTaskStatus{State: a2aWorking}}}
	if _, ok := e.working("Searching"); !ok || e.snapshot().Status.State != a2aWorking {
		t.Fatal("a running task refused a stage")
	}
	e.setStatus(a2aCanceled, "Canceled by the payer; not charged", nil)
	if _, ok := e.working("Reconciling"); ok || e.snapshot().Status.State != a2aCanceled {
		t.Fatalf("a late stage changed the task: %+v", e.snapshot().Status)
	}
}

// An over-long Idempotency-Key is refused before payment, as on HTTP.
func TestA2AIdempotencyKeyTooLong(t *testing.T) {
	env := newPaidEnv(t, nil)
	st, b := env.post(a2aPath, sendBody("SendMessage", testClaim, nil),
		a2aHeaders("Idempotency-Key", strings.Repeat("k", 256), gatetest.Header, gatetest.Credential("0xaaa", "long")))
	a := decodeRPC(t, b)
	if st != 200 || a.Error == nil || a.Error.Code != -32602 || env.countOrders() != 0 {
		t.Fatalf("%d %s", st, b)
	}
	_, hb := env.post("/v1/claims/verify", string(mustJSON(map[string]string{"claim": testClaim})), map[string]string{"Idempotency-Key": strings.Repeat("k", 256)})
	var httpErr struct{ Detail any }
	_ = json.Unmarshal(hb, &httpErr)
	if diff := cmp.Diff(httpErr.Detail, a.errorDetail()); diff != "" {
		t.Fatalf("A2A and HTTP differ (-http +a2a):\n%s", diff)
	}
}
