package openai

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/providertest"
)

// The recorded Responses payloads, run through the claims engine: the
// provider's parse feeds reconciliation, snapshots and the verdict rules.
func TestThroughTheEngine(t *testing.T) {
	const baseClaim = providertest.BaseClaim
	basePages := providertest.BasePages()
	basePV := claims.Provenance{Provider: "openai", Model: "gpt-5-mini-2025-08-07", ProviderResponseID: "resp_68e1f0a2b3c4d5e6f70812345",
		SearchedWeb: true, ConsultedSourceCount: 3, CitedSourceCount: 3, ProviderSourceCount: 3, MatchedEvidenceCount: 3,
		SnapshottedSourceCount: 3, WebSearchCallCount: 3, InputTokens: 21480, CachedInputTokens: 1024, OutputTokens: 1812}
	baseUsage := claims.ProviderUsage{Provider: "openai", Model: "gpt-5-mini-2025-08-07", InputTokens: 21480, CachedInputTokens: 1024, OutputTokens: 1812, SearchCalls: 1}
	tests := []struct {
		name      string
		file      string
		req       *claims.Request
		pages     map[string]string
		status    claims.Status
		facts     []claims.Status
		pv        claims.Provenance
		usage     claims.ProviderUsage
		check     func(t *testing.T, res *claims.Result)
		limitIn   string
		wantTypes map[string]string
	}{
		{
			// authoritative: chainlist.org and developers.circle.com are
			// "other" and do not count; docs.base.org alone is one source.
			name: "success, authoritative", file: "success.json", req: providertest.Request(baseClaim, nil), pages: basePages,
			status: claims.StatusInsufficientEvidence, facts: []claims.Status{claims.StatusInsufficientEvidence, claims.StatusInsufficientEvidence},
			pv: basePV, usage: baseUsage, limitIn: `The provider's overall status was "confirmed"`,
			wantTypes: map[string]string{"e1": "vendor", "e2": "other", "e3": "other"},
		},
		{
			name: "success, open_web", file: "success.json",
			req:    providertest.Request(baseClaim, func(r *claims.Request) { r.SourcePolicy = "open_web" }),
			pages:  basePages,
			status: claims.StatusPartiallyConfirmed, facts: []claims.Status{claims.StatusConfirmed, claims.StatusInsufficientEvidence},
			pv: basePV, usage: baseUsage, limitIn: "Token decimals were checked for the canonical USDC contract only.",
		},
		{
			name: "private-use cite markers", file: "cite_markers.json",
			req: providertest.Request("Mount Everest is 8,850 metres tall.", func(r *claims.Request) {
				r.SourcePolicy, r.MinimumSources = "open_web", 1
			}),
			pages:  map[string]string{"https://www.example-survey.org/everest-2020": "Survey results. The new height of Mount Everest is 8,848.86 metres."},
			status: claims.StatusContradicted, facts: []claims.Status{claims.StatusContradicted},
			pv: claims.Provenance{Provider: "openai", Model: "gpt-5-mini-2025-08-07", ProviderResponseID: "resp_markers00000000000000000001",
				SearchedWeb: true, ConsultedSourceCount: 1, CitedSourceCount: 1, ProviderSourceCount: 1, MatchedEvidenceCount: 1,
				SnapshottedSourceCount: 1, WebSearchCallCount: 1, InputTokens: 21480, CachedInputTokens: 1024, OutputTokens: 1812},
			usage: baseUsage,
			check: func(t *testing.T, res *claims.Result) {
				ev := res.Evidence[0]
				if ev.Excerpt != "The new height of Mount Everest is 8,848.86 metres." || !strings.HasPrefix(ev.QualityReason, "quote verified on snapshot") {
					t.Errorf("evidence %+v", ev)
				}
				b, _ := json.Marshal(res)
				for _, r := range string(b) {
					if r >= 0xE000 && r <= 0xF8FF {
						t.Fatalf("private-use character U+%04X in the result", r)
					}
				}
			},
		},
		{
			// A query-only action (no type) is a search, "find" is
			// find_in_page, a null open_page URL adds no source, a failed
			// search call is still a call.
			name: "legacy actions", file: "actions_legacy.json",
			req:    providertest.Request("HTTP status code 402 was first registered in 1997.", nil),
			pages:  map[string]string{"https://www.rfc-editor.org/rfc/rfc9110.html": "15.5.3. 402 Payment Required. The 402 (Payment Required) status code is reserved for future use."},
			status: claims.StatusInsufficientEvidence, facts: []claims.Status{claims.StatusInsufficientEvidence},
			pv: claims.Provenance{Provider: "openai", Model: "gpt-5-mini-2025-08-07", ProviderResponseID: "resp_legacy00000000000000000001",
				SearchedWeb: true, ConsultedSourceCount: 1, CitedSourceCount: 1, ProviderSourceCount: 1, MatchedEvidenceCount: 1,
				SnapshottedSourceCount: 1, WebSearchCallCount: 4, InputTokens: 21480, CachedInputTokens: 1024, OutputTokens: 1812},
			usage:   claims.ProviderUsage{Provider: "openai", Model: "gpt-5-mini-2025-08-07", InputTokens: 21480, CachedInputTokens: 1024, OutputTokens: 1812, SearchCalls: 2},
			limitIn: `web search call ws_legacy_4 ended with status "failed"`,
			check: func(t *testing.T, res *claims.Result) {
				if s := res.ProviderSources[0]; !cmp.Equal(s.Actions, []string{"find_in_page"}) || !cmp.Equal(s.SearchCallIDs, []string{"ws_legacy_3"}) {
					t.Errorf("source %+v", s)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, api, log := providertest.EngineOver(t, start, []reply{{File: tc.file}}, tc.pages)
			call := &claims.Call{Scope: "payer:test"}
			res, err := e.Verify(context.Background(), claims.Standard, tc.req, call)
			if err != nil {
				t.Fatal(err)
			}
			if api.Count() != 1 {
				t.Fatalf("%d API requests", api.Count())
			}
			if res.Status != tc.status || !cmp.Equal(statuses(res), tc.facts) {
				t.Fatalf("status %s facts %v, want %s %v; limitations %q", res.Status, statuses(res), tc.status, tc.facts, res.Limitations)
			}
			for _, ev := range res.Evidence {
				if !ev.ProviderSourceMatched || !ev.Consulted || !ev.Snapshotted {
					t.Errorf("evidence %s: matched %v consulted %v snapshotted %v", ev.ID, ev.ProviderSourceMatched, ev.Consulted, ev.Snapshotted)
				}
				if want, ok := tc.wantTypes[ev.ID]; ok && ev.SourceType != want {
					t.Errorf("evidence %s type %s, want %s", ev.ID, ev.SourceType, want)
				}
			}
			if d := cmp.Diff(tc.pv, res.Provenance); d != "" {
				t.Errorf("provenance (-want +got):\n%s", d)
			}
			if !call.ProviderCalled || call.Usage != tc.usage || len(log.Usage()) != 1 || log.Usage()[0] != tc.usage {
				t.Errorf("usage: call %v %+v, observer %+v; want %+v", call.ProviderCalled, call.Usage, log.Usage(), tc.usage)
			}
			if tc.limitIn != "" && !containsLimitation(res, tc.limitIn) {
				t.Errorf("no limitation %q in %q", tc.limitIn, res.Limitations)
			}
			if tc.check != nil {
				tc.check(t, res)
			}
		})
	}
}

// A truncated answer fails the verification, but the tokens it cost reach
// the caller's Call and the Observer.
func TestTruncatedAnswerThroughTheEngine(t *testing.T) {
	e, api, log := providertest.EngineOver(t, start, []reply{{File: "incomplete_max_output_tokens.json"}}, nil)
	call := &claims.Call{Scope: "payer:test"}
	_, err := e.Verify(context.Background(), claims.Standard, providertest.Request("Base mainnet uses chain ID 8453.", nil), call)
	var re *ResponseError
	if !errors.Is(err, claims.ErrProviderBadOutput) || !errors.As(err, &re) || re.Reason != "max_output_tokens" {
		t.Fatalf("error %v", err)
	}
	want := claims.ProviderUsage{Provider: "openai", Model: "gpt-5-mini-2025-08-07", InputTokens: 9120, OutputTokens: 1500, SearchCalls: 1}
	if api.Count() != 1 || !call.ProviderCalled || call.Usage != want || len(log.Usage()) != 1 || log.Usage()[0] != want {
		t.Fatalf("requests %d, call %v %+v, observer %+v; want %+v", api.Count(), call.ProviderCalled, call.Usage, log.Usage(), want)
	}
}

func statuses(res *claims.Result) []claims.Status {
	var out []claims.Status
	for _, f := range res.AtomicFacts {
		out = append(out, f.Status)
	}
	return out
}

func containsLimitation(res *claims.Result, s string) bool {
	for _, l := range res.Limitations {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
