package snapshot

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"

	"github.com/assaykit/assay/internal/utf8repair"
)

// declRule says which in-document declarations of an encoding are read
// (normalisation step 3c).
type declRule int

const (
	declNone declRule = iota // text and JSON: none
	declHTML                 // text/html: the HTML Standard's prescan, XML declaration as fallback
	declXML                  // XHTML and XML: the XML declaration
)

// decodeText turns body into UTF-8 following the rules written down in the
// package documentation (normalisation step 3). It returns the text and
// the WHATWG name of the encoding used.
func decodeText(body []byte, rule declRule, params map[string]string) (string, string) {
	// a. Byte order mark.
	switch {
	case bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}):
		return decodeUTF8(body[3:]), "utf-8"
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}):
		return decodeWith(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), body[2:]), "utf-16be"
	case bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		return decodeWith(unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), body[2:]), "utf-16le"
	}
	// b. The charset parameter of the Content-Type header.
	if label, ok := params["charset"]; ok {
		if enc, name := lookupEncoding(label); enc != nil {
			return decodeNamed(enc, name, body), name
		}
	}
	// c. What the document declares about itself, in its first 1024 bytes.
	if rule != declNone {
		head := body
		if len(head) > prescanBytes {
			head = head[:prescanBytes]
		}
		enc, name := utf16Declaration(head)
		if enc == nil && rule == declHTML {
			enc, name = prescanHTML(head)
		}
		if enc == nil {
			enc, name = xmlDeclaredEncoding(head)
		}
		if enc != nil {
			return decodeNamed(enc, name, body), name
		}
	}
	// d, e. UTF-8 when the whole body is valid UTF-8, else windows-1252.
	if utf8.Valid(body) {
		return string(body), "utf-8"
	}
	enc, name := lookupEncoding("windows-1252")
	return decodeNamed(enc, name, body), name
}

// prescanBytes is how much of a body is searched for a declaration (the
// HTML Standard's advice for its prescan).
const prescanBytes = 1024

// utf16Declaration recognises an XML declaration written in UTF-16
// without a byte order mark by its first three characters "<?x", as the
// HTML Standard's prescan (step "prescan for UTF-16 XML declarations")
// and the XML Recommendation's appendix F do.
func utf16Declaration(head []byte) (encoding.Encoding, string) {
	switch {
	case bytes.HasPrefix(head, []byte{0x3C, 0, 0x3F, 0, 0x78, 0}):
		return lookupEncoding("utf-16le")
	case bytes.HasPrefix(head, []byte{0, 0x3C, 0, 0x3F, 0, 0x78}):
		return lookupEncoding("utf-16be")
	}
	return nil, ""
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
func decodeUTF8(b []byte) string { return utf8repair.String(b) }

// prescanHTML looks for a <meta charset> or <meta http-equiv=content-type
// content="...charset=..."> declaration in head (the first 1024 bytes),
// like the HTML standard's "prescan a byte stream to determine its
// encoding". A declared UTF-16 means UTF-8 and x-user-defined means
// windows-1252, as the standard says.
func prescanHTML(body []byte) (encoding.Encoding, string) {
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

// xmlDeclaredEncoding reads the encoding of an XML declaration at the very
// start of head, as the HTML Standard's "get an XML encoding" does: head
// starts with "<?xml"; "encoding" occurs before the first ">"; then
// optional bytes up to 0x20, "=", optional bytes up to 0x20, and a label
// in single or double quotes that contains no byte up to 0x20 and ends
// before that ">". A UTF-16 label means UTF-8 (the declaration was
// readable as ASCII, so the document is not UTF-16).
func xmlDeclaredEncoding(head []byte) (encoding.Encoding, string) {
	if !bytes.HasPrefix(head, []byte("<?xml")) {
		return nil, ""
	}
	end := bytes.IndexByte(head, '>')
	if end < 0 {
		return nil, ""
	}
	decl := head[:end]
	i := bytes.Index(decl, []byte("encoding"))
	if i < 0 {
		return nil, ""
	}
	i += len("encoding")
	skip := func() {
		for i < len(decl) && decl[i] <= 0x20 {
			i++
		}
	}
	skip()
	if i >= len(decl) || decl[i] != '=' {
		return nil, ""
	}
	i++
	skip()
	if i >= len(decl) || (decl[i] != '"' && decl[i] != '\'') {
		return nil, ""
	}
	quote := decl[i]
	i++
	n := bytes.IndexByte(decl[i:], quote)
	if n < 0 {
		return nil, ""
	}
	label := decl[i : i+n]
	for _, b := range label {
		if b <= 0x20 {
			return nil, ""
		}
	}
	enc, name := lookupEncoding(string(label))
	if strings.HasPrefix(name, "utf-16") {
		return lookupEncoding("utf-8")
	}
	return enc, name
}
