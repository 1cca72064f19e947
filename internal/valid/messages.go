package valid

import (
	"fmt"
	"strconv"
	"strings"
)

// Pydantic v2's messages of the constraint errors a validate tag can
// describe. shapes (JSON) and Struct (Go values) both build their
// messages here, so a rule broken on either path reads the same.

// MsgMissing is the message of a required field that is absent (JSON) or
// zero (Go).
const MsgMissing = "Field required"

// Plural is "1 character", "2 characters".
func Plural(k int, word string) string {
	s := strconv.Itoa(k) + " " + word
	if k != 1 {
		s += "s"
	}
	return s
}

// StringTooShort is the message of string_too_short.
func StringTooShort(min int) string { return "String should have at least " + Plural(min, "character") }

// StringTooLong is the message of string_too_long.
func StringTooLong(max int) string { return "String should have at most " + Plural(max, "character") }

// PatternMismatch is the message of string_pattern_mismatch.
func PatternMismatch(src string) string { return "String should match pattern '" + src + "'" }

// ItemsTooShort is the message of too_short; what is "List" or
// "Dictionary".
func ItemsTooShort(what string, min, actual int) string {
	return what + " should have at least " + Plural(min, "item") + " after validation, not " + strconv.Itoa(actual)
}

// ItemsTooLong is the message of too_long; what is "List" or
// "Dictionary".
func ItemsTooLong(what string, max, actual int) string {
	return what + " should have at most " + Plural(max, "item") + " after validation, not " + strconv.Itoa(actual)
}

// Literal is the message of literal_error; expected is Expected's text.
func Literal(expected string) string { return "Input should be " + expected }

// Numeric bound error types, in the order Pydantic checks them.
const (
	LessThanEqual    = "less_than_equal"
	LessThan         = "less_than"
	GreaterThanEqual = "greater_than_equal"
	GreaterThan      = "greater_than"
)

// Bound is the message of a numeric bound error of type typ (one of the
// four above); text is the bound as BoundText writes it.
func Bound(typ, text string) string {
	var words string
	switch typ {
	case LessThanEqual:
		words = "less than or equal to"
	case LessThan:
		words = "less than"
	case GreaterThanEqual:
		words = "greater than or equal to"
	case GreaterThan:
		words = "greater than"
	}
	return "Input should be " + words + " " + text
}

// BoundText writes a bound as Pydantic's message does: an integer on an
// int field, the shortest decimal ("85", "0.5") on a float field.
func BoundText(v float64, isInt bool) string {
	if isInt {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// SplitOneOf splits a validator oneof list: space separated, single quotes
// around values that contain spaces.
func SplitOneOf(s string) []string {
	var out []string
	for s != "" {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			break
		}
		if s[0] == '\'' {
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				out = append(out, s[1:])
				break
			}
			out = append(out, s[1:end+1])
			s = s[end+2:]
			continue
		}
		v, rest, _ := strings.Cut(s, " ")
		out = append(out, v)
		s = rest
	}
	return out
}

// Expected renders Pydantic's literal_error expectation: 'a', 'b' or 'c'.
func Expected(vals []string) string {
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			if i == len(vals)-1 {
				b.WriteString(" or ")
			} else {
				b.WriteString(", ")
			}
		}
		b.WriteString(PyRepr(v))
	}
	return b.String()
}

// PyRepr is Python's repr of a str.
func PyRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
