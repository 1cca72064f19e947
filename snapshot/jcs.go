package snapshot

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// canonicalJSON returns the RFC 8785 (JSON Canonicalization Scheme) form of
// body, or false when body is not one I-JSON value: RFC 8259 grammar, valid
// UTF-8 (a leading UTF-8 byte order mark is ignored), unique member names,
// numbers that fit an IEEE 754 double, no unpaired surrogate escapes, and
// nesting at most maxJSONDepth deep.
func canonicalJSON(body []byte) (string, bool) {
	body = trimBOM(body)
	if !utf8.Valid(body) {
		return "", false
	}
	p := &jsonParser{s: string(body)}
	p.ws()
	var out strings.Builder
	out.Grow(len(body))
	if !p.value(&out, 0) {
		return "", false
	}
	p.ws()
	if p.i != len(p.s) {
		return "", false
	}
	return out.String(), true
}

func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return b[3:]
	}
	return b
}

const maxJSONDepth = 1000

type jsonParser struct {
	s string
	i int
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) lit(word string) bool {
	if strings.HasPrefix(p.s[p.i:], word) {
		p.i += len(word)
		return true
	}
	return false
}

// value parses one value and writes its canonical form.
func (p *jsonParser) value(out *strings.Builder, depth int) bool {
	if p.i >= len(p.s) || depth > maxJSONDepth {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(out, depth+1)
	case c == '[':
		return p.array(out, depth+1)
	case c == '"':
		s, ok := p.str()
		if ok {
			writeJCSString(out, s)
		}
		return ok
	case c == 't':
		out.WriteString("true")
		return p.lit("true")
	case c == 'f':
		out.WriteString("false")
		return p.lit("false")
	case c == 'n':
		out.WriteString("null")
		return p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(out)
	}
	return false
}

func (p *jsonParser) object(out *strings.Builder, depth int) bool {
	p.i++ // {
	type member struct {
		key   string
		units []uint16
		val   string
	}
	var members []member
	seen := map[string]bool{}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		out.WriteString("{}")
		return true
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return false
		}
		key, ok := p.str()
		if !ok || seen[key] {
			return false
		}
		seen[key] = true
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return false
		}
		p.i++
		p.ws()
		var v strings.Builder
		if !p.value(&v, depth) {
			return false
		}
		members = append(members, member{key: key, units: utf16.Encode([]rune(key)), val: v.String()})
		p.ws()
		if p.i >= len(p.s) {
			return false
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] != '}' {
			return false
		}
		p.i++
		break
	}
	// RFC 8785 §3.2.3: members sorted by their names' UTF-16 code units.
	slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.units, b.units) })
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			out.WriteByte(',')
		}
		writeJCSString(out, m.key)
		out.WriteByte(':')
		out.WriteString(m.val)
	}
	out.WriteByte('}')
	return true
}

func (p *jsonParser) array(out *strings.Builder, depth int) bool {
	p.i++ // [
	out.WriteByte('[')
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		out.WriteByte(']')
		return true
	}
	for n := 0; ; n++ {
		if n > 0 {
			out.WriteByte(',')
		}
		p.ws()
		if !p.value(out, depth) {
			return false
		}
		p.ws()
		if p.i >= len(p.s) {
			return false
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] != ']' {
			return false
		}
		p.i++
		out.WriteByte(']')
		return true
	}
}

// str parses a string token and returns its value.
func (p *jsonParser) str() (string, bool) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", false
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(r) {
					// Only a high surrogate followed by an escaped low one.
					if r >= 0xDC00 || !strings.HasPrefix(p.s[p.i:], "\\u") {
						return "", false
					}
					p.i += 2
					r2, ok := p.hex4()
					if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
						return "", false
					}
					r = utf16.DecodeRune(r, r2)
				}
				b.WriteRune(r)
			default:
				return "", false
			}
		default:
			j := p.i
			for j < len(p.s) && p.s[j] != '"' && p.s[j] != '\\' && p.s[j] >= 0x20 {
				j++
			}
			b.WriteString(p.s[p.i:j])
			p.i = j
		}
	}
	return "", false
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

// number parses an RFC 8259 number and writes it the way ECMAScript's
// Number.prototype.toString does (RFC 8785 §3.2.2.3).
func (p *jsonParser) number(out *strings.Builder) bool {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i >= len(p.s) {
		return false
	}
	if p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return false
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return false
		}
	}
	f, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	out.WriteString(formatES(f))
	return true
}

// formatES formats a finite double like ECMAScript Number::toString.
func formatES(f float64) string {
	if f == 0 {
		return "0" // also -0
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Shortest round-trip digits and decimal exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	k := len(digits)
	n := exp + 1 // position of the decimal point
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		m := digits[:1]
		if k > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if n-1 < 0 {
			es = "-"
		}
		s = m + "e" + es + strconv.Itoa(abs(n-1))
	}
	return sign + s
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// writeJCSString writes s as a JSON string the RFC 8785 way: only '"',
// '\\' and U+0000..U+001F are escaped, with the short forms \b \t \n \f \r
// where they exist and \u00xx (lowercase hex) otherwise.
func writeJCSString(out *strings.Builder, s string) {
	const hexdigits = "0123456789abcdef"
	out.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out.WriteString(s[start:i])
		switch c {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\t':
			out.WriteString(`\t`)
		case '\n':
			out.WriteString(`\n`)
		case '\f':
			out.WriteString(`\f`)
		case '\r':
			out.WriteString(`\r`)
		default:
			out.WriteString(`\u00`)
			out.WriteByte(hexdigits[c>>4])
			out.WriteByte(hexdigits[c&0xF])
		}
		start = i + 1
	}
	out.WriteString(s[start:])
	out.WriteByte('"')
}
