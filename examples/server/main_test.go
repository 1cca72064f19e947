package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/payment"
)

// startServer runs the example server on a free loopback port with its data
// in a temporary directory and returns its base URL.
func startServer(t *testing.T, extraEnv map[string]string) string {
	t.Helper()
	env := map[string]string{"ASSAY_ADDR": "127.0.0.1:0", "ASSAY_DATA": t.TempDir(), "ASSAY_LOG_LEVEL": "warn"}
	for k, v := range extraEnv {
		env[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, &out, io.Discard, ready) }()
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
		t.Fatalf("server stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start")
	}
	return ""
}

func TestServerAnswersHealthAndCapabilities(t *testing.T) {
	base := startServer(t, nil)
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
	res, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(mb), `assay_http_requests_total{method="GET",route="health.live",status="200"} 1`) {
		t.Fatalf("metrics: %d\n%s", res.StatusCode, mb)
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
	var errOut bytes.Buffer
	if err := run(context.Background(), []string{"-help"}, func(string) string { return "" }, io.Discard, &errOut, nil); err != nil {
		t.Fatalf("-help: %v", err)
	}
	if !strings.Contains(errOut.String(), "ASSAY_ADDR") || !strings.Contains(errOut.String(), "ASSAY_FACILITATOR_URL") {
		t.Fatalf("help does not name the environment variables:\n%s", errOut.String())
	}
	err := run(context.Background(), nil, func(k string) string {
		return map[string]string{"ASSAY_LOG_LEVEL": "loud", "ASSAY_DATA": t.TempDir()}[k]
	}, io.Discard, io.Discard, nil)
	if err == nil {
		t.Fatal("bad log level accepted")
	}
}

func TestDiscoveryDocumentsServed(t *testing.T) {
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
	if err := payment.DecodeX402Header(res.Header.Get("Payment-Required"), &pr); err != nil || pr.Extensions["bazaar"] == nil {
		t.Fatalf("402 without bazaar extension: %v %v", err, pr.Extensions)
	}
}
