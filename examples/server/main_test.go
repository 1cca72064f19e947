package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/sqlite"
)

// startServer runs the example server on a free loopback port with its data
// in a temporary directory and returns its base URL.
func startServer(t *testing.T, extraEnv map[string]string) string {
	t.Helper()
	base, _ := startServerOut(t, extraEnv, nil)
	return base
}

// startServerOut is startServer with command-line args that also returns
// what the server logged by the time it was ready.
func startServerOut(t *testing.T, extraEnv map[string]string, args []string) (base, logs string) {
	t.Helper()
	base, logs, _ = startServerLogs(t, extraEnv, args)
	return base, logs
}

// startServerLogs starts the server on a free loopback port, with its data
// in a temporary directory, at log level warn and without the demo niche
// catalogue unless env says otherwise (loading the demo, with its evidence
// captures, is most of a start's cost: the tests about the catalogue turn
// it on).
// It returns the base URL, the log up to the ready line, and the live log.
func startServerLogs(t *testing.T, extraEnv map[string]string, args []string) (string, string, *syncBuffer) {
	t.Helper()
	env := map[string]string{"ASSAY_ADDR": "127.0.0.1:0", "ASSAY_DATA": t.TempDir(), "ASSAY_LOG_LEVEL": "warn", "ASSAY_NICHE_DEMO": "false"}
	for k, v := range extraEnv {
		env[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	out := &syncBuffer{}
	go func() { done <- run(ctx, args, func(k string) string { return env[k] }, out, ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	select {
	case base := <-ready:
		logs := out.String() // run logged "assay ready" before sending on ready
		waitIndexLoaded(t, base)
		return base, logs, out
	case err := <-done:
		done <- err // for the cleanup, which waits for run to return
		t.Fatalf("server stopped: %v\n%s", err, out.String())
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start")
	}
	return "", "", nil
}

// waitIndexLoaded waits until the niche search index, which loads in the
// background, is loaded (/readyz's niche check no longer says so), so
// that the tests' readiness checks see the other checks alone.
func waitIndexLoaded(t *testing.T, base string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(body), "search index") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the search index did not load: %s", body)
		}
	}
}

// syncBuffer is a bytes.Buffer that several goroutines may write.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestServerAnswersHealthAndCapabilities(t *testing.T) {
	t.Parallel()
	base, out := startServerOut(t, nil, nil)
	// The first line names the address; the ready line the store and a
	// loud dev-mode notice. Both show at -log-level warn.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if want := `msg="assay listening on ` + base + `"`; !strings.Contains(lines[0], want) {
		t.Fatalf("first line %q lacks %q", lines[0], want)
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, `msg="assay ready: open `+base+`/`) || !strings.Contains(last, "store=sqlite") ||
		!strings.Contains(last, `payments="DEV MODE"`) {
		t.Fatalf("ready line %q", last)
	}
	res, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"status":"ok"}` {
		t.Fatalf("healthz: %d %s", res.StatusCode, body)
	}
	res, err = http.Get(base + "/v1/capabilities")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var caps struct {
		Service      string `json:"service"`
		Capabilities []struct {
			ID, Path string
		} `json:"capabilities"`
	}
	if err := json.NewDecoder(res.Body).Decode(&caps); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || caps.Service == "" || len(caps.Capabilities) == 0 {
		t.Fatalf("capabilities: %d %+v", res.StatusCode, caps)
	}
	// A request is observed once its handler has returned, which may be
	// just after the client read the answer: scrape until it shows (30 s
	// bounds a loaded machine; it shows within milliseconds).
	const healthLine = `assay_http_requests_total{method="GET",route="health.live",status="200"} 1`
	var mb []byte
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		res, err = http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		mb, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("metrics: %d\n%s", res.StatusCode, mb)
		}
		if strings.Contains(string(mb), healthLine) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics lack %q:\n%s", healthLine, mb)
		}
	}
	res, err = http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("readyz: %d", res.StatusCode)
	}
}

func TestHelpAndBadConfig(t *testing.T) {
	t.Parallel()
	var errOut bytes.Buffer
	if err := run(context.Background(), []string{"-help"}, func(string) string { return "" }, &errOut, nil); !errors.Is(err, flag.ErrHelp) || exitCode(err) != 0 {
		t.Fatalf("-help: %v (exit status %d)", err, exitCode(err))
	}
	if !strings.Contains(errOut.String(), "ASSAY_ADDR") || !strings.Contains(errOut.String(), "ASSAY_FACILITATOR_URL") {
		t.Fatalf("help does not name the environment variables:\n%s", errOut.String())
	}
	// Payment settings that are not secrets have flags; secrets do not.
	for _, want := range []string{"-payee", "(env ASSAY_PAYEE_ADDRESS)", "-network", "-facilitator-url", "-mpp-realm", "-dev-mode",
		"-metrics-addr", "-claims-prefix", "-claims-service-slug", "ASSAY_MPP_SECRET", "ASSAY_FACILITATOR_AUTH"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
	for _, secret := range []string{"-mpp-secret", "-facilitator-auth", "-receipt-key", "-admin-key", "-stripe"} {
		if strings.Contains(errOut.String(), secret) {
			t.Errorf("help offers a flag for a secret: %q", secret)
		}
	}
	err := run(context.Background(), nil, func(k string) string {
		return map[string]string{"ASSAY_LOG_LEVEL": "loud", "ASSAY_DATA": t.TempDir()}[k]
	}, io.Discard, nil)
	if err == nil || exitCode(err) != 2 {
		t.Fatalf("bad log level: %v", err)
	}
}

func TestDiscoveryDocumentsServed(t *testing.T) {
	t.Parallel()
	base := startServer(t, nil)
	for _, p := range []string{
		"/openapi.json", "/.well-known/agent-service.json", "/.well-known/x402",
		"/claim-verification/openapi.json", "/claim-verification/.well-known/agent-service.json",
		"/niche-discovery/openapi.json",
	} {
		res, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		err = json.NewDecoder(res.Body).Decode(&doc)
		res.Body.Close()
		if res.StatusCode != 200 || err != nil || res.Header.Get("ETag") == "" {
			t.Errorf("%s: %d %v etag=%q", p, res.StatusCode, err, res.Header.Get("ETag"))
		}
	}
	// The 402 of a paid route carries the bazaar extension (x402 crawlers).
	res, err := http.Post(base+"/v1/claims/verify", "application/json", strings.NewReader(`{"claim":"The Base mainnet chain ID is 8453."}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var pr struct {
		Extensions map[string]any `json:"extensions"`
	}
	if err := x402.DecodeHeader(res.Header.Get("Payment-Required"), &pr); err != nil || pr.Extensions["bazaar"] == nil {
		t.Fatalf("402 without bazaar extension: %v %v", err, pr.Extensions)
	}
}

// runErr runs the server with env and returns its start-up error (nil if it
// started; it is then stopped).
func runErr(t *testing.T, env map[string]string) error {
	t.Helper()
	full := map[string]string{"ASSAY_ADDR": "127.0.0.1:0", "ASSAY_DATA": t.TempDir(), "ASSAY_LOG_LEVEL": "error"}
	for k, v := range env {
		full[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return full[k] }, io.Discard, ready) }()
	select {
	case <-ready:
		cancel()
		return <-done
	case err := <-done:
		return err
	}
}

func TestProductionConfigurationRules(t *testing.T) {
	t.Parallel()
	prod := map[string]string{
		"ASSAY_FACILITATOR_URL": "http://127.0.0.1:1", "ASSAY_PAYEE_ADDRESS": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		"ASSAY_MPP_SECRET": strings.Repeat("s", 32), "ASSAY_PUBLIC_BASE_URL": "https://api.example.com",
	}
	with := func(extra map[string]string, drop ...string) map[string]string {
		out := map[string]string{}
		for k, v := range prod {
			out[k] = v
		}
		for _, k := range drop {
			delete(out, k)
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	if err := runErr(t, prod); err != nil {
		t.Fatalf("complete production configuration refused: %v", err)
	}
	if err := runErr(t, with(nil, "ASSAY_PUBLIC_BASE_URL")); err == nil || !strings.Contains(err.Error(), "ASSAY_PUBLIC_BASE_URL") {
		t.Fatalf("production without a public base URL: %v", err)
	}
	if err := runErr(t, with(nil, "ASSAY_MPP_SECRET")); err == nil {
		t.Fatal("production without an MPP secret started")
	}
	if err := runErr(t, with(map[string]string{"ASSAY_STRIPE_PRICE_ID": "price_1"})); err == nil {
		t.Fatal("a partial Stripe subscription configuration started")
	}
}

func TestSubscriptionsOnlyFreeInDevMode(t *testing.T) {
	t.Parallel()
	// Dev mode: the development billing backend is mounted.
	base := startServer(t, nil)
	res, err := http.Get(base + "/v1/subscription/status")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("dev-mode subscription status: %d", res.StatusCode)
	}
	// Production without a Stripe price: no subscription routes at all,
	// never the free development backend.
	base = startServer(t, map[string]string{
		"ASSAY_FACILITATOR_URL": "http://127.0.0.1:1", "ASSAY_PAYEE_ADDRESS": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		"ASSAY_MPP_SECRET": strings.Repeat("s", 32), "ASSAY_PUBLIC_BASE_URL": "https://api.example.com",
		"ASSAY_STRIPE_SECRET_KEY": "sk_test_key_only",
	})
	res, err = http.Post(base+"/v1/subscription/checkout", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Fatalf("production checkout without Stripe subscriptions: %d, want 404", res.StatusCode)
	}
}

func TestAgentTransportsServed(t *testing.T) {
	t.Parallel()
	base := startServer(t, nil)
	// MCP: initialize over streamable HTTP (answered as server-sent events).
	if b := mcpInitialize(t, base); !strings.Contains(b, `"protocolVersion"`) {
		t.Fatalf("mcp initialize: %s", b)
	}
	// A2A: the agent card and its discovery siblings exist.
	for _, p := range []string{"/claim-verification/.well-known/agent-card.json", "/claim-verification/.well-known/mcp/server.json"} {
		res, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", p, res.StatusCode)
		}
	}
	// A2A SendMessage without payment: 402 at the standard price.
	req, _ := http.NewRequest("POST", base+"/claim-verification/a2a", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"The Base mainnet chain ID is 8453."}]}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 402 || res.Header.Get("Payment-Required") == "" {
		t.Fatalf("a2a unpaid: %d", res.StatusCode)
	}
}

func TestSecondProcessOnTheSameDataRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	startServer(t, map[string]string{"ASSAY_DATA": dir})
	err := runErr(t, map[string]string{"ASSAY_DATA": dir})
	if err == nil || !strings.Contains(err.Error(), "in use by another assay process") {
		t.Fatalf("second process on one SQLite data directory: %v", err)
	}
}

// TestStartReleasesLeasesOfACrash: a claims idempotency lease left pending
// by a killed process is released when the server starts on its own data
// directory, so a retry with the same Idempotency-Key runs at once.
func TestStartReleasesLeasesOfACrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "assay.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	key := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Standard, Key: "killed-mid-call"}
	if st, err := claimsstore.New(db).AcquireIdempotency(ctx, key, "h1", time.Now(), time.Hour); err != nil || st.Lease == nil {
		t.Fatal(st, err)
	}
	db.Close()

	startServer(t, map[string]string{"ASSAY_DATA": dir})
	db, err = sqlite.Open(ctx, filepath.Join(dir, "assay.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := claimsstore.New(db).AcquireIdempotency(ctx, key, "h1", time.Now(), time.Minute)
	if err != nil || st.Lease == nil {
		t.Fatalf("after a start on the same data: %+v %v, want the key free", st, err)
	}
}
