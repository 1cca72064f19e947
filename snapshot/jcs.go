package snapshot

import (
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// canonicalJSON returns the RFC 8785 (JSON Canonicalization Scheme) form of
// body, or false when body is not one I-JSON value: RFC 8259 grammar, valid
// UTF-8 (a leading UTF-8 byte order mark is ignored), unique member names,
// numbers that fit an IEEE 754 double, no unpaired surrogate escapes, and
// nesting at most maxJSONDepth deep. The serialisation is jcs.Transform's
// (the one payment signs receipts with); this function adds the UTF-8,
// byte-order-mark and depth rules of the package documentation.
func canonicalJSON(body []byte) (string, bool) {
	body = trimBOM(body)
	if !utf8.Valid(body) || !withinDepth(body, maxJSONDepth) {
		return "", false
	}
	out, err := jcs.Transform(body)
	if err != nil {
		return "", false
	}
	return string(out), true
}

func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return b[3:]
	}
	return b
}

const maxJSONDepth = 1000

// withinDepth reports whether the arrays and objects of body nest at most
// max levels deep (brackets inside strings do not count). It does not
// check the grammar: jcs.Transform does.
func withinDepth(body []byte, max int) bool {
	depth, inString := 0, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			if depth++; depth > max {
				return false
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return true
}
