package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/sqlite"
)

// The host creates the collectors and hands each piece its hook: the
// server's request observer and /metrics handler, the claims engine's
// Observer, snapshot.Options.OnCapture (SnapshotCaptured) and
// payment.CashierOptions.OnEvent (PaymentEvent).
func ExampleNew() {
	ctx := context.Background()
	m := metrics.New(&metrics.Options{NoRuntime: true}) // NoRuntime: no Go runtime or process metrics

	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	demo, err := corpus.Demo()
	if err != nil {
		log.Fatal(err)
	}
	provider, err := corpus.New(demo, nil)
	if err != nil {
		log.Fatal(err)
	}
	engine, err := claims.New(provider, claimsstore.New(db), nil, &claims.Options{Observer: m.ClaimsObserver(provider.Name())})
	if err != nil {
		log.Fatal(err)
	}

	h, err := server.New(server.Config{
		Paywall:   httpgate.Free{},
		Claims:    server.ClaimsConfig{Engine: engine},
		Metrics:   m.Handler(),
		Observers: []func(*http.Request, string, int, time.Duration){m.ObserveRequest},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := http.Post(srv.URL+"/v1/claims/verify/quick", "application/json",
		strings.NewReader(`{"claim":"Base mainnet uses chain ID 8543.","minimumSources":1}`))
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	for _, path := range []string{"/healthz", "/no/such/path"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
	}
	// What a Gate's cashier reports through OnEvent:
	m.PaymentEvent(payment.PaymentEvent{Protocol: payment.ProtocolX402, Outcome: "settled", OfferID: "claims.verify.deep", AmountMicroUSD: 120_000})

	// Observers run once a handler has returned, which may be just after
	// the client has read the whole answer: Close waits for every handler,
	// so the scrape below sees all three requests.
	srv.Close()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		line := sc.Text()
		for _, name := range []string{"assay_http_requests_total", "assay_verifications_total", "assay_provider_search_calls_total", "assay_payment"} {
			if strings.HasPrefix(line, name) {
				fmt.Println(line)
			}
		}
	}
	// The corpus searches a local collection, not the web: no web search
	// calls (and no per-call fee) are counted for it.
	//
	// Output:
	// assay_http_requests_total{method="GET",route="health.live",status="200"} 1
	// assay_http_requests_total{method="GET",route="unmatched",status="404"} 1
	// assay_http_requests_total{method="POST",route="claims.verify.quick",status="200"} 1
	// assay_payment_amount_microusd_total{protocol="x402"} 120000
	// assay_payments_total{outcome="settled",protocol="x402"} 1
	// assay_provider_search_calls_total{provider="corpus"} 0
	// assay_verifications_total{status="contradicted",tier="quick"} 1
}
