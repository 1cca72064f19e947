package analysis

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestStripCites(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"no change  with double space", "no change  with double space"},
		{"Value 8453 \ue200cite\ue202turn0search0\ue201.", "Value 8453."},
		{"A \ue200cite\ue202turn0search0\ue202turn2view1\ue201 B", "A B"},
		{"A\ue200cite\ue202turn0search0\ue201B", "AB"},
		{"\ue200cite\ue202turn0search0\ue201 Leading", "Leading"},
		{"Trailing \ue200cite\ue202turn0search3", "Trailing"},         // unterminated
		{"Stray \ue203 char", "Stray char"},                           // lone private-use
		{"end\ue201", "end"},                                          // lone closer
		{"keep \u00e9 and \uf8ff\uf8ff edge", "keep \u00e9 and edge"}, // U+F8FF is private use
		{"outside range \uf900 kept", "outside range \uf900 kept"},
	}
	for _, tc := range tests {
		if got := StripCites(tc.in); got != tc.want {
			t.Errorf("StripCites(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNormalizeDomain(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"example.com", "example.com", true},
		{"  Example.COM.  ", "example.com", true},
		{"https://user@docs.example.com:8443/path?q#f", "docs.example.com", true},
		{"*.example.org", "example.org", true},
		{"bücher.example", "xn--bcher-kva.example", true},
		{"localhost", "", false},
		{"[::1]", "", false},
		{"", "", false},
		{"exa mple.com", "", false},
	}
	for _, tc := range tests {
		got, ok := NormalizeDomain(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSchemaStrictMode checks the rules of OpenAI's strict mode on the
// analysis schema: every object lists all its properties as required and
// forbids others, no numeric or length bounds, publishedAt nullable.
func TestSchemaStrictMode(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, n map[string]any)
	walk = func(path string, n map[string]any) {
		for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "pattern", "format", "default"} {
			if _, ok := n[k]; ok {
				t.Errorf("%s: %q is not allowed in strict mode", path, k)
			}
		}
		if n["type"] == "object" {
			if n["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties must be false", path)
			}
			props, _ := n["properties"].(map[string]any)
			req := map[string]bool{}
			for _, r := range n["required"].([]any) {
				req[r.(string)] = true
			}
			if len(req) != len(props) {
				t.Errorf("%s: required %v does not list every property", path, n["required"])
			}
			for name, p := range props {
				if !req[name] {
					t.Errorf("%s.%s is not required", path, name)
				}
				walk(path+"."+name, p.(map[string]any))
			}
		}
		if items, ok := n["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
	}
	walk("$", doc)
	pa := doc["properties"].(map[string]any)["evidence"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)["publishedAt"].(map[string]any)
	if d := cmp.Diff([]any{"string", "null"}, pa["type"]); d != "" {
		t.Errorf("publishedAt type: %s", d)
	}
}

func TestSchemaValidator(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	valid := `{"status":"ambiguous","conclusion":"c","atomicFacts":[],"evidence":[{"id":"e1","url":"u","title":"t","publisher":"p","publishedAt":null,"excerpt":"x","relationship":"context","sourceType":"news","qualityReason":"q"}],"conflicts":[],"limitations":[]}`
	tests := []struct {
		name, text, wantErr string
	}{
		{"valid", valid, ""},
		{"trailing data", valid + " {}", "unexpected data"},
		{"missing property", `{"status":"confirmed"}`, `missing required property "conclusion"`},
		{"extra property", strings.Replace(valid, `"limitations":[]`, `"limitations":[],"score":1`, 1), `unexpected property "score"`},
		{"wrong type", strings.Replace(valid, `"conclusion":"c"`, `"conclusion":3`, 1), "$.conclusion: expected string, got number"},
		{"null not allowed", strings.Replace(valid, `"title":"t"`, `"title":null`, 1), "$.evidence[0].title: expected string, got null"},
		{"bad enum", strings.Replace(valid, `"ambiguous"`, `"maybe"`, 1), `"maybe" is not one of`},
		{"not an object", `[1,2]`, "$: expected object, got array"},
		// timeSensitive is sent as required, but an answer without it (an
		// older model, a recording made before it existed) is accepted.
		{"fact without timeSensitive", strings.Replace(valid, `"atomicFacts":[]`, `"atomicFacts":[{"statement":"s","status":"confirmed","confidence":0.5,"explanation":"x","evidenceIds":["e1"]}]`, 1), ""},
		{"fact with timeSensitive", strings.Replace(valid, `"atomicFacts":[]`, `"atomicFacts":[{"statement":"s","status":"confirmed","confidence":0.5,"explanation":"x","evidenceIds":["e1"],"timeSensitive":true}]`, 1), ""},
		{"timeSensitive not boolean", strings.Replace(valid, `"atomicFacts":[]`, `"atomicFacts":[{"statement":"s","status":"confirmed","confidence":0.5,"explanation":"x","evidenceIds":["e1"],"timeSensitive":"yes"}]`, 1),
			"$.atomicFacts[0].timeSensitive: expected boolean, got string"},
	}
	for _, tc := range tests {
		_, err := v.Parse(tc.text)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error = %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}

// FuzzStripCites: the result never holds a private-use character and
// strings without one are returned unchanged.
func FuzzStripCites(f *testing.F) {
	for _, s := range []string{"plain", "a \ue200cite\ue202turn0search0\ue201.", "\ue200\ue200\ue201", "x\ue201y", "\xff\ue203"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := StripCites(s)
		if strings.ContainsFunc(got, IsPrivateUse) {
			t.Fatalf("StripCites(%q) = %q keeps private-use characters", s, got)
		}
		if !strings.ContainsFunc(s, IsPrivateUse) && got != s {
			t.Fatalf("StripCites changed %q to %q", s, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("StripCites(%q) made invalid UTF-8", s)
		}
	})
}
