package openai

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/internal/providertest"
)

// BenchmarkParseResponse measures turning a recorded response into a
// ProviderResponse (SDK decode, schema validation, cleaning).
func BenchmarkParseResponse(b *testing.B) {
	body, err := os.ReadFile("testdata/responses/success.json")
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(&Options{APIKey: "sk-test"})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var r responses.Response
		if err := json.Unmarshal(body, &r); err != nil {
			b.Fatal(err)
		}
		if _, err := p.parseResponse(&r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildRequest measures building a research-tier request.
func BenchmarkBuildRequest(b *testing.B) {
	p, err := New(&Options{APIKey: "sk-test"})
	if err != nil {
		b.Fatal(err)
	}
	q := providertest.Query(claims.Research)
	q.AllowedDomains = []string{"docs.base.org", "circle.com", "chainlist.org"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.buildRequest(q, providertest.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
