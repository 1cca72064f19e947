package openai

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/openai/openai-go/v3/responses"
)

// FuzzParseResponse: no body makes the parser panic; a nil error always
// comes with a completed analysis.
func FuzzParseResponse(f *testing.F) {
	entries, _ := os.ReadDir("testdata/responses")
	for _, e := range entries {
		b, _ := os.ReadFile("testdata/responses/" + e.Name())
		f.Add(b)
	}
	p, err := New(&Options{APIKey: "sk-test"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r responses.Response
		if json.Unmarshal(body, &r) != nil {
			return
		}
		pr, err := p.parseResponse(&r)
		if err == nil && (pr == nil || pr.Analysis.Status == "") {
			t.Fatalf("success without an analysis: %+v", pr)
		}
	})
}
