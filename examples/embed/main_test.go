package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/payment/x402"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
)

const hostToken = "host-secret-token"

// startHost runs the example on a free loopback port with its data in a
// temporary directory and returns its base URL.
func startHost(t *testing.T, args ...string) string {
	t.Helper()
	env := map[string]string{"ASSAY_ADDR": "127.0.0.1:0", "ASSAY_DATA": t.TempDir(), "ASSAY_LOG_LEVEL": "warn", "ASSAY_EMBED_TOKEN": hostToken}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	snap := testSnapshotOptions(t)
	go func() {
		done <- run(ctx, args, func(k string) string { return env[k] }, io.Discard, io.Discard, ready, snap)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	select {
	case base := <-ready:
		return base
	case err := <-done:
		done <- err // for the cleanup, which waits for run to return
		t.Fatalf("host stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("host did not start")
	}
	return ""
}

// testSnapshotOptions keeps every capture on this machine: names are
// answered from an empty table (no DNS) and the tripwire refuses, and
// reports, any dial off loopback.
func testSnapshotOptions(t *testing.T) *snapshot.Options {
	t.Helper()
	tw := &snapshottest.Tripwire{}
	t.Cleanup(func() {
		if d := tw.Denied(); len(d) > 0 {
			t.Errorf("a capture tried to dial off loopback: %v", d)
		}
	})
	return &snapshot.Options{Resolver: snapshottest.Resolver(nil), DialControl: tw.Control}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// call sends a request with the host token unless token is "", through c.
func call(t *testing.T, c *http.Client, method, url, token, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, b}
}

const claimBody = `{"claim":"Base mainnet uses chain ID 8453.","minimumSources":1}`

type result struct {
	VerificationID string `json:"verificationId"`
	Status         string `json:"status"`
	Snapshots      []struct {
		SnapshotID string `json:"snapshotId"`
		Status     string `json:"status"`
		RawSHA256  string `json:"rawSha256"`
	} `json:"snapshots"`
}

func TestHostAuthGuardsTheMount(t *testing.T) {
	base := startHost(t)
	c := http.DefaultClient
	tests := []struct {
		name, method, path, token, body string
		status                          int
		bodyHas                         string
	}{
		{"no token", "POST", "/api/v1/claims/verify", "", claimBody, 401, `"error":"unauthorized"`},
		{"wrong token", "POST", "/api/v1/claims/verify", "guess", claimBody, 401, `"error":"unauthorized"`},
		{"snapshots need the token too", "GET", "/api/v1/url-snapshots/snap_00000000000000000000000000000000", "", "", 401, `"error":"unauthorized"`},
		{"unknown snapshot, with token", "GET", "/api/v1/url-snapshots/snap_00000000000000000000000000000000", hostToken, "", 404, `"detail":"Snapshot not found"`},
		{"assay answers its own 422", "POST", "/api/v1/claims/verify", hostToken, `{"claim":"Base mainnet uses chain ID 8453.","minimumSources":30}`, 422, `"detail"`},
		{"not mounted outside the prefix", "POST", "/v1/claims/verify", hostToken, claimBody, 404, "404 page not found"},
		{"niche catalogue needs the token", "GET", "/api/v1/niches", "", "", 401, `"error":"unauthorized"`},
		{"niche catalogue under the prefix", "GET", "/api/v1/niches?limit=2", hostToken, "", 200, `"niches":[`},
		{"niche catalogue not outside it", "GET", "/v1/niches", hostToken, "", 404, "404 page not found"},
		{"index of the mount", "GET", "/api", hostToken, "", 200, `"key":"niche-discovery"`},
		{"index of the mount, with the slash", "GET", "/api/", hostToken, "", 200, `"key":"claim-verification"`},
		{"no subscriptions", "GET", "/api/v1/subscription/status", hostToken, "", 404, `"detail":"Not Found"`},
		{"commerce not mounted when free", "GET", "/api/.well-known/jwks.json", hostToken, "", 404, `"detail":"Not Found"`},
		// Only the claims, snapshot and niche handlers are mounted. If the MCP or
		// A2A transport starts answering here, disable it in newAssay
		// (their configs) or decide to offer it and change these cases.
		{"no MCP endpoint", "POST", "/api/mcp", hostToken, `{}`, 404, `"detail":"Not Found"`},
		{"no A2A endpoint", "POST", "/api/a2a", hostToken, `{}`, 404, `"detail":"Not Found"`},
		{"host's own health", "GET", "/healthz", "", "", 200, `{"ok":true}`},
		{"host's own page", "GET", "/", "", "", 200, "Example host application"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, c, tt.method, base+tt.path, tt.token, tt.body)
			if r.status != tt.status || !strings.Contains(string(r.body), tt.bodyHas) {
				t.Fatalf("%s %s: %d %s; want %d with %q", tt.method, tt.path, r.status, r.body, tt.status, tt.bodyHas)
			}
			if tt.status == 401 && r.header.Get("WWW-Authenticate") != `Bearer realm="example-host"` {
				t.Errorf("401 without the host's challenge: %v", r.header)
			}
		})
	}
}

func TestFreeVerificationAndSnapshotsUnderThePrefix(t *testing.T) {
	base := startHost(t)
	c := http.DefaultClient
	r := call(t, c, "POST", base+"/api/v1/claims/verify/deep", hostToken, claimBody)
	if r.status != 200 {
		t.Fatalf("verify: %d %s", r.status, r.body)
	}
	var res result
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != "confirmed" || len(res.Snapshots) == 0 {
		t.Fatalf("result: %s", r.body)
	}
	if r.header.Get(httpgate.HeaderOrderID) != "" {
		t.Errorf("httpgate.Free opened an order: %v", r.header)
	}
	// The legacy alias is under the prefix as well.
	if a := call(t, c, "POST", base+"/api/v1/services/claim-verification/claims/verify/quick", hostToken, claimBody); a.status != 200 {
		t.Errorf("legacy alias under the prefix: %d %s", a.status, a.body)
	}

	captured := 0
	for _, s := range res.Snapshots {
		m := call(t, c, "GET", base+"/api/v1/url-snapshots/"+s.SnapshotID, hostToken, "")
		if m.status != 200 {
			t.Fatalf("snapshot metadata: %d %s", m.status, m.body)
		}
		var md struct {
			Status     string  `json:"status"`
			RawSHA256  *string `json:"rawSha256"`
			ContentURL *string `json:"contentUrl"`
		}
		if err := json.Unmarshal(m.body, &md); err != nil {
			t.Fatal(err)
		}
		if md.Status != s.Status {
			t.Errorf("metadata status %s, result says %s", md.Status, s.Status)
		}
		if s.Status != "captured" {
			continue
		}
		captured++
		// The content URL the metadata names is under the prefix and
		// serves the bytes the result's hash covers.
		if md.ContentURL == nil || !strings.HasPrefix(*md.ContentURL, "/api/v1/url-snapshots/") {
			t.Fatalf("contentUrl is not under the prefix: %s", m.body)
		}
		content := call(t, c, "GET", base+*md.ContentURL, hostToken, "")
		sum := sha256.Sum256(content.body)
		if content.status != 200 || hex.EncodeToString(sum[:]) != s.RawSHA256 || *md.RawSHA256 != s.RawSHA256 {
			t.Errorf("snapshot %s content: %d, hash does not match rawSha256", s.SnapshotID, content.status)
		}
	}
	if captured == 0 {
		t.Fatal("no snapshot was captured")
	}
	metricsHave(t, base,
		`assay_verifications_total{status="confirmed",tier="deep"} 1`,
		`assay_verifications_total{status="confirmed",tier="quick"} 1`,
		`assay_http_requests_total{method="POST",route="claims.verify.deep",status="200"} 1`)
	// The deep call's captures, and more: the quick call's pages, kept for
	// its evidence bundle though its result lists none.
	m := call(t, c, "GET", base+"/metrics", "", "")
	var n int
	if _, err := fmt.Sscanf(string(m.body[bytes.Index(m.body, []byte(`assay_snapshots_total{status="captured"} `)):]),
		`assay_snapshots_total{status="captured"} %d`, &n); err != nil || n <= captured {
		t.Errorf("captured snapshots counted: %d (%v), want more than the deep call's %d", n, err, captured)
	}
}

// metricsHave checks the host's /metrics (no token: scraped like /healthz)
// for lines.
func metricsHave(t *testing.T, base string, lines ...string) {
	t.Helper()
	r := call(t, http.DefaultClient, "GET", base+"/metrics", "", "")
	for _, l := range lines {
		if r.status != 200 || !strings.Contains(string(r.body), l+"\n") {
			t.Errorf("/metrics (%d) lacks %s\n%s", r.status, l, r.body)
		}
	}
}

func TestPaidVerificationBehindHostAuth(t *testing.T) {
	base := startHost(t, "-payments", "gate")
	c := http.DefaultClient

	// Host auth comes first: without the token no challenge is issued.
	if r := call(t, c, "POST", base+"/api/v1/claims/verify/quick", "", claimBody); r.status != 401 {
		t.Fatalf("no token: %d", r.status)
	}
	// With it, the gate asks for payment; the resource is the public URL
	// under the prefix.
	r := call(t, c, "POST", base+"/api/v1/claims/verify/quick", hostToken, claimBody)
	if r.status != 402 {
		t.Fatalf("unpaid: %d %s", r.status, r.body)
	}
	var pr x402.PaymentRequired
	if err := x402.DecodeHeader(r.header.Get(x402.HeaderPaymentRequired), &pr); err != nil {
		t.Fatal(err)
	}
	if pr.Resource == nil || pr.Resource.URL != base+"/api/v1/claims/verify/quick" {
		t.Fatalf("challenge resource: %+v", pr.Resource)
	}
	if strings.Contains(r.header.Get("WWW-Authenticate"), "Payment") {
		t.Errorf("MPP offered although the host owns the Authorization header: %q", r.header.Get("WWW-Authenticate"))
	}
	// Invalid input is refused before any payment talk.
	if r := call(t, c, "POST", base+"/api/v1/claims/verify/quick", hostToken, `{"claim":"x"}`); r.status != 422 {
		t.Fatalf("invalid input: %d %s", r.status, r.body)
	}

	// A paying client keeps the host token on the paid retry.
	paying := &http.Client{Transport: paying.NewTransport(paymenttest.DevWallet(), nil, nil)}
	paid := call(t, paying, "POST", base+"/api/v1/claims/verify/quick", hostToken, claimBody)
	if paid.status != 200 {
		t.Fatalf("paid: %d %s", paid.status, paid.body)
	}
	var res result
	if err := json.Unmarshal(paid.body, &res); err != nil {
		t.Fatal(err)
	}
	orderID, orderToken := paid.header.Get(httpgate.HeaderOrderID), paid.header.Get(httpgate.HeaderOrderToken)
	if orderID == "" || orderToken == "" {
		t.Fatalf("no order headers: %v", paid.header)
	}

	// The buyer looks the order up under the prefix and checks the receipt
	// offline against the JWKS published there.
	req, _ := http.NewRequest("GET", base+"/api/v1/orders/"+orderID, nil)
	req.Header.Set("Authorization", "Bearer "+hostToken)
	req.Header.Set(httpgate.HeaderOrderToken, orderToken)
	ores, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var order struct {
		Status  string          `json:"status"`
		Receipt json.RawMessage `json:"receipt"`
	}
	err = json.NewDecoder(ores.Body).Decode(&order)
	ores.Body.Close()
	if err != nil || ores.StatusCode != 200 || order.Status != string(payment.OrderCompleted) {
		t.Fatalf("order: %d %v %+v", ores.StatusCode, err, order)
	}
	jr := call(t, c, "GET", base+"/api/.well-known/jwks.json", hostToken, "")
	var jwks payment.JWKS
	if err := json.Unmarshal(jr.body, &jwks); err != nil {
		t.Fatalf("jwks: %d %v", jr.status, err)
	}
	rc, err := payment.VerifyReceipt(order.Receipt, jwks)
	if err != nil {
		t.Fatalf("receipt: %v", err)
	}
	sum := sha256.Sum256(paid.body)
	if rc.ResultSHA256 != hex.EncodeToString(sum[:]) || rc.ResultID != res.VerificationID || rc.AmountMicroUSD != 20_000 || !rc.Dev {
		t.Fatalf("receipt does not describe the delivery: %+v", rc)
	}
	metricsHave(t, base,
		`assay_payments_total{outcome="settled",protocol="x402"} 1`,
		`assay_payments_total{outcome="challenged",protocol="none"} 2`,
		`assay_payment_amount_microusd_total{protocol="x402"} 20000`)
}

func TestBadConfiguration(t *testing.T) {
	for _, args := range [][]string{
		{"-payments", "card"},
		{"-prefix", "/"},
		{"-log-level", "loud"},
		{"stray"},
		{"-no-such-flag"},
	} {
		err := run(context.Background(), args, func(k string) string {
			return map[string]string{"ASSAY_ADDR": "127.0.0.1:0", "ASSAY_DATA": t.TempDir()}[k]
		}, io.Discard, io.Discard, nil, testSnapshotOptions(t))
		if !errors.As(err, new(usageError)) {
			t.Errorf("%q: %v, want a usage error (exit status 2)", args, err)
		}
	}
	// Every problem at once, each naming its flag and variable.
	err := run(context.Background(), []string{"-payments", "card", "-prefix", "/", "-log-level", "loud"}, func(string) string { return "" },
		io.Discard, io.Discard, nil, testSnapshotOptions(t))
	for _, want := range []string{"-payments (ASSAY_PAYMENTS)", "-prefix (ASSAY_EMBED_PREFIX)", "-log-level (ASSAY_LOG_LEVEL)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	var help bytes.Buffer
	if err := run(context.Background(), []string{"-help"}, func(string) string { return "" }, io.Discard, &help, nil, nil); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(help.String(), "-payments") {
		t.Errorf("-help: %v\n%s", err, help.String())
	}
}
