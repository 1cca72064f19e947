package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/store"
	"github.com/google/go-cmp/cmp"
)

// agentsDir holds the Node project with the official MCP and A2A clients.
const agentsDir = "../interop/agents"

// nodeOrSkip returns the node binary, or skips (visibly) when node or the
// installed clients are missing: run `npm ci --prefix interop/agents`.
func nodeOrSkip(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIP interop: node is not installed")
	}
	if _, err := os.Stat(filepath.Join(agentsDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("SKIP interop: interop/agents/node_modules is missing; run: npm ci --prefix interop/agents")
	}
	return node
}

// interopServer is a full server on loopback: the claims engine with a
// scripted provider, the real payment processor in dev mode (real EIP-3009
// verification, no funds moved), the gate, commerce, MCP and A2A.
func interopServer(t *testing.T) (base string, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "assay.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f, err := claimstest.LoadFixture("confirmed")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := claims.New(f.Provider(), db, f.Snapshotter(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base = "http://" + ln.Addr().String()
	proc, err := payment.NewProcessor(&payment.ProcessorOptions{PayTo: paymenttest.DevPayee, Dev: true,
		MPPSecret: []byte("mpp-secret-for-the-interop-test-0123456789"), Realm: ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	gate, err := payment.NewGate(proc, db, &payment.GateOptions{CashierOptions: payment.CashierOptions{Keys: keys}, PublicBaseURL: base})
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

// agentCard is an A2A 1.0 card for the test server, for the clients to
// build from while the server does not serve one itself.
func agentCard(base string) map[string]any {
	return map[string]any{
		"name":        "assay claim verification",
		"description": "Verifies a factual claim against current web sources; paid per call with x402 or MPP.",
		"version":     Version,
		"supportedInterfaces": []any{map[string]any{
			"url": base + "/claim-verification/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
		"capabilities":       map[string]any{"streaming": true},
		"defaultInputModes":  []string{"text/plain", "application/json"},
		"defaultOutputModes": []string{"text/plain", "application/json"},
		"skills": []any{map[string]any{"id": "verify_claim", "name": "Verify a claim",
			"description": "Structured, cited verdict on a factual claim.", "tags": []string{"fact-checking", "verification"}}},
	}
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
	node := nodeOrSkip(t)
	base, db := interopServer(t)
	out := runAgent(t, node, "mcp.mjs", base+"/claim-verification/mcp")
	if out["protocolVersion"] != "2025-11-25" {
		t.Errorf("protocol version %v", out["protocolVersion"])
	}
	wantTools := []any{"list_verification_tiers", "verify_claim", "verify_claim_deep", "verify_claim_quick", "verify_claim_research"}
	if diff := cmp.Diff(wantTools, out["tools"]); diff != "" {
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
	if paid["status"] != "confirmed" || cm["status"] != "completed" || settle["success"] != true ||
		!strings.HasPrefix(settle["transaction"].(string), payment.DevReferencePrefix) {
		t.Errorf("paid %v", paid)
	}
	progress, _ := paid["progress"].([]any)
	want := []any{"0/5 started", "1/5 searching the web for evidence", "2/5 reconciling the evidence with its sources",
		"3/5 snapshotting cited sources", "4/5 settling the payment", "5/5 done"}
	if diff := cmp.Diff(want, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if r := out["replay"].(map[string]any); r["isError"] != true || r["error"] != payment.ReasonPaymentUsed {
		t.Errorf("replay %v", r)
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
	o, err := db.Order(context.Background(), cm["orderId"].(string))
	if err != nil || o.Status != payment.OrderCompleted || !o.Dev || !strings.EqualFold(o.Payer, paymenttest.DevAddress) {
		t.Errorf("order %+v %v", o, err)
	}
}

// The official A2A JavaScript client pays SendMessage and
// SendStreamingMessage with @x402/evm signatures in serviceParameters.
func TestInteropA2AClient(t *testing.T) {
	node := nodeOrSkip(t)
	base, db := interopServer(t)
	args := []string{"a2a.mjs", base + "/claim-verification"}
	// The client resolves the card the discovery routes serve; a server
	// without them would need one passed in.
	if resp, err := http.Get(base + "/claim-verification/.well-known/agent-card.json"); err != nil || resp.StatusCode != 200 {
		card := filepath.Join(t.TempDir(), "card.json")
		b, _ := json.Marshal(agentCard(base))
		if err := os.WriteFile(card, b, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--card", card)
		t.Log("the server serves no agent card: the client builds from one passed with --card")
	} else {
		resp.Body.Close()
	}
	out := runAgent(t, node, args...)
	if u := out["unpaid"].(map[string]any); u["resource"] != base+"/claim-verification/a2a" || u["amount"] != "50000" {
		t.Errorf("unpaid %v", u)
	}
	paid := out["paid"].(map[string]any)
	if paid["state"] != "TASK_STATE_COMPLETED" || paid["dataStatus"] != "confirmed" || paid["mediaType"] != "application/json" ||
		!strings.HasPrefix(paid["text"].(string), "Confirmed: ") || paid["taskId"] != paid["orderId"] ||
		!strings.HasPrefix(paid["orderToken"].(string), "ort_") || !strings.HasPrefix(paid["receiptId"].(string), "rcpt_") {
		t.Errorf("paid %v", paid)
	}
	if s := paid["settlement"].(map[string]any); s["success"] != true || !strings.HasPrefix(s["transaction"].(string), payment.DevReferencePrefix) {
		t.Errorf("settlement %v", s)
	}
	if g := out["getTask"].(map[string]any); g["state"] != "TASK_STATE_COMPLETED" || g["artifacts"] != float64(1) {
		t.Errorf("getTask %v", g)
	}
	if out["replayStatus"] != float64(402) {
		t.Errorf("replay status %v", out["replayStatus"])
	}
	want := []any{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "status:TASK_STATE_WORKING", "status:TASK_STATE_WORKING",
		"status:TASK_STATE_WORKING", "status:TASK_STATE_WORKING", "artifact", "status:TASK_STATE_COMPLETED"}
	if diff := cmp.Diff(want, out["stream"]); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
	for _, id := range []string{paid["orderId"].(string), out["streamOrderId"].(string)} {
		if o, err := db.Order(context.Background(), id); err != nil || o.Status != payment.OrderCompleted || !o.Dev {
			t.Errorf("order %s: %+v %v", id, o, err)
		}
	}
}
