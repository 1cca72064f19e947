package agents

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxSources above the tier cap is accepted and clamped by HTTP and MCP
// alike (the tool's schema advertises the shape's bound, not the cap), and
// both give the same verdict with at most the cap of cited sources.
func TestTransportsClampMaxSourcesAlike(t *testing.T) {
	env := newPaidEnv(t, nil)
	cs := env.mcpSession("/mcp", nil)
	quick, _ := claims.TierByName(claims.Quick)
	args := map[string]any{"claim": testClaim, "maxSources": quick.MaxCitedSources + 7, "minimumSources": 1}
	body := string(mustJSON(args))
	st, hd, hb := env.do("POST", "/claim-verification/v1/claims/verify/quick", body, map[string]string{gatetest.Header: gatetest.Credential("0xabc", "clamp-http")})
	if st != 200 {
		t.Fatalf("HTTP: %d %s", st, hb)
	}
	r := callTool(t, cs, tierListing(quick.Name).MCPTool, args, mcp.Meta{metaPayment: gatetest.Credential("0xabc", "clamp-mcp")})
	text := r.Content[0].(*mcp.TextContent).Text
	if r.IsError {
		t.Fatalf("MCP refused maxSources %d on %s: %s", quick.MaxCitedSources+7, quick.Name, text)
	}
	if diff := cmp.Diff(verdictOf(t, hb), verdictOf(t, []byte(text))); diff != "" {
		t.Errorf("verdicts differ (-http +mcp):\n%s", diff)
	}
	for name, raw := range map[string][]byte{"http": hb, "mcp": []byte(text)} {
		var res claims.Result
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		cited := 0
		for _, e := range res.Evidence {
			if e.Cited {
				cited++
			}
		}
		if cited > quick.MaxCitedSources {
			t.Errorf("%s: %d cited sources on the %s tier (cap %d)", name, cited, quick.Name, quick.MaxCitedSources)
		}
	}
	if o := env.order(hd.Get("X-Agentic-Order-Id")); o.Tier != claims.Quick {
		t.Errorf("HTTP order tier %s", o.Tier)
	}
}

// A SendMessage whose data part carries a whole ClaimVerificationRequest
// (text parts are commentary) at the tier of params.metadata.tier runs
// exactly that request at that tier: the same verdict, order and receipt
// trail as the HTTP route of the tier given the same body.
func TestA2ASendMessageDataPartRequest(t *testing.T) {
	env := newPaidEnv(t, nil)
	deep, _ := claims.TierByName(claims.Deep)
	req := map[string]any{"claim": testClaim, "minimumSources": 1, "maxSources": 2, "includeConflicts": false,
		"sourcePolicy": "open_web", "language": "en", "freshnessHours": nil}
	body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": "d-1", "method": "SendMessage", "params": map[string]any{
		"metadata": map[string]any{"tier": deep.Name},
		"message": map[string]any{"messageId": "m-data", "role": "ROLE_USER", "parts": []any{
			map[string]any{"text": "Please check this, ignore my wording."},
			map[string]any{"data": req, "mediaType": "application/json"},
		}}}})
	st, hd, b := env.do("POST", a2aPath, string(body), a2aHeaders(gatetest.Header, gatetest.Credential("0xdad", "data-a2a")))
	if st != 200 {
		t.Fatalf("A2A: %d %s", st, b)
	}
	task := decodeRPC(t, b).task(t)
	if task.Status.State != a2aCompleted || task.Metadata["tier"] != deep.Name {
		t.Fatalf("task %+v", task)
	}
	a2a := delivery{result: task.Artifacts[0].Parts[1].Data, delivered: b, orderID: hd.Get("X-Agentic-Order-Id")}
	hst, hhd, hb := env.do("POST", "/claim-verification"+tierListing(deep.Name).HTTPPath, string(mustJSON(req)), map[string]string{gatetest.Header: gatetest.Credential("0xdad", "data-http")})
	if hst != 200 {
		t.Fatalf("HTTP: %d %s", hst, hb)
	}
	viaHTTP := delivery{result: hb, delivered: hb, orderID: hhd.Get("X-Agentic-Order-Id")}
	if diff := cmp.Diff(verdictOf(t, hb), verdictOf(t, a2a.result)); diff != "" {
		t.Errorf("verdicts differ (-http +a2a):\n%s", diff)
	}
	want := env.trailOf(viaHTTP)
	if want.Tier != deep.Name || want.Amount != tierListing(deep.Name).AmountMicroUSD {
		t.Fatalf("HTTP trail %+v", want)
	}
	if diff := cmp.Diff(want, env.trailOf(a2a)); diff != "" {
		t.Errorf("trails differ (-http +a2a):\n%s", diff)
	}
	// The data part's request, not the text, was verified: its fields
	// show in the result.
	var res claims.Result
	if err := json.Unmarshal(a2a.result, &res); err != nil {
		t.Fatal(err)
	}
	if res.Claim != testClaim || len(res.Conflicts) != 0 {
		t.Errorf("result claim %q, conflicts %d", res.Claim, len(res.Conflicts))
	}
	cited := 0
	for _, e := range res.Evidence {
		if e.Cited {
			cited++
		}
	}
	if cited > 2 {
		t.Errorf("%d cited sources for maxSources 2", cited)
	}
	// An invalid data part is refused like the HTTP body, unpaid.
	bad := strings.Replace(string(body), `"minimumSources":1`, `"minimumSources":0`, 1)
	_, b = env.post(a2aPath, bad, a2aHeaders(gatetest.Header, gatetest.Credential("0xdad", "data-bad")))
	hst, hb = env.post("/claim-verification"+tierListing(deep.Name).HTTPPath, strings.Replace(string(mustJSON(req)), `"minimumSources":1`, `"minimumSources":0`, 1), nil)
	var httpErr struct{ Detail any }
	_ = json.Unmarshal(hb, &httpErr)
	if a := decodeRPC(t, b); hst != 422 || a.Error == nil || a.Error.Code != -32602 || !cmp.Equal(httpErr.Detail, a.errorDetail()) {
		t.Errorf("invalid data part: A2A %s, HTTP %d %s", b, hst, hb)
	}
	if env.proc.Settled("0xdad", "data-bad") != 0 {
		t.Error("an invalid request was charged")
	}
}

// The live-stream charging path of SendStreamingMessage (the Cashier
// charged directly, status updates flowing, settlement before the
// artifact) gives the same verdict and the same order and receipt trail
// as HTTP; its receipt hashes the stored final task.
func TestTransportsAgreeLiveStream(t *testing.T) {
	env := newPaidEnv(t, nil)
	payer := "0x2222222222222222222222222222222222222222"
	httpRun := env.viaHTTP(testClaim, gatetest.Credential(payer, "live-http"))
	req, _ := http.NewRequest("POST", env.hs.URL+a2aPath, strings.NewReader(sendBody("SendStreamingMessage", testClaim, nil)))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(gatetest.Header, gatetest.Credential(payer, "live-a2a"))
	resp, err := env.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	orderID := resp.Header.Get("X-Agentic-Order-Id")
	if resp.StatusCode != 200 || orderID == "" {
		t.Fatalf("stream: %d %v", resp.StatusCode, resp.Header)
	}
	var artifact *a2aArtifact
	var events []string
	sseEvents(t, resp.Body, func(_ rpcAnswer, ev a2aEvent) bool {
		events = append(events, describe(ev))
		if ev.ArtifactUpdate != nil {
			a := ev.ArtifactUpdate.Artifact
			artifact = &a
		}
		return true
	})
	// The live path (settling before the artifact), not the gate's
	// buffered one.
	if !slices.Contains(events, "status TASK_STATE_WORKING: Settling the payment") || resp.Trailer.Get("X-Agentic-Receipt-Id") == "" {
		t.Fatalf("not the live path: %v trailer %v", events, resp.Trailer)
	}
	if artifact == nil || len(artifact.Parts) != 2 {
		t.Fatalf("artifact %+v", artifact)
	}
	stored, err := paymentstore.New(env.db).Response(context.Background(), orderID)
	if err != nil {
		t.Fatal(err)
	}
	live := delivery{result: artifact.Parts[1].Data, delivered: stored.Body, orderID: orderID}
	if diff := cmp.Diff(verdictOf(t, httpRun.result), verdictOf(t, live.result)); diff != "" {
		t.Errorf("verdicts differ (-http +stream):\n%s", diff)
	}
	if diff := cmp.Diff(env.trailOf(httpRun), env.trailOf(live)); diff != "" {
		t.Errorf("trails differ (-http +stream):\n%s", diff)
	}
	if env.proc.Settled(payer, "live-a2a") != 1 || env.proc.Settled(payer, "live-http") != 1 {
		t.Error("not settled once each")
	}
}
