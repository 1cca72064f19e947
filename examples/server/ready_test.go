package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/metrics"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/store/sqlite"
)

func TestProviderHealth(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newProviderHealth("openai")
	h.now = func() time.Time { return now }
	quota := &claims.ProviderError{Kind: claims.ProviderQuotaExhausted, Err: errors.New("insufficient_quota")}
	auth := &claims.ProviderError{Kind: claims.ProviderNotConfigured, Err: errors.New("401")}
	rate := &claims.ProviderError{Kind: claims.ProviderRateLimited}

	h.record(quota)
	h.record(auth)
	if err := h.ready(); err != nil {
		t.Fatalf("two failures: %v", err)
	}
	h.record(rate) // transient: neither counts nor resets
	h.record(quota)
	if err := h.ready(); err == nil || !strings.Contains(err.Error(), "openai: the last 3 provider calls failed on credentials or quota") {
		t.Fatalf("three credential/quota failures: %v", err)
	}
	// Past the window, traffic may probe again.
	now = now.Add(providerFailWindow)
	if err := h.ready(); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	h.record(quota)
	if h.ready() == nil {
		t.Fatal("a further failure after the window should count")
	}
	// A call the provider answered clears it.
	h.record(nil)
	if err := h.ready(); err != nil {
		t.Fatalf("after a success: %v", err)
	}
}

// With several providers, readiness fails when the first or every provider
// is failing on credentials or quota, and names them.
func TestProvidersReady(t *testing.T) {
	t.Parallel()
	quota := &claims.ProviderError{Kind: claims.ProviderQuotaExhausted, Err: errors.New("spend limit")}
	fail := func(h *providerHealth) {
		for range providerFailLimit {
			h.record(quota)
		}
	}
	tests := []struct {
		name    string
		failing []bool // per provider: openai, anthropic
		want    string // "" for ready
	}{
		{"both answer", []bool{false, false}, ""},
		{"second failing", []bool{false, true}, ""},
		{"first failing", []bool{true, false}, "openai: the last 3"},
		{"both failing", []bool{true, true}, "anthropic: the last 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hs := []*providerHealth{newProviderHealth("openai"), newProviderHealth("anthropic")}
			for i, f := range tc.failing {
				if f {
					fail(hs[i])
				}
			}
			err := providersReady(hs)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("providersReady = %v, want %q", err, tc.want)
			}
		})
	}
}

// A trackedProvider records what its provider answered.
func TestTrackedProvider(t *testing.T) {
	t.Parallel()
	h := newProviderHealth("scripted")
	p := trackedProvider{SearchProvider: failingProvider{}, health: h}
	for range providerFailLimit {
		if _, err := p.Search(context.Background(), &claims.ProviderQuery{Claim: "x"}); err == nil {
			t.Fatal("no error")
		}
	}
	if h.ready() == nil || p.Name() != "scripted" {
		t.Fatalf("ready %v name %q", h.ready(), p.Name())
	}
}

type failingProvider struct{}

func (failingProvider) Name() string { return "scripted" }
func (failingProvider) Capabilities() claims.ProviderCapabilities {
	return claims.ProviderCapabilities{}
}
func (failingProvider) Search(context.Context, *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	return nil, &claims.ProviderError{Kind: claims.ProviderNotConfigured, Err: errors.New("401")}
}

func TestReceiptKeyCheck(t *testing.T) {
	t.Parallel()
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

// -provider openai,anthropic wires both providers into one engine, each
// with its own health, in order.
func TestVerificationWithTwoProviders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := parseConfig([]string{"-provider", "openai,anthropic", "-data", dir}, func(k string) string {
		return map[string]string{"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}[k]
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "assay.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := newVerification(cfg, db, metrics.New(nil), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.provider != "OpenAI web search + Anthropic web search (corroborating on deep and research)" {
		t.Errorf("provider line %q", v.provider)
	}
	if len(v.health) != 2 || v.health[0].name != "openai" || v.health[1].name != "anthropic" {
		t.Fatalf("health %+v", v.health)
	}
	if err := v.ready(context.Background()); err != nil {
		t.Fatalf("ready: %v", err)
	}
	quota := &claims.ProviderError{Kind: claims.ProviderQuotaExhausted, Err: errors.New("spend limit")}
	for range providerFailLimit {
		v.health[1].record(quota)
	}
	if err := v.ready(context.Background()); err != nil {
		t.Fatalf("a failing second provider made the server unready: %v", err)
	}
	for range providerFailLimit {
		v.health[0].record(quota)
	}
	if err := v.ready(context.Background()); err == nil || !strings.Contains(err.Error(), "openai:") || !strings.Contains(err.Error(), "anthropic:") {
		t.Fatalf("both failing: %v", err)
	}
}

// The niche readiness check is not ready while the search index loads
// (searches ask the database meanwhile), nor when its load failed.
func TestNicheIndexReadiness(t *testing.T) {
	for _, tc := range []struct {
		st   niche.IndexStatus
		want string
	}{
		{niche.IndexStatus{}, ""},
		{niche.IndexStatus{Enabled: true, Ready: true}, ""},
		{niche.IndexStatus{Enabled: true}, "search index loading (searches ask the database meanwhile)"},
		{niche.IndexStatus{Enabled: true, LoadError: "connection refused"}, "search index not loaded (searches ask the database): connection refused"},
	} {
		err := nicheIndexReady(tc.st)
		if got := fmt.Sprint(err); (err == nil) != (tc.want == "") || (err != nil && got != tc.want) {
			t.Errorf("%+v: %v, want %q", tc.st, err, tc.want)
		}
	}
}
