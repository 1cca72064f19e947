package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/evm"
)

type nopObserver struct{}

func (nopObserver) Verified(string, *claims.Result)   {}
func (nopObserver) ProviderUsed(claims.ProviderUsage) {}
func (nopObserver) Failed(string, error)              {}

func TestProviderHealth(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newProviderHealth(nopObserver{})
	h.now = func() time.Time { return now }
	quota := &claims.ProviderError{Kind: claims.ProviderQuotaExhausted, Err: errors.New("insufficient_quota")}
	auth := &claims.ProviderError{Kind: claims.ProviderNotConfigured, Err: errors.New("401")}
	rate := &claims.ProviderError{Kind: claims.ProviderRateLimited}

	h.Failed("standard", quota)
	h.Failed("standard", auth)
	if err := h.ready(); err != nil {
		t.Fatalf("two failures: %v", err)
	}
	h.Failed("standard", rate) // transient: neither counts nor resets
	h.Failed("standard", quota)
	if err := h.ready(); err == nil || !strings.Contains(err.Error(), "last 3 provider calls failed on credentials or quota") {
		t.Fatalf("three credential/quota failures: %v", err)
	}
	// A cache hit proves nothing about the provider.
	h.Verified("standard", &claims.Result{Provenance: claims.Provenance{CacheHit: true}})
	if h.ready() == nil {
		t.Fatal("a cache hit made the provider ready")
	}
	// Past the window, traffic may probe again.
	now = now.Add(providerFailWindow)
	if err := h.ready(); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	h.Failed("standard", quota)
	if h.ready() == nil {
		t.Fatal("a further failure after the window should count")
	}
	// A verification answered by the provider clears it.
	h.Verified("standard", &claims.Result{})
	if err := h.ready(); err != nil {
		t.Fatalf("after a success: %v", err)
	}
}

// fakeFacilitator answers /supported with kinds and counts the calls.
func fakeFacilitator(t *testing.T, kinds string, calls *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/supported" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kinds":` + kinds + `}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func baseNetwork(t *testing.T) evm.Network {
	for _, n := range evm.Networks() {
		if n.CAIP2 == "eip155:8453" {
			return n
		}
	}
	t.Fatal("no Base network")
	return evm.Network{}
}

func TestFacilitatorProbe(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	srv := fakeFacilitator(t, `[{"x402Version":2,"scheme":"exact","network":"eip155:8453"}]`, &calls)
	p, err := newFacilitatorProbe(srv.URL, nil, baseNetwork(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	for range 3 {
		if err := p.check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d probes within the cache time, want 1", n)
	}
	now = now.Add(facilitatorOKFor)
	if err := p.check(ctx); err != nil || calls.Load() != 2 {
		t.Fatalf("after the cache time: %v, %d probes", err, calls.Load())
	}

	// A facilitator that does not settle on our network is not ready.
	other := fakeFacilitator(t, `[{"x402Version":2,"scheme":"exact","network":"eip155:84532"}]`, &calls)
	p2, _ := newFacilitatorProbe(other.URL, nil, baseNetwork(t), nil)
	if err := p2.check(ctx); err == nil || !strings.Contains(err.Error(), "does not list exact payments on eip155:8453") {
		t.Fatalf("wrong network: %v", err)
	}
	// v1 names count too.
	v1 := fakeFacilitator(t, `[{"x402Version":1,"scheme":"exact","network":"base"}]`, &calls)
	p3, _ := newFacilitatorProbe(v1.URL, nil, baseNetwork(t), nil)
	if err := p3.check(ctx); err != nil {
		t.Fatalf("v1 listing: %v", err)
	}

	// Nobody listening: not ready, and the failure is cached briefly.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	p4, _ := newFacilitatorProbe(closed, nil, baseNetwork(t), nil)
	if err := p4.check(ctx); err == nil || !strings.Contains(err.Error(), "facilitator did not answer /supported") {
		t.Fatalf("closed port: %v", err)
	}
}

func TestReceiptKeyCheck(t *testing.T) {
	if err := receiptKeyCheck(nil); err == nil {
		t.Fatal("no keyring passed")
	}
	keys, err := payment.ParseKeyring(payment.GenerateReceiptKey())
	if err != nil {
		t.Fatal(err)
	}
	if err := receiptKeyCheck(keys); err != nil {
		t.Fatal(err)
	}
}
