package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/protocols"
	x402seller "github.com/assaykit/assay/payment/x402/seller"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/discovery/discoverytest"
	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/sqlite"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// agentsDir holds the Node project with the official MCP and A2A clients.
const agentsDir = "../../interop/agents"

// agentsNode returns the node binary, or stops through testenv.Node when
// node or the official clients are not installed in interop/agents (npm ci
// --prefix interop/agents).
func agentsNode(t *testing.T) string {
	t.Helper()
	return testenv.Node(t, agentsDir, "@modelcontextprotocol/sdk", "@a2a-js/sdk")
}

// interopServer is a full server on loopback: the claims engine with a
// scripted provider, the real payment processor in dev mode (real EIP-3009
// verification, no funds moved), the gate, commerce, MCP and A2A.
func interopServer(t *testing.T) (base string, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f, err := claimstest.LoadFixture("confirmed")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := claims.New(f.Provider(), claimsstore.New(db), f.Snapshotter(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base = "http://" + ln.Addr().String()
	proc, err := protocols.New(&protocols.Options{PayTo: paymenttest.DevPayee, Dev: true,
		MPPSecret: []byte("mpp-secret-for-the-interop-test-0123456789"), Realm: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	gate, err := httpgate.New(proc, paymentstore.New(db), &httpgate.Options{CashierOptions: payment.CashierOptions{Keys: keys}, PublicBaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Paywall: gate, PublicBaseURL: base, Claims: ClaimsConfig{Engine: eng},
		Commerce: CommerceConfig{Cashier: gate.Cashier()}, Discovery: DiscoveryConfig{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	return base, db
}

func runAgent(t *testing.T, node string, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = agentsDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", args[0], err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var out map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil {
		t.Fatalf("node %s printed %q (stderr %s)", args[0], stdout.String(), stderr.String())
	}
	t.Logf("node %s: %s", args[0], lines[len(lines)-1])
	return out
}

// The official MCP TypeScript client pays a verification with an
// @x402/evm signature and receives progress notifications.
func TestInteropMCPClient(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	node := agentsNode(t)
	base, db := interopServer(t)
	out := runAgent(t, node, "mcp.mjs", base+"/claim-verification/mcp")
	cm := checkMCPInterop(t, out, base, []any{"list_verification_tiers", "verify_claim", "verify_claim_deep", "verify_claim_quick", "verify_claim_research"})
	paid := out["paid"].(map[string]any)
	if paid["status"] != "confirmed" {
		t.Errorf("paid %v", paid)
	}
	progress, _ := paid["progress"].([]any)
	want := []any{"0/5 started", "1/5 searching the web for evidence", "2/5 reconciling the evidence with its sources",
		"3/5 snapshotting cited sources", "4/5 settling the payment", "5/5 done"}
	if diff := cmp.Diff(want, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	o, err := paymentstore.New(db).Order(context.Background(), cm["orderId"].(string))
	if err != nil || o.Status != payment.OrderCompleted || !o.Dev || !strings.EqualFold(o.Payer, paymenttest.DevAddress) {
		t.Errorf("order %+v %v", o, err)
	}
}

// checkMCPInterop checks what mcp.mjs reports against any server at base
// (tools are the sorted tool names expected): the unpaid PaymentRequired,
// the paid, settled result with progress, the refused replay, and invalid
// arguments refused with the HTTP route's 422 detail. It returns the paid
// call's commerce member.
func checkMCPInterop(t *testing.T, out map[string]any, base string, tools []any) map[string]any {
	t.Helper()
	if out["protocolVersion"] != "2025-11-25" {
		t.Errorf("protocol version %v", out["protocolVersion"])
	}
	if diff := cmp.Diff(tools, out["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if out["maxSourcesMaximum"] != float64(20) { // the shape's bound: larger values than the tier cap are clamped
		t.Errorf("verify_claim maxSources maximum %v", out["maxSourcesMaximum"])
	}
	unpaid := out["unpaid"].(map[string]any)
	if unpaid["isError"] != true || unpaid["resource"] != "mcp://"+strings.TrimPrefix(base, "http://")+"/verify_claim" ||
		unpaid["amount"] != "50000" || unpaid["network"] != "eip155:8453" {
		t.Errorf("unpaid %v", unpaid)
	}
	paid := out["paid"].(map[string]any)
	cm := paid["commerce"].(map[string]any)
	settle := paid["settlement"].(map[string]any)
	if cm["status"] != "completed" || settle["success"] != true || !strings.HasPrefix(settle["transaction"].(string), x402seller.DevReferencePrefix) ||
		!strings.HasPrefix(paid["verificationId"].(string), "cv_") {
		t.Errorf("paid %v", paid)
	}
	if progress, _ := paid["progress"].([]any); len(progress) < 3 || progress[0] != "0/5 started" || progress[len(progress)-1] != "5/5 done" {
		t.Errorf("progress %v", progress)
	}
	// The same payment for the same call: the same purchase with a fresh
	// token; for another call: used.
	again := out["again"].(map[string]any)
	acm, _ := again["commerce"].(map[string]any)
	if again["isError"] != false || again["sameText"] != true || acm["replay"] != true || acm["orderId"] != cm["orderId"] ||
		acm["receiptId"] != cm["receiptId"] || acm["orderToken"] == nil || acm["orderToken"] == cm["orderToken"] {
		t.Errorf("the same payment again: %v", again)
	}
	if r := out["replay"].(map[string]any); r["isError"] != true || r["error"] != payment.ReasonPaymentUsed {
		t.Errorf("the same payment for another call %v", r)
	}
	if acm != nil {
		cm["orderToken"] = acm["orderToken"] // the first token was replaced
	}
	// Invalid arguments: the same 422 detail as the HTTP route gives.
	resp, err := http.Post(base+"/claim-verification/v1/claims/verify", "application/json", strings.NewReader(`{"claim":"ab"}`))
	if err != nil {
		t.Fatal(err)
	}
	var httpErr struct{ Detail any }
	if err := json.NewDecoder(resp.Body).Decode(&httpErr); err != nil || resp.StatusCode != 422 {
		t.Fatalf("HTTP refusal: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	r := out["invalid"].(map[string]any)
	if diff := cmp.Diff(httpErr.Detail, r["detail"]); diff != "" || r["isError"] != true {
		t.Errorf("invalid arguments (-http +mcp):\n%s", diff)
	}
	return cm
}

// servedCard fetches the agent card the server serves and validates it
// against our schema and the A2A 1.0 proto; a missing or invalid card
// fails the test (the A2A client resolves the card the same way).
func servedCard(t *testing.T, base string) {
	t.Helper()
	resp, err := http.Get(base + "/claim-verification" + discovery.PathAgentCard)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("the server serves no agent card: %d %s", resp.StatusCode, b)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := compileSchema(t, discovery.SchemaAgentCard).Validate(inst); err != nil {
		t.Errorf("served agent card: %v", err)
	}
	if err := discoverytest.CheckAgentCard(b); err != nil {
		t.Errorf("served agent card against the A2A 1.0 proto: %v", err)
	}
}

// The agent cards the server serves (under the claims prefix and at the
// origin root) are signed, and the official A2A JS SDK verifies them
// (verifyAgentCardSignature, with the key it fetches from the JWKS the
// signature names): its canonical form of the card is ours byte for byte,
// the signature verifies, and neither a changed card nor another key
// verifies.
func TestAgentCardSignature(t *testing.T) {
	t.Parallel() // waits (on a child process) rather than computes
	node := agentsNode(t)
	base, _ := interopServer(t)
	for _, path := range []string{"/claim-verification" + discovery.PathAgentCard, discovery.PathAgentCard} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var card discovery.AgentCard
		if err := json.Unmarshal(b, &card); err != nil || len(card.Signatures) != 1 {
			t.Fatalf("%s: want one signature: %v %s", path, err, b)
		}
		canonical, err := discovery.CanonicalAgentCard(b)
		if err != nil {
			t.Fatal(err)
		}
		out := runAgent(t, node, "card.mjs", base, path)
		if out["canonical"] != string(canonical) {
			t.Errorf("%s: the SDK's canonical card differs from ours:\nsdk: %s\nours: %s", path, out["canonical"], canonical)
		}
		if v := out["verified"].(map[string]any); v["ok"] != true {
			t.Errorf("%s: the official SDK does not verify the card: %v", path, v)
		}
		if keys, _ := out["keys"].([]any); len(keys) == 0 || keys[0].(map[string]any)["jku"] != base+discovery.PathJWKS {
			t.Errorf("%s: keys fetched %v, want the JWKS at %s", path, keys, base+discovery.PathJWKS)
		}
		for _, neg := range []string{"tampered", "otherKey"} {
			if v := out[neg].(map[string]any); v["ok"] != false {
				t.Errorf("%s: %s verifies: %v", path, neg, v)
			}
		}
	}
}

// The official A2A JavaScript client resolves the served agent card and
// pays SendMessage and SendStreamingMessage with @x402/evm signatures in
// serviceParameters.
func TestInteropA2AClient(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	node := agentsNode(t)
	base, db := interopServer(t)
	servedCard(t, base)
	out := runAgent(t, node, "a2a.mjs", base+"/claim-verification")
	checkA2AInterop(t, out, base)
	paid := out["paid"].(map[string]any)
	if paid["dataStatus"] != "confirmed" || !strings.HasPrefix(paid["text"].(string), "Confirmed: ") {
		t.Errorf("paid %v", paid)
	}
	want := []any{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "status:TASK_STATE_WORKING", "status:TASK_STATE_WORKING",
		"status:TASK_STATE_WORKING", "status:TASK_STATE_WORKING", "artifact", "status:TASK_STATE_COMPLETED"}
	if diff := cmp.Diff(want, out["stream"]); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
	for _, id := range []string{paid["orderId"].(string), out["streamOrderId"].(string)} {
		if o, err := paymentstore.New(db).Order(context.Background(), id); err != nil || o.Status != payment.OrderCompleted || !o.Dev {
			t.Errorf("order %s: %+v %v", id, o, err)
		}
	}
}

// checkA2AInterop checks what a2a.mjs reports against any server at base:
// the card it resolved, the 402, the paid task with the order headers and
// the settlement, GetTask with the order token, the refused replay and a
// paid stream.
func checkA2AInterop(t *testing.T, out map[string]any, base string) {
	t.Helper()
	if out["protocolVersion"] != "1.0" {
		t.Errorf("protocol version %v", out["protocolVersion"])
	}
	card := out["card"].(map[string]any)
	if card["url"] != base+"/claim-verification/a2a" || len(card["skills"].([]any)) == 0 ||
		!cmp.Equal(card["extensions"], []any{"https://www.x402.org/", "https://paymentauth.org/"}) {
		t.Errorf("resolved card %v", card)
	}
	if u := out["unpaid"].(map[string]any); u["resource"] != base+"/claim-verification/a2a" || u["amount"] != "50000" {
		t.Errorf("unpaid %v", u)
	}
	paid := out["paid"].(map[string]any)
	if paid["state"] != "TASK_STATE_COMPLETED" || paid["mediaType"] != "application/json" || paid["taskId"] != paid["orderId"] ||
		!strings.HasPrefix(paid["orderToken"].(string), "ort_") || !strings.HasPrefix(paid["receiptId"].(string), "rcpt_") {
		t.Errorf("paid %v", paid)
	}
	if s := paid["settlement"].(map[string]any); s["success"] != true || !strings.HasPrefix(s["transaction"].(string), x402seller.DevReferencePrefix) {
		t.Errorf("settlement %v", s)
	}
	if g := out["getTask"].(map[string]any); g["state"] != "TASK_STATE_COMPLETED" || g["artifacts"] != float64(1) {
		t.Errorf("getTask %v", g)
	}
	if r := out["resent"].(map[string]any); r["status"] != float64(200) || r["replay"] != "true" || r["sameOrder"] != true ||
		r["sameReceipt"] != true || r["freshToken"] != true || r["taskId"] != paid["orderId"] {
		t.Errorf("the same request resent %v", r)
	}
	if out["replayStatus"] != float64(402) {
		t.Errorf("the same payment for another message: status %v", out["replayStatus"])
	}
	stream, _ := out["stream"].([]any)
	if len(stream) < 4 || stream[0] != "task:TASK_STATE_SUBMITTED" || !slices.Contains(stream, any("artifact")) ||
		stream[len(stream)-1] != "status:TASK_STATE_COMPLETED" {
		t.Errorf("stream %v", stream)
	}
}

// compileSchema compiles one of the JSON Schemas the discovery package
// ships.
func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	raw, ok := discovery.Schema(name)
	if !ok {
		t.Fatalf("no schema %s", name)
	}
	s, err := discoverytest.CompileSchema("file:///"+name, raw)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return s
}
