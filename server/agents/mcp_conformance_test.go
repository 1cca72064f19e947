package agents

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/testenv"
)

// conformanceDir holds the pinned MCP conformance suite, the Node 22 it
// needs (as the npm package node), and the baseline of the scenarios that
// do not apply to assay, each with its reason.
const conformanceDir = "../../interop/mcp-conformance"

// TestMCPConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance 0.1.16, server scenarios) against
// every MCP endpoint — /mcp, /claim-verification/mcp and
// /niche-discovery/mcp — of a full server on loopback. The suite's own
// baseline check decides: it fails on a scenario that fails without being
// in interop/mcp-conformance/baseline.yml, and on a listed one that passes.
func TestMCPConformance(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	testenv.Node(t, conformanceDir, "@modelcontextprotocol/conformance", "node")
	node, err := filepath.Abs(filepath.Join(conformanceDir, "node_modules", "node", "bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--version").Output(); err != nil || !strings.HasPrefix(string(out), "v22.") {
		testenv.Missing(t, "the Node 22 of %s does not run (%v, %q); run: npm ci --prefix %s", conformanceDir, err, out, conformanceDir)
	}
	cli, _ := filepath.Abs(filepath.Join(conformanceDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	baseline, _ := filepath.Abs(filepath.Join(conformanceDir, "baseline.yml"))
	env := newPaidEnv(t, &envOptions{niche: true})
	for _, path := range []string{"/mcp", "/claim-verification/mcp", "/niche-discovery/mcp"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			dir := t.TempDir()
			cmd := exec.CommandContext(ctx, node, cli, "server", "--url", env.hs.URL+path, "--expected-failures", baseline, "-o", dir)
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
				t.Fatalf("conformance against %s: %v\n%s", path, err, summary)
			}
			if !strings.Contains(summary, "Baseline check passed") {
				t.Fatalf("conformance against %s: no baseline verdict\n%s", path, summary)
			}
			for _, line := range strings.Split(summary, "\n") {
				if strings.HasPrefix(line, "Total:") || strings.Contains(line, "Baseline check") {
					t.Logf("%s: %s", path, strings.TrimSpace(line))
				}
			}
		})
	}
}
