package shapes

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/assaykit/assay/internal/utf8repair"
)

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
	size := 0
	for _, vs := range values {
		for _, v := range vs {
			size += len(v)
		}
	}
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
		d.value(0, f.node, f.of(v))
	}
	if len(d.errs) > 0 {
		return &ValidationError{Detail: d.errs, echo: echoBudget(size)}
	}
	return nil
}

// validUTF8 replaces each maximal ill-formed subpart with U+FFFD, as
// Python decodes a query string with errors="replace".
func validUTF8(s string) []byte { return []byte(utf8repair.String([]byte(s))) }

// ParseQuery parses a raw query string (URL.RawQuery) as Starlette does
// for FastAPI (urllib.parse.parse_qsl of the bytes read as Latin-1, blank
// values kept): pairs are split on "&" only, empty pairs are skipped, a
// pair without "=" has the value "", "+" is a space, and percent escapes
// are decoded as UTF-8 with each malformed sequence replaced by U+FFFD.
// Unlike URL.Query, which drops a pair whose escapes are malformed, a
// malformed escape ("%ZZ") stays as it is written, and a byte outside
// ASCII written raw is the Latin-1 character of that byte.
func ParseQuery(raw string) url.Values {
	out := url.Values{}
	for len(raw) > 0 {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k = pyUnquote(k)
		out[k] = append(out[k], pyUnquote(v))
	}
	return out
}

// pyUnquote is Python's unquote(s.replace("+", " ")) of a Latin-1 string:
// runs of ASCII are percent-decoded into bytes read as UTF-8 with
// errors="replace"; other bytes are Latin-1 characters.
func pyUnquote(s string) string {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] != '%' && s[i] != '+' && s[i] < utf8.RuneSelf
	}
	if plain {
		return s
	}
	var out, run []byte
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			out = utf8.AppendRune(out, rune(c))
			i++
			continue
		}
		run = run[:0]
		for ; i < len(s) && s[i] < utf8.RuneSelf; i++ {
			switch c := s[i]; {
			case c == '+':
				run = append(run, ' ')
			case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
				run = append(run, unhex(s[i+1])<<4|unhex(s[i+2]))
				i += 2
			default:
				run = append(run, c)
			}
		}
		out = utf8repair.Append(out, run)
	}
	return string(out)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
