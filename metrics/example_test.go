package metrics_test

import (
	"bufio"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/server"
)

// The host creates the collectors, passes ObserveRequest to the server as
// an observer, serves Handler at /metrics (server.Config.Metrics), and
// reports engine events through the typed methods.
func ExampleNew() {
	m := metrics.New(&metrics.Options{NoRuntime: true}) // NoRuntime: no Go runtime or process metrics
	h, err := server.New(server.Config{
		Metrics:   m.Handler(),
		Observers: []func(*http.Request, string, int, time.Duration){m.ObserveRequest},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, path := range []string{"/healthz", "/healthz", "/no/such/path"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
	}
	m.Verification("deep", "confirmed")
	m.Payment("x402", "settled", 120_000)

	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "assay_http_requests_total") || strings.HasPrefix(line, "assay_verifications_total") ||
			strings.HasPrefix(line, "assay_payment") {
			fmt.Println(line)
		}
	}
	// Output:
	// assay_http_requests_total{method="GET",route="health.live",status="200"} 2
	// assay_http_requests_total{method="GET",route="unmatched",status="404"} 1
	// assay_payment_amount_microusd_total{protocol="x402"} 120000
	// assay_payments_total{outcome="settled",protocol="x402"} 1
	// assay_verifications_total{status="confirmed",tier="deep"} 1
}
