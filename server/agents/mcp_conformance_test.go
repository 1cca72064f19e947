package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformanceDir holds the pinned MCP conformance suites, the Node 22 they
// need (as the npm package node), and a baseline per suite of the
// scenarios that do not apply to assay, each with its reason.
const conformanceDir = "../../interop/mcp-conformance"

// conformanceSuite is one official MCP conformance suite: its package
// under conformanceDir's node_modules, the arguments that choose the
// protocol revision, and its baseline.
type conformanceSuite struct {
	revision string // protocol revision the suite checks
	pkg      string // directory under node_modules
	args     []string
	baseline string
}

var conformanceSuites = []conformanceSuite{
	// 0.1.16, the active server suite, negotiates 2025-11-25 (the
	// initialize handshake).
	{revision: "2025-11-25", pkg: "@modelcontextprotocol/conformance", baseline: "baseline-2025-11-25.yml"},
	// 0.2.0-alpha.12 with the requirement set of 2026-07-28: stateless,
	// server/discover, per-request _meta, header validation, caching
	// hints, multi-round input requests.
	{revision: "2026-07-28", pkg: "conformance-2026-07-28", args: []string{"--requirements", "2026-07-28"}, baseline: "baseline-2026-07-28.yml"},
}

// TestMCPConformance runs both official MCP conformance suites
// (@modelcontextprotocol/conformance 0.1.16 for protocol 2025-11-25 and
// 0.2.0-alpha.12 with --requirements 2026-07-28) against every MCP
// endpoint — /mcp, /claim-verification/mcp and /niche-discovery/mcp — of
// a full server on loopback in conformance mode: the product's endpoints
// with the suites' diagnostic tools, prompts and resources added (see
// conformanceFixtures; only tests can add them). Each suite's own
// baseline check decides: it fails on a scenario (or check) that fails
// without being in its baseline file, and on a listed one that passes.
// TestMCPDeclaresWhatItAnswers checks the same endpoints without the
// fixtures.
func TestMCPConformance(t *testing.T) {
	t.Parallel() // waits (on child processes) rather than computes
	testenv.Node(t, conformanceDir, "@modelcontextprotocol/conformance", "conformance-2026-07-28", "node")
	node, err := filepath.Abs(filepath.Join(conformanceDir, "node_modules", "node", "bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--version").Output(); err != nil || !strings.HasPrefix(string(out), "v22.") {
		testenv.Missing(t, "the Node 22 of %s does not run (%v, %q); run: npm ci --prefix %s", conformanceDir, err, out, conformanceDir)
	}
	env := newPaidEnv(t, &envOptions{niche: true, config: func(c *Config) { c.MCP.conformance = conformanceFixtures() }})
	for _, suite := range conformanceSuites {
		cli, _ := filepath.Abs(filepath.Join(conformanceDir, "node_modules", suite.pkg, "dist", "index.js"))
		baseline, _ := filepath.Abs(filepath.Join(conformanceDir, suite.baseline))
		for _, path := range []string{"/mcp", "/claim-verification/mcp", "/niche-discovery/mcp"} {
			t.Run(suite.revision+strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				dir := t.TempDir()
				args := append([]string{cli, "server", "--url", env.hs.URL + path}, suite.args...)
				args = append(args, "--expected-failures", baseline, "-o", dir)
				cmd := exec.CommandContext(ctx, node, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "NO_COLOR=1")
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				summary := out.String()
				if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
					summary = summary[i:]
				}
				if err != nil {
					t.Fatalf("conformance %s against %s: %v\n%s\nfailed checks:\n%s", suite.revision, path, err, summary, failedChecks(dir))
				}
				if !strings.Contains(summary, "Baseline check passed") {
					t.Fatalf("conformance %s against %s: no baseline verdict\n%s", suite.revision, path, summary)
				}
				for _, line := range strings.Split(summary, "\n") {
					if strings.HasPrefix(line, "Total:") || strings.Contains(line, "Baseline check") {
						t.Logf("%s %s: %s", suite.revision, path, strings.TrimSpace(line))
					}
				}
			})
		}
	}
}

// failedChecks lists the checks that did not pass in the results a
// conformance run wrote under dir (one checks.json per scenario).
func failedChecks(dir string) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var checks []struct{ ID, Status, ErrorMessage string }
		if json.Unmarshal(raw, &checks) != nil {
			continue
		}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				fmt.Fprintf(&b, "  %s %s: %s\n", filepath.Base(filepath.Dir(f)), c.ID, c.ErrorMessage)
			}
		}
	}
	return b.String()
}

// TestMCPDeclaresWhatItAnswers checks what the product's MCP endpoints
// (no conformance fixtures) declare, on both protocol revisions: exactly
// the capabilities whose methods they answer — tools, and prompts and
// resources, whose lists are empty — with no listChanged, subscriptions
// or completions; and that the lists and completion/complete answer
// accordingly. Protocol 2026-07-28 requires a server that handles
// prompts to declare them in server/discover; the conformance test server
// declares the same (its fixtures add entries, never capabilities), so
// this test is what would catch a declaration the fixtures hid.
func TestMCPDeclaresWhatItAnswers(t *testing.T) {
	env := newPaidEnv(t, &envOptions{niche: true})
	want := `{"prompts":{},"resources":{},"tools":{}}`
	for _, path := range []string{"/mcp", "/claim-verification/mcp", "/niche-discovery/mcp"} {
		// 2026-07-28: the Go client discovers (server/discover).
		cs := env.mcpSession(path, nil)
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("%s: the Go client negotiated %q, want 2026-07-28 (server/discover)", path, v)
		}
		got, _ := json.Marshal(cs.InitializeResult().Capabilities)
		if string(got) != want {
			t.Errorf("%s: server/discover declares %s, want %s", path, got, want)
		}
		ctx := context.Background()
		prompts, err := cs.ListPrompts(ctx, nil)
		if err != nil || len(prompts.Prompts) != 0 {
			t.Errorf("%s: prompts/list = %+v, %v; want an empty list", path, prompts, err)
		}
		res, err := cs.ListResources(ctx, nil)
		if err != nil || len(res.Resources) != 0 {
			t.Errorf("%s: resources/list = %+v, %v; want an empty list", path, res, err)
		}
		if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "x"},
			Argument: mcp.CompleteParamsArgument{Name: "a", Value: "b"}}); err == nil || !strings.Contains(err.Error(), "method not found") {
			t.Errorf("%s: completion/complete = %v; want method not found", path, err)
		}
		// 2025-11-25: initialize.
		st, body := env.post(path, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
			map[string]string{"Accept": "application/json, text/event-stream"})
		var msg struct {
			Result struct{ Capabilities json.RawMessage } `json:"result"`
		}
		_, data, _ := strings.Cut(string(body), "data: ") // one SSE event
		data, _, _ = strings.Cut(data, "\n")
		if err := json.Unmarshal([]byte(data), &msg); st != 200 || err != nil {
			t.Fatalf("%s: initialize: %d %s (%v)", path, st, body, err)
		}
		var caps map[string]any
		_ = json.Unmarshal(msg.Result.Capabilities, &caps)
		got, _ = json.Marshal(caps)
		if string(got) != want {
			t.Errorf("%s: initialize declares %s, want %s", path, got, want)
		}
	}
}
