package discovery

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/testenv"
)

// interopDir is the Node project of the official-client interop tests:
// it returns node and the directory, or stops through testenv.Node when
// node or module is not installed there (npm ci --prefix interop/payments).
func interopDir(t *testing.T, module string) (node, dir string) {
	t.Helper()
	dir = filepath.Join("..", "interop", "payments")
	return testenv.Node(t, dir, module), dir
}

// runNode runs a script of interop/payments and returns its JSON lines.
func runNode(t *testing.T, node, dir string, args ...string) ([]map[string]any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if stderr.Len() > 0 {
		t.Logf("node stderr:\n%s", stderr.String())
	}
	var lines []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("node printed %q", sc.Text())
		}
		lines = append(lines, m)
	}
	return lines, err
}

// TestDiscoveryOpenAPIStandardValidator validates every openapi.json of a
// paid and an unpaid server with @readme/openapi-parser.
func TestDiscoveryOpenAPIStandardValidator(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	node, dir := interopDir(t, filepath.Join("@readme", "openapi-parser"))
	for _, paid := range []bool{true, false} {
		e := newDiscoveryEnv(t, paid, nil)
		ts := httptest.NewServer(e.srv)
		var urls []string
		for _, r := range e.docRoutes() {
			if docKind(r.ID) == docOpenAPI {
				urls = append(urls, ts.URL+r.Path)
			}
		}
		lines, err := runNode(t, node, dir, append([]string{"openapi.mjs"}, urls...)...)
		ts.Close()
		if err != nil {
			t.Errorf("paid=%v: node openapi.mjs: %v %v", paid, err, lines)
		}
		if len(lines) != len(urls) {
			t.Fatalf("paid=%v: %d results for %d documents", paid, len(lines), len(urls))
		}
		for _, l := range lines {
			if l["valid"] != true || l["openapi"] != "3.1.0" {
				t.Errorf("paid=%v: %s: %v", paid, l["url"], l["errors"])
			} else {
				t.Logf("paid=%v: %s valid (%v warnings)", paid, strings.TrimPrefix(l["url"].(string), ts.URL), l["warnings"])
			}
		}
	}
}
