package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/providertest"
)

// reply is one scripted answer of the fake Messages API.
type reply = providertest.Reply

// newTestProvider starts a fake Messages API with the replies and returns
// a provider pointed at it.
func newTestProvider(t *testing.T, replies []reply, mod func(*Options)) (*Provider, *providertest.Fake) {
	t.Helper()
	api := providertest.MessagesAPI().Serve(t, replies)
	o := &Options{APIKey: "sk-ant-test", BaseURL: api.URL, Now: providertest.Now, MinAttemptTime: time.Millisecond}
	return providertest.New(t, New, o, mod), api
}

// start is newTestProvider for the shared table runners.
func start(t *testing.T, replies []reply, mod func(*Options)) (claims.SearchProvider, *providertest.Fake) {
	return newTestProvider(t, replies, mod)
}

func ok() []reply { return []reply{{File: "success.json"}} }

// wireRequest is the documented body of POST /v1/messages, as the tests
// read what the SDK sent.
type wireRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	System    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"system"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"messages"`
	Tools []map[string]any `json:"tools"`
}

func TestRequest(t *testing.T) {
	tests := []struct {
		name      string
		q         func() *claims.ProviderQuery
		mod       func(*Options)
		wantTool  map[string]any
		wantLimit string
	}{
		{name: "no domains", q: func() *claims.ProviderQuery { return providertest.Query(claims.Quick) },
			wantTool: map[string]any{"type": "web_search_20250305", "name": "web_search", "max_uses": 1.0}},
		{name: "allowed domains", q: func() *claims.ProviderQuery {
			q := providertest.Query(claims.Standard)
			q.AllowedDomains = []string{"HTTPS://Docs.Base.org/x", "circle.com", "docs.base.org"}
			return q
		}, wantTool: map[string]any{"type": "web_search_20250305", "name": "web_search", "max_uses": 3.0, "allowed_domains": []any{"docs.base.org", "circle.com"}}},
		{name: "blocked domains", q: func() *claims.ProviderQuery {
			q := providertest.Query(claims.Deep)
			q.BlockedDomains = []string{"reddit.com"}
			return q
		}, mod: func(o *Options) { o.UserLocation = &UserLocation{Country: "DE", City: "Berlin"} },
			wantTool: map[string]any{"type": "web_search_20250305", "name": "web_search", "max_uses": 7.0, "blocked_domains": []any{"reddit.com"},
				"user_location": map[string]any{"type": "approximate", "country": "DE", "city": "Berlin"}}},
		{name: "both lists: allowed wins", q: func() *claims.ProviderQuery {
			q := providertest.Query(claims.Standard)
			q.AllowedDomains = []string{"base.org"}
			q.BlockedDomains = []string{"forum.base.org"}
			return q
		}, wantTool: map[string]any{"type": "web_search_20250305", "name": "web_search", "max_uses": 3.0, "allowed_domains": []any{"base.org"}},
			wantLimit: "accepts allowed or blocked domains, not both"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, api := newTestProvider(t, ok(), tc.mod)
			q := tc.q()
			pr, err := p.Search(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			req := api.Request(0)
			// The SDK (v2.15.0) sends the key as a bearer token.
			if got := req.Header.Get("Authorization"); got != "Bearer sk-ant-test" {
				t.Errorf("Authorization = %q", got)
			}
			if req.Header.Get("Anthropic-Version") == "" {
				t.Error("no anthropic-version header")
			}
			var w wireRequest
			if err := json.Unmarshal(req.Body, &w); err != nil {
				t.Fatal(err)
			}
			tier, _ := claims.TierByName(q.Tier)
			if !w.Stream || w.Model != DefaultModel || w.MaxTokens != tier.MaxOutputTokens {
				t.Errorf("stream %v model %q max_tokens %d", w.Stream, w.Model, w.MaxTokens)
			}
			if d := cmp.Diff([]map[string]any{tc.wantTool}, w.Tools); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
			if len(w.System) != 1 || !strings.Contains(w.System[0].Text, "untrusted") || !strings.Contains(w.System[0].Text, `"atomicFacts"`) {
				t.Errorf("system prompt lacks the security rule or the schema")
			}
			if len(w.Messages) != 1 || w.Messages[0].Role != "user" || !strings.Contains(w.Messages[0].Content[0].Text, "Today is 2026-11-22") ||
				!strings.Contains(w.Messages[0].Content[0].Text, `"claim": "Base mainnet uses chain ID 8453`) {
				t.Errorf("messages = %+v", w.Messages)
			}
			if tc.wantLimit != "" && !strings.Contains(strings.Join(pr.Analysis.Limitations, "\n"), tc.wantLimit) {
				t.Errorf("limitations %q lack %q", pr.Analysis.Limitations, tc.wantLimit)
			}
		})
	}
}

func TestSearchSuccess(t *testing.T) {
	p, api := newTestProvider(t, ok(), nil)
	q := providertest.Query(claims.Standard)
	early := providertest.RecordCalls(q)
	got, err := p.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if api.Count() != 1 {
		t.Errorf("requests = %d", api.Count())
	}
	published := "2026-10-02"
	f := false
	want := &claims.ProviderResponse{
		Provider:   "anthropic",
		Model:      "claude-sonnet-5-5",
		ResponseID: "msg_01XFDUDYJgAACzvnptvVoYEL",
		SearchCalls: []claims.SearchCall{
			{ID: "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", Action: claims.ActionSearch, Queries: []string{"base mainnet chain id"},
				Sources: []claims.SourceRef{
					{URL: "https://docs.base.org/network-information", Title: "Network information"},
					{URL: "https://chainlist.org/chain/8453", Title: "Base Mainnet - Chainlist"},
				}},
			{ID: "srvtoolu_02Pq7dGvB5T4aNnR9x1uK3cW", Action: claims.ActionSearch, Queries: []string{"USDC Base decimals"},
				Sources: []claims.SourceRef{{URL: "https://developers.circle.com/stablecoins/usdc-contract-addresses", Title: "USDC Contract Addresses"}}},
		},
		Citations: []claims.Citation{
			{URL: "https://docs.base.org/network-information", Title: "Network information"},
			{URL: "https://chainlist.org/chain/8453", Title: "Base Mainnet - Chainlist"},
			{URL: "https://developers.circle.com/stablecoins/usdc-contract-addresses", Title: "USDC Contract Addresses"},
		},
		Analysis: claims.Analysis{
			Status:     claims.StatusConfirmed,
			Conclusion: "Base mainnet uses chain ID 8453, and USDC on Base uses 6 decimals.",
			AtomicFacts: []claims.ProviderFact{
				{Statement: "Base mainnet uses chain ID 8453.", Status: claims.StatusConfirmed, Confidence: 0.92,
					Explanation: "The Base network documentation lists 8453 as the mainnet chain ID.", EvidenceIDs: []string{"e1"}, TimeSensitive: &f},
				{Statement: "USDC on Base has 6 decimals.", Status: claims.StatusConfirmed, Confidence: 0.87,
					Explanation: "Circle's contract reference gives 6 decimals for USDC on Base.", EvidenceIDs: []string{"e2"}, TimeSensitive: &f},
			},
			Evidence: []claims.ProviderEvidence{
				{ID: "e1", URL: "https://docs.base.org/network-information", Title: "Network information", Publisher: "Base",
					Excerpt: "Chain ID: 8453", Relationship: claims.Supports, SourceType: "official", QualityReason: "Official network documentation of Base."},
				// The empty excerpt takes the citation's cited_text.
				{ID: "e2", URL: "https://developers.circle.com/stablecoins/usdc-contract-addresses", Title: "USDC Contract Addresses", Publisher: "Circle",
					PublishedAt: &published, Excerpt: "USDC uses 6 decimal places on all supported chains.", Relationship: claims.Supports,
					SourceType: "official", QualityReason: "Issuer documentation."},
				// A cited URL no evidence item names becomes context.
				{ID: "cite1", URL: "https://chainlist.org/chain/8453", Title: "Base Mainnet - Chainlist", Excerpt: "ChainID 8453",
					Relationship: claims.Context, SourceType: "web",
					QualityReason: "Cited in the provider's answer text; the answer did not say how it bears on the claim."},
			},
			Conflicts:   []claims.Conflict{},
			Limitations: []string{"Token decimals were checked for the canonical USDC contract only."},
		},
		Usage: claims.Usage{InputTokens: 16240 + 2048, CachedInputTokens: 2048, OutputTokens: 1390},
	}
	var raw map[string]any
	if err := json.Unmarshal(got.Raw, &raw); err != nil || raw["id"] != "msg_01XFDUDYJgAACzvnptvVoYEL" || len(raw["content"].([]any)) != 7 {
		t.Errorf("Raw is not the accumulated message: %v", err)
	}
	got.Raw = nil
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	if d := cmp.Diff(got.SearchCalls, early()); d != "" {
		t.Errorf("early reports differ from the final search calls (-final +early):\n%s", d)
	}
}

func TestSearchToolError(t *testing.T) {
	p, _ := newTestProvider(t, []reply{{File: "search_error.json"}}, nil)
	got, err := p.Search(context.Background(), providertest.Query(claims.Quick))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.SearchCalls) != 1 || len(got.SearchCalls[0].Sources) != 0 || got.Analysis.Status != claims.StatusInsufficientEvidence {
		t.Errorf("search calls %+v status %s", got.SearchCalls, got.Analysis.Status)
	}
	// The fenced JSON is read; the failed search is a limitation.
	if d := cmp.Diff([]string{"The provider's web search srvtoolu_01WYG3ziw53XMcoyKL4XcZmE failed: max_uses_exceeded."}, got.Analysis.Limitations); d != "" {
		t.Errorf("limitations: %s", d)
	}
}

// TestFailures covers every failure class with recorded payloads.
func TestFailures(t *testing.T) {
	overloadedMidStream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-5-5\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	providertest.RunFailures(t, start, []providertest.Failure[Options]{
		{
			Name: "truncated at max_tokens", Replies: []reply{{File: "max_tokens.json"}},
			WantKind: claims.ErrProviderBadOutput, WantCalls: 1,
			Check: func(t *testing.T, pr *claims.ProviderResponse, err error) {
				var re *ResponseError
				if !errors.As(err, &re) || re.StopReason != "max_tokens" {
					t.Errorf("ResponseError = %+v", re)
				}
				if pr == nil || len(pr.SearchCalls) != 2 || pr.Usage.OutputTokens != 3000 {
					t.Errorf("partial response = %+v", pr)
				}
			},
		},
		{
			Name: "refusal", Replies: []reply{{File: "refusal.json"}},
			WantKind: claims.ErrProviderBadOutput, WantCalls: 1,
			Check: func(t *testing.T, _ *claims.ProviderResponse, err error) {
				var re *ResponseError
				if !errors.As(err, &re) || re.StopReason != "refusal" {
					t.Errorf("ResponseError = %+v", re)
				}
			},
		},
		{
			Name: "answer not JSON", Replies: []reply{{File: "analysis_not_json.json"}},
			WantKind: claims.ErrProviderBadOutput, WantCalls: 1,
			Check: func(t *testing.T, pr *claims.ProviderResponse, err error) {
				var oe *OutputError
				if !errors.As(err, &oe) || !strings.Contains(oe.Reason, "no JSON object") || pr == nil || len(pr.SearchCalls) != 2 {
					t.Errorf("OutputError = %+v, partial %+v", oe, pr)
				}
			},
		},
		{
			Name: "malformed stream", Replies: []reply{{Body: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\n\n"}},
			WantKind: claims.ErrProviderBadOutput, WantCalls: 1,
		},
		{
			Name: "stream ends early", Replies: []reply{{Body: overloadedMidStream[:strings.Index(overloadedMidStream, "event: error")]}},
			WantKind: claims.ErrProviderBadOutput, WantCalls: 1,
		},
		{
			Name: "overloaded error event mid-stream", Replies: []reply{{Body: overloadedMidStream}},
			WantKind: claims.ErrProviderFailed, WantCalls: 1,
			Check: func(t *testing.T, _ *claims.ProviderResponse, err error) {
				var ae *APIError
				if !errors.As(err, &ae) || !ae.InStream || ae.Type != "overloaded_error" || ae.StatusCode != 529 {
					t.Errorf("APIError = %+v", ae)
				}
			},
		},
		{
			Name:     "spend limit is never retried",
			Replies:  []reply{{Status: 429, File: "error_spend_limit.json", Header: map[string]string{"Retry-After": "1"}}, {File: "success.json"}},
			WantKind: claims.ErrProviderQuotaExhausted, WantCalls: 1,
			Check: func(t *testing.T, _ *claims.ProviderResponse, err error) {
				var ae *APIError
				if !errors.As(err, &ae) || ae.Code != "enforced_spend_limit_reached" || ae.RequestID != "req_1" && ae.RequestID != "req_test_1" {
					t.Errorf("APIError = %+v", ae)
				}
			},
		},
		{
			Name:     "credit balance too low",
			Replies:  []reply{{Status: 400, File: "error_credit_low.json"}},
			WantKind: claims.ErrProviderQuotaExhausted, WantCalls: 1,
		},
		{
			Name:     "429 with a Retry-After too long",
			Replies:  []reply{{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"Retry-After": "60"}}, {File: "success.json"}},
			WantKind: claims.ErrProviderRateLimited, WantCalls: 1,
			Check: func(t *testing.T, _ *claims.ProviderResponse, err error) {
				var pe *claims.ProviderError
				if !errors.As(err, &pe) || pe.RetryAfter != time.Minute {
					t.Errorf("RetryAfter = %v, want 1m", pe.RetryAfter)
				}
			},
		},
		{
			Name:     "429 twice",
			Replies:  []reply{{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"retry-after-ms": "20"}}},
			WantKind: claims.ErrProviderRateLimited, WantCalls: 2,
		},
		{
			Name:     "5xx forever",
			Replies:  []reply{{Status: 500, File: "error_api.json"}},
			WantKind: claims.ErrProviderFailed, WantCalls: 2,
			Check: func(t *testing.T, _ *claims.ProviderResponse, err error) {
				var ae *APIError
				if !errors.As(err, &ae) || ae.StatusCode != 500 || ae.Type != "api_error" {
					t.Errorf("APIError = %+v", ae)
				}
			},
		},
		{
			Name:     "529 overloaded with retries disabled",
			Replies:  []reply{{Status: 529, File: "error_overloaded.json"}},
			Mod:      func(o *Options) { o.MaxRetries = -1 },
			WantKind: claims.ErrProviderFailed, WantCalls: 1,
		},
		{
			Name:     "rejected API key",
			Replies:  []reply{{Status: 401, File: "error_auth.json"}},
			WantKind: claims.ErrProviderNotConfigured, WantCalls: 1,
		},
		{
			Name:       "context deadline",
			Replies:    []reply{{Delay: 2 * time.Second, File: "success.json"}},
			CtxTimeout: 100 * time.Millisecond,
			WantKind:   claims.ErrProviderTimeout, WantCalls: 1,
		},
	})
}

func TestRetryThenSuccess(t *testing.T) {
	providertest.RunRetryThenSuccess(t, start, "msg_01XFDUDYJgAACzvnptvVoYEL", []providertest.Retry{
		{Name: "429 with Retry-After", First: reply{Status: 429, File: "error_rate_limit.json", Header: map[string]string{"Retry-After": "1"}}, MinWait: time.Second},
		{Name: "529 overloaded", First: reply{Status: 529, File: "error_overloaded.json"}, MinWait: 0},
		{Name: "500", First: reply{Status: 500, File: "error_api.json"}, MinWait: 0},
		{Name: "connection reset", First: reply{Hangup: true}, MinWait: 0},
	})
}

func TestNotConfigured(t *testing.T) {
	p, api := newTestProvider(t, ok(), func(o *Options) { o.APIKey = " " })
	_, err := p.Search(context.Background(), providertest.Query(claims.Quick))
	if !errors.Is(err, claims.ErrProviderNotConfigured) || api.Count() != 0 || p.Configured() {
		t.Fatalf("error = %v, requests %d", err, api.Count())
	}
	if _, err := New(&Options{BaseURL: "ftp://x"}); err == nil {
		t.Error("ftp base URL accepted")
	}
	want := claims.ProviderCapabilities{DomainFilter: true, MaxDomains: 100, BlockedDomainFilter: true, SourceName: "anthropic_web_search"}
	if d := cmp.Diff(want, p.Capabilities()); d != "" || p.Name() != "anthropic" {
		t.Errorf("capabilities: %s", d)
	}
}

// A paused turn is sent back as-is and continued; the turn's content,
// searches and usage are joined.
func TestPauseTurnContinued(t *testing.T) {
	p, api := newTestProvider(t, []reply{{File: "pause_turn.json"}, {File: "continued.json"}}, nil)
	q := providertest.Query(claims.Standard)
	early := providertest.RecordCalls(q)
	got, err := p.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if api.Count() != 2 {
		t.Fatalf("requests = %d, want 2", api.Count())
	}
	var second struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(api.Request(1).Body, &second); err != nil {
		t.Fatal(err)
	}
	if len(second.Messages) != 2 || second.Messages[1].Role != "assistant" || len(second.Messages[1].Content) != 2 ||
		second.Messages[1].Content[0]["type"] != "server_tool_use" || second.Messages[1].Content[1]["type"] != "web_search_tool_result" {
		t.Errorf("continuation request messages = %+v", second.Messages)
	}
	if got.ResponseID != "msg_01PausedTurn00000000000001" || len(got.SearchCalls) != 2 || len(got.SearchCalls[0].Queries) != 1 ||
		got.Analysis.Status != claims.StatusConfirmed || len(got.Analysis.Evidence) != 3 {
		t.Errorf("response = %+v", got)
	}
	if want := (claims.Usage{InputTokens: 9000 + 12000 + 2048, CachedInputTokens: 2048, OutputTokens: 200 + 1190}); got.Usage != want {
		t.Errorf("usage = %+v, want %+v", got.Usage, want)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(got.Raw, &raws); err != nil || len(raws) != 2 {
		t.Errorf("Raw is not the two messages: %v", err)
	}
	var ids []string
	for _, c := range early() {
		ids = append(ids, c.ID)
	}
	if d := cmp.Diff([]string{"srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", "srvtoolu_02Pq7dGvB5T4aNnR9x1uK3cW"}, ids); d != "" {
		t.Errorf("early reports: %s", d)
	}
}

// A turn still paused after MaxContinuations fails as stopped short, with
// what it cost.
func TestPauseTurnGivesUp(t *testing.T) {
	p, api := newTestProvider(t, []reply{{File: "pause_turn.json"}}, nil)
	pr, err := p.Search(context.Background(), providertest.Query(claims.Standard))
	var re *ResponseError
	if !errors.Is(err, claims.ErrProviderBadOutput) || !errors.As(err, &re) || re.StopReason != "pause_turn" {
		t.Fatalf("error = %v", err)
	}
	if api.Count() != 1+MaxContinuations || pr == nil || pr.Usage.OutputTokens != 200*(1+MaxContinuations) {
		t.Errorf("requests %d, partial %+v", api.Count(), pr)
	}
}
