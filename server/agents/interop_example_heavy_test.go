//go:build heavy

package agents

// The interop test against the examples/server binary builds it and starts
// it as its own process, so it is heavy: go test -tags heavy runs it
// (.ci/run does, in its own step).

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
)

// exampleServer builds the examples/server binary and starts it on a
// loopback port with its defaults and nothing from the environment (dev-mode
// payments with its default payee, the offline demo corpus served on
// loopback, the demo niche catalogue, discovery documents, MCP and A2A),
// in a fresh data directory. It returns the base URL and stops the server
// when the test ends.
func exampleServer(t *testing.T) string {
	t.Helper()
	goBin := testenv.Command(t, "go", "install Go")
	dir := t.TempDir()
	bin := filepath.Join(dir, "assay-example")
	build := exec.Command(goBin, "build", "-o", bin, "./examples/server")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/server: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", filepath.Join(dir, "data"), "-provider", "corpus", "-log-level", "warn",
		"-shutdown-wait", "5s")
	// Nothing from the test's environment: no OPENAI_API_KEY, no
	// facilitator, no ASSAY_* setting.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	logs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	// The log is on stderr; its first line (at every level) names the
	// address. Wait reaps the process once the log is read to its end.
	baseCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			stderr.add(sc.Text())
			if m := listeningLine.FindStringSubmatch(sc.Text()); m != nil && len(baseCh) == 0 {
				baseCh <- m[1]
			}
		}
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("examples/server stderr:\n%s", stderr.String())
		}
	})

	select {
	case base := <-baseCh:
		return base
	case err := <-done:
		t.Fatalf("examples/server exited: %v\n%s", err, stderr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("examples/server did not start\n%s", stderr.String())
	}
	return ""
}

// listeningLine finds the address in examples/server's first log line.
var listeningLine = regexp.MustCompile(`assay listening on (http://[^\s"]+)`)

// syncLog collects log lines while a test may read them.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(line + "\n")
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// orderStatus reads an order with its token over HTTP.
func orderStatus(t *testing.T, base, id, token string) (status string, dev bool) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/orders/"+id, nil)
	req.Header.Set(httpgate.HeaderOrderToken, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var o struct {
		Status string `json:"status"`
		Dev    bool   `json:"dev"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || resp.StatusCode != 200 {
		t.Fatalf("order %s: %d %v", id, resp.StatusCode, err)
	}
	return o.Status, o.Dev
}

// The official MCP and A2A clients against the example server itself, as
// it runs out of the box: tools (niche tools included), payment with real
// EIP-3009 signatures in dev mode, progress, the served agent card, the
// order trail readable with the order tokens.
func TestInteropExampleServer(t *testing.T) {
	node := agentsNode(t)
	base := exampleServer(t)
	// A claim the demo corpus covers.
	const claim = "The Base mainnet chain ID is 8453."
	t.Run("mcp", func(t *testing.T) {
		out := runAgent(t, node, "mcp.mjs", base+"/mcp", "--claim", claim) // the root endpoint: every tool
		cm := checkMCPInterop(t, out, base, []any{"get_niche", "list_verification_tiers", "search_niches", "verify_claim",
			"verify_claim_deep", "verify_claim_quick", "verify_claim_research"})
		if st, dev := orderStatus(t, base, cm["orderId"].(string), cm["orderToken"].(string)); st != string(payment.OrderCompleted) || !dev {
			t.Errorf("order %v: %s dev=%v", cm["orderId"], st, dev)
		}
	})
	t.Run("a2a", func(t *testing.T) {
		servedCard(t, base)
		out := runAgent(t, node, "a2a.mjs", base+"/claim-verification", "--claim", claim)
		checkA2AInterop(t, out, base)
		paid := out["paid"].(map[string]any)
		for id, token := range map[string]string{paid["orderId"].(string): paid["orderToken"].(string),
			out["streamOrderId"].(string): out["streamOrderToken"].(string)} {
			if st, dev := orderStatus(t, base, id, token); st != string(payment.OrderCompleted) || !dev {
				t.Errorf("order %s: %s dev=%v", id, st, dev)
			}
		}
	})
}
