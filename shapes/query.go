package shapes

import (
	"net/url"
	"reflect"
	"strconv"
)

// NicheListQuery holds the query parameters of GET /v1/niches.
type NicheListQuery struct {
	Q        string  `query:"q"`        // max 150, default ""
	Category *string `query:"category"` // max 80, optional
	Sort     string  `query:"sort"`     // recent | score, default score
	Limit    int     `query:"limit"`    // 1..100, default 20
}

// SetDefaults sets the documented defaults.
func (q *NicheListQuery) SetDefaults() { *q = NicheListQuery{Sort: "score", Limit: 20} }

// NicheSearchQuery holds the query parameters of GET /v1/search and GET
// /v1/search/pay-per-call.
type NicheSearchQuery struct {
	Q        string  `query:"q"`        // required, length 3..150
	Category *string `query:"category"` // max 80, optional
	Sort     string  `query:"sort"`     // recent | score, default score
	Limit    int     `query:"limit"`    // 1..20, default 20
}

// SetDefaults sets the documented defaults.
func (q *NicheSearchQuery) SetDefaults() { *q = NicheSearchQuery{Sort: "score", Limit: 20} }

// DecodeQuery reads query parameters into dst (a pointer to a query shape)
// and validates them with FastAPI's behaviour; errors have loc relative to
// the query ("q"), the HTTP layer prefixes "query".
//
// PROVISIONAL: this first version applies defaults and parses strings and
// integers without validation; the Pydantic-exact validator replaces it.
func DecodeQuery(values url.Values, dst any) error {
	if d, ok := dst.(interface{ SetDefaults() }); ok {
		d.SetDefaults()
	}
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("query")
		if name == "" || !values.Has(name) {
			continue
		}
		raw := values.Get(name)
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(raw)
		case reflect.Pointer:
			s := raw
			f.Set(reflect.ValueOf(&s))
		case reflect.Int:
			n, err := strconv.Atoi(raw)
			if err != nil {
				return &ValidationError{Detail: []ErrorDetail{{Type: "int_parsing", Loc: []any{name},
					Msg: "Input should be a valid integer, unable to parse string as an integer", Input: raw}}}
			}
			f.SetInt(int64(n))
		}
	}
	return nil
}
