package anthropic

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/field"
	"github.com/assaykit/assay/store/sqlite"
)

// usageLog records the engine's provider usage reports.
type usageLog struct {
	mu    sync.Mutex
	usage []claims.ProviderUsage
}

func (l *usageLog) Verified(string, *claims.Result) {}
func (l *usageLog) Failed(string, error)            {}
func (l *usageLog) ProviderUsed(u claims.ProviderUsage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.usage = append(l.usage, u)
}

// engineOver builds a claims engine over the provider served by a fake
// Messages API with the replies, an in-memory store and a fake snapshotter.
func engineOver(t *testing.T, replies []reply, pages map[string]string) (*claims.Engine, *fakeAPI, *usageLog) {
	t.Helper()
	p, api := newTestProvider(t, replies, nil)
	db, err := sqlite.Open(context.Background(), ":memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	snaps := &claimstest.Snapshotter{Pages: map[string]claimstest.Page{}, Now: func() time.Time { return fixedNow }}
	for u, text := range pages {
		snaps.Pages[u] = claimstest.Page{Text: text}
	}
	log := &usageLog{}
	e, err := claims.New(p, db, snaps, &claims.Options{Now: func() time.Time { return fixedNow }, Observer: log})
	if err != nil {
		t.Fatal(err)
	}
	return e, api, log
}

func request(claim string, mod func(*claims.Request)) *claims.Request {
	var r claims.Request
	r.SetDefaults()
	r.Claim = claim
	if mod != nil {
		mod(&r)
	}
	return &r
}

var basePages = map[string]string{
	"https://docs.base.org/network-information":                         "Network information. Base Mainnet. Chain ID: 8453. Currency symbol: ETH.",
	"https://chainlist.org/chain/8453":                                  "Base. ChainID 8453. Currency ETH.",
	"https://developers.circle.com/stablecoins/usdc-contract-addresses": "USDC contract addresses. USDC uses 6 decimal places on all supported chains.",
}

// The recorded Messages payload, run through the claims engine: the
// consulted sources come from the web_search_tool_result blocks, the
// cited_text fills the excerpt the model left empty, and the usage and
// search counts reach the provenance and the observer.
func TestThroughTheEngine(t *testing.T) {
	e, api, log := engineOver(t, ok(), basePages)
	call := &claims.Call{Scope: "payer:test"}
	res, err := e.Verify(context.Background(), claims.Standard,
		request("Base mainnet uses chain ID 8453 and USDC on Base has 6 decimals.", func(r *claims.Request) {
			r.SourcePolicy, r.MinimumSources, r.FreshnessHours = "open_web", 1, field.Null[int]()
		}), call)
	if err != nil {
		t.Fatal(err)
	}
	if api.count() != 1 {
		t.Fatalf("%d API requests", api.count())
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
	if !call.ProviderCalled || call.Usage != want || len(log.usage) != 1 || !cmp.Equal(log.usage[0], want) {
		t.Errorf("usage: call %+v, observer %+v; want %+v", call.Usage, log.usage, want)
	}
}

// A truncated answer fails the verification, but what it cost reaches the
// caller's Call and the Observer.
func TestTruncatedAnswerThroughTheEngine(t *testing.T) {
	e, _, log := engineOver(t, []reply{{file: "max_tokens.json"}}, nil)
	call := &claims.Call{Scope: "payer:test"}
	_, err := e.Verify(context.Background(), claims.Standard, request("Base mainnet uses chain ID 8453.", nil), call)
	var re *ResponseError
	if !errors.Is(err, claims.ErrProviderBadOutput) || !errors.As(err, &re) || re.StopReason != "max_tokens" {
		t.Fatalf("error %v", err)
	}
	want := claims.ProviderUsage{Provider: "anthropic", Model: "claude-sonnet-5-5", InputTokens: 18288, CachedInputTokens: 2048, OutputTokens: 3000, SearchCalls: 2}
	if !call.ProviderCalled || call.Usage != want || len(log.usage) != 1 || log.usage[0] != want {
		t.Fatalf("call %+v, observer %+v; want %+v", call.Usage, log.usage, want)
	}
}

// A spend limit fails fast through the engine as quota exhaustion.
func TestSpendLimitThroughTheEngine(t *testing.T) {
	e, api, _ := engineOver(t, []reply{{status: 429, file: "error_spend_limit.json", header: map[string]string{"Retry-After": "1"}}, {file: "success.json"}}, basePages)
	_, err := e.Verify(context.Background(), claims.Standard, request("Base mainnet uses chain ID 8453.", nil), &claims.Call{Scope: "payer:test"})
	if !errors.Is(err, claims.ErrProviderQuotaExhausted) || api.count() != 1 {
		t.Fatalf("error %v after %d requests", err, api.count())
	}
}
