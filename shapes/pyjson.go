package shapes

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the JSON syntax layer. It accepts exactly what CPython's
// json module accepts (except the NaN/Infinity literals, see doc.go) and
// fails with the same message at the same position, because FastAPI
// reports json.loads' errors verbatim.

// Messages of CPython's json module.
const (
	msgExpectingValue = "Expecting value"
	msgExtraData      = "Extra data"
	msgPropertyName   = "Expecting property name enclosed in double quotes"
	msgColon          = "Expecting ':' delimiter"
	msgComma          = "Expecting ',' delimiter"
	msgUnterminated   = "Unterminated string starting at"
	msgControl        = "Invalid control character at"
	msgEscape         = "Invalid \\escape"
	msgUEscape        = "Invalid \\uXXXX escape"
)

// MaxDepth is the deepest nesting of arrays and objects Decode accepts.
// Python's parser fails with a RecursionError (FastAPI: 400) somewhere
// below 1000 levels; Decode stops at MaxDepth with the same outcome.
const MaxDepth = 512

// syntaxErr is the first JSON syntax error met.
type syntaxErr struct {
	msg   string
	pos   int // byte offset into the input
	cause error
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (d *decoder) ws(i int) int {
	for i < len(d.data) && isWS(d.data[i]) {
		i++
	}
	return i
}

// fail records a syntax error (the first one wins) and returns -1.
func (d *decoder) fail(msg string, i int) int {
	if d.syn == nil {
		d.syn = &syntaxErr{msg: msg, pos: i}
	}
	return -1
}

// isLit reports whether lit starts at i.
func (d *decoder) isLit(i int, lit string) bool {
	return len(d.data)-i >= len(lit) && string(d.data[i:i+len(lit)]) == lit
}

// scanString checks the string whose opening quote is at i and returns the
// index after its closing quote and whether it holds escapes.
func (d *decoder) scanString(i int) (end int, esc bool) {
	data := d.data
	n := len(data)
	j := i + 1
	for {
		// Find the end of the string or the next escape, eight bytes at a
		// time while no quote, backslash or control byte is among them.
		for j+8 <= n {
			w := binary.LittleEndian.Uint64(data[j:])
			const lo, hi = 0x0101010101010101, 0x8080808080808080
			q, b := w^(lo*'"'), w^(lo*'\\')
			if ((q-lo)&^q|(b-lo)&^b|(w-lo*0x20)&^w)&hi != 0 {
				break
			}
			j += 8
		}
		for j < n {
			c := data[j]
			if c == '"' {
				return j + 1, esc
			}
			if c == '\\' {
				break
			}
			if c <= 0x1f {
				return d.fail(msgControl, j), false
			}
			j++
		}
		if j >= n {
			return d.fail(msgUnterminated, i), false
		}
		esc = true
		j++ // the escaped character
		if j == n {
			return d.fail(msgUnterminated, i), false
		}
		c := data[j]
		if c != 'u' {
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
				continue
			}
			return d.fail(msgEscape, j-1), false
		}
		j++ // first hex digit
		if j+4 >= n {
			return d.fail(msgUEscape, j-1), false
		}
		r, ok := hex4(data[j : j+4])
		if !ok {
			return d.fail(msgUEscape, j-1), false
		}
		j += 4
		if utf16.IsSurrogate(rune(r)) && r < 0xdc00 && j+6 < n && data[j] == '\\' && data[j+1] == 'u' {
			r2, ok := hex4(data[j+2 : j+6])
			if !ok {
				return d.fail(msgUEscape, j+1), false
			}
			if r2 >= 0xdc00 && r2 <= 0xdfff {
				j += 6
			}
		}
	}
}

func hex4(b []byte) (uint16, bool) {
	var r uint16
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= uint16(c - '0')
		case c >= 'a' && c <= 'f':
			r |= uint16(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= uint16(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// unescape decodes the checked string data[i:end] (quotes included) into
// buf and reports whether it held a lone surrogate escape. Lone surrogates
// become U+FFFD, or with wtf8 their generalized UTF-8 bytes (ED A0..BF xx),
// which appendPyString writes back as the escape: the echo of an input
// keeps the Python string json.loads made.
func unescape(buf, s []byte, wtf8 bool) ([]byte, bool) {
	lone := false
	s = s[1 : len(s)-1]
	for k := 0; k < len(s); k++ {
		c := s[k]
		if c != '\\' {
			buf = append(buf, c)
			continue
		}
		k++
		switch s[k] {
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, _ := hex4(s[k+1 : k+5])
			k += 4
			ru := rune(r)
			if utf16.IsSurrogate(ru) {
				if r < 0xdc00 && k+6 < len(s) && s[k+1] == '\\' && s[k+2] == 'u' {
					if r2, ok := hex4(s[k+3 : k+7]); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
						ru = utf16.DecodeRune(ru, rune(r2))
						k += 6
						buf = utf8.AppendRune(buf, ru)
						continue
					}
				}
				lone = true
				if wtf8 {
					buf = append(buf, 0xed, byte(0x80|(r>>6)&0x3f), byte(0x80|r&0x3f))
					continue
				}
				ru = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, ru)
		default: // " \ /
			buf = append(buf, s[k])
		}
	}
	return buf, lone
}

// scanNumber matches a number at i with the grammar of CPython's scanner
// (which stops early rather than failing: "1." is the number 1 followed by
// "."). ok is false when no number starts at i.
func (d *decoder) scanNumber(i int) (end int, isFloat, ok bool) {
	data := d.data
	n := len(data)
	j := i
	if j < n && data[j] == '-' {
		j++
	}
	switch {
	case j < n && data[j] >= '1' && data[j] <= '9':
		j++
		for j < n && isDigit(data[j]) {
			j++
		}
	case j < n && data[j] == '0':
		j++
	default:
		return i, false, false
	}
	if j+1 < n && data[j] == '.' && isDigit(data[j+1]) {
		isFloat = true
		j += 2
		for j < n && isDigit(data[j]) {
			j++
		}
	}
	if j+1 < n && (data[j] == 'e' || data[j] == 'E') {
		e := j
		j++
		if j+1 < n && (data[j] == '-' || data[j] == '+') {
			j++
		}
		for j < n && isDigit(data[j]) {
			j++
		}
		if isDigit(data[j-1]) {
			isFloat = true
		} else {
			j = e
		}
	}
	return j, isFloat, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skip checks the value at i and returns the index after it.
func (d *decoder) skip(i int) int {
	data := d.data
	if i >= len(data) {
		return d.fail(msgExpectingValue, i)
	}
	switch c := data[i]; c {
	case '"':
		end, _ := d.scanString(i)
		return end
	case '{':
		return d.skipObject(i)
	case '[':
		return d.skipArray(i)
	case 'n', 't', 'f':
		for _, lit := range []string{"null", "true", "false"} {
			if c == lit[0] && d.isLit(i, lit) {
				return i + len(lit)
			}
		}
	default:
		if end, _, ok := d.scanNumber(i); ok {
			return end
		}
	}
	return d.fail(msgExpectingValue, i)
}

// skipObject checks the object at i (data[i] == '{') and returns the index
// after it.
func (d *decoder) skipObject(i int) int {
	if d.depth++; d.depth > MaxDepth {
		return d.tooDeep(i)
	}
	defer func() { d.depth-- }()
	data := d.data
	j := d.ws(i + 1)
	if j < len(data) && data[j] == '}' {
		return j + 1
	}
	for {
		if j >= len(data) || data[j] != '"' {
			return d.fail(msgPropertyName, j)
		}
		if j, _ = d.scanString(j); j < 0 {
			return -1
		}
		j = d.ws(j)
		if j >= len(data) || data[j] != ':' {
			return d.fail(msgColon, j)
		}
		if j = d.skip(d.ws(j + 1)); j < 0 {
			return -1
		}
		j = d.ws(j)
		if j < len(data) && data[j] == '}' {
			return j + 1
		}
		if j >= len(data) || data[j] != ',' {
			return d.fail(msgComma, j)
		}
		j = d.ws(j + 1)
	}
}

// skipArray checks the array at i (data[i] == '[') and returns the index
// after it.
func (d *decoder) skipArray(i int) int {
	if d.depth++; d.depth > MaxDepth {
		return d.tooDeep(i)
	}
	defer func() { d.depth-- }()
	data := d.data
	j := d.ws(i + 1)
	if j < len(data) && data[j] == ']' {
		return j + 1
	}
	for {
		if j = d.skip(j); j < 0 {
			return -1
		}
		j = d.ws(j)
		if j < len(data) && data[j] == ']' {
			return j + 1
		}
		if j >= len(data) || data[j] != ',' {
			return d.fail(msgComma, j)
		}
		j = d.ws(j + 1)
	}
}

func (d *decoder) tooDeep(i int) int {
	if d.syn == nil {
		d.syn = &syntaxErr{msg: "Maximum nesting depth exceeded", pos: i, cause: ErrUnreadable}
	}
	return -1
}

// echo renders the checked value data[i:end] as Python's json.dumps
// (ensure_ascii=False, compact) renders the object json.loads made of it:
// the "input" of an error, as a json.RawMessage, or OmittedInput when the
// rendering is longer than MaxEchoBytes (it stops there).
func (d *decoder) echo(i, end int) any {
	r := pyRender{limit: MaxEchoBytes}
	r.d.data = d.data[:end]
	out, _ := r.value(nil, i)
	if r.over {
		return OmittedInput{}
	}
	return json.RawMessage(out)
}

// pyRender renders checked JSON values as Python would print them, up to
// limit bytes: past it, over is set and the rendering stops.
type pyRender struct {
	d     decoder // the input (data) and its scanner
	limit int
	over  bool
}

// check notes whether out has passed the limit.
func (r *pyRender) check(out []byte) bool {
	if len(out) > r.limit {
		r.over = true
	}
	return r.over
}

// value appends the Python rendering of the value at i and returns the
// index after it (meaningless once over is set).
func (r *pyRender) value(dst []byte, i int) ([]byte, int) {
	data := r.d.data
	switch c := data[i]; c {
	case '"':
		end, esc := r.d.scanString(i)
		if !esc {
			dst = appendPyString(dst, data[i+1:end-1])
		} else {
			raw, _ := unescape(nil, data[i:end], true)
			dst = appendPyString(dst, raw)
		}
		r.check(dst)
		return dst, end
	case '{':
		return r.object(dst, i)
	case '[':
		dst = append(dst, '[')
		j := r.d.ws(i + 1)
		if data[j] != ']' {
			for first := true; ; first = false {
				if !first {
					dst = append(dst, ',')
				}
				if dst, j = r.value(dst, j); r.over {
					return dst, j
				}
				j = r.d.ws(j)
				if data[j] == ']' {
					break
				}
				j = r.d.ws(j + 1)
			}
		}
		return append(dst, ']'), j + 1
	case 'n':
		return append(dst, "null"...), i + 4
	case 't':
		return append(dst, "true"...), i + 4
	case 'f':
		return append(dst, "false"...), i + 5
	default:
		end, isFloat, _ := r.d.scanNumber(i)
		dst = appendPyNumber(dst, data[i:end], isFloat)
		r.check(dst)
		return dst, end
	}
}

// object renders the object at i as Python's dict: a repeated key keeps
// its first position and its last value.
func (r *pyRender) object(dst []byte, i int) ([]byte, int) {
	data := r.d.data
	type member struct{ key, val []byte }
	var (
		members []member
		index   map[string]int // key → member, once there are many
		size    int            // rendered bytes of the members so far
	)
	j := r.d.ws(i + 1)
	if data[j] != '}' {
		for {
			kend, esc := r.d.scanString(j)
			key := data[j+1 : kend-1]
			if esc {
				key, _ = unescape(nil, data[j:kend], true)
			}
			j = r.d.ws(r.d.ws(kend) + 1)
			var val []byte
			if val, j = r.value(nil, j); r.over {
				return dst, j
			}
			at, dup := -1, false
			if index != nil {
				at, dup = index[string(key)]
			} else {
				for k := range members {
					if string(members[k].key) == string(key) {
						at, dup = k, true
						break
					}
				}
			}
			if dup {
				size += len(val) - len(members[at].val)
				members[at].val = val
			} else {
				members = append(members, member{key, val})
				size += len(key) + len(val) + 4
				if index == nil && len(members) > 16 {
					index = make(map[string]int, 2*len(members))
					for k, m := range members {
						index[string(m.key)] = k
					}
				} else if index != nil {
					index[string(key)] = len(members) - 1
				}
			}
			if len(dst)+size > r.limit {
				r.over = true
				return dst, j
			}
			j = r.d.ws(j)
			if data[j] == '}' {
				break
			}
			j = r.d.ws(j + 1)
		}
	}
	dst = append(dst, '{')
	for k, m := range members {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = appendPyString(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.val...)
	}
	dst = append(dst, '}')
	r.check(dst)
	return dst, j + 1
}

// appendPyNumber renders a JSON number literal as Python renders the int
// or float json.loads makes of it. Floats beyond float64's range (Python:
// inf) keep their literal, since JSON has no infinity.
func appendPyNumber(dst, lit []byte, isFloat bool) []byte {
	if !isFloat {
		if string(lit) == "-0" {
			return append(dst, '0')
		}
		return append(dst, lit...)
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil && math.IsInf(f, 0) {
		return append(dst, lit...)
	}
	return appendPyFloat(dst, f)
}

// appendPyFloat renders f as Python's repr(float) does.
func appendPyFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	// Shortest round-trip digits and the decimal exponent.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		dst = append(dst, '-')
	}
	mant, exp := e, 0
	for k, c := range e {
		if c == 'e' {
			mant = e[:k]
			exp, _ = strconv.Atoi(string(e[k+1:]))
			break
		}
	}
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	decpt := exp + 1 // position of the decimal point relative to digits
	if decpt > 16 || decpt < -3 {
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	switch {
	case decpt <= 0:
		dst = append(dst, '0', '.')
		for range -decpt {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	case decpt >= len(digits):
		dst = append(dst, digits...)
		for range decpt - len(digits) {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	default:
		dst = append(dst, digits[:decpt]...)
		dst = append(dst, '.')
		return append(dst, digits[decpt:]...)
	}
}

// appendPyString renders s as json.dumps(ensure_ascii=False) does. The
// generalized UTF-8 of a lone surrogate (from unescape with wtf8) is
// written as its \\uXXXX escape, where Python would write the surrogate
// itself (and then fail to encode the answer).
func appendPyString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for k := 0; k < len(s); k++ {
		switch c := s[k]; c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case 0xed:
			if k+2 < len(s) && s[k+1] >= 0xa0 && s[k+1] <= 0xbf {
				const hex = "0123456789abcdef"
				r := rune(c&0x0f)<<12 | rune(s[k+1]&0x3f)<<6 | rune(s[k+2]&0x3f)
				dst = append(dst, '\\', 'u', hex[r>>12], hex[r>>8&15], hex[r>>4&15], hex[r&15])
				k += 2
				continue
			}
			dst = append(dst, c)
		default:
			if c < 0x20 {
				const hex = "0123456789abcdef"
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
				continue
			}
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
