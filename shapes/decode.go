package shapes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/assaykit/assay/field"
	"github.com/assaykit/assay/internal/valid"
)

// Decode decodes the JSON document data into dst, a non-nil pointer to a
// shape struct, and validates it with Pydantic v2's lax-mode rules, as
// FastAPI validates a request body. It first applies the shape's defaults
// (SetDefaults), so after a nil error every field holds the input's value
// or its documented default.
//
// On invalid input it returns a *ValidationError listing every error in
// Pydantic's order with loc relative to the document root; the content of
// dst is then unspecified. A JSON syntax error gives the single error
// FastAPI makes of Python's json.JSONDecodeError. Any other error means dst
// is not a usable shape (a programming error).
func Decode(data []byte, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("shapes: Decode needs a non-nil pointer to a struct, got %T", dst)
	}
	sp, err := planFor(rv.Elem().Type())
	if err != nil {
		return err
	}
	d := cache.getDecoder()
	d.data = data
	err = d.root(sp, rv.Elem())
	cache.putDecoder(d)
	return err
}

// locElem is one step of the current loc: a field name, or an index when
// idx >= 0.
type locElem struct {
	name string
	idx  int
}

// decoder decodes one document.
type decoder struct {
	data  []byte
	str   string // data as one string: unescaped string values are substrings of it
	syn   *syntaxErr
	depth int
	errs  []ErrorDetail
	loc   []locElem
	buf   []byte // scratch for unescaped keys and strings
	lone  bool   // the last string read held a lone surrogate escape
	locs  [8]locElem
}

// setDefaults resets v to the shape's defaults: a copy of the cached
// result of SetDefaults when that result shares no memory (no non-nil
// pointer or map, no slice with capacity), else a fresh SetDefaults call.
func setDefaults(sp *structPlan, v reflect.Value) {
	switch {
	case sp.template.IsValid():
		v.Set(sp.template)
	case sp.defaults:
		v.SetZero()
		v.Addr().Interface().(defaulter).SetDefaults()
	default:
		v.SetZero()
	}
}

func (d *decoder) root(sp *structPlan, v reflect.Value) error {
	setDefaults(sp, v)
	if len(d.data) == 0 {
		return missingBody()
	}
	d.data = bytes.TrimPrefix(d.data, []byte("\xef\xbb\xbf")) // json.loads(bytes) decodes with utf-8-sig
	if !utf8.Valid(d.data) {
		pos := 0
		for pos < len(d.data) {
			r, size := utf8.DecodeRune(d.data[pos:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			pos += size
		}
		d.syn = &syntaxErr{msg: "Invalid UTF-8", pos: pos, cause: ErrUnreadable}
		return d.syntaxError()
	}
	d.str = string(d.data)
	d.loc = d.locs[:0]
	i := d.ws(0)
	var end int
	null := false
	switch {
	case i < len(d.data) && d.data[i] == '{':
		end = d.object(i, sp, v)
	case d.isLit(i, "null"):
		end, null = i+4, true
	default:
		if end = d.skip(i); end >= 0 {
			d.add("model_attributes_type", msgModelAttributes, d.echo(i, end), nil)
		}
	}
	if end >= 0 {
		if j := d.ws(end); j != len(d.data) {
			d.fail(msgExtraData, j)
		}
	}
	switch {
	case d.syn != nil:
		return d.syntaxError()
	case null:
		return missingBody()
	case len(d.errs) > 0:
		return &ValidationError{Detail: d.errs, echo: echoBudget(len(d.data))}
	}
	return nil
}

// missingBody is FastAPI's error for an absent, empty or null body.
func missingBody() *ValidationError {
	return &ValidationError{Detail: []ErrorDetail{{Type: "missing", Loc: []any{}, Msg: "Field required",
		Input: json.RawMessage("null")}}}
}

// syntaxError is FastAPI's rendering of a json.JSONDecodeError: loc is the
// character offset, input {}, ctx the Python message.
func (d *decoder) syntaxError() *ValidationError {
	pos := utf8.RuneCount(d.data[:min(d.syn.pos, len(d.data))])
	ctx := append([]byte(`{"error":`), appendPyString(nil, []byte(d.syn.msg))...)
	return &ValidationError{cause: d.syn.cause, Detail: []ErrorDetail{{Type: "json_invalid", Loc: []any{pos},
		Msg: "JSON decode error", Input: json.RawMessage("{}"), Ctx: json.RawMessage(append(ctx, '}'))}}}
}

// Error messages of Pydantic v2.
const (
	msgModelAttributes = "Input should be a valid dictionary or object to extract fields from"
	msgMissing         = valid.MsgMissing
	msgExtra           = "Extra inputs are not permitted"
	msgStringType      = "Input should be a valid string"
	msgIntType         = "Input should be a valid integer"
	msgIntParsing      = "Input should be a valid integer, unable to parse string as an integer"
	msgIntFromFloat    = "Input should be a valid integer, got a number with a fractional part"
	msgIntParsingSize  = "Unable to parse input string as an integer, exceeded maximum size"
	msgFinite          = "Input should be a finite number"
	msgFloatType       = "Input should be a valid number"
	msgFloatParsing    = "Input should be a valid number, unable to parse string as a number"
	msgBoolType        = "Input should be a valid boolean"
	msgBoolParsing     = "Input should be a valid boolean, unable to interpret input"
	msgListType        = "Input should be a valid list"
	msgDictType        = "Input should be a valid dictionary"
	msgDateType        = "Input should be a valid date"
	msgDateInexact     = "Datetimes provided to dates should have zero time - e.g. be exact dates"
	msgStringUnicode   = "Input should be a valid string, unable to parse raw data as a unicode string"
)

// locNow copies the current loc, plus extra steps.
func (d *decoder) locNow(extra ...any) []any {
	out := make([]any, len(d.loc), len(d.loc)+len(extra))
	for k, e := range d.loc {
		if e.idx >= 0 {
			out[k] = e.idx
		} else {
			out[k] = e.name
		}
	}
	return append(out, extra...)
}

// add records an error at the current loc. input is a json.RawMessage or
// OmittedInput (see echo).
func (d *decoder) add(typ, msg string, input any, ctx json.RawMessage) {
	e := ErrorDetail{Type: typ, Loc: d.locNow(), Msg: msg, Input: input}
	if ctx != nil {
		e.Ctx = ctx
	}
	d.errs = append(d.errs, e)
}

// mismatch skips a value of the wrong JSON type and records n's type error.
func (d *decoder) mismatch(i int, n *node) int {
	end := d.skip(i)
	if end >= 0 {
		d.typeError(n, d.echo(i, end))
	}
	return end
}

// typeError records the error Pydantic gives a value of the wrong type.
func (d *decoder) typeError(n *node, input any) {
	switch n.kind {
	case kString:
		if n.enum != nil {
			d.add("literal_error", valid.Literal(n.expected), input, ctxExpected(n))
			return
		}
		d.add("string_type", msgStringType, input, nil)
	case kInt:
		d.add("int_type", msgIntType, input, nil)
	case kFloat:
		d.add("float_type", msgFloatType, input, nil)
	case kBool:
		d.add("bool_type", msgBoolType, input, nil)
	case kDate:
		d.add("date_type", msgDateType, input, nil)
	case kStruct:
		d.add("model_attributes_type", msgModelAttributes, input, nil)
	case kSlice:
		d.add("list_type", msgListType, input, nil)
	case kObject, kMap:
		d.add("dict_type", msgDictType, input, nil)
	case kStrInt:
		d.errs = append(d.errs,
			ErrorDetail{Type: "string_type", Loc: d.locNow("str"), Msg: msgStringType, Input: input},
			ErrorDetail{Type: "int_type", Loc: d.locNow("int"), Msg: msgIntType, Input: input})
	}
}

func ctxExpected(n *node) json.RawMessage {
	b := append([]byte(`{"expected":`), appendPyString(nil, []byte(n.expected))...)
	return append(b, '}')
}

// value decodes the value at i (not whitespace) into v following n.
func (d *decoder) value(i int, n *node, v reflect.Value) int {
	data := d.data
	if i >= len(data) {
		return d.fail(msgExpectingValue, i)
	}
	if data[i] == 'n' {
		if !d.isLit(i, "null") {
			return d.fail(msgExpectingValue, i)
		}
		switch {
		case !n.nullable:
			d.typeError(n, json.RawMessage("null"))
		case n.opt:
			v.SetZero()
			v.Field(nullableNull).SetBool(true)
		default:
			v.SetZero()
		}
		return i + 4
	}
	switch {
	case n.ptr:
		p := reflect.New(n.typ)
		v.Set(p)
		v = p.Elem()
	case n.opt:
		v.SetZero()
		v.Field(nullableValid).SetBool(true)
		v = v.Field(nullableValue)
	}
	switch n.kind {
	case kString:
		return d.stringValue(i, n, v)
	case kInt:
		return d.intValue(i, n, v)
	case kFloat:
		return d.floatValue(i, n, v)
	case kBool:
		return d.boolValue(i, n, v)
	case kDate:
		return d.dateValue(i, n, v)
	case kStruct:
		if data[i] != '{' {
			return d.mismatch(i, n)
		}
		return d.object(i, n.st, v)
	case kSlice:
		if data[i] != '[' {
			return d.mismatch(i, n)
		}
		return d.array(i, n, v)
	case kObject:
		if data[i] != '{' {
			return d.mismatch(i, n)
		}
		return d.generic(i, v)
	case kMap:
		if data[i] != '{' {
			return d.mismatch(i, n)
		}
		return d.dict(i, n, v)
	case kAny:
		return d.generic(i, v)
	case kStrInt:
		return d.strIntValue(i, n, v)
	}
	return d.mismatch(i, n)
}

// generic decodes any JSON value into v (map[string]any, any) with
// encoding/json: numbers become json.Number, duplicate keys keep the last
// value, as in Python.
func (d *decoder) generic(i int, v reflect.Value) int {
	end := d.skip(i)
	if end < 0 {
		return -1
	}
	dec := json.NewDecoder(bytes.NewReader(d.data[i:end]))
	dec.UseNumber()
	p := reflect.New(v.Type())
	if err := dec.Decode(p.Interface()); err != nil {
		return d.fail(msgExpectingValue, i) // unreachable: the value was checked
	}
	v.Set(p.Elem())
	return end
}

// stringBytes checks the string at i and returns its decoded bytes (valid
// until the next call) and the index after it; d.lone reports a lone
// surrogate escape (decoded as U+FFFD).
func (d *decoder) stringBytes(i int) ([]byte, int) {
	d.lone = false
	end, esc := d.scanString(i)
	if end < 0 {
		return nil, -1
	}
	if !esc {
		return d.data[i+1 : end-1], end
	}
	d.buf, d.lone = unescape(d.buf[:0], d.data[i:end], false)
	return d.buf, end
}

func (d *decoder) stringValue(i int, n *node, v reflect.Value) int {
	str, end, ok := d.stringOf(i, n)
	if ok {
		v.SetString(str)
	}
	return end
}

// stringOf decodes and checks the string value at i; ok is false when an
// error was recorded (or end < 0 on a syntax error).
func (d *decoder) stringOf(i int, n *node) (str string, end int, ok bool) {
	if d.data[i] != '"' {
		if d.data[i] == 'n' && d.isLit(i, "null") {
			d.typeError(n, json.RawMessage("null"))
			return "", i + 4, false
		}
		return "", d.mismatch(i, n), false
	}
	end, esc := d.scanString(i)
	if end < 0 {
		return "", -1, false
	}
	raw := d.data[i+1 : end-1]
	if esc {
		var lone bool
		d.buf, lone = unescape(d.buf[:0], d.data[i:end], false)
		raw = d.buf
		if lone && (n.enum != nil || n.minLen >= 0 || n.maxLen >= 0 || n.pattern != nil) {
			// A constrained str makes Pydantic read the Python string as
			// UTF-8, which a lone surrogate is not.
			d.add("string_unicode", msgStringUnicode, d.echo(i, end), nil)
			return "", end, false
		}
	}
	if n.enum != nil {
		for _, e := range n.enum {
			if string(raw) == e {
				return e, end, true
			}
		}
		d.add("literal_error", valid.Literal(n.expected), d.echo(i, end), ctxExpected(n))
		return "", end, false
	}
	if typ, msg, ctx := checkString(n, raw); typ != "" {
		d.add(typ, msg, d.echo(i, end), ctx)
		return "", end, false
	}
	if esc {
		return string(raw), end, true
	}
	return d.str[i+1 : end-1], end, true
}

// checkString applies length and pattern constraints, in Pydantic's order.
func checkString(n *node, s []byte) (typ, msg string, ctx json.RawMessage) {
	// A string of b bytes has between b/4 and b characters: count them
	// only when the bounds fall in that range.
	if (n.minLen >= 0 && n.minLen > len(s)/4) || (n.maxLen >= 0 && n.maxLen < len(s)) {
		c := utf8.RuneCount(s)
		if n.minLen >= 0 && c < n.minLen {
			return "string_too_short", valid.StringTooShort(n.minLen), intCtx("min_length", n.minLen)
		}
		if n.maxLen >= 0 && c > n.maxLen {
			return "string_too_long", valid.StringTooLong(n.maxLen), intCtx("max_length", n.maxLen)
		}
	}
	if n.pattern != nil && !n.pattern.Match(s) {
		src := n.pattern.String()
		b := append([]byte(`{"pattern":`), appendPyString(nil, []byte(src))...)
		return "string_pattern_mismatch", valid.PatternMismatch(src), append(b, '}')
	}
	return "", "", nil
}

func intCtx(key string, v int) json.RawMessage {
	return json.RawMessage(`{"` + key + `":` + strconv.Itoa(v) + `}`)
}

// numCode is the outcome of a numeric coercion.
type numCode uint8

const (
	numOK numCode = iota
	numType
	numParsing
	numFromFloat
	numParsingSize
	numFinite
	numBigPos // an integer above int64's range
	numBigNeg // an integer below int64's range
)

// scalar is a string, boolean or number token.
type scalar struct {
	kind    byte   // '"' string, 't' true, 'f' false, '0' number; 0 another value
	raw     []byte // a string's decoded bytes, a number's literal
	isFloat bool
	lone    bool // a string holding a lone surrogate escape
	end     int  // index after the token; -1 on a syntax error
}

// unicodeError records string_unicode for a string with a lone surrogate
// given to a number, boolean or date (Pydantic reads the Python string as
// UTF-8 first) and reports whether it did.
func (d *decoder) unicodeError(t scalar, i int) bool {
	if t.kind != '"' || !t.lone || t.end < 0 {
		return false
	}
	d.add("string_unicode", msgStringUnicode, d.echo(i, t.end), nil)
	return true
}

// scalarAt reads the token at i when it is a string, boolean or number.
func (d *decoder) scalarAt(i int) scalar {
	switch c := d.data[i]; {
	case c == '"':
		raw, end := d.stringBytes(i)
		return scalar{kind: '"', raw: raw, lone: d.lone, end: end}
	case c == 't' && d.isLit(i, "true"):
		return scalar{kind: 't', end: i + 4}
	case c == 'f' && d.isLit(i, "false"):
		return scalar{kind: 'f', end: i + 5}
	case c == '-' || isDigit(c):
		end, isFloat, ok := d.scanNumber(i)
		if !ok {
			return scalar{end: d.fail(msgExpectingValue, i)}
		}
		return scalar{kind: '0', raw: d.data[i:end], isFloat: isFloat, end: end}
	}
	return scalar{}
}

func (d *decoder) intValue(i int, n *node, v reflect.Value) int {
	t := d.scalarAt(i)
	if d.unicodeError(t, i) {
		return t.end
	}
	var (
		val  int64
		code numCode
	)
	switch t.kind {
	case '"':
		val, code = intFromString(t.raw)
	case 't':
		val = 1
	case 'f':
	case '0':
		val, code = intFromNumber(t.raw, t.isFloat)
	default:
		if t.end < 0 {
			return -1
		}
		return d.mismatch(i, n)
	}
	switch {
	case t.end < 0:
	case code != numOK:
		d.intError(n, code, d.echo(i, t.end))
	case d.intBounds(n, val, i, t.end):
		v.SetInt(val)
	}
	return t.end
}

// intBounds checks an int against le, lt, ge, gt (Pydantic's order) and
// records the first broken bound.
func (d *decoder) intBounds(n *node, val int64, i, end int) bool {
	f := float64(val)
	switch {
	case n.le.set && !(f <= n.le.val):
		d.boundError(n, valid.LessThanEqual, n.le, d.echo(i, end))
	case n.lt.set && !(f < n.lt.val):
		d.boundError(n, valid.LessThan, n.lt, d.echo(i, end))
	case n.ge.set && !(f >= n.ge.val):
		d.boundError(n, valid.GreaterThanEqual, n.ge, d.echo(i, end))
	case n.gt.set && !(f > n.gt.val):
		d.boundError(n, valid.GreaterThan, n.gt, d.echo(i, end))
	default:
		return true
	}
	return false
}

// intError records the error of an int coercion or bound; numBigPos and
// numBigNeg report the bound they break (or int_parsing_size without one).
func (d *decoder) intError(n *node, code numCode, input any) {
	switch code {
	case numType:
		d.add("int_type", msgIntType, input, nil)
	case numParsing:
		d.add("int_parsing", msgIntParsing, input, nil)
	case numFromFloat:
		d.add("int_from_float", msgIntFromFloat, input, nil)
	case numFinite:
		d.add("finite_number", msgFinite, input, nil)
	case numBigPos:
		switch {
		case n.le.set:
			d.boundError(n, valid.LessThanEqual, n.le, input)
		case n.lt.set:
			d.boundError(n, valid.LessThan, n.lt, input)
		default:
			d.add("int_parsing_size", msgIntParsingSize, input, nil)
		}
	case numBigNeg:
		switch {
		case n.ge.set:
			d.boundError(n, valid.GreaterThanEqual, n.ge, input)
		case n.gt.set:
			d.boundError(n, valid.GreaterThan, n.gt, input)
		default:
			d.add("int_parsing_size", msgIntParsingSize, input, nil)
		}
	default:
		d.add("int_parsing_size", msgIntParsingSize, input, nil)
	}
}

// boundError records a numeric bound error of type typ (valid.LessThan,
// …). Int fields show int bounds; float fields show the bound as Rust
// prints it in msg and as a Python float in ctx ("85" and 85.0), as
// Pydantic does.
func (d *decoder) boundError(n *node, typ string, b bound, input any) {
	var key string
	switch typ {
	case valid.LessThanEqual:
		key = "le"
	case valid.LessThan:
		key = "lt"
	case valid.GreaterThanEqual:
		key = "ge"
	case valid.GreaterThan:
		key = "gt"
	}
	text := valid.BoundText(b.val, n.kind == kInt)
	ctx := []byte(`{"` + key + `":`)
	if n.kind == kInt {
		ctx = append(ctx, text...)
	} else {
		ctx = appendPyFloat(ctx, b.val)
	}
	d.add(typ, valid.Bound(typ, text), input, append(ctx, '}'))
}

func (d *decoder) floatValue(i int, n *node, v reflect.Value) int {
	t := d.scalarAt(i)
	if d.unicodeError(t, i) {
		return t.end
	}
	var (
		f    float64
		code numCode
	)
	switch t.kind {
	case '"':
		var ok bool
		if f, ok = floatFromString(t.raw); !ok {
			code = numParsing
		}
	case 't':
		f = 1
	case 'f':
	case '0':
		f, _ = strconv.ParseFloat(string(t.raw), 64)
		if !t.isFloat && math.IsInf(f, 0) {
			code = numType // Python: int too large to convert to float
		}
	default:
		if t.end < 0 {
			return -1
		}
		return d.mismatch(i, n)
	}
	if t.end < 0 {
		return -1
	}
	input := func() any { return d.echo(i, t.end) }
	switch {
	case code == numParsing:
		d.add("float_parsing", msgFloatParsing, input(), nil)
	case code == numType:
		d.add("float_type", msgFloatType, input(), nil)
	case n.le.set && !(f <= n.le.val):
		d.boundError(n, valid.LessThanEqual, n.le, input())
	case n.lt.set && !(f < n.lt.val):
		d.boundError(n, valid.LessThan, n.lt, input())
	case n.ge.set && !(f >= n.ge.val):
		d.boundError(n, valid.GreaterThanEqual, n.ge, input())
	case n.gt.set && !(f > n.gt.val):
		d.boundError(n, valid.GreaterThan, n.gt, input())
	default:
		v.SetFloat(f)
	}
	return t.end
}

func (d *decoder) boolValue(i int, n *node, v reflect.Value) int {
	t := d.scalarAt(i)
	if d.unicodeError(t, i) {
		return t.end
	}
	var (
		b    bool
		code numCode
	)
	switch t.kind {
	case '"':
		var ok bool
		if b, ok = boolFromString(t.raw); !ok {
			code = numParsing
		}
	case 't':
		b = true
	case 'f':
	case '0':
		b, code = boolFromNumber(t.raw, t.isFloat)
	default:
		if t.end < 0 {
			return -1
		}
		return d.mismatch(i, n)
	}
	switch {
	case t.end < 0:
	case code == numOK:
		v.SetBool(b)
	case code == numParsing:
		d.add("bool_parsing", msgBoolParsing, d.echo(i, t.end), nil)
	default:
		d.add("bool_type", msgBoolType, d.echo(i, t.end), nil)
	}
	return t.end
}

func (d *decoder) dateValue(i int, n *node, v reflect.Value) int {
	t := d.scalarAt(i)
	if d.unicodeError(t, i) {
		return t.end
	}
	var (
		dt field.Date
		de dateErr
	)
	switch t.kind {
	case '"':
		dt, de = dateFromString(t.raw)
	case '0':
		dt, de = dateFromNumber(t.raw, t.isFloat)
	default:
		if t.end < 0 {
			return -1
		}
		return d.mismatch(i, n)
	}
	switch {
	case t.end < 0:
	case de.typ != "":
		d.dateError(de, d.echo(i, t.end))
	default:
		*(*field.Date)(v.Addr().UnsafePointer()) = dt
	}
	return t.end
}

// dateError records de, if any.
func (d *decoder) dateError(de dateErr, input any) {
	switch de.typ {
	case "":
	case "date_from_datetime_parsing":
		ctx := append([]byte(`{"error":`), appendPyString(nil, []byte(de.msg))...)
		d.add(de.typ, "Input should be a valid date or datetime, "+de.msg, input, append(ctx, '}'))
	case "date_from_datetime_inexact":
		d.add(de.typ, msgDateInexact, input, nil)
	case "date_parsing":
		ctx := append([]byte(`{"error":`), appendPyString(nil, []byte(de.msg))...)
		d.add(de.typ, "Input should be a valid date in the format YYYY-MM-DD, "+de.msg, input, append(ctx, '}'))
	default:
		d.add(de.typ, msgDateType, input, nil)
	}
}

// strIntValue decodes Pydantic's str | int union (smart mode).
func (d *decoder) strIntValue(i int, n *node, v reflect.Value) int {
	t := d.scalarAt(i)
	var (
		val  int64
		code numCode
	)
	switch t.kind {
	case '"':
		if t.end >= 0 {
			v.Set(reflect.ValueOf(string(t.raw)))
		}
		return t.end
	case 't':
		val = 1
	case 'f':
	case '0':
		val, code = intFromNumber(t.raw, t.isFloat)
	default:
		if t.end < 0 {
			return -1
		}
		return d.mismatch(i, n)
	}
	if code != numOK {
		input := d.echo(i, t.end)
		d.errs = append(d.errs, ErrorDetail{Type: "string_type", Loc: d.locNow("str"), Msg: msgStringType, Input: input})
		d.loc = append(d.loc, locElem{name: "int", idx: -1})
		d.intError(n, code, input)
		d.loc = d.loc[:len(d.loc)-1]
		return t.end
	}
	v.Set(reflect.ValueOf(int(val)))
	return t.end
}

// array decodes a JSON array (data[i] == '[') into the slice v.
func (d *decoder) array(i int, n *node, v reflect.Value) int {
	if d.depth++; d.depth > MaxDepth {
		return d.tooDeep(i)
	}
	if n.elem.kind == kString && !n.elem.ptr && n.typ.Elem().Kind() == reflect.String && n.typ.Elem() == reflect.TypeFor[string]() {
		return d.stringArray(i, n, v)
	}
	data := d.data
	errStart := len(d.errs)
	sl := reflect.MakeSlice(n.typ, 0, countElems(d.data, i))
	count, full := 0, false
	j := d.ws(i + 1)
	if j < len(data) && data[j] == ']' {
		j++
	} else {
		for {
			if full || (n.maxLen >= 0 && count > n.maxLen) {
				// The first MaxErrors errors are known, or too_long will
				// replace every item's error: only check and count the
				// rest.
				j = d.skip(j)
			} else {
				if count == sl.Cap() {
					sl = reflect.AppendSlice(sl, reflect.MakeSlice(n.typ, max(count, 1), max(count, 1)))
				}
				sl = sl.Slice(0, count+1)
				d.loc = append(d.loc, locElem{idx: count})
				j = d.value(j, n.elem, sl.Index(count))
				d.loc = d.loc[:len(d.loc)-1]
				full = d.capErrors(errStart)
			}
			if j < 0 {
				return -1
			}
			count++
			j = d.ws(j)
			if j < len(data) && data[j] == ']' {
				j++
				break
			}
			if j >= len(data) || data[j] != ',' {
				return d.fail(msgComma, j)
			}
			j = d.ws(j + 1)
		}
	}
	d.depth--
	d.lengthErrors(n, i, j, errStart, count)
	v.Set(sl)
	return j
}

// stringArray is array for []string without reflection per element; the
// slice is sized from a first count of the elements.
func (d *decoder) stringArray(i int, n *node, v reflect.Value) int {
	data := d.data
	errStart := len(d.errs)
	out := make([]string, 0, countElems(data, i))
	full := false
	j := d.ws(i + 1)
	if j < len(data) && data[j] == ']' {
		j++
	} else {
		for {
			if j >= len(data) {
				return d.fail(msgExpectingValue, j)
			}
			var s string
			if full || (n.maxLen >= 0 && len(out) > n.maxLen) {
				j = d.skip(j) // as in array
			} else {
				d.loc = append(d.loc, locElem{idx: len(out)})
				s, j, _ = d.stringOf(j, n.elem)
				d.loc = d.loc[:len(d.loc)-1]
				full = d.capErrors(errStart)
			}
			if j < 0 {
				return -1
			}
			out = append(out, s)
			j = d.ws(j)
			if j < len(data) && data[j] == ']' {
				j++
				break
			}
			if j >= len(data) || data[j] != ',' {
				return d.fail(msgComma, j)
			}
			j = d.ws(j + 1)
		}
	}
	d.depth--
	d.lengthErrors(n, i, j, errStart, len(out))
	*(*[]string)(v.Addr().UnsafePointer()) = out
	return j
}

// countElems estimates the number of elements of the array at i (a
// capacity hint: it does not check syntax).
func countElems(data []byte, i int) int {
	depth, n, empty := 0, 0, true
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; c {
		case '"':
			for {
				k := bytes.IndexByte(data[j+1:], '"')
				if k < 0 {
					return n + 1
				}
				j += 1 + k
				b := 0
				for p := j - 1; data[p] == '\\'; p-- {
					b++
				}
				if b%2 == 0 {
					break
				}
			}
			empty = false
		case '[', '{':
			depth++
			empty = false
		case ']', '}':
			if depth == 0 {
				if empty {
					return 0
				}
				return n + 1
			}
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		case ' ', '\t', '\n', '\r':
		default:
			empty = false
		}
	}
	return n + 1
}

// lengthErrors applies a list's length bounds once its items are decoded:
// too many items replace the items' errors with too_long (Pydantic checks
// the length first); too few are too_short only when the items are valid.
func (d *decoder) lengthErrors(n *node, i, end, errStart, count int) {
	what := "List"
	if n.kind == kMap {
		what = "Dictionary"
	}
	switch {
	case n.maxLen >= 0 && count > n.maxLen:
		d.errs = d.errs[:errStart]
		d.add("too_long", valid.ItemsTooLong(what, n.maxLen, count), d.echo(i, end), listCtx(what, "max_length", n.maxLen, count))
	case len(d.errs) == errStart && n.minLen >= 0 && count < n.minLen:
		d.add("too_short", valid.ItemsTooShort(what, n.minLen, count), d.echo(i, end), listCtx(what, "min_length", n.minLen, count))
	}
}

func listCtx(fieldType, key string, limit, actual int) json.RawMessage {
	return json.RawMessage(`{"field_type":"` + fieldType + `","` + key + `":` + strconv.Itoa(limit) + `,"actual_length":` + strconv.Itoa(actual) + `}`)
}

// capErrors keeps at most MaxErrors of the errors recorded since
// errStart (the first ones: a list's or a dict's errors keep their order
// in Pydantic's) and reports whether the limit is reached.
func (d *decoder) capErrors(errStart int) bool {
	if len(d.errs)-errStart < MaxErrors {
		return false
	}
	clear(d.errs[errStart+MaxErrors:])
	d.errs = d.errs[:errStart+MaxErrors]
	return true
}

// dict decodes a JSON object (data[i] == '{') into the map v (dict[str,
// T]) as Pydantic validates the dict json.loads made of it: a repeated key
// keeps its first position and its last value, so only the last value's
// errors count; each value is validated by n.elem with loc [..., key]; the
// item count is checked against min/max like a list's, with Pydantic's
// "Dictionary" wording.
func (d *decoder) dict(i int, n *node, v reflect.Value) int {
	if d.depth++; d.depth > MaxDepth {
		return d.tooDeep(i)
	}
	data := d.data
	errStart := len(d.errs)
	m := reflect.MakeMap(n.typ)
	var (
		pos    = map[string]int{}    // key → first position
		groups map[int][]ErrorDetail // first position → errors of the key's last value
	)
	j := d.ws(i + 1)
	if j < len(data) && data[j] == '}' {
		j++
	} else {
		for {
			if j >= len(data) || data[j] != '"' {
				return d.fail(msgPropertyName, j)
			}
			k, kend := d.stringBytes(j)
			if kend < 0 {
				return -1
			}
			name := string(k)
			key := reflect.ValueOf(name).Convert(n.typ.Key())
			j = d.ws(kend)
			if j >= len(data) || data[j] != ':' {
				return d.fail(msgColon, j)
			}
			j = d.ws(j + 1)
			at, seen := pos[name]
			if !seen {
				at = len(pos)
				pos[name] = at
			}
			elem := reflect.New(n.typ.Elem()).Elem()
			if n.maxLen >= 0 && len(pos) > n.maxLen {
				// too_long replaces every item error: check and count only.
				groups = nil
				if j = d.skip(j); j < 0 {
					return -1
				}
			} else {
				before := len(d.errs)
				d.loc = append(d.loc, locElem{name: name, idx: -1})
				j = d.value(j, n.elem, elem)
				d.loc = d.loc[:len(d.loc)-1]
				if j < 0 {
					return -1
				}
				switch {
				case len(d.errs) > before:
					if groups == nil {
						groups = map[int][]ErrorDetail{}
					}
					groups[at] = append([]ErrorDetail(nil), d.errs[before:]...)
					clear(d.errs[before:])
					d.errs = d.errs[:before]
				case seen && groups != nil:
					delete(groups, at)
				}
			}
			m.SetMapIndex(key, elem)
			j = d.ws(j)
			if j < len(data) && data[j] == '}' {
				j++
				break
			}
			if j >= len(data) || data[j] != ',' {
				return d.fail(msgComma, j)
			}
			j = d.ws(j + 1)
		}
	}
	d.depth--
	if len(groups) > 0 {
		for at := 0; at < len(pos) && !d.capErrors(errStart); at++ {
			d.errs = append(d.errs, groups[at]...)
		}
	}
	d.lengthErrors(n, i, j, errStart, m.Len())
	v.Set(m)
	return j
}

// extraKey is an unknown key of a forbidding shape: where it first
// appeared (for its loc) and its last value (the input of its error).
type extraKey struct {
	key        string
	start, end int
}

// objectState is what object keeps about one JSON object while it reads
// it, for the errors: they come in Pydantic's order, not the input's.
type objectState struct {
	fieldErrs [][]ErrorDetail // by field: the errors of its last occurrence
	extras    []extraKey      // unknown keys in order of first appearance (at most MaxErrors)
	extraAt   map[string]int  // key → index in extras, once there are several
	lone      int             // start of the first unknown key with a lone surrogate, or -1
}

// object decodes a JSON object (data[i] == '{') into the struct v.
func (d *decoder) object(i int, sp *structPlan, v reflect.Value) int {
	if d.depth++; d.depth > MaxDepth {
		return d.tooDeep(i)
	}
	setDefaults(sp, v)
	data := d.data
	errStart := len(d.errs)
	var (
		seen uint64
		st   *objectState // allocated on the first error, repeated key or unknown key
		next int
	)
	j := d.ws(i + 1)
	if j < len(data) && data[j] == '}' {
		j++
	} else {
		for {
			if j >= len(data) || data[j] != '"' {
				return d.fail(msgPropertyName, j)
			}
			kstart := j
			key, kend := d.stringBytes(j)
			if kend < 0 {
				return -1
			}
			// Keys mostly come in declaration order: try the next field first.
			fi, known := next, next < len(sp.fields) && sp.fields[next].name == string(key)
			if !known {
				fi, known = sp.byName[string(key)]
			}
			next = fi + 1
			lone := d.lone
			j = d.ws(kend)
			if j >= len(data) || data[j] != ':' {
				return d.fail(msgColon, j)
			}
			j = d.ws(j + 1)
			if known {
				f := &sp.fields[fi]
				before := len(d.errs)
				d.loc = append(d.loc, locElem{name: f.name, idx: -1})
				j = d.value(j, f.node, f.of(v))
				d.loc = d.loc[:len(d.loc)-1]
				if j < 0 {
					return -1
				}
				// Python's dict keeps the last value of a repeated key:
				// only the errors of a field's last occurrence count.
				switch {
				case len(d.errs) > before:
					if st == nil {
						st = &objectState{lone: -1}
					}
					if st.fieldErrs == nil {
						st.fieldErrs = make([][]ErrorDetail, len(sp.fields))
					}
					st.fieldErrs[fi] = append(st.fieldErrs[fi][:0], d.errs[before:]...)
					clear(d.errs[before:])
					d.errs = d.errs[:before]
				case seen&(1<<fi) != 0 && st != nil && st.fieldErrs != nil:
					st.fieldErrs[fi] = nil
				}
				seen |= 1 << fi
			} else {
				vs := j
				if j = d.skip(j); j < 0 {
					return -1
				}
				if sp.forbid {
					if st == nil {
						st = &objectState{lone: -1}
					}
					st.extra(key, kstart, lone, vs, j)
				}
			}
			j = d.ws(j)
			if j < len(data) && data[j] == '}' {
				j++
				break
			}
			if j >= len(data) || data[j] != ',' {
				return d.fail(msgComma, j)
			}
			j = d.ws(j + 1)
		}
	}
	d.depth--
	missing := sp.required &^ seen
	if missing != 0 || st != nil {
		d.orderErrors(sp, i, j, errStart, missing, st)
	}
	return j
}

// extra notes an unknown key of a forbidding shape whose value is
// data[start:end]: a new key takes the next position (the first
// MaxErrors of them are kept), a repeated one its last value.
func (s *objectState) extra(key []byte, kstart int, lone bool, start, end int) {
	if lone && s.lone < 0 {
		s.lone = kstart
	}
	at, ok := -1, false
	if s.extraAt != nil {
		at, ok = s.extraAt[string(key)]
	} else {
		for k := range s.extras {
			if s.extras[k].key == string(key) {
				at, ok = k, true
				break
			}
		}
	}
	switch {
	case ok:
		s.extras[at].start, s.extras[at].end = start, end
	case len(s.extras) < MaxErrors:
		s.extras = append(s.extras, extraKey{string(key), start, end})
		switch {
		case s.extraAt != nil:
			s.extraAt[s.extras[len(s.extras)-1].key] = len(s.extras) - 1
		case len(s.extras) > 8:
			s.extraAt = make(map[string]int, MaxErrors)
			for k, e := range s.extras {
				s.extraAt[e.key] = k
			}
		}
	}
}

// orderErrors writes the errors of one object in Pydantic's order: per
// field in declaration order (the errors of its last occurrence), missing
// fields in place, then extra keys in order of first appearance with their
// last value; at most MaxErrors of them. An unknown key with a lone
// surrogate replaces them all with one string_unicode at the object's loc:
// Pydantic fails to read that key as UTF-8 while it checks the extras.
func (d *decoder) orderErrors(sp *structPlan, start, end, errStart int, missing uint64, st *objectState) {
	d.errs = d.errs[:errStart]
	if st != nil && st.lone >= 0 {
		kend, _ := d.scanString(st.lone)
		d.add("string_unicode", msgStringUnicode, d.echo(st.lone, kend), nil)
		return
	}
	var whole any
	for fi := range sp.fields {
		if len(d.errs)-errStart >= MaxErrors {
			break
		}
		if missing&(1<<fi) != 0 {
			if whole == nil {
				whole = d.echo(start, end)
			}
			d.errs = append(d.errs, ErrorDetail{Type: "missing", Loc: d.locNow(sp.fields[fi].name),
				Msg: msgMissing, Input: whole})
			continue
		}
		if st != nil && st.fieldErrs != nil {
			d.errs = append(d.errs, st.fieldErrs[fi]...)
		}
	}
	if st != nil {
		for _, e := range st.extras {
			if len(d.errs)-errStart >= MaxErrors {
				break
			}
			d.errs = append(d.errs, ErrorDetail{Type: "extra_forbidden", Loc: d.locNow(e.key), Msg: msgExtra,
				Input: d.echo(e.start, e.end)})
		}
	}
	d.capErrors(errStart)
}
