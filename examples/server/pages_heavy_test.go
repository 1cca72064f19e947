//go:build heavy

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/payment/paying"
	"github.com/assaykit/assay/payment/paymenttest"
)

// TestPagesInChromium walks the pages of the example server as a person
// would, in Debian's Chromium driven by playwright-core
// (interop/pages/browse.mjs): browse, search "landlord", open a preview,
// subscribe through the development checkout, read the full evaluation,
// follow a signal to its captured page, sign out; then open, with its
// order token, a verification this test paid for with the Go client
// (payment/paying), and check its receipt in the page. axe-core runs on
// every page visited: no serious or critical violation passes. The
// screenshots go to $ASSAY_PAGES_SCREENSHOTS when set (kept), else to a
// temporary directory.
func TestPagesInChromium(t *testing.T) {
	dir, err := filepath.Abs("../../interop/pages")
	if err != nil {
		t.Fatal(err)
	}
	node := testenv.Node(t, dir, "playwright-core", "axe-core")
	chromium := testenv.Command(t, "chromium", "apt-get install chromium (Debian's package; .ci/run installs it)")
	shots := os.Getenv("ASSAY_PAGES_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	base := startServer(t, map[string]string{"ASSAY_NICHE_DEMO": "true"})

	// Pay for a verification with the Go client.
	payer := &http.Client{Transport: paying.NewTransport(paymenttest.DevWallet(), nil, &paying.TransportOptions{BudgetMicroUSD: 1_000_000})}
	res, err := payer.Post(base+"/v1/claims/verify", "application/json", strings.NewReader(`{"claim":"The Base mainnet chain ID is 8453."}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var result struct {
		VerificationID string `json:"verificationId"`
	}
	if res.StatusCode != 200 || json.Unmarshal(body, &result) != nil || result.VerificationID == "" {
		t.Fatalf("paid verification: %d %s", res.StatusCode, body)
	}
	token := res.Header.Get(httpgate.HeaderOrderToken)
	if token == "" {
		t.Fatal("no order token")
	}
	// The paid answer links its page.
	path := "/claim-verification/v1/claims/verifications/" + result.VerificationID
	if link := res.Header.Get("Link"); link != "<"+path+`>; rel="alternate"; type="text/html"` {
		t.Errorf("paid answer's Link %q, want its page %s", link, path)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "browse.mjs", base, path, token, shots, chromium)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var sum struct {
		Pages []struct {
			Name       string            `json:"name"`
			URL        string            `json:"url"`
			Status     int               `json:"status"`
			Bytes      int               `json:"bytes"`
			Violations []json.RawMessage `json:"violations"`
			Minor      []string          `json:"minor"`
			Screenshot string            `json:"screenshot"`
		} `json:"pages"`
		Steps []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"steps"`
		Errors        []string `json:"errors"`
		ConsoleErrors []string `json:"consoleErrors"`
		Receipt       struct {
			Result, Text string
		} `json:"receipt"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("browse.mjs: %v\nstdout: %s\nstderr: %s", runErr, stdout.String(), stderr.String())
	}
	for _, e := range sum.Errors {
		t.Errorf("step failed: %s", e)
	}
	largest := 0
	for _, p := range sum.Pages {
		t.Logf("%-24s %3d %6d bytes  axe serious/critical %d, minor %v  %s", p.Name, p.Status, p.Bytes, len(p.Violations), p.Minor, p.Screenshot)
		for _, v := range p.Violations {
			t.Errorf("%s: axe violation %s", p.Name, v)
		}
		largest = max(largest, p.Bytes)
	}
	// The development checkout, the steps and the verification are all
	// reached: a walk that stopped early fails here too.
	if len(sum.Pages) < 16 || len(sum.Steps) < 18 {
		t.Errorf("the walk stopped early: %d pages, %d steps", len(sum.Pages), len(sum.Steps))
	}
	if largest >= 100<<10 {
		t.Errorf("largest page %d bytes, want < 100 KB", largest)
	}
	if sum.Receipt.Result != "valid" {
		t.Errorf("receipt check in the page: %+v", sum.Receipt)
	}
	for _, e := range sum.ConsoleErrors {
		t.Errorf("console error: %s", e)
	}
	if runErr != nil && !t.Failed() {
		t.Errorf("browse.mjs: %v\n%s", runErr, stderr.String())
	}
	t.Logf("largest page %d bytes; screenshots in %s", largest, shots)
}
