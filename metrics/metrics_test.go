package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/snapshot"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape status %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestMetricsExposition(t *testing.T) {
	m := New(&Options{NoRuntime: true})
	m.ObserveRequest(httptest.NewRequest("GET", "/v1/niches", nil), "niches.list", 200, 3*time.Millisecond)
	m.ObserveRequest(httptest.NewRequest("BREW", "/x", nil), "", 404, time.Millisecond)
	m.Verification("deep", "confirmed")
	m.ProviderUsage("corpus", 10, 2, 5, 1)
	m.ProviderError("openai", "rate_limited")
	m.Snapshot("blocked")
	m.Payment("x402", "settled", 120000)
	m.Payment("x402", "rejected", 0)
	out := scrape(t, m)
	for _, want := range []string{
		`assay_http_requests_total{method="GET",route="niches.list",status="200"} 1`,
		`assay_http_requests_total{method="other",route="unmatched",status="404"} 1`,
		`assay_http_request_duration_seconds_count{method="GET",route="niches.list"} 1`,
		`assay_verifications_total{status="confirmed",tier="deep"} 1`,
		`assay_provider_tokens_total{kind="cached_input",provider="corpus"} 2`,
		`assay_provider_search_calls_total{provider="corpus"} 1`,
		`assay_provider_errors_total{kind="rate_limited",provider="openai"} 1`,
		`assay_snapshots_total{status="blocked"} 1`,
		`assay_payments_total{outcome="settled",protocol="x402"} 1`,
		`assay_payment_amount_microusd_total{protocol="x402"} 120000`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "go_goroutines") {
		t.Error("runtime collectors registered despite NoRuntime")
	}
	if !strings.Contains(scrape(t, New(nil)), "go_goroutines") {
		t.Error("runtime collectors missing by default")
	}
}

func TestAdapters(t *testing.T) {
	m := New(&Options{NoRuntime: true})
	o := m.ClaimsObserver("corpus")
	o.Verified("quick", &claims.Result{Status: claims.StatusConfirmed})
	r := &claims.Result{Status: claims.StatusAmbiguous}
	r.Provenance.CacheHit = true
	o.Verified("deep", r)
	o.ProviderUsed(claims.ProviderUsage{InputTokens: 7, SearchCalls: 2})
	o.Failed("standard", &claims.ProviderError{Kind: claims.ProviderQuotaExhausted})
	o.Failed("standard", errors.New("store down"))
	m.SnapshotCaptured(&snapshot.Snapshot{Status: snapshot.StatusTooLarge})
	m.PaymentEvent(payment.PaymentEvent{Protocol: "mpp", Outcome: "voided"})
	out := scrape(t, m)
	for _, want := range []string{
		`assay_verifications_total{status="confirmed",tier="quick"} 1`,
		`assay_verifications_total{status="ambiguous_cached",tier="deep"} 1`,
		`assay_provider_tokens_total{kind="input",provider="corpus"} 7`,
		`assay_provider_search_calls_total{provider="corpus"} 2`,
		`assay_provider_errors_total{kind="quota_exhausted",provider="corpus"} 1`,
		`assay_verifications_total{status="provider_error",tier="standard"} 1`,
		`assay_verifications_total{status="error",tier="standard"} 1`,
		`assay_snapshots_total{status="too_large"} 1`,
		`assay_payments_total{outcome="voided",protocol="mpp"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
}

// TestPaymentLabelsDocumented: every outcome and protocol the payment
// package emits in a PaymentEvent is named in this package's
// documentation (the values are read from payment's source, so a new
// outcome there fails here until it is documented).
func TestPaymentLabelsDocumented(t *testing.T) {
	src, err := os.ReadFile("metrics.go")
	if err != nil {
		t.Fatal(err)
	}
	_, para, ok := strings.Cut(string(src), "// Payment labels are")
	para, _, _ = strings.Cut(para, "\n//\n")
	if !ok {
		t.Fatal("metrics.go has no paragraph on payment labels")
	}
	doc := strings.ReplaceAll(para, "\n//", "")
	files, err := filepath.Glob("../payment/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("payment sources: %v", err)
	}
	outcome := regexp.MustCompile(`Outcome(?:, [A-Za-z.]+)? = "([a-z_]+)"|Outcome: +"([a-z_]+)"`)
	emitted := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range outcome.FindAllSubmatch(b, -1) {
			emitted[string(m[1])+string(m[2])] = true
		}
	}
	if len(emitted) < 5 {
		t.Fatalf("found only %v in payment's sources: the pattern is stale", emitted)
	}
	want := []string{payment.ProtocolX402, payment.ProtocolMPP, payment.ProtocolMPPStripe, "none"}
	for o := range emitted {
		want = append(want, o)
	}
	for _, v := range want {
		if !regexp.MustCompile(`(^|[^a-z_-])` + regexp.QuoteMeta(v) + `([^a-z_-]|$)`).MatchString(doc) {
			t.Errorf("metrics.go does not document the payment label value %q", v)
		}
	}
}
