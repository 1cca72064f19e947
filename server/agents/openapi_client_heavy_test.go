//go:build heavy

package agents

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/assaykit/assay/discovery"
	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/google/go-cmp/cmp"
)

// testAdminKey is the admin key of the server the generated client calls.
const testAdminKey = "admin-secret"

// openapiDir holds the pinned openapi-typescript, openapi-fetch and
// TypeScript, and the client program (client.ts).
const openapiDir = "../../interop/openapi"

// TestGeneratedClientCallsProtectedOperations generates a TypeScript client
// from the served documents of both services with openapi-typescript,
// type-checks interop/openapi/client.ts against it (every credential it
// sends must be a declared header parameter) and runs it with
// openapi-fetch: it reads an order, its result and its verification with
// the order token, a customer's orders with the customer key, the order
// under the niche prefix, a niche evaluation with an unlock token, and
// gets the 402 of an unpaid call. It is a heavy test: generating and
// type-checking the client costs about 5 s of CPU in Node.
func TestGeneratedClientCallsProtectedOperations(t *testing.T) {
	t.Parallel() // waits for its Node processes
	node := testenv.Node(t, openapiDir, "openapi-typescript", "openapi-fetch", "typescript")
	lib, err := filepath.Abs(filepath.Join(openapiDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	env := newPaidEnv(t, &envOptions{niche: true, config: func(c *Config) {
		c.Discovery = DiscoveryConfig{Enabled: true, PublicBaseURL: agentsTestBase}
		c.AdminKey = testAdminKey
	}})
	st, _, b := env.do("POST", "/v1/admin/customers", `{"name":"Client"}`, map[string]string{"X-Admin-Key": testAdminKey})
	var cu struct{ APIKey string }
	if err := json.Unmarshal(b, &cu); st != 200 || err != nil {
		t.Fatalf("customer: %d %s", st, b)
	}
	st, hd, b := env.do("POST", "/claim-verification/v1/claims/verify", `{"claim":"The Base mainnet chain ID is 8453."}`,
		map[string]string{gatetest.Header: gatetest.Credential("0xclient", "client-1"), "X-Agentic-Customer-Key": cu.APIKey})
	var res struct{ VerificationID string }
	if err := json.Unmarshal(b, &res); st != 200 || err != nil {
		t.Fatalf("paid call: %d %s", st, b)
	}
	orderID, token := hd.Get("X-Agentic-Order-Id"), hd.Get("X-Agentic-Order-Token")
	nicheID := env.someNiche().ID
	st, _, b = env.do("GET", "/niche-discovery/v1/niches/"+nicheID+"/pay-per-call", "",
		map[string]string{gatetest.Header: gatetest.Credential("0xclient", "client-2")})
	var full struct{ Access struct{ UnlockToken string } }
	if err := json.Unmarshal(b, &full); st != 200 || err != nil {
		t.Fatalf("niche purchase: %d %s", st, b)
	}

	dir := t.TempDir()
	if err := os.Symlink(lib, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(openapiDir, "client.ts"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"client.ts":    string(src),
		"package.json": `{"type":"module"}`,
		"tsconfig.json": `{"compilerOptions":{"target":"ES2022","module":"ES2022","moduleResolution":"Bundler","strict":true,` +
			`"skipLibCheck":true,"outDir":"out","rootDir":"."},"files":["client.ts"]}`,
	}
	for name, docPath := range map[string]string{"claims": "/claim-verification", "niche": "/niche-discovery"} {
		_, doc := env.get(docPath+discovery.PathOpenAPI, nil)
		files[name+".json"] = string(doc)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(node, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for _, name := range []string{"claims", "niche"} {
		// --default-non-nullable=false: a member with a default is
		// optional in a request (openapi-typescript makes it required by
		// default, which suits responses only).
		run(filepath.Join(lib, "openapi-typescript", "bin", "cli.js"), name+".json", "-o", name+".d.ts", "--default-non-nullable=false")
	}
	run(filepath.Join(lib, "typescript", "bin", "tsc"), "-p", ".")
	out := run(filepath.Join("out", "client.js"), env.hs.URL, orderID, token, res.VerificationID, cu.APIKey, nicheID, full.Access.UnlockToken)
	var got map[string]map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	want := map[string]map[string]any{
		"order":          {"status": 200.0, "orderId": orderID, "orderStatus": "completed"},
		"refused":        {"status": 404.0, "detail": "Order not found"},
		"result":         {"status": 200.0},
		"verification":   {"status": 200.0, "verificationId": res.VerificationID},
		"customerOrders": {"status": 200.0, "count": 1.0},
		"nicheOrder":     {"status": 200.0},
		"niche":          {"status": 200.0, "id": nicheID, "access": "pay_per_call"},
		"unpaid":         {"status": 402.0, "type": "application/problem+json"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("generated client (-want +got):\n%s", diff)
	}
}
