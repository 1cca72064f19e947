// Package valid checks Go values against their `validate` struct tags with
// go-playground/validator/v10 and reports what they break in Pydantic v2's
// vocabulary (error type, loc, message), so that a rule broken by a value
// built in Go reads exactly as the same rule broken over JSON (package
// shapes). It also holds what the two paths share: the named-pattern
// registry and Pydantic's message templates.
//
// The tags mean what validator/v10 says (see the shapes package
// documentation for how shapes reads the same tags): required is a
// non-zero value (a non-nil pointer), omitempty lets a zero value through
// (in the domain request types a zero value is unset and takes the
// documented default), omitnil lets a nil pointer or an unset or null
// field.Nullable through. The named patterns (Patterns), "strint" (an any
// holding a string or an integer) and "object" (an any holding a JSON
// object) are registered as validations; field.Nullable values are seen
// as their value, or as nil when unset or null.
//
// The validator is built once, on first use, and kept for the life of the
// process (validator/v10 caches each type's parsed tags in it): a memo of
// pure functions of the Go types, never configuration.
package valid

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/assaykit/assay/field"
	"github.com/go-playground/validator/v10"
)

// Error is one rule a value breaks.
type Error struct {
	// Loc is the path to the value: JSON field names and slice indices.
	Loc []any
	// Type is Pydantic's error type (missing, string_too_short, …).
	Type string
	// Msg is Pydantic's message ("String should have at least 3
	// characters").
	Msg string
}

// Path writes Loc as claim, signal_ids[2], draft.title.
func (e *Error) Path() string {
	var b strings.Builder
	for _, l := range e.Loc {
		switch x := l.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", x)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, x)
		}
	}
	return b.String()
}

// Error is "<path>: <message>".
func (e *Error) Error() string {
	if p := e.Path(); p != "" {
		return p + ": " + e.Msg
	}
	return e.Msg
}

// Errors lists the rules a value breaks, in field declaration order.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Struct validates v, a struct or a pointer to one, and returns what it
// breaks (nil when nothing). Tags that validator/v10 does not know panic
// here on first use of the type: a test calls Struct on the zero value of
// every request type.
func Struct(v any) Errors {
	err := instance().Struct(v)
	if err == nil {
		return nil
	}
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) {
		return Errors{{Type: "value_error", Msg: err.Error()}}
	}
	out := make(Errors, len(ves))
	for i, fe := range ves {
		out[i] = convert(fe)
	}
	return out
}

var instance = sync.OnceValue(newValidator)

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		if q := f.Tag.Get("query"); q != "" && q != "-" {
			return q
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			return name
		}
		return f.Name
	})
	for name, src := range Patterns() {
		re := regexp.MustCompile(src)
		must(v.RegisterValidation(name, func(fl validator.FieldLevel) bool {
			f := fl.Field()
			return f.Kind() == reflect.String && re.MatchString(f.String())
		}))
	}
	must(v.RegisterValidation("strint", func(fl validator.FieldLevel) bool {
		switch fl.Field().Kind() {
		case reflect.String, reflect.Int, reflect.Int64, reflect.Int32:
			return true
		}
		return false
	}))
	must(v.RegisterValidation("object", func(fl validator.FieldLevel) bool {
		return fl.Field().Kind() == reflect.Map
	}))
	v.RegisterCustomTypeFunc(nullable[int], field.Nullable[int]{})
	v.RegisterCustomTypeFunc(nullable[int64], field.Nullable[int64]{})
	v.RegisterCustomTypeFunc(nullable[float64], field.Nullable[float64]{})
	v.RegisterCustomTypeFunc(nullable[string], field.Nullable[string]{})
	v.RegisterCustomTypeFunc(nullable[bool], field.Nullable[bool]{})
	return v
}

// must panics on a registration error: the registrations are constant,
// and a test builds the validator.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// nullable shows a field.Nullable to the validator as its value, or as a
// nil pointer (which omitnil lets through) when it is unset or null.
func nullable[T any](v reflect.Value) any {
	n := v.Interface().(field.Nullable[T])
	if !n.Valid {
		return (*T)(nil)
	}
	return n.V
}

// convert turns a validator error into Pydantic's type and message.
func convert(fe validator.FieldError) *Error {
	e := &Error{Loc: loc(fe.Namespace())}
	param := fe.Param()
	kind := fe.Kind()
	switch tag := fe.Tag(); tag {
	case "required":
		e.Type, e.Msg = "missing", MsgMissing
	case "min", "max", "len":
		e.Type, e.Msg = lengthError(tag, param, kind, fe.Value())
	case "gte", "lte", "gt", "lt":
		e.Type, e.Msg = boundError(tag, param, kind)
	case "oneof":
		e.Type, e.Msg = "literal_error", Literal(Expected(SplitOneOf(param)))
	default:
		if src, ok := Patterns()[tag]; ok {
			e.Type, e.Msg = "string_pattern_mismatch", PatternMismatch(src)
		} else {
			e.Type, e.Msg = "value_error", "Value error, the value does not satisfy "+tag
		}
	}
	return e
}

// lengthError is the error of min, max or len: a length on strings,
// slices and maps, a bound on numbers.
func lengthError(tag, param string, kind reflect.Kind, value any) (string, string) {
	n, _ := strconv.Atoi(param)
	var count int
	what := ""
	switch kind {
	case reflect.String:
		s, _ := deref(value).(string)
		count = utf8.RuneCountInString(s)
	case reflect.Slice, reflect.Array:
		count, what = reflect.ValueOf(deref(value)).Len(), "List"
	case reflect.Map:
		count, what = reflect.ValueOf(deref(value)).Len(), "Dictionary"
	default:
		return boundError(map[string]string{"min": "gte", "max": "lte", "len": "gte"}[tag], param, kind)
	}
	short := tag == "min" || (tag == "len" && count < n)
	switch {
	case what == "" && short:
		return "string_too_short", StringTooShort(n)
	case what == "":
		return "string_too_long", StringTooLong(n)
	case short:
		return "too_short", ItemsTooShort(what, n, count)
	}
	return "too_long", ItemsTooLong(what, n, count)
}

func deref(v any) any {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return nil
	}
	return rv.Interface()
}

// boundError is the error of gte, lte, gt or lt.
func boundError(tag, param string, kind reflect.Kind) (string, string) {
	typ := map[string]string{"gte": GreaterThanEqual, "lte": LessThanEqual, "gt": GreaterThan, "lt": LessThan}[tag]
	f, err := strconv.ParseFloat(param, 64)
	if err != nil {
		return typ, Bound(typ, param)
	}
	isInt := kind != reflect.Float32 && kind != reflect.Float64
	return typ, Bound(typ, BoundText(f, isInt))
}

// loc splits a validator namespace (Request.allowedDomains[3]) into a
// loc without the root struct's name.
func loc(ns string) []any {
	_, ns, _ = strings.Cut(ns, ".")
	var out []any
	for _, part := range strings.Split(ns, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			if n, err := strconv.Atoi(idx); err == nil {
				out = append(out, n)
			} else {
				out = append(out, idx)
			}
			_, rest, _ = strings.Cut(after, "[")
		}
	}
	return out
}
