package shapes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T, name string) *sjs.Schema {
	t.Helper()
	raw, ok := Schema(name)
	if !ok {
		t.Fatalf("no schema for %s", name)
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := sjs.NewCompiler()
	url := "mem://" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, raw)
	}
	return sch
}

// schemaWalker derives boundary fixtures from a schema and a valid base
// document.
type schemaWalker struct {
	defs     map[string]any
	fixtures []fixture
}

type fixture struct {
	what string
	doc  any
}

func clone(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func (w *schemaWalker) resolve(s map[string]any) (map[string]any, bool) {
	nullable := false
	for {
		if ref, ok := s["$ref"].(string); ok {
			s = w.defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
			continue
		}
		if alts, ok := s["anyOf"].([]any); ok && len(alts) == 2 {
			if n, _ := alts[1].(map[string]any); n["type"] == "null" {
				s, nullable = alts[0].(map[string]any), true
				continue
			}
		}
		return s, nullable
	}
}

// variants returns values at and around the bounds of schema s.
func (w *schemaWalker) variants(s map[string]any, current any) map[string]any {
	s, nullable := w.resolve(s)
	out := map[string]any{}
	if nullable {
		out["null"] = nil
	}
	num := func(k string) (float64, bool) {
		v, ok := s[k].(float64)
		return v, ok
	}
	switch s["type"] {
	case "string":
		if en, ok := s["enum"].([]any); ok {
			out["enum[0]"] = en[0]
			out["not in enum"] = "zz_not_in_enum"
		}
		if p, ok := s["pattern"].(string); ok {
			out["pattern counter-example"] = "!! " + p
		}
		for _, k := range []string{"minLength", "maxLength"} {
			if n, ok := num(k); ok && n < 100000 {
				for _, d := range []int{-1, 0, 1} {
					if m := int(n) + d; m >= 0 {
						out[fmt.Sprintf("%s%+d", k, d)] = strings.Repeat("b", m)
					}
				}
			}
		}
		out["wrong type"] = 7
	case "integer", "number":
		for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
			if n, ok := num(k); ok {
				for _, d := range []float64{-1, 0, 1} {
					out[fmt.Sprintf("%s%+g", k, d)] = n + d
				}
				if s["type"] == "number" {
					out[k+"-0.5"] = n - 0.5
					out[k+"+0.5"] = n + 0.5
				}
			}
		}
		out["wrong type"] = "x"
	case "boolean":
		out["wrong type"] = "x"
	case "array":
		items, _ := s["items"].(map[string]any)
		var elem any
		if cur, ok := current.([]any); ok && len(cur) > 0 {
			elem = cur[0]
		} else if items != nil {
			if is, _ := w.resolve(items); is["type"] == "string" {
				elem = "e"
				if en, ok := is["enum"].([]any); ok {
					elem = en[0]
				}
				if n, ok := is["minLength"].(float64); ok {
					elem = strings.Repeat("e", int(n))
				}
			} else if is["type"] == "integer" || is["type"] == "number" {
				elem = 1
			}
		}
		for _, k := range []string{"minItems", "maxItems"} {
			if n, ok := num(k); ok && elem != nil {
				for _, d := range []int{-1, 0, 1} {
					if m := int(n) + d; m >= 0 {
						l := make([]any, m)
						for i := range l {
							l[i] = clone(elem)
						}
						out[fmt.Sprintf("%s%+d", k, d)] = l
					}
				}
			}
		}
		out["wrong type"] = "x"
	case "object":
		out["wrong type"] = "x"
	}
	return out
}

// walk collects fixtures for every property of every object in doc.
func (w *schemaWalker) walk(root any, path []any, s map[string]any, doc any) {
	s, _ = w.resolve(s)
	switch d := doc.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			return
		}
		w.add(root, path, "extra key", func(v any) any { m := v.(map[string]any); m["zz_extra"] = 1; return m })
		req, _ := s["required"].([]any)
		for _, r := range req {
			name := r.(string)
			w.add(root, path, "without "+name, func(v any) any { m := v.(map[string]any); delete(m, name); return m })
		}
		for name, p := range props {
			ps, ok := p.(map[string]any)
			if !ok {
				continue // true: anything goes
			}
			for what, val := range w.variants(ps, d[name]) {
				w.add(root, path, name+" "+what, func(v any) any { m := v.(map[string]any); m[name] = clone(val); return m })
			}
			if sub, ok := d[name]; ok {
				w.walk(root, append(append([]any{}, path...), name), ps, sub)
			}
		}
	case []any:
		items, _ := s["items"].(map[string]any)
		if items != nil && len(d) > 0 {
			w.walk(root, append(append([]any{}, path...), 0), items, d[0])
		}
	}
}

func (w *schemaWalker) add(root any, path []any, what string, edit func(any) any) {
	doc := clone(root)
	var parent any
	cur := doc
	for _, p := range path {
		parent = cur
		switch k := p.(type) {
		case string:
			cur = cur.(map[string]any)[k]
		case int:
			cur = cur.([]any)[k]
		}
	}
	edited := edit(cur)
	if parent == nil {
		doc = edited
	}
	w.fixtures = append(w.fixtures, fixture{fmt.Sprintf("%v %s", path, what), doc})
}

// boundaryFixtures is base, a valid document of the named shape, and the
// fixtures the walker derives from it with the shape's schema.
func boundaryFixtures(t *testing.T, name, base string) []fixture {
	t.Helper()
	raw, _ := Schema(name)
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal([]byte(base), &doc); err != nil {
		t.Fatal(err)
	}
	w := &schemaWalker{defs: schema["$defs"].(map[string]any)}
	w.walk(doc, nil, schema, doc)
	return append([]fixture{{"base", doc}}, w.fixtures...)
}

// TestSchemaAgreesWithDecode derives boundary fixtures (min−1, min, max,
// max+1, enum and pattern counter-examples, extra keys, missing required
// keys, wrong types) from each shape's schema and checks that a real JSON
// Schema validator and Decode accept and reject the same ones.
func TestSchemaAgreesWithDecode(t *testing.T) {
	bases := map[string][]string{}
	for _, c := range readGolden(t, "golden_body.jsonl.gz") {
		if c.Errors == nil && len(bases[c.Shape]) < 2 && strings.HasPrefix(c.Input, "{") && !strings.Contains(c.Input, "\n") {
			bases[c.Shape] = append(bases[c.Shape], c.Input)
		}
	}
	// More bases for our own shapes (curation, commerce, subscriptions).
	draft := `{"title":"Invoice chasing for plumbers","problem":"Small plumbing firms lose weeks of cash flow chasing unpaid invoices by phone.","buyer":"Owner of a plumbing firm","category":"trades","solution_hypothesis":"Automated polite reminders with payment links.","pain":4,"frequency":4,"willingness_to_pay":2,"reachable_buyers":3,"feasibility":3,"competition_gap":2,"evaluation_notes":"Three forum threads and two reviews describe the same pain.","signal_ids":["sig_00000000000000000000000000000001"],"rationale":{"pain":"Owners describe it every week.","competition_gap":"Incumbents are generic suites."}}`
	signal := `{"kind":"question","sourceUrl":"https://forum.example.com/q/1","origin":"forum","title":"How do I chase invoices?","observedAt":"2026-01-02T03:04:05Z","license":"CC BY-SA 4.0","engagement":{"upvotes":3}}`
	for name, docs := range map[string][]string{
		"NicheCreateRequest":       {`{"operationId":"op-1","draft":` + draft + `}`},
		"NicheReviseRequest":       {`{"expectedRevision":2,"reason":"new evidence","draft":` + draft + `}`},
		"NicheTransitionRequest":   {`{"expectedRevision":1}`},
		"NicheSignalInput":         {signal},
		"NicheSignalBatch":         {`{"signals":[` + signal + `]}`},
		"NicheModerationRequest":   {`{"state":"accepted","note":"checked"}`},
		"ReceiptVerifyRequest":     {`{"receipt":{"receiptId":"rcpt_1"}}`},
		"SubscriptionClaimRequest": {`{"sessionId":"cs_test_1"}`},
	} {
		bases[name] = append(bases[name], docs...)
	}
	checked := 0
	for _, name := range Names() {
		if isQueryShape(name) {
			continue
		}
		sch := compileSchema(t, name)
		if len(bases[name]) == 0 {
			t.Errorf("%s: no valid base document", name)
		}
		for _, base := range bases[name] {
			for _, f := range boundaryFixtures(t, name, base) {
				b, _ := json.Marshal(f.doc)
				inst, err := sjs.UnmarshalJSON(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				schemaErr := sch.Validate(inst)
				dst, _ := New(name)
				decodeErr := Decode(b, dst)
				if (schemaErr == nil) != (decodeErr == nil) {
					t.Errorf("%s %s: schema says %v, Decode says %v\n%s", name, f.what, schemaErr, decodeErr, b)
				}
				checked++
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d fixtures", checked)
	}
	t.Logf("%d fixtures agree", checked)
}

func TestSchemaEveryShape(t *testing.T) {
	defs, err := OpenAPISchemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		if _, ok := defs[name]; !ok {
			t.Errorf("OpenAPISchemas lacks %s", name)
		}
	}
	for name, d := range defs {
		if strings.Contains(string(d), "#/$defs/") {
			t.Errorf("%s keeps a $defs reference: %s", name, d)
		}
	}
	if _, ok := Schema("NoSuchShape"); ok {
		t.Error("Schema accepted an unknown name")
	}
	// Spot checks of what the walker adds.
	raw, _ := Schema("ExploreRequest")
	for _, want := range []string{
		`"required":["lat","lon"]`,
		`"limit":{"type":"integer","maximum":5,"minimum":1,"default":3,"deprecated":true}`,
		`"photoStyles":{"anyOf":[{"items":{"type":"string","enum":["nature"`,
		`"key":{"type":"string","maxLength":80,"minLength":1,"pattern":"^[A-Za-z0-9_:.-]+$"}`,
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("ExploreRequest schema lacks %s:\n%s", want, raw)
		}
	}
}
