package shapes

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/assaykit/assay/field"
	"github.com/assaykit/assay/internal/valid"
)

// kind is what a plan node decodes.
type kind uint8

const (
	kString kind = iota // string, optionally a Literal (enum) or with a pattern
	kInt                // int, int64, int32
	kFloat              // float64
	kBool               // bool
	kDate               // field.Date
	kStruct             // a struct shape (a Pydantic model)
	kSlice              // []T
	kObject             // map[string]any: an open JSON object
	kAny                // any: every JSON value
	kStrInt             // any holding a string or an int (str | int)
	kMap                // map[string]T: a dict with string keys (dict[str, T])
)

// bound is one numeric constraint as written in its tag.
type bound struct {
	set  bool
	val  float64
	text string // the tag's text, e.g. "5", "-85", "0.5"
}

// node is the compiled plan for one value.
type node struct {
	kind     kind
	nullable bool         // JSON null is accepted (the tag has omitnil)
	ptr      bool         // the Go value is a pointer to typ
	opt      bool         // the Go value is a field.Nullable of typ
	typ      reflect.Type // Go type of the value, pointer removed
	required bool         // only on field nodes: the key must be present

	minLen, maxLen int // -1 when unset (string length or item count)
	pattern        *matcher
	patternName    string
	enum           []string
	expected       string // literal_error "expected" text
	ge, le, gt, lt bound

	elem *node       // kSlice, kMap
	st   *structPlan // kStruct
}

// fieldPlan is one field of a struct shape.
type fieldPlan struct {
	name       string // wire name
	embed      int    // Go index of the embedded struct holding the field, or -1
	index      int    // Go field index (in the embedded struct when embed >= 0)
	node       *node
	deprecated bool
}

// of returns the field in v, a value of the shape.
func (f *fieldPlan) of(v reflect.Value) reflect.Value {
	if f.embed >= 0 {
		v = v.Field(f.embed)
	}
	return v.Field(f.index)
}

// structPlan is the compiled plan of a struct shape.
type structPlan struct {
	typ      reflect.Type
	fields   []fieldPlan
	byName   map[string]int
	forbid   bool          // extra keys are rejected (extra_forbidden)
	defaults bool          // *T has SetDefaults()
	required uint64        // bit i: fields[i] is required
	template reflect.Value // the defaults, when copying them is safe (see setDefaults)
}

// defaulter is implemented by shapes that have documented defaults.
type defaulter interface{ SetDefaults() }

// planCache maps a struct type to its *structPlan or compile error.
type planCache struct {
	mu    sync.Mutex
	plans sync.Map // reflect.Type → *structPlan
	res   map[string]*matcher
	pool  sync.Pool // *decoder scratch state, reused between calls
}

func (c *planCache) getDecoder() *decoder {
	if d, ok := c.pool.Get().(*decoder); ok {
		return d
	}
	return &decoder{}
}

// putDecoder keeps d's buffers for the next call; the errors it returned
// are handed over to the caller, so they are not reused.
func (c *planCache) putDecoder(d *decoder) {
	if cap(d.buf) > 1<<16 {
		d.buf = nil
	}
	d.data, d.str, d.syn, d.depth, d.errs, d.loc = nil, "", nil, 0, nil, nil
	d.buf = d.buf[:0]
	c.pool.Put(d)
}

// cache is the process-wide plan cache. It holds derived data only (a
// memo of pure functions of the Go types), never configuration.
var cache = &planCache{}

// planFor returns the plan of struct type t, compiling it on first use.
func planFor(t reflect.Type) (*structPlan, error) {
	if p, ok := cache.plans.Load(t); ok {
		return p.(*structPlan), nil
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if p, ok := cache.plans.Load(t); ok {
		return p.(*structPlan), nil
	}
	building := map[reflect.Type]*structPlan{}
	p, err := cache.compileStruct(t, building)
	if err != nil {
		return nil, err
	}
	for bt, bp := range building {
		cache.plans.Store(bt, bp)
	}
	return p, nil
}

func (c *planCache) regexp(name string) (*matcher, bool) {
	if c.res == nil {
		c.res = map[string]*matcher{}
	}
	if re, ok := c.res[name]; ok {
		return re, true
	}
	src, ok := valid.Patterns()[name]
	if !ok {
		return nil, false
	}
	re := newMatcher(src) // constant patterns, checked by tests
	c.res[name] = re
	return re, true
}

func (c *planCache) compileStruct(t reflect.Type, building map[reflect.Type]*structPlan) (*structPlan, error) {
	if p, ok := building[t]; ok {
		return p, nil
	}
	if p, ok := c.plans.Load(t); ok {
		return p.(*structPlan), nil
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("shapes: %v is not a struct", t)
	}
	pt := reflect.PointerTo(t)
	p := &structPlan{typ: t, byName: map[string]int{},
		forbid:   forbidsExtra(t),
		defaults: pt.Implements(reflect.TypeFor[defaulter]()),
	}
	building[t] = p
	if p.defaults {
		tv := reflect.New(t)
		tv.Interface().(defaulter).SetDefaults()
		if !sharesMemory(tv.Elem()) {
			p.template = tv.Elem()
		}
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.Anonymous || sf.Type.Kind() != reflect.Struct || sf.Tag.Get("json") != "" {
			if err := c.addField(p, sf, -1, i, building); err != nil {
				return nil, err
			}
			continue
		}
		// An embedded struct (niche.Op in the curator bodies): its fields
		// are the shape's, in place, as encoding/json reads them.
		for j := range sf.Type.NumField() {
			if err := c.addField(p, sf.Type.Field(j), i, j, building); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// addField adds the field sf of a struct shape, at index of the struct
// embedded at embed (-1: of the shape itself).
func (c *planCache) addField(p *structPlan, sf reflect.StructField, embed, index int, building map[reflect.Type]*structPlan) error {
	if !sf.IsExported() {
		return nil
	}
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	if q := sf.Tag.Get("query"); q != "" {
		name = q
	}
	if name == "-" {
		return nil
	}
	if name == "" {
		name = sf.Name
	}
	n, err := c.compileField(sf.Type, sf.Tag.Get("validate"), building)
	if err != nil {
		return fmt.Errorf("shapes: %v.%s: %w", p.typ, sf.Name, err)
	}
	if len(p.fields) == 64 {
		return fmt.Errorf("shapes: %v has more than 64 fields", p.typ)
	}
	if n.required {
		p.required |= 1 << len(p.fields)
	}
	p.byName[name] = len(p.fields)
	p.fields = append(p.fields, fieldPlan{name: name, embed: embed, index: index, node: n,
		deprecated: strings.Contains(sf.Tag.Get("shapes"), "deprecated")})
	return nil
}

// sharesMemory reports whether copying v would share mutable memory: a
// non-nil pointer, map, interface or channel, or a slice with capacity.
func sharesMemory(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return !v.IsNil()
	case reflect.Slice:
		return v.Cap() > 0
	case reflect.Array:
		for i := range v.Len() {
			if sharesMemory(v.Index(i)) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if sharesMemory(v.Field(i)) {
				return true
			}
		}
	}
	return false
}

// compileField builds the node of a field from its Go type and validate tag.
func (c *planCache) compileField(t reflect.Type, tag string, building map[reflect.Type]*structPlan) (*node, error) {
	var outer, inner []string
	if tag != "" {
		parts := strings.Split(tag, ",")
		for i, p := range parts {
			if p == "dive" {
				outer, inner = parts[:i], parts[i+1:]
				break
			}
		}
		if outer == nil && inner == nil {
			outer = parts
		}
		if inner != nil && t.Kind() != reflect.Slice && t.Kind() != reflect.Map {
			return nil, fmt.Errorf("dive on non-slice %v", t)
		}
	}
	n, err := c.compileType(t, outer, building)
	if err != nil {
		return nil, err
	}
	if (n.kind == kSlice || n.kind == kMap) && inner != nil {
		e, err := c.compileType(t.Elem(), inner, building)
		if err != nil {
			return nil, err
		}
		n.elem = e
	}
	return n, nil
}

// compileType builds the node of a value of type t with constraint tags.
func (c *planCache) compileType(t reflect.Type, tags []string, building map[reflect.Type]*structPlan) (*node, error) {
	n := &node{minLen: -1, maxLen: -1}
	if t.Kind() == reflect.Pointer {
		n.ptr = true
		t = t.Elem()
	} else if inner, ok := nullableOf(t); ok {
		n.opt = true
		t = inner
	}
	n.typ = t
	if err := c.setKind(n, building); err != nil {
		return nil, err
	}
	for _, tg := range tags {
		if err := c.applyTag(n, tg); err != nil {
			return nil, err
		}
	}
	if n.opt && !n.nullable {
		return nil, fmt.Errorf("field.Nullable %v without omitnil", t)
	}
	return n, nil
}

// nullableOf reports whether t is a field.Nullable and returns the type
// of its value.
func nullableOf(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct || t.PkgPath() != fieldPkg || !strings.HasPrefix(t.Name(), "Nullable[") {
		return nil, false
	}
	return t.Field(0).Type, true
}

// Field indices of field.Nullable (checked by a test).
const (
	nullableValue = 0 // V
	nullableValid = 1 // Valid
	nullableNull  = 2 // Null
)

// fieldPkg is the import path of package field.
var fieldPkg = reflect.TypeFor[field.Date]().PkgPath()

// setKind sets n.kind (and the element or struct plan) from n.typ.
func (c *planCache) setKind(n *node, building map[reflect.Type]*structPlan) error {
	t := n.typ
	switch {
	case t == reflect.TypeFor[field.Date]():
		n.kind = kDate
		return nil
	case t == reflect.TypeFor[map[string]any]():
		n.kind = kObject
		return nil
	case t == reflect.TypeFor[any]():
		n.kind = kAny
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		n.kind = kString
	case reflect.Int, reflect.Int64, reflect.Int32:
		n.kind = kInt
	case reflect.Float64, reflect.Float32:
		n.kind = kFloat
	case reflect.Bool:
		n.kind = kBool
	case reflect.Struct:
		n.kind = kStruct
		st, err := c.compileStruct(t, building)
		if err != nil {
			return err
		}
		n.st = st
	case reflect.Slice, reflect.Map:
		return c.setContainer(n, building)
	default:
		return fmt.Errorf("unsupported type %v", t)
	}
	return nil
}

// setContainer sets up a slice ([]T) or map (map[string]T) node.
func (c *planCache) setContainer(n *node, building map[reflect.Type]*structPlan) error {
	t := n.typ
	n.kind = kSlice
	if t.Kind() == reflect.Map {
		if t.Key().Kind() != reflect.String {
			return fmt.Errorf("unsupported map key type %v", t)
		}
		n.kind = kMap
	}
	if n.ptr || n.opt {
		return fmt.Errorf("pointer to %v: use a nil value with omitnil", t)
	}
	e, err := c.compileType(t.Elem(), nil, building)
	if err != nil {
		return err
	}
	n.elem = e
	return nil
}

// applyTag applies one validate tag to n, read with Pydantic's meaning.
func (c *planCache) applyTag(n *node, tg string) error {
	key, val, _ := strings.Cut(tg, "=")
	switch key {
	case "", "omitempty":
	case "required":
		n.required = true
	case "omitnil":
		n.nullable = true
	case "min", "max", "len":
		return applyLength(n, key, val)
	case "gte", "lte", "gt", "lt":
		return applyBound(n, key, val)
	case "oneof":
		if n.kind != kString {
			return fmt.Errorf("oneof on %v", n.typ)
		}
		n.enum = valid.SplitOneOf(val)
		n.expected = valid.Expected(n.enum)
	case "strint", "object":
		if n.kind != kAny {
			return fmt.Errorf("%s on %v", key, n.typ)
		}
		n.kind = map[string]kind{"strint": kStrInt, "object": kObject}[key]
	default:
		re, ok := c.regexp(key)
		if !ok || val != "" {
			return fmt.Errorf("unknown validation tag %q", tg)
		}
		if n.kind != kString {
			return fmt.Errorf("pattern %s on %v", key, n.typ)
		}
		n.pattern, n.patternName = re, key
	}
	return nil
}

// applyLength applies min, max or len: a length on strings, slices and
// maps, a bound (like gte, lte) on numbers.
func applyLength(n *node, key, val string) error {
	switch n.kind {
	case kString, kSlice, kMap:
		v, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("bad %s=%q", key, val)
		}
		if key != "max" {
			n.minLen = v
		}
		if key != "min" {
			n.maxLen = v
		}
	case kInt, kFloat:
		b, err := parseBound(val)
		if err != nil {
			return err
		}
		if key != "max" {
			n.ge = b
		}
		if key != "min" {
			n.le = b
		}
	default:
		return fmt.Errorf("%s on %v", key, n.typ)
	}
	return nil
}

// applyBound applies gte, lte, gt or lt to a number.
func applyBound(n *node, key, val string) error {
	if n.kind != kInt && n.kind != kFloat {
		return fmt.Errorf("%s on %v", key, n.typ)
	}
	b, err := parseBound(val)
	if err != nil {
		return err
	}
	*map[string]*bound{"gte": &n.ge, "lte": &n.le, "gt": &n.gt, "lt": &n.lt}[key] = b
	return nil
}

func parseBound(s string) (bound, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return bound{}, fmt.Errorf("bad bound %q", s)
	}
	return bound{set: true, val: f, text: s}, nil
}
