package shapes

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"unicode/utf8"
)

// NicheListQuery holds the query parameters of GET /v1/niches.
type NicheListQuery struct {
	Q        string  `json:"q" query:"q" validate:"max=150"`                      // default ""
	Category *string `json:"category" query:"category" validate:"omitnil,max=80"` // optional
	Sort     string  `json:"sort" query:"sort" validate:"oneof=recent score"`     // default score
	Limit    int     `json:"limit" query:"limit" validate:"gte=1,lte=100"`        // default 20
}

// SetDefaults sets the documented defaults.
func (q *NicheListQuery) SetDefaults() { *q = NicheListQuery{Sort: "score", Limit: 20} }

// NicheSearchQuery holds the query parameters of GET /v1/search and GET
// /v1/search/pay-per-call.
type NicheSearchQuery struct {
	Q        string  `json:"q" query:"q" validate:"required,min=3,max=150"`
	Category *string `json:"category" query:"category" validate:"omitnil,max=80"` // optional
	Sort     string  `json:"sort" query:"sort" validate:"oneof=recent score"`     // default score
	Limit    int     `json:"limit" query:"limit" validate:"gte=1,lte=20"`         // default 20
}

// SetDefaults sets the documented defaults.
func (q *NicheSearchQuery) SetDefaults() { *q = NicheSearchQuery{Sort: "score", Limit: 20} }

// DecodeQuery reads query parameters into dst (a pointer to a struct whose
// fields carry `query:"name"` and `validate` tags) as FastAPI does: each
// parameter is the string of its last occurrence (slice fields take every
// occurrence), validated with Pydantic's lax rules (so "abc" for an int is
// int_parsing with input "abc"); an absent parameter takes its default or,
// when required, is missing with input null; unknown parameters are
// ignored. Errors have loc relative to the query (["limit"]); the HTTP
// layer prefixes "query".
func DecodeQuery(values url.Values, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("shapes: DecodeQuery needs a non-nil pointer to a struct, got %T", dst)
	}
	sp, err := planFor(rv.Elem().Type())
	if err != nil {
		return err
	}
	v := rv.Elem()
	setDefaults(sp, v)
	d := decoder{}
	for _, f := range sp.fields {
		vals := values[f.name]
		d.loc = append(d.loc[:0], locElem{name: f.name, idx: -1})
		if len(vals) == 0 {
			if f.node.required {
				d.add("missing", msgMissing, json.RawMessage("null"), nil)
			}
			continue
		}
		var doc []byte
		if f.node.kind == kSlice {
			doc = append(doc, '[')
			for i, s := range vals {
				if i > 0 {
					doc = append(doc, ',')
				}
				doc = appendPyString(doc, validUTF8(s))
			}
			doc = append(doc, ']')
		} else {
			doc = appendPyString(nil, validUTF8(vals[len(vals)-1]))
		}
		d.data, d.str = doc, string(doc)
		d.value(0, f.node, v.Field(f.index))
	}
	if len(d.errs) > 0 {
		return &ValidationError{Detail: d.errs}
	}
	return nil
}

// validUTF8 replaces every invalid byte with U+FFFD, as Python decodes a
// query string with errors="replace".
func validUTF8(s string) []byte {
	if utf8.ValidString(s) {
		return []byte(s)
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
			i++
			continue
		}
		out = append(out, s[i:i+size]...)
		i += size
	}
	return out
}
