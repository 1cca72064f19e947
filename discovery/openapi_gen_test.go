package discovery

import (
	"fmt"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// schemaGen generates JSON values from the JSON Schemas of an OpenAPI
// document, seeded and deterministic: valid instances (checked against
// the compiled schema by the caller) and invalid ones (one rule broken).
// It knows the keywords the documents use: $ref (to components), allOf,
// anyOf, oneOf, const, enum, type (also as a list), string length, pattern
// and format, numeric bounds, array items and length, object properties,
// required and additionalProperties.
type schemaGen struct {
	rng   *rand.Rand
	comps map[string]any // components.schemas
}

func (g *schemaGen) resolve(s any) map[string]any {
	m, _ := s.(map[string]any)
	for i := 0; m != nil && i < 16; i++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			break
		}
		name, found := strings.CutPrefix(ref, "#/components/schemas/")
		if !found {
			break
		}
		next, _ := g.comps[name].(map[string]any)
		if len(m) > 1 { // siblings of $ref (2020-12): merge them in
			next = mergeSchemas(next, withoutKey(m, "$ref"))
		}
		m = next
	}
	if all, ok := m["allOf"].([]any); ok {
		merged := withoutKey(m, "allOf")
		for _, a := range all {
			merged = mergeSchemas(merged, g.resolve(a))
		}
		return merged
	}
	return m
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// mergeSchemas merges b into a copy of a, for generation: properties are
// merged, required lists joined, and bounds take the stricter value.
func mergeSchemas(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		switch k {
		case "properties":
			props := map[string]any{}
			if p, ok := out[k].(map[string]any); ok {
				for pk, pv := range p {
					props[pk] = pv
				}
			}
			for pk, pv := range v.(map[string]any) {
				if prev, ok := props[pk].(map[string]any); ok {
					props[pk] = mergeSchemas(prev, pv.(map[string]any))
				} else {
					props[pk] = pv
				}
			}
			out[k] = props
		case "required":
			req, _ := out[k].([]any)
			out[k] = append(slices.Clone(req), v.([]any)...)
		case "maximum", "maxLength", "maxItems":
			if prev, ok := out[k].(float64); !ok || v.(float64) < prev {
				out[k] = v
			}
		case "minimum", "minLength", "minItems":
			if prev, ok := out[k].(float64); !ok || v.(float64) > prev {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}

// types lists the JSON types a schema allows ("" when it says nothing).
func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			out = append(out, x.(string))
		}
		return out
	}
	if _, ok := s["properties"]; ok {
		return []string{"object"}
	}
	return nil
}

func num(s map[string]any, k string) (float64, bool) {
	v, ok := s[k].(float64)
	return v, ok
}

// valid returns an instance of s (usually valid; the caller checks).
func (g *schemaGen) valid(raw any, depth int) any {
	s := g.resolve(raw)
	if s == nil {
		return g.scalar()
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[g.rng.IntN(len(e))]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return g.valid(mergeSchemas(withoutKey(s, k), g.resolve(alts[g.rng.IntN(len(alts))])), depth)
		}
	}
	ts := types(s)
	if len(ts) == 0 {
		return g.scalar()
	}
	t := ts[g.rng.IntN(len(ts))]
	if t == "null" && len(ts) > 1 && g.rng.IntN(4) != 0 {
		t = ts[0]
		if t == "null" {
			t = ts[1]
		}
	}
	switch t {
	case "null":
		return nil
	case "boolean":
		return g.rng.IntN(2) == 0
	case "integer", "number":
		lo, hasLo := num(s, "minimum")
		hi, hasHi := num(s, "maximum")
		if v, ok := num(s, "exclusiveMinimum"); ok {
			lo, hasLo = v+1, true
		}
		if v, ok := num(s, "exclusiveMaximum"); ok {
			hi, hasHi = v-1, true
		}
		if !hasLo {
			lo = min(0, hi)
		}
		if !hasHi {
			hi = lo + 100
		}
		if t == "integer" {
			span := int64(hi - lo)
			if span <= 0 {
				return int64(lo)
			}
			// Favour the bounds: they are where implementations disagree.
			switch g.rng.IntN(5) {
			case 0:
				return int64(lo)
			case 1:
				return int64(hi)
			}
			return int64(lo) + g.rng.Int64N(span+1)
		}
		return lo + g.rng.Float64()*(hi-lo)
	case "string":
		return g.str(s)
	case "array":
		lo, _ := num(s, "minItems")
		hi, ok := num(s, "maxItems")
		if !ok || hi > lo+3 {
			hi = lo + 3
		}
		if depth > 6 {
			hi = lo
		}
		n := int(lo) + g.rng.IntN(int(hi-lo)+1)
		out := []any{}
		for range n {
			out = append(out, g.valid(s["items"], depth+1))
		}
		return out
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req := map[string]bool{}
		if r, ok := s["required"].([]any); ok {
			for _, x := range r {
				req[x.(string)] = true
			}
		}
		for _, k := range sortedKeysOf(props) {
			if req[k] || (depth < 6 && g.rng.IntN(2) == 0) {
				out[k] = g.valid(props[k], depth+1)
			}
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok && depth < 6 && g.rng.IntN(3) == 0 {
			out["k"+strconv.Itoa(g.rng.IntN(100))] = g.valid(ap, depth+1)
		}
		return out
	}
	return g.scalar()
}

func sortedKeysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// scalar is some JSON value for a schema that says nothing.
func (g *schemaGen) scalar() any {
	return []any{"x", int64(1), true, nil, map[string]any{"a": int64(1)}}[g.rng.IntN(5)]
}

// str is a string of schema s: its pattern, format and length.
func (g *schemaGen) str(s map[string]any) string {
	lo, _ := num(s, "minLength")
	hi, ok := num(s, "maxLength")
	if p, ok := s["pattern"].(string); ok {
		for range 20 {
			v, err := genRegex(g.rng, p)
			if err != nil {
				panic(fmt.Sprintf("pattern %q: %v", p, err))
			}
			if n := utf8.RuneCountInString(v); float64(n) >= lo && (!okMax(s) || float64(n) <= hi) {
				return v
			}
		}
	}
	switch s["format"] {
	case "date":
		return fmt.Sprintf("20%02d-%02d-%02d", 10+g.rng.IntN(20), 1+g.rng.IntN(12), 1+g.rng.IntN(28))
	case "date-time":
		return fmt.Sprintf("20%02d-%02d-%02dT%02d:%02d:00Z", 10+g.rng.IntN(20), 1+g.rng.IntN(12), 1+g.rng.IntN(28), g.rng.IntN(24), g.rng.IntN(60))
	case "uri":
		return "https://example.com/" + strconv.Itoa(g.rng.IntN(1000))
	case "email":
		return "a" + strconv.Itoa(g.rng.IntN(1000)) + "@example.com"
	}
	if !ok || hi > lo+24 {
		hi = lo + 24
	}
	n := int(lo) + g.rng.IntN(int(hi-lo)+1)
	const alphabet = "abcdefghij klmnopqrstuvwxyzé0123456789"
	r := []rune(alphabet)
	var b strings.Builder
	for range n {
		b.WriteRune(r[g.rng.IntN(len(r))])
	}
	return b.String()
}

func okMax(s map[string]any) bool { _, ok := s["maxLength"]; return ok }

// invalid returns a value that breaks one rule of s (or, when s allows
// everything, some value; the caller checks).
func (g *schemaGen) invalid(raw any) any {
	s := g.resolve(raw)
	ts := types(s)
	var options []func() any
	if slices.Contains(ts, "object") {
		props, _ := s["properties"].(map[string]any)
		if r, ok := s["required"].([]any); ok && len(r) > 0 {
			options = append(options, func() any {
				v, _ := g.valid(s, 0).(map[string]any)
				delete(v, r[g.rng.IntN(len(r))].(string))
				return v
			})
		}
		if s["additionalProperties"] == false {
			options = append(options, func() any {
				v, _ := g.valid(s, 0).(map[string]any)
				if v == nil {
					v = map[string]any{}
				}
				v["unknownMember"] = int64(1)
				return v
			})
		}
		if len(props) > 0 {
			options = append(options, func() any {
				v, _ := g.valid(s, 0).(map[string]any)
				if v == nil {
					v = map[string]any{}
				}
				keys := sortedKeysOf(props)
				k := keys[g.rng.IntN(len(keys))]
				v[k] = g.invalid(props[k])
				return v
			})
		}
	}
	if lo, ok := num(s, "minLength"); ok && lo > 0 {
		options = append(options, func() any { return strings.Repeat("a", int(lo)-1) })
	}
	if hi, ok := num(s, "maxLength"); ok {
		options = append(options, func() any { return strings.Repeat("b", int(hi)+1) })
	}
	if hi, ok := num(s, "maximum"); ok {
		options = append(options, func() any { return hi + 1 })
	}
	if lo, ok := num(s, "minimum"); ok {
		options = append(options, func() any { return lo - 1 })
	}
	if hi, ok := num(s, "maxItems"); ok {
		options = append(options, func() any {
			out := []any{}
			for range int(hi) + 1 {
				out = append(out, g.valid(s["items"], 3))
			}
			return out
		})
	}
	if _, ok := s["enum"]; ok {
		options = append(options, func() any { return "not-one-of-them" })
	}
	if _, ok := s["pattern"]; ok {
		options = append(options, func() any { return "no match!" })
	}
	options = append(options, func() any {
		// A value of another type.
		if slices.Contains(ts, "string") || slices.Contains(ts, "object") || slices.Contains(ts, "array") {
			return []any{true, int64(7), 1.5}[g.rng.IntN(3)]
		}
		return []any{"abc", []any{int64(1)}, map[string]any{}}[g.rng.IntN(3)]
	})
	return options[g.rng.IntN(len(options))]()
}

// genRegex returns a string matching pattern (Go RE2 syntax): literal
// text, classes (printable ASCII preferred), repeats (short ones), groups
// and alternations. Anchors add nothing.
func genRegex(rng *rand.Rand, pattern string) (string, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var walk func(r *syntax.Regexp)
	repeat := func(r *syntax.Regexp, lo, hi int) {
		if hi < 0 || hi > lo+4 {
			hi = lo + 4
		}
		for range lo + rng.IntN(hi-lo+1) {
			walk(r.Sub[0])
		}
	}
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			b.WriteRune(pickRune(rng, r.Rune))
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte(byte('a' + rng.IntN(26)))
		case syntax.OpCapture:
			walk(r.Sub[0])
		case syntax.OpStar:
			repeat(r, 0, 3)
		case syntax.OpPlus:
			repeat(r, 1, 4)
		case syntax.OpQuest:
			repeat(r, 0, 1)
		case syntax.OpRepeat:
			repeat(r, r.Min, r.Max)
		case syntax.OpConcat:
			for _, s := range r.Sub {
				walk(s)
			}
		case syntax.OpAlternate:
			walk(r.Sub[rng.IntN(len(r.Sub))])
		}
	}
	walk(re)
	return b.String(), nil
}

// pickRune picks a rune of a class (pairs of bounds), printable ASCII when
// the class has some.
func pickRune(rng *rand.Rand, ranges []rune) rune {
	var ascii [][2]rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := max(ranges[i], 0x21), min(ranges[i+1], 0x7e)
		if lo <= hi {
			ascii = append(ascii, [2]rune{lo, hi})
		}
	}
	if len(ascii) > 0 {
		r := ascii[rng.IntN(len(ascii))]
		return r[0] + rune(rng.IntN(int(r[1]-r[0])+1))
	}
	i := rng.IntN(len(ranges)/2) * 2
	return ranges[i] + rune(rng.IntN(int(ranges[i+1]-ranges[i])+1))
}
