package openai

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzStripCites: the result never holds a private-use character and
// strings without one are returned unchanged.
func FuzzStripCites(f *testing.F) {
	for _, s := range []string{"plain", "a \ue200cite\ue202turn0search0\ue201.", "\ue200\ue200\ue201", "x\ue201y", "\xff\ue203"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := stripCites(s)
		if strings.ContainsFunc(got, isPrivateUse) {
			t.Fatalf("stripCites(%q) = %q keeps private-use characters", s, got)
		}
		if !strings.ContainsFunc(s, isPrivateUse) && got != s {
			t.Fatalf("stripCites changed %q to %q", s, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("stripCites(%q) made invalid UTF-8", s)
		}
	})
}

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
		pr, err := p.parseResponse(body, p.schema)
		if err == nil && (pr == nil || pr.Analysis.Status == "") {
			t.Fatalf("success without an analysis: %+v", pr)
		}
	})
}
