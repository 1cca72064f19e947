package agents

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/gatetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkTransports pays for the same standard verification through
// HTTP (the baseline), MCP (official Go client, streamable HTTP) and A2A
// (JSON-RPC), interleaved in one run, over loopback, with the fake
// processor and a scripted provider: what each transport adds to a paid
// call. It reports the time per call of each and the ratios to HTTP.
//
//	go test ./server -run '^$' -bench Transports -benchtime 200x
func BenchmarkTransports(b *testing.B) {
	env := newPaidEnv(b, nil)
	cs := env.mcpSession("/mcp", nil)
	body := string(mustJSON(map[string]string{"claim": testClaim}))
	var dHTTP, dMCP, dA2A time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		st, _, _ := env.do("POST", "/v1/claims/verify", body, map[string]string{gatetest.Header: gatetest.Credential("0xb", fmt.Sprintf("h%d", i))})
		dHTTP += time.Since(start)
		start = time.Now()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "verify_claim", Arguments: map[string]any{"claim": testClaim},
			Meta: mcp.Meta{metaPayment: gatetest.Credential("0xb", fmt.Sprintf("m%d", i))}})
		dMCP += time.Since(start)
		start = time.Now()
		st2, _, _ := env.do("POST", a2aPath, sendBody("SendMessage", testClaim, nil), a2aHeaders(gatetest.Header, gatetest.Credential("0xb", fmt.Sprintf("a%d", i))))
		dA2A += time.Since(start)
		if st != 200 || err != nil || r.IsError || st2 != 200 {
			b.Fatalf("call failed: %d %v %d", st, err, st2)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(dHTTP.Microseconds())/n, "µs-http/op")
	b.ReportMetric(float64(dMCP.Microseconds())/n, "µs-mcp/op")
	b.ReportMetric(float64(dA2A.Microseconds())/n, "µs-a2a/op")
	b.ReportMetric(float64(dMCP)/float64(dHTTP), "mcp/http")
	b.ReportMetric(float64(dA2A)/float64(dHTTP), "a2a/http")
}
