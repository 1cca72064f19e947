package anthropic

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/providertest"
	"github.com/assaykit/assay/field"
)

// The recorded Messages payload, run through the claims engine: the
// consulted sources come from the web_search_tool_result blocks, the
// cited_text fills the excerpt the model left empty, and the usage and
// search counts reach the provenance and the observer.
func TestThroughTheEngine(t *testing.T) {
	e, api, log := providertest.EngineOver(t, start, ok(), providertest.BasePages())
	call := &claims.Call{Scope: "payer:test"}
	res, err := e.Verify(context.Background(), claims.Standard,
		providertest.Request(providertest.BaseClaim, func(r *claims.Request) {
			r.SourcePolicy, r.MinimumSources, r.FreshnessHours = "open_web", 1, field.Null[int]()
		}), call)
	if err != nil {
		t.Fatal(err)
	}
	if api.Count() != 1 {
		t.Fatalf("%d API requests", api.Count())
	}
	if res.Status != claims.StatusConfirmed {
		t.Fatalf("status %s, limitations %q", res.Status, res.Limitations)
	}
	pv := res.Provenance
	if pv.Provider != "anthropic" || pv.Model != "claude-sonnet-5-5" || pv.ProviderResponseID != "msg_01XFDUDYJgAACzvnptvVoYEL" ||
		!pv.SearchedWeb || pv.WebSearchCallCount != 2 || pv.ConsultedSourceCount != 3 || pv.InputTokens != 18288 || pv.CachedInputTokens != 2048 || pv.OutputTokens != 1390 {
		t.Errorf("provenance %+v", pv)
	}
	for _, s := range res.ProviderSources {
		if s.Provider != "anthropic_web_search" {
			t.Errorf("source %s provider %q", s.URL, s.Provider)
		}
	}
	for _, ev := range res.Evidence {
		if !ev.ProviderSourceMatched || !ev.Consulted || (ev.Relationship == claims.Supports && !ev.Snapshotted) {
			t.Errorf("evidence %s: matched %v consulted %v snapshotted %v", ev.ID, ev.ProviderSourceMatched, ev.Consulted, ev.Snapshotted)
		}
	}
	var e2 claims.Evidence
	for _, ev := range res.Evidence {
		if strings.Contains(ev.URL, "circle.com") {
			e2 = ev
		}
	}
	if e2.Excerpt != "USDC uses 6 decimal places on all supported chains." || !strings.HasPrefix(e2.QualityReason, "quote verified on snapshot") {
		t.Errorf("cited excerpt not used or not verified: %+v", e2)
	}
	want := claims.ProviderUsage{Provider: "anthropic", Model: "claude-sonnet-5-5", InputTokens: 18288, CachedInputTokens: 2048, OutputTokens: 1390, SearchCalls: 2}
	if !call.ProviderCalled || call.Usage != want || len(log.Usage()) != 1 || !cmp.Equal(log.Usage()[0], want) {
		t.Errorf("usage: call %+v, observer %+v; want %+v", call.Usage, log.Usage(), want)
	}
}

// A truncated answer fails the verification, but what it cost reaches the
// caller's Call and the Observer.
func TestTruncatedAnswerThroughTheEngine(t *testing.T) {
	e, _, log := providertest.EngineOver(t, start, []reply{{File: "max_tokens.json"}}, nil)
	call := &claims.Call{Scope: "payer:test"}
	_, err := e.Verify(context.Background(), claims.Standard, providertest.Request("Base mainnet uses chain ID 8453.", nil), call)
	var re *ResponseError
	if !errors.Is(err, claims.ErrProviderBadOutput) || !errors.As(err, &re) || re.StopReason != "max_tokens" {
		t.Fatalf("error %v", err)
	}
	want := claims.ProviderUsage{Provider: "anthropic", Model: "claude-sonnet-5-5", InputTokens: 18288, CachedInputTokens: 2048, OutputTokens: 3000, SearchCalls: 2}
	if !call.ProviderCalled || call.Usage != want || len(log.Usage()) != 1 || log.Usage()[0] != want {
		t.Fatalf("call %+v, observer %+v; want %+v", call.Usage, log.Usage(), want)
	}
}

// A spend limit fails fast through the engine as quota exhaustion.
func TestSpendLimitThroughTheEngine(t *testing.T) {
	e, api, _ := providertest.EngineOver(t, start, []reply{{Status: 429, File: "error_spend_limit.json", Header: map[string]string{"Retry-After": "1"}}, {File: "success.json"}}, providertest.BasePages())
	_, err := e.Verify(context.Background(), claims.Standard, providertest.Request("Base mainnet uses chain ID 8453.", nil), &claims.Call{Scope: "payer:test"})
	if !errors.Is(err, claims.ErrProviderQuotaExhausted) || api.Count() != 1 {
		t.Fatalf("error %v after %d requests", err, api.Count())
	}
}
