package shapes

import (
	"bytes"
	"math"
	"strconv"
	"unicode"
)

// Lax-mode coercions of Pydantic v2 (pydantic-core) for JSON input.

// parseJSONInt parses a JSON integer literal; big reports that it does
// not fit an int64 (neg tells its sign).
func parseJSONInt(lit []byte) (v int64, big, neg bool) {
	if len(lit) > 0 && lit[0] == '-' {
		neg = true
		lit = lit[1:]
	}
	var u uint64
	for _, c := range lit {
		if u > (math.MaxUint64-9)/10 {
			return 0, true, neg
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return -int64(u), false, neg
	case !neg && u <= math.MaxInt64:
		return int64(u), false, neg
	}
	return 0, true, neg
}

// intFromNumber coerces a JSON number literal to an int.
func intFromNumber(lit []byte, isFloat bool) (int64, numCode) {
	if !isFloat {
		v, big, neg := parseJSONInt(lit)
		switch {
		case !big:
			return v, numOK
		case neg:
			return 0, numBigNeg
		}
		return 0, numBigPos
	}
	f, _ := strconv.ParseFloat(string(lit), 64)
	return intFromFloat(f)
}

// intFromFloat is pydantic-core's float_as_int.
func intFromFloat(f float64) (int64, numCode) {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return 0, numFinite
	case f != math.Trunc(f):
		return 0, numFromFloat
	case f > -9.223372036854775808e18 && f < 9.223372036854775807e18:
		return int64(f), numOK
	}
	return 0, numParsingSize
}

// trimSpace strips Unicode white space, as Rust's str::trim does.
func trimSpace(s []byte) []byte { return bytes.TrimFunc(s, unicode.IsSpace) }

// intFromString coerces a string to an int: surrounding white space is
// ignored, then an optional sign, ASCII digits with single underscores
// between them, and an optional fraction of zeros ("42.0").
func intFromString(raw []byte) (int64, numCode) {
	s := trimSpace(raw)
	if len(s) > 4300 {
		return 0, numParsingSize
	}
	if dot := bytes.IndexByte(s, '.'); dot >= 0 {
		frac := s[dot+1:]
		if len(frac) == 0 || len(bytes.Trim(frac, "0")) != 0 {
			return 0, numParsing
		}
		s = s[:dot]
	}
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, numParsing
	}
	var u uint64
	big := false
	for k, c := range s {
		switch {
		case isDigit(c):
			if u > (math.MaxUint64-9)/10 {
				big = true
			}
			u = u*10 + uint64(c-'0')
		case c == '_' && k > 0 && isDigit(s[k-1]) && k+1 < len(s) && isDigit(s[k+1]):
		default:
			return 0, numParsing
		}
	}
	switch {
	case big:
	case neg && u <= 1<<63:
		return -int64(u), numOK
	case !neg && u <= math.MaxInt64:
		return int64(u), numOK
	}
	if neg {
		return 0, numBigNeg
	}
	return 0, numBigPos
}

// floatFromString coerces a string to a float: surrounding white space is
// ignored; accepted are decimal numbers with optional exponent ("1e3",
// ".5", "5."), underscores between digits, and inf, infinity and nan in
// any case, with an optional sign.
func floatFromString(raw []byte) (float64, bool) {
	s, ok := dropUnderscores(trimSpace(raw))
	if !ok {
		return 0, false
	}
	body := s
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	if !asciiEqualFold(body, "inf") && !asciiEqualFold(body, "infinity") && !asciiEqualFold(body, "nan") && !isDecimal(body) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil && !math.IsInf(f, 0) && f != 0 {
		return 0, false
	}
	return f, true
}

// dropUnderscores removes the underscores of s, each of which must stand
// between two digits.
func dropUnderscores(s []byte) ([]byte, bool) {
	if bytes.IndexByte(s, '_') < 0 {
		return s, true
	}
	clean := make([]byte, 0, len(s))
	for k, c := range s {
		if c == '_' {
			if k == 0 || k+1 == len(s) || !isDigit(s[k-1]) || !isDigit(s[k+1]) {
				return nil, false
			}
			continue
		}
		clean = append(clean, c)
	}
	return clean, true
}

// isDecimal reports whether s (without a sign) is digits with an optional
// fraction ("5.", ".5": at least one digit) and an optional exponent.
func isDecimal(s []byte) bool {
	k, digits := 0, 0
	for k < len(s) && isDigit(s[k]) {
		k, digits = k+1, digits+1
	}
	if k < len(s) && s[k] == '.' {
		k++
		for k < len(s) && isDigit(s[k]) {
			k, digits = k+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if k < len(s) && (s[k] == 'e' || s[k] == 'E') {
		k++
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		e := k
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == e {
			return false
		}
	}
	return k == len(s)
}

func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for k, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[k] {
			return false
		}
	}
	return true
}

// boolFromString accepts, in any case and without surrounding white space,
// 1 true t yes y on and 0 false f no n off.
func boolFromString(raw []byte) (bool, bool) {
	if len(raw) > 5 {
		return false, false
	}
	for _, w := range [...]string{"1", "true", "t", "yes", "y", "on"} {
		if asciiEqualFold(raw, w) {
			return true, true
		}
	}
	for _, w := range [...]string{"0", "false", "f", "no", "n", "off"} {
		if asciiEqualFold(raw, w) {
			return false, true
		}
	}
	return false, false
}

// boolFromNumber accepts 0 and 1 (also as 0.0 and 1.0); other whole
// numbers are bool_parsing, anything else bool_type.
func boolFromNumber(lit []byte, isFloat bool) (bool, numCode) {
	if !isFloat {
		v, big, _ := parseJSONInt(lit)
		switch {
		case big:
			return false, numType
		case v == 0 || v == 1:
			return v == 1, numOK
		}
		return false, numParsing
	}
	f, _ := strconv.ParseFloat(string(lit), 64)
	v, code := intFromFloat(f)
	switch {
	case code != numOK:
		return false, numType
	case v == 0 || v == 1:
		return v == 1, numOK
	}
	return false, numParsing
}
