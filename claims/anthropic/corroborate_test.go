package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/providertest"
	"github.com/assaykit/assay/claims/openai"
	"github.com/assaykit/assay/field"
)

// openaiStream serves claims/openai's recorded success response as a
// Responses API stream (each output item done, then response.completed).
func openaiStream(t *testing.T) *httptest.Server {
	t.Helper()
	body, err := os.ReadFile("../openai/testdata/responses/success.json")
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for i, it := range resp.Output {
		var c bytes.Buffer
		_ = json.Compact(&c, it)
		fmt.Fprintf(&out, "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":%d,\"output_index\":%d,\"item\":%s}\n\n", i, i, c.String())
	}
	var c bytes.Buffer
	_ = json.Compact(&c, body)
	fmt.Fprintf(&out, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":%d,\"response\":%s}\n\n", len(resp.Output), c.String())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(out.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Both SDK providers, over their recorded payloads, in one engine: on the
// deep tier both are asked and both are named in the provenance; their
// evidence ids stay apart and both usages reach the observer.
func TestCorroborationWithOpenAI(t *testing.T) {
	oa, err := openai.New(&openai.Options{APIKey: "sk-test", BaseURL: openaiStream(t).URL + "/v1", Now: providertest.Now})
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
