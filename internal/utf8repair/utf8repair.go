// Package utf8repair decodes text that should be UTF-8 the way WHATWG's
// decoder and Python's errors="replace" do: each maximal subpart of an
// ill-formed sequence (a lead byte and the continuation bytes that could
// still have completed it) becomes one U+FFFD. Go's own conversions
// (strings.ToValidUTF8, utf8.DecodeRune) count replacements differently,
// so snapshot text and FastAPI-compatible query strings use this.
package utf8repair

import "unicode/utf8"

// Append appends b to dst with every maximal ill-formed subpart replaced by
// U+FFFD.
func Append(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		need, lower, upper := 0, byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c == 0xE0:
			need, lower = 2, 0xA0
		case c == 0xED:
			need, upper = 2, 0x9F
		case c >= 0xE1 && c <= 0xEF:
			need = 2
		case c == 0xF0:
			need, lower = 3, 0x90
		case c == 0xF4:
			need, upper = 3, 0x8F
		case c >= 0xF1 && c <= 0xF3:
			need = 3
		default:
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i++
			continue
		}
		j, ok := i+1, true
		for k := 0; k < need; k++ {
			lo, hi := byte(0x80), byte(0xBF)
			if k == 0 {
				lo, hi = lower, upper
			}
			if j >= len(b) || b[j] < lo || b[j] > hi {
				ok = false
				break
			}
			j++
		}
		if ok {
			dst = append(dst, b[i:j]...)
		} else {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		}
		i = j
	}
	return dst
}

// String returns b as a valid UTF-8 string (see Append).
func String(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(Append(make([]byte, 0, len(b)+16), b))
}
