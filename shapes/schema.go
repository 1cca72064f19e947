package shapes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/assaykit/assay/field"
	"github.com/invopop/jsonschema"
)

// JSON Schemas (draft 2020-12) of the shapes, generated with
// invopop/jsonschema from the Go types and completed from the same
// validate tags Decode enforces (one source of truth): after reflection a
// walker sets required, minLength/maxLength, minItems/maxItems,
// minimum/maximum/exclusiveMinimum/exclusiveMaximum, enum, pattern (from
// the named-pattern registry), nullability (anyOf with null), defaults,
// deprecated and additionalProperties:false for the shapes that forbid
// extra keys.

// schemaNamer names the definition of a Go type: the registry's name for
// a shape (the interface documents' names: claims.Request is
// "ClaimVerificationRequest"), else the Go name.
func schemaNamer() func(reflect.Type) string {
	names := typeNames()
	return func(t reflect.Type) string {
		if n, ok := names[t]; ok {
			return n
		}
		return t.Name()
	}
}

// reflectedSchemas is reflectSchemas run once; its definitions are only
// read (marshalled) afterwards.
var reflectedSchemas = sync.OnceValues(reflectSchemas)

// reflectSchemas reflects every shape into one set of definitions.
func reflectSchemas() (jsonschema.Definitions, error) {
	schemaName := schemaNamer()
	r := &jsonschema.Reflector{
		RequiredFromJSONSchemaTags: true,
		AllowAdditionalProperties:  true,
		Namer:                      schemaName,
		Mapper:                     mapType,
	}
	defs := jsonschema.Definitions{}
	for _, name := range Names() {
		v, _ := New(name)
		t := reflect.TypeOf(v).Elem()
		s := r.ReflectFromType(t)
		for k, d := range s.Definitions {
			defs[k] = d
		}
	}
	for _, name := range Names() {
		v, _ := New(name)
		t := reflect.TypeOf(v).Elem()
		sp, err := planFor(t)
		if err != nil {
			return nil, err
		}
		def, ok := defs[schemaName(t)]
		if !ok {
			return nil, fmt.Errorf("shapes: no schema definition for %s", name)
		}
		if err := completeStruct(def, sp); err != nil {
			return nil, fmt.Errorf("shapes: schema of %s: %w", name, err)
		}
	}
	return defs, nil
}

// mapType gives the schemas of the field types: field.Date is a date
// string, a field.Nullable the schema of its value (null is added by
// constrain, as for every nullable field).
func mapType(t reflect.Type) *jsonschema.Schema {
	if t == reflect.TypeFor[field.Date]() {
		return &jsonschema.Schema{Type: "string", Format: "date"}
	}
	inner, ok := nullableOf(t)
	if !ok {
		return nil
	}
	if s := mapType(inner); s != nil {
		return s
	}
	switch inner.Kind() {
	case reflect.String:
		return &jsonschema.Schema{Type: "string"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return &jsonschema.Schema{Type: "integer"}
	case reflect.Float32, reflect.Float64:
		return &jsonschema.Schema{Type: "number"}
	case reflect.Bool:
		return &jsonschema.Schema{Type: "boolean"}
	}
	return nil
}

// completeStruct applies a struct plan to its reflected definition.
func completeStruct(def *jsonschema.Schema, sp *structPlan) error {
	if sp.forbid {
		def.AdditionalProperties = jsonschema.FalseSchema
	} else {
		def.AdditionalProperties = nil
	}
	def.Required = nil
	defaults := reflect.New(sp.typ)
	if d, ok := defaults.Interface().(defaulter); ok {
		d.SetDefaults()
	}
	for _, f := range sp.fields {
		ps, ok := def.Properties.Get(f.name)
		if !ok {
			return fmt.Errorf("no property %q", f.name)
		}
		if f.node.required {
			def.Required = append(def.Required, f.name)
		} else if dv := f.of(defaults.Elem()); hasDefault(dv, f.node) {
			ps.Default = dv.Interface()
		}
		ps = constrain(ps, f.node)
		ps.Deprecated = f.deprecated
		def.Properties.Set(f.name, ps)
	}
	return nil
}

// hasDefault reports whether the default dv of a field is shown: not a
// nil pointer, slice, map or interface, nor the zero value of a nullable
// field (null, which Pydantic leaves out of the schema too).
func hasDefault(dv reflect.Value, n *node) bool {
	switch dv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return !dv.IsNil()
	}
	return !(n.nullable && dv.IsZero())
}

// constrain applies a node's constraints to the schema of its value and
// returns the schema to use (wrapped in anyOf with null when nullable).
func constrain(s *jsonschema.Schema, n *node) *jsonschema.Schema {
	if n.nullable {
		inner := s
		if len(s.AnyOf) == 0 {
			inner = &jsonschema.Schema{}
			*inner = *s
			inner.Default, inner.Deprecated, inner.Title, inner.Description = nil, false, "", ""
		}
		constrainValue(inner, n)
		// The annotations describe the field, null included: they move to
		// the wrapper (a default of 168 stays visible next to "or null").
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{inner, {Type: "null"}},
			Default: s.Default, Deprecated: s.Deprecated, Title: s.Title, Description: s.Description}
	}
	constrainValue(s, n)
	return s
}

func constrainValue(s *jsonschema.Schema, n *node) {
	u := func(v int) *uint64 { x := uint64(v); return &x }
	num := func(b bound) json.Number {
		if n.kind == kInt {
			return json.Number(strconv.FormatInt(int64(b.val), 10))
		}
		return json.Number(strconv.FormatFloat(b.val, 'g', -1, 64))
	}
	switch n.kind {
	case kString:
		if n.minLen >= 0 {
			s.MinLength = u(n.minLen)
		}
		if n.maxLen >= 0 {
			s.MaxLength = u(n.maxLen)
		}
		if n.pattern != nil {
			s.Pattern = n.pattern.String()
		}
		if n.enum != nil {
			s.Enum = make([]any, len(n.enum))
			for i, e := range n.enum {
				s.Enum[i] = e
			}
		}
	case kInt, kFloat:
		if n.ge.set {
			s.Minimum = num(n.ge)
		}
		if n.le.set {
			s.Maximum = num(n.le)
		}
		if n.gt.set {
			s.ExclusiveMinimum = num(n.gt)
		}
		if n.lt.set {
			s.ExclusiveMaximum = num(n.lt)
		}
	case kSlice:
		if n.minLen >= 0 {
			s.MinItems = u(n.minLen)
		}
		if n.maxLen >= 0 {
			s.MaxItems = u(n.maxLen)
		}
		if s.Items != nil && n.elem != nil {
			s.Items = constrain(s.Items, n.elem)
		}
	case kMap:
		if n.minLen >= 0 {
			s.MinProperties = u(n.minLen)
		}
		if n.maxLen >= 0 {
			s.MaxProperties = u(n.maxLen)
		}
		if s.AdditionalProperties != nil && n.elem != nil {
			s.AdditionalProperties = constrain(s.AdditionalProperties, n.elem)
		}
	case kStrInt:
		*s = jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}}
	case kObject:
		*s = jsonschema.Schema{Type: "object"}
	}
}

// Schema returns the JSON Schema (draft 2020-12) of the named shape (a
// name New knows): {"$schema":…,"$ref":"#/$defs/<name>","$defs":{…}}, with
// the definitions of every shape it uses. The caller may keep or change
// the bytes: each call returns its own copy.
func Schema(name string) (json.RawMessage, bool) {
	s, ok := allSchemas()[name]
	if !ok {
		return nil, false
	}
	return bytes.Clone(s), true
}

// allSchemas holds the schema of every shape by name, reflected once: the
// schemas depend only on the Go types (reflecting them all is the cost of
// a Schema call otherwise, and servers ask for every shape at start).
var allSchemas = sync.OnceValue(func() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	defs, err := reflectedSchemas()
	if err != nil {
		return out
	}
	for _, name := range Names() {
		if s, ok := schemaOf(name, defs); ok {
			out[name] = s
		}
	}
	return out
})

// schemaOf is the schema of one shape, with the definitions it uses.
func schemaOf(name string, defs jsonschema.Definitions) (json.RawMessage, bool) {
	v, ok := New(name)
	if !ok {
		return nil, false
	}
	root := schemaNamer()(reflect.TypeOf(v).Elem())
	used := jsonschema.Definitions{}
	var visit func(string)
	visit = func(n string) {
		if _, done := used[n]; done {
			return
		}
		used[n] = defs[n]
		b, _ := json.Marshal(defs[n])
		for _, ref := range refsIn(b) {
			visit(ref)
		}
	}
	visit(root)
	out, err := json.Marshal(&jsonschema.Schema{Version: jsonschema.Version, Ref: "#/$defs/" + root, Definitions: used})
	if err != nil {
		return nil, false
	}
	return out, true
}

// refsIn lists the definition names a marshalled schema refers to.
func refsIn(b []byte) []string {
	var out []string
	const marker = `"$ref":"#/$defs/`
	for s := string(b); ; {
		i := strings.Index(s, marker)
		if i < 0 {
			return out
		}
		s = s[i+len(marker):]
		j := strings.IndexByte(s, '"')
		out = append(out, s[:j])
		s = s[j:]
	}
}

// OpenAPISchemas returns the definition of every shape for the
// components.schemas of an OpenAPI 3.1 document, keyed by name, with
// references of the form #/components/schemas/<name>.
func OpenAPISchemas() (map[string]json.RawMessage, error) {
	defs, err := reflectedSchemas()
	if err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(defs))
	for name, d := range defs {
		b, err := json.Marshal(d)
		if err != nil {
			return nil, err
		}
		out[name] = json.RawMessage(strings.ReplaceAll(string(b), `"$ref":"#/$defs/`, `"$ref":"#/components/schemas/`))
	}
	return out, nil
}
