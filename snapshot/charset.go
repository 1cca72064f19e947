package snapshot

import (
	"bytes"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
)

// decodeText turns body into UTF-8 following the rules written down in the
// package documentation (normalisation step 3). It returns the text and
// the WHATWG name of the encoding used.
func decodeText(body []byte, k kind, params map[string]string) (string, string) {
	// 1. Byte order mark.
	switch {
	case bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}):
		return decodeUTF8(body[3:]), "utf-8"
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}):
		return decodeWith(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), body[2:]), "utf-16be"
	case bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		return decodeWith(unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), body[2:]), "utf-16le"
	}
	// 2. The charset parameter of the Content-Type header.
	if label, ok := params["charset"]; ok {
		if enc, name := lookupEncoding(label); enc != nil {
			return decodeNamed(enc, name, body), name
		}
	}
	// 3. What the document declares about itself.
	switch k {
	case kindHTML:
		if enc, name := prescanHTML(body); enc != nil {
			return decodeNamed(enc, name, body), name
		}
	case kindXML:
		if enc, name := xmlDeclaredEncoding(body); enc != nil {
			return decodeNamed(enc, name, body), name
		}
	}
	// 4. UTF-8 when the whole body is valid UTF-8, else windows-1252.
	if utf8.Valid(body) {
		return string(body), "utf-8"
	}
	enc, name := lookupEncoding("windows-1252")
	return decodeNamed(enc, name, body), name
}

// lookupEncoding resolves a label with the WHATWG Encoding Standard's label
// table (so "latin1", "iso-8859-1" and "ascii" all mean windows-1252).
func lookupEncoding(label string) (encoding.Encoding, string) {
	enc, err := htmlindex.Get(strings.TrimSpace(label))
	if err != nil {
		return nil, ""
	}
	name, err := htmlindex.Name(enc)
	if err != nil {
		return nil, ""
	}
	return enc, name
}

func decodeNamed(enc encoding.Encoding, name string, body []byte) string {
	if name == "utf-8" {
		return decodeUTF8(body)
	}
	return decodeWith(enc, body)
}

func decodeWith(enc encoding.Encoding, body []byte) string {
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		// x/text decoders replace malformed input rather than fail; this is
		// a last resort that keeps the function total.
		return decodeUTF8(body)
	}
	return decodeUTF8(out)
}

// decodeUTF8 decodes UTF-8 the WHATWG way: each maximal subpart of an
// ill-formed sequence becomes one U+FFFD.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			sb.WriteByte(c)
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
			sb.WriteRune(utf8.RuneError)
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
			sb.Write(b[i:j])
		} else {
			sb.WriteRune(utf8.RuneError)
		}
		i = j
	}
	return sb.String()
}

// prescanHTML looks for a <meta charset> or <meta http-equiv=content-type
// content="...charset=..."> declaration in the first 1024 bytes, like the
// HTML standard's "prescan a byte stream to determine its encoding". A
// declared UTF-16 means UTF-8 and x-user-defined means windows-1252, as
// the standard says.
func prescanHTML(body []byte) (encoding.Encoding, string) {
	if len(body) > 1024 {
		body = body[:1024]
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return nil, ""
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		if string(name) != "meta" {
			continue
		}
		seen := map[string]bool{}
		gotPragma, needPragma, decided := false, false, false
		var label string
		for hasAttr {
			var k, v []byte
			k, v, hasAttr = z.TagAttr()
			key := string(k)
			if seen[key] {
				continue
			}
			seen[key] = true
			val := strings.ToLower(string(v))
			switch key {
			case "http-equiv":
				if val == "content-type" {
					gotPragma = true
				}
			case "content":
				if !decided {
					if l := charsetFromMetaContent(val); l != "" {
						label, needPragma, decided = l, true, true
					}
				}
			case "charset":
				label, needPragma, decided = val, false, true
			}
		}
		if !decided || (needPragma && !gotPragma) {
			continue
		}
		enc, n := lookupEncoding(label)
		if enc == nil {
			continue
		}
		switch {
		case strings.HasPrefix(n, "utf-16"):
			return lookupEncoding("utf-8")
		case n == "x-user-defined":
			return lookupEncoding("windows-1252")
		}
		return enc, n
	}
}

// charsetFromMetaContent is the HTML standard's "extracting a character
// encoding from a meta element".
func charsetFromMetaContent(s string) string {
	for {
		i := strings.Index(s, "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], " \t\n\f\r")
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], " \t\n\f\r")
		if s == "" {
			return ""
		}
		if q := s[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return ""
			}
			return s[1 : 1+end]
		}
		end := strings.IndexAny(s, "; \t\n\f\r")
		if end < 0 {
			end = len(s)
		}
		return s[:end]
	}
}

var xmlDeclRe = regexp.MustCompile(`^<\?xml[ \t\r\n][^>]*?encoding[ \t\r\n]*=[ \t\r\n]*["']([A-Za-z][A-Za-z0-9._-]*)["']`)

// xmlDeclaredEncoding reads the encoding pseudo-attribute of an XML
// declaration at the very start of the body.
func xmlDeclaredEncoding(body []byte) (encoding.Encoding, string) {
	if len(body) > 1024 {
		body = body[:1024]
	}
	m := xmlDeclRe.FindSubmatch(body)
	if m == nil {
		return nil, ""
	}
	enc, name := lookupEncoding(string(m[1]))
	if strings.HasPrefix(name, "utf-16") {
		// A UTF-16 document without a byte order mark cannot have an
		// ASCII-readable declaration; the label is wrong.
		return nil, ""
	}
	return enc, name
}
