package agents

import (
	"encoding/base64"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/store/storetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testClock is a payment clock that a test moves forward.
type testClock struct {
	mu sync.Mutex
	d  time.Duration
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.d) }
func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d += d
}

// The credential is the purchase on MCP and A2A too: paid through one
// instance, presented again — without and with an Idempotency-Key — at
// another instance sharing the database, after the payment expired, it
// returns the same result, order and receipt with a fresh token. On SQLite
// and on PostgreSQL.
func TestAgentTransportsRecoverByCredentialAcrossInstances(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite-file": func(t *testing.T) string { return storetest.SQLitePath(t) },
		"postgres":    func(t *testing.T) string { return storetest.MigratedPostgresURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			clk := &testClock{}
			a, b := newDevEnvWith(t, devOptions{dsn: d, now: clk.now}), newDevEnvWith(t, devOptions{dsn: d, now: clk.now})

			// MCP.
			csA, csB := a.mcpSession("/claim-verification/mcp", nil), b.mcpSession("/claim-verification/mcp", nil)
			args := map[string]any{"claim": testClaim}
			unpaid := callTool(t, csA, "verify_claim", args, nil)
			var payObj map[string]any
			if err := json.Unmarshal(signFor(t, []byte(unpaid.Content[0].(*mcp.TextContent).Text)), &payObj); err != nil {
				t.Fatal(err)
			}
			first := callTool(t, csA, "verify_claim", args, mcp.Meta{metaPayment: payObj})
			if first.IsError {
				t.Fatalf("MCP paid: %s", first.Content[0].(*mcp.TextContent).Text)
			}
			cm := structured(t, first)["commerce"].(map[string]any)
			clk.advance(20 * time.Minute) // past validBefore
			token := cm["orderToken"].(string)
			for _, meta := range []mcp.Meta{{metaPayment: payObj}, {metaPayment: payObj, metaIdempotencyKey: "key-after-expiry"}} {
				again := callTool(t, csB, "verify_claim", args, meta)
				acm, _ := structured(t, again)["commerce"].(map[string]any)
				if again.IsError || again.Content[0].(*mcp.TextContent).Text != first.Content[0].(*mcp.TextContent).Text ||
					acm["replay"] != true || acm["orderId"] != cm["orderId"] || acm["receiptId"] != cm["receiptId"] {
					t.Fatalf("MCP at the other instance after expiry (%v): %v", meta, structured(t, again))
				}
				b.checkRotated(cm["orderId"].(string), token, acm["orderToken"].(string))
				token = acm["orderToken"].(string)
			}

			// A2A: the very same JSON-RPC request again.
			clk.advance(-20 * time.Minute)
			body := sendBody("SendMessage", testClaim, map[string]any{"tier": "quick"})
			st, hd, _ := a.do("POST", a2aPath, body, a2aHeaders())
			if st != 402 {
				t.Fatalf("A2A unpaid: %d", st)
			}
			raw, _ := base64.StdEncoding.DecodeString(hd.Get(x402.HeaderPaymentRequired))
			pay := base64.StdEncoding.EncodeToString(signFor(t, raw))
			st, fhd, fb := a.do("POST", a2aPath, body, a2aHeaders(x402.HeaderPaymentSignature, pay))
			if st != 200 {
				t.Fatalf("A2A paid: %d %s", st, fb)
			}
			clk.advance(20 * time.Minute)
			token = fhd.Get(httpgate.HeaderOrderToken)
			for _, extra := range [][]string{{x402.HeaderPaymentSignature, pay}, {x402.HeaderPaymentSignature, pay, httpgate.HeaderIdempotencyKey, "key-a2a"}} {
				st, ahd, ab := b.do("POST", a2aPath, body, a2aHeaders(extra...))
				if st != 200 || string(ab) != string(fb) || ahd.Get(httpgate.HeaderReplay) != "true" ||
					ahd.Get(httpgate.HeaderOrderID) != fhd.Get(httpgate.HeaderOrderID) || ahd.Get(httpgate.HeaderReceiptID) != fhd.Get(httpgate.HeaderReceiptID) {
					t.Fatalf("A2A at the other instance after expiry (%v): %d %v %s", extra, st, ahd, ab)
				}
				b.checkRotated(fhd.Get(httpgate.HeaderOrderID), token, ahd.Get(httpgate.HeaderOrderToken))
				token = ahd.Get(httpgate.HeaderOrderToken)
			}
			if n := a.countOrders(); n != 2 {
				t.Fatalf("%d orders for two payments", n)
			}
		})
	}
}
