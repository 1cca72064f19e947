package discovery

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// ReflectOptions tune Reflect.
type ReflectOptions struct {
	// Names gives a type its definition name (default: the Go type name),
	// e.g. the interface documents' names.
	Names map[reflect.Type]string
	// Enums lists the values of string types.
	Enums map[reflect.Type][]string
	// Unions describes interface types whose values are one of the
	// listed Go values' types (anyOf their schemas); other interfaces
	// admit anything.
	Unions map[reflect.Type][]any
}

// Reflect generates the JSON Schema definitions of the response type of v
// (a struct or a pointer to one) from its Go type and json tags, adds them
// to defs (referenced as "#/components/schemas/<name>") and returns the
// root's name. So response schemas follow the code that writes responses,
// never a hand-kept copy.
//
// Structs are closed objects (additionalProperties false) whose members
// without omitempty are required; embedded structs contribute their
// members, and a member of a shallower depth hides one of the same name
// deeper down, as in encoding/json; pointers are nullable; time.Time is a
// date-time string; json.RawMessage and interfaces admit anything, except
// the interface types of Unions. A name used by two different types is an
// error.
func Reflect(defs map[string]json.RawMessage, v any, o *ReflectOptions) (string, error) {
	if o == nil {
		o = &ReflectOptions{}
	}
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return "", fmt.Errorf("discovery: Reflect needs a struct, got %T", v)
	}
	r := &reflector{o: o, defs: defs, owner: map[string]reflect.Type{}}
	name := r.name(t)
	if _, err := r.schema(t); err != nil {
		return "", err
	}
	return name, nil
}

type reflector struct {
	o     *ReflectOptions
	defs  map[string]json.RawMessage
	owner map[string]reflect.Type
}

func (r *reflector) name(t reflect.Type) string {
	if n, ok := r.o.Names[t]; ok {
		return n
	}
	return t.Name()
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

func (r *reflector) schema(t reflect.Type) (map[string]any, error) {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case t == rawType:
		return map[string]any{}, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		inner, err := r.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"anyOf": []any{inner, map[string]any{"type": "null"}}}, nil
	case reflect.Interface:
		vals, ok := r.o.Unions[t]
		if !ok {
			return map[string]any{}, nil
		}
		var alts []any
		for _, v := range vals {
			s, err := r.schema(reflect.TypeOf(v))
			if err != nil {
				return nil, err
			}
			alts = append(alts, s)
		}
		return map[string]any{"anyOf": alts}, nil
	case reflect.String:
		s := map[string]any{"type": "string"}
		if e, ok := r.o.Enums[t]; ok {
			s["enum"] = e
		}
		return s, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice, reflect.Array:
		items, err := r.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("discovery: map key of %s is not a string", t)
		}
		v, err := r.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": v}, nil
	case reflect.Struct:
		return r.structRef(t)
	}
	return nil, fmt.Errorf("discovery: cannot describe %s in JSON Schema", t)
}

func (r *reflector) structRef(t reflect.Type) (map[string]any, error) {
	name := r.name(t)
	if name == "" {
		def, err := r.structSchema(t)
		return def, err
	}
	if prev, ok := r.owner[name]; ok {
		if prev != t {
			return nil, fmt.Errorf("discovery: schema name %q is used by %s and %s", name, prev, t)
		}
		return ref(name), nil
	}
	if _, ok := r.defs[name]; ok {
		return nil, fmt.Errorf("discovery: schema name %q is already defined", name)
	}
	r.owner[name] = t
	def, err := r.structSchema(t)
	if err != nil {
		return nil, err
	}
	b, err := marshal(def)
	if err != nil {
		return nil, err
	}
	r.defs[name] = b
	return ref(name), nil
}

func (r *reflector) structSchema(t reflect.Type) (map[string]any, error) {
	type member struct {
		schema   map[string]any
		depth    int
		required bool
	}
	members := map[string]*member{}
	var order []string
	var add func(t reflect.Type, depth int) error
	add = func(t reflect.Type, depth int) error {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					if err := add(ft, depth+1); err != nil {
						return err
					}
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if m, ok := members[name]; ok && m.depth <= depth {
				continue // hidden by a shallower (or earlier) member
			}
			s, err := r.schema(f.Type)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", t, f.Name, err)
			}
			if _, ok := members[name]; !ok {
				order = append(order, name)
			}
			members[name] = &member{schema: s, depth: depth,
				required: !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero")}
		}
		return nil
	}
	if err := add(t, 0); err != nil {
		return nil, err
	}
	props := map[string]any{}
	required := []string{}
	for _, name := range order {
		m := members[name]
		props[name] = m.schema
		if m.required {
			required = append(required, name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}, nil
}
