package anthropic

import (
	"context"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/providertest"
	"github.com/assaykit/assay/claims/openai"
	"github.com/assaykit/assay/field"
)

// Both SDK providers, over their recorded payloads, in one engine: on the
// deep tier both are asked and both are named in the provenance; their
// evidence ids stay apart and both usages reach the observer.
func TestCorroborationWithOpenAI(t *testing.T) {
	// claims/openai's recorded success response; File is relative to
	// testdata/responses.
	oaAPI := providertest.ResponsesAPI().Serve(t, []reply{{File: "../../../openai/testdata/responses/success.json"}})
	oa, err := openai.New(&openai.Options{APIKey: "sk-test", BaseURL: oaAPI.URL + "/v1", Now: providertest.Now})
	if err != nil {
		t.Fatal(err)
	}
	an, api := newTestProvider(t, ok(), nil)
	e, log := providertest.Engine(t, providertest.BasePages(), oa, an)
	res, err := e.Verify(context.Background(), claims.Deep, providertest.Request(providertest.BaseClaim, func(r *claims.Request) {
		r.SourcePolicy, r.MinimumSources, r.FreshnessHours = "open_web", 1, field.Null[int]()
	}), &claims.Call{Scope: "payer:test"})
	if err != nil {
		t.Fatal(err)
	}
	if api.Count() != 1 {
		t.Errorf("anthropic requests = %d", api.Count())
	}
	pv := res.Provenance
	if pv.Provider != "openai+anthropic" || pv.WebSearchCallCount != 5 {
		t.Errorf("provenance provider %q, web search calls %d", pv.Provider, pv.WebSearchCallCount)
	}
	if res.Status != claims.StatusConfirmed && res.Status != claims.StatusPartiallyConfirmed {
		t.Errorf("status %s, limitations %q", res.Status, res.Limitations)
	}
	anthropicEvidence := 0
	for _, ev := range res.Evidence {
		if strings.HasPrefix(ev.ID, "anthropic:") {
			anthropicEvidence++
		}
	}
	if anthropicEvidence == 0 {
		t.Errorf("no evidence reached through anthropic: %+v", res.Evidence)
	}
	got := map[string]bool{}
	for _, u := range log.Usage() {
		got[u.Provider] = true
	}
	if !got["openai"] || !got["anthropic"] {
		t.Errorf("observer usage %+v", log.Usage())
	}
}
