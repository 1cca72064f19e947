package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/evm"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/sqlite"
)

const testPayee = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

// production returns a complete production configuration with the given
// facilitator URL (a loopback address: no traffic leaves the machine).
func production(facilitator string) map[string]string {
	return map[string]string{
		"ASSAY_FACILITATOR_URL": facilitator, "ASSAY_PAYEE_ADDRESS": testPayee,
		"ASSAY_MPP_SECRET": strings.Repeat("s", 32), "ASSAY_PUBLIC_BASE_URL": "https://api.example.com",
	}
}

// status sends method url with body and returns the status and body.
func status(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestClaimsPrefixAndSlugMoveTheRoutes: -claims-prefix moves the claim
// routes, the snapshots and the agent endpoints; -claims-service-slug moves
// the legacy aliases. The old places are 404.
func TestClaimsPrefixAndSlugMoveTheRoutes(t *testing.T) {
	t.Parallel()
	base := startServer(t, map[string]string{"ASSAY_CLAIMS_PREFIX": "/evidence", "ASSAY_CLAIMS_SERVICE_SLUG": "web-evidence"})
	claim := `{"claim":"The Base mainnet chain ID is 8453."}`
	for _, tc := range []struct {
		method, path, body string
		status             int
		detail             string
	}{
		{"POST", "/evidence/v1/claims/verify", claim, 402, ""},
		{"POST", "/v1/claims/verify", claim, 402, ""},
		{"POST", "/v1/services/web-evidence/claims/verify/deep", claim, 402, ""},
		{"POST", "/evidence/v1/services/web-evidence/claims/verify", claim, 402, ""},
		{"POST", "/claim-verification/v1/claims/verify", claim, 404, `{"detail":"Not Found"}`},
		{"POST", "/v1/services/claim-verification/claims/verify", claim, 404, ""},
		// Snapshots follow the claims prefix (a known route: the record is
		// what is missing).
		{"GET", "/evidence/v1/url-snapshots/snap_unknown", "", 404, `{"detail":"Snapshot not found"}`},
		{"GET", "/claim-verification/v1/url-snapshots/snap_unknown", "", 404, `{"detail":"Not Found"}`},
		{"GET", "/evidence/openapi.json", "", 200, ""},
		{"GET", "/evidence/.well-known/agent-card.json", "", 200, ""},
		{"GET", "/claim-verification/openapi.json", "", 404, ""},
	} {
		got, body := status(t, tc.method, base+tc.path, tc.body)
		if got != tc.status || (tc.detail != "" && strings.TrimSpace(body) != tc.detail) {
			t.Errorf("%s %s: %d %.200s, want %d %s", tc.method, tc.path, got, body, tc.status, tc.detail)
		}
	}
}

// readyz returns /readyz's status and checks.
func readyz(t *testing.T, base string) (int, map[string]string) {
	t.Helper()
	code, body := status(t, "GET", base+"/readyz", "")
	var r struct {
		Checks map[string]string `json:"checks"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("readyz body %q: %v", body, err)
	}
	return code, r.Checks
}

// TestReadinessOfProductionPayments: /readyz is 503 while the facilitator
// does not answer, and 200 once one that settles on the network does.
func TestReadinessOfProductionPayments(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	base := startServer(t, production(closed))
	code, checks := readyz(t, base)
	if code != 503 || !strings.Contains(checks["payments"], "facilitator did not answer /supported") {
		t.Fatalf("facilitator on a closed port: %d %v", code, checks)
	}
	for _, ok := range []string{"store", "claims", "niche"} {
		if checks[ok] != "ok" {
			t.Errorf("check %s: %q", ok, checks[ok])
		}
	}

	fac := paymenttest.NewFacilitator(t)
	fac.SetNetworks([]string{"eip155:8453"})
	base = startServer(t, production(fac.URL))
	for range 2 {
		if code, checks := readyz(t, base); code != 200 {
			t.Fatalf("facilitator answering: %d %v", code, checks)
		}
	}
	if n := len(fac.Calls("/supported")); n != 1 {
		t.Fatalf("facilitator probed %d times for two /readyz, want 1 (cached)", n)
	}

	// A facilitator that does not take payments on our network: not
	// ready, and paid routes answer 503 (no challenge to pay) while free
	// routes work.
	other := paymenttest.NewFacilitator(t)
	other.SetNetworks([]string{"eip155:84532"})
	base = startServer(t, production(other.URL))
	code, checks = readyz(t, base)
	if code != 503 || !strings.Contains(checks["payments"], "does not list exact payments on eip155:8453") {
		t.Fatalf("facilitator without our network: %d %v", code, checks)
	}
	resp, err := http.Post(base+"/v1/claims/verify", "application/json", strings.NewReader(`{"claim":"Base mainnet uses chain ID 8453."}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Payment-Required") != "" ||
		!strings.Contains(string(body), "does not accept payments on this network") || strings.Contains(string(body), other.URL[len("http://"):]) {
		t.Fatalf("paid route with an unsupported network: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if r, err := http.Get(base + "/v1/niches"); err != nil || r.StatusCode != 200 {
		t.Fatalf("free route: %v %v", r, err)
	} else {
		r.Body.Close()
	}
}

// TestProductionWithoutFacilitatorRefused: a payee or a public base URL
// without a facilitator no longer falls back to dev mode silently.
func TestProductionWithoutFacilitatorRefused(t *testing.T) {
	t.Parallel()
	for _, env := range []map[string]string{
		{"ASSAY_PAYEE_ADDRESS": testPayee},
		{"ASSAY_PUBLIC_BASE_URL": "https://api.example.com"},
	} {
		if err := runErr(t, env); err == nil || !strings.Contains(err.Error(), "production payments need a facilitator") {
			t.Errorf("%v: %v", env, err)
		}
	}
	env := map[string]string{"ASSAY_PAYEE_ADDRESS": testPayee, "ASSAY_DEV_MODE": "true"}
	if _, out := startServerOut(t, env, nil); !strings.Contains(out, `payments="DEV MODE"`) {
		t.Fatalf("explicit dev mode: %q", out)
	}
}

// TestMetricsOnSeparateListener: with -metrics-addr, /metrics is served
// there only; the API port answers 404.
func TestMetricsOnSeparateListener(t *testing.T) {
	t.Parallel()
	base, out := startServerOut(t, nil, []string{"-metrics-addr", "127.0.0.1:0"})
	m := regexp.MustCompile(`assay listening on \S+ metrics=(http://127\.0\.0\.1:\d+/metrics)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("metrics address not printed: %q", out)
	}
	if code, body := status(t, "GET", base+"/metrics", ""); code != 404 || strings.TrimSpace(body) != `{"detail":"Not Found"}` {
		t.Fatalf("/metrics on the API port: %d %s", code, body)
	}
	if code, _ := status(t, "GET", base+"/healthz", ""); code != 200 {
		t.Fatalf("healthz: %d", code)
	}
	code, body := status(t, "GET", m[1], "")
	if code != 200 || !strings.Contains(body, "assay_http_requests_total") {
		t.Fatalf("metrics listener: %d %.300s", code, body)
	}
	u, _ := url.Parse(m[1])
	if code, _ := status(t, "GET", "http://"+u.Host+"/healthz", ""); code != 404 {
		t.Fatalf("the metrics listener serves the API: %d", code)
	}
	// The cleanup stops the server: run must return nil (both listeners
	// shut down gracefully).
}

// TestShutdownFinishesInFlightPaidCalls: twelve paid research-tier calls
// are inside the server (each handler reading its body) when shutdown
// starts; the listener closes, then the bodies arrive, and every call is
// still verified, settled and answered 200 with a receipt; run returns nil
// and every order is completed in the database.
func TestShutdownFinishesInFlightPaidCalls(t *testing.T) {
	t.Parallel()
	const calls = 12
	dir := t.TempDir()
	base, cancel, done := runUntilCancelled(t, map[string]string{"ASSAY_ADDR": "127.0.0.1:0", "ASSAY_DATA": dir, "ASSAY_LOG_LEVEL": "warn"})
	defer cancel()
	const path = "/v1/claims/verify/research"
	body := []byte(`{"claim":"The Base mainnet chain ID is 8453.","minimumSources":1}`)

	// One credential per call, each from its own wallet, signed up front.
	creds := make([]string, calls)
	for i := range creds {
		creds[i] = payFresh(t, base+path, body)
	}

	// Each request announces its body (Expect: 100-continue); the server
	// asks for it when the handler starts reading, and the test holds it
	// back until shutdown has begun.
	tr := &http.Transport{ExpectContinueTimeout: time.Hour, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	type answer struct {
		res  *http.Response
		body []byte
		err  error
	}
	inside := make(chan int, calls)
	answers := make(chan answer, calls)
	writers := make([]*io.PipeWriter, calls)
	for i := range calls {
		pr, pw := io.Pipe()
		writers[i] = pw
		req, _ := http.NewRequest("POST", base+path, pr)
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Expect", "100-continue")
		req.Header.Set("Payment-Signature", creds[i])
		req = req.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			Got100Continue: func() { inside <- i },
		}))
		go func() {
			res, err := client.Do(req)
			a := answer{res: res, err: err}
			if err == nil {
				a.body, a.err = io.ReadAll(res.Body)
				res.Body.Close()
			}
			answers <- a
		}()
	}
	for range calls {
		select {
		case <-inside:
		case a := <-answers:
			t.Fatalf("a call ended before its body was sent: %+v", a)
		case <-time.After(time.Minute):
			t.Fatal("the calls did not reach their handlers")
		}
	}

	cancel() // SIGTERM
	// Shutdown closes the listener first: wait until a new connection is
	// refused, so that the work below happens during the shutdown.
	addr := strings.TrimPrefix(base, "http://")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener stayed open after cancellation")
		}
	}
	for _, w := range writers {
		go func() {
			_, _ = w.Write(body)
			w.Close()
		}()
	}

	var orders []string
	for range calls {
		a := <-answers
		if a.err != nil {
			t.Errorf("call failed during shutdown: %v", a.err)
			continue
		}
		if a.res.StatusCode != 200 || a.res.Header.Get("X-Agentic-Receipt-Id") == "" || a.res.Header.Get("X-Agentic-Order-Id") == "" {
			t.Errorf("answer during shutdown: %d %v %.200s", a.res.StatusCode, a.res.Header, a.body)
			continue
		}
		var settled x402.SettleResponse
		if err := x402.DecodeHeader(a.res.Header.Get("Payment-Response"), &settled); err != nil || !settled.Success || settled.Amount != "250000" {
			t.Errorf("payment response: %+v %v", settled, err)
		}
		orders = append(orders, a.res.Header.Get("X-Agentic-Order-Id"))
	}
	if err := <-done; err != nil {
		t.Fatalf("run after shutdown: %v", err)
	}

	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "assay.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range orders {
		o, err := paymentstore.New(db).Order(context.Background(), id)
		if err != nil || o.Status != "completed" || o.ReceiptID == "" || o.SettlementRef == "" {
			t.Errorf("order %s after shutdown: %+v %v", id, o, err)
		}
	}
	if len(orders) != calls {
		t.Fatalf("%d of %d paid calls answered with a receipt", len(orders), calls)
	}
}

// runUntilCancelled runs the server with env until cancel is called (a
// SIGTERM): it returns the base URL once the server is ready, and done,
// which receives what run returned.
func runUntilCancelled(t *testing.T, env map[string]string) (base string, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	d := make(chan error, 1)
	go func() { d <- run(ctx, nil, func(k string) string { return env[k] }, io.Discard, ready) }()
	select {
	case base = <-ready:
	case err := <-d:
		cancel()
		t.Fatalf("server stopped: %v", err)
	}
	return base, cancel, d
}

// payFresh asks url for payment with body and returns an x402 v2
// credential for its first requirement, signed by a new wallet.
func payFresh(t *testing.T, url string, body []byte) string {
	t.Helper()
	res, got := postRaw(t, url, body)
	if res.StatusCode != 402 {
		t.Fatalf("unpaid: %d %s", res.StatusCode, got)
	}
	var pr x402.PaymentRequired
	if err := x402.DecodeHeader(res.Header.Get("Payment-Required"), &pr); err != nil {
		t.Fatal(err)
	}
	w, err := evm.GenerateKeySigner()
	if err != nil {
		t.Fatal(err)
	}
	pl, err := paying.PayX402V2(context.Background(), w, &pr, &pr.Accepts[0], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cred, err := x402.EncodeHeader(pl)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// postRaw posts body as JSON and returns the response (body read).
func postRaw(t *testing.T, url string, body []byte) (*http.Response, string) {
	t.Helper()
	res, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestShutdownWaitsForASettlementAttempt: an order whose settlement is
// unknown is being resolved when the server is told to stop. Shutdown
// waits for the attempt, which records its outcome: the order is left
// due within the resolver's back-off, not leased to a process that is
// gone (which no instance would attempt again before the settle timeout
// plus the commit timeout had passed).
func TestShutdownWaitsForASettlementAttempt(t *testing.T) {
	t.Parallel()
	chain, err := paymenttest.NewChain(nil)
	if err != nil {
		t.Fatal(err)
	}
	fac, err := paymenttest.StartFacilitator(&paymenttest.FacilitatorOptions{Chain: chain})
	if err != nil {
		t.Fatal(err)
	}
	defer fac.Close()
	fac.SetFault("/settle", paymenttest.Fault{Kind: paymenttest.FaultStatus})

	const every = 100 * time.Millisecond
	dir := t.TempDir()
	env := production(fac.URL)
	for k, v := range map[string]string{"ASSAY_ADDR": "127.0.0.1:0", "ASSAY_DATA": dir, "ASSAY_LOG_LEVEL": "warn",
		"ASSAY_NICHE_DEMO": "false", "ASSAY_SETTLE_TIMEOUT": "1s", "ASSAY_RESOLVE_EVERY": every.String()} {
		env[k] = v
	}
	base, cancel, done := runUntilCancelled(t, env)
	defer cancel()

	const path = "/v1/claims/verify"
	body := []byte(`{"claim":"The Base mainnet chain ID is 8453."}`)
	cred := payFresh(t, base+path, body)
	req, _ := http.NewRequest("POST", base+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Payment-Signature", cred)
	paid, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var pending struct {
		OrderID string `json:"orderId"`
	}
	err = json.NewDecoder(paid.Body).Decode(&pending)
	paid.Body.Close()
	if paid.StatusCode != 202 || err != nil || pending.OrderID == "" {
		t.Fatalf("paid call with /settle failing: %d %+v %v", paid.StatusCode, pending, err)
	}

	// The next attempt hangs; stop the server while it does.
	fac.SetFault("/settle", paymenttest.Fault{Kind: paymenttest.FaultHang})
	before := len(fac.Calls("/settle"))
	for deadline := time.Now().Add(time.Minute); len(fac.Calls("/settle")) == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the resolver made no attempt")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run after shutdown: %v", err)
	}
	stopped := time.Now()

	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "assay.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o, err := paymentstore.New(db).Order(context.Background(), pending.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "settling" || o.SettleAttempts < 1 || o.SettleNextAt.After(stopped.Add(6*every)) {
		t.Fatalf("order after a shutdown during its attempt: status %s, %d attempts, next attempt %v after the stop (want within %v): %s",
			o.Status, o.SettleAttempts, o.SettleNextAt.Sub(stopped), 6*every, o.SettleNote)
	}
}
