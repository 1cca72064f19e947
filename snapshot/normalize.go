package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/unicode/norm"
)

// NormalizationVersion names the normalisation algorithm that
// NormalizedSHA256 uses. The algorithm is specified in the package
// documentation; any change to its output gets a new version.
const NormalizationVersion = "assay-norm/1"

// kind is how a media type is normalised.
type kind int

const (
	kindNone kind = iota // no normalised form (PDF, images, ...)
	kindHTML             // text extracted from the HTML tree
	kindJSON             // RFC 8785 canonical JSON
	kindXML              // text rule, XML declaration honoured
	kindText             // text rule
)

// mediaKind classifies a media type (lowercase, without parameters).
func mediaKind(mt string) kind {
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return kindHTML
	case mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")):
		return kindJSON
	case mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml"):
		return kindXML
	case strings.HasPrefix(mt, "text/"):
		return kindText
	}
	return kindNone
}

// parseContentType splits a Content-Type value into a lowercase media type
// and its parameters. Unparsable values yield the part before ';'.
func parseContentType(ct string) (string, map[string]string) {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		params = map[string]string{}
	}
	return mt, params
}

// Normalized is the result of Normalize.
type Normalized struct {
	// Text is the normalised text; what NormalizedSHA256 hashes.
	Text string
	// SHA256 is the lowercase hex SHA-256 of Text's UTF-8 bytes.
	SHA256 string
	// Charset is the WHATWG name of the encoding the body was decoded
	// with ("" for JSON, which is always UTF-8 and reported as "utf-8").
	Charset string
	// Version is NormalizationVersion.
	Version string
}

// Normalize computes the normalised text of a body served with the given
// Content-Type, following the algorithm in the package documentation. It
// returns nil for content without a normalised form (PDF, and any type
// that is not HTML, XHTML, JSON, XML or text).
func Normalize(body []byte, contentType string) *Normalized {
	mt, params := parseContentType(contentType)
	k := mediaKind(mt)
	var text, cs string
	switch k {
	case kindNone:
		return nil
	case kindJSON:
		if canon, ok := canonicalJSON(body); ok {
			text, cs = canon, "utf-8"
			break
		}
		// Not JSON after all: the text rule.
		text, cs = decodeText(body, declNone, params)
		text = collapseSpace(norm.NFC.String(text))
	case kindHTML:
		// XHTML is decoded by the XML rules (browsers parse it with their
		// XML parser, which reads the XML declaration, not <meta>).
		rule := declHTML
		if mt == "application/xhtml+xml" {
			rule = declXML
		}
		var decoded string
		decoded, cs = decodeText(body, rule, params)
		text = collapseSpace(norm.NFC.String(htmlText(decoded)))
	case kindXML:
		text, cs = decodeText(body, declXML, params)
		text = collapseSpace(norm.NFC.String(text))
	default:
		text, cs = decodeText(body, declNone, params)
		text = collapseSpace(norm.NFC.String(text))
	}
	sum := sha256.Sum256([]byte(text))
	return &Normalized{Text: text, SHA256: hex.EncodeToString(sum[:]), Charset: cs, Version: NormalizationVersion}
}

// collapseSpace replaces every run of characters with the Unicode
// White_Space property by one U+0020 and trims both ends.
func collapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// skippedElements contribute no text, nor do their descendants.
var skippedElements = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
}

// blockElements separate words: a space is emitted before and after them.
var blockElements = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true,
	atom.Body: true, atom.Br: true, atom.Button: true, atom.Caption: true, atom.Dd: true,
	atom.Details: true, atom.Dialog: true, atom.Div: true, atom.Dl: true, atom.Dt: true,
	atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true, atom.Footer: true,
	atom.Form: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Head: true, atom.Header: true, atom.Hgroup: true,
	atom.Hr: true, atom.Html: true, atom.Img: true, atom.Legend: true, atom.Li: true,
	atom.Main: true, atom.Menu: true, atom.Nav: true, atom.Ol: true, atom.Optgroup: true,
	atom.Option: true, atom.P: true, atom.Pre: true, atom.Section: true, atom.Select: true,
	atom.Summary: true, atom.Table: true, atom.Tbody: true, atom.Td: true,
	atom.Textarea: true, atom.Tfoot: true, atom.Th: true, atom.Thead: true,
	atom.Title: true, atom.Tr: true, atom.Ul: true,
}

// htmlText parses decoded HTML with the HTML standard's tree construction
// (scripting enabled) and concatenates its text nodes in document order,
// skipping the subtrees of script, style, noscript, template and every
// SVG element, with a space around each block element.
func htmlText(doc string) string {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		// The parser refuses documents nested more than 512 elements deep.
		return htmlTokenText(doc)
	}
	var b strings.Builder
	b.Grow(len(doc) / 2)
	// An explicit walk (no recursion): documents may nest deeply.
	visible := func(n *html.Node) bool {
		return n.Type != html.ElementNode ||
			!(n.Namespace == "svg" || (n.Namespace == "" && skippedElements[n.DataAtom]))
	}
	isBlock := func(n *html.Node) bool {
		return n.Type == html.ElementNode && n.Namespace == "" && blockElements[n.DataAtom]
	}
	n := root
	for n != nil {
		descend := false
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
		case html.CommentNode, html.DoctypeNode:
		default:
			if visible(n) {
				if isBlock(n) {
					b.WriteByte(' ')
				}
				descend = true
			}
		}
		if descend && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		// Leave n, then every ancestor whose last child it was.
		for n != nil {
			if visible(n) && isBlock(n) {
				b.WriteByte(' ')
			}
			if n == root {
				n = nil
				break
			}
			if n.NextSibling != nil {
				n = n.NextSibling
				break
			}
			n = n.Parent
		}
	}
	return b.String()
}

// RawSHA256 is the lowercase hex SHA-256 of content: a snapshot's
// rawSha256 and its content address.
func RawSHA256(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// htmlTokenText extracts text from the token stream, for documents the
// tree builder refuses: skipped elements are skipped from their start tag
// to the matching end tag, block tags separate words, text tokens are
// kept with their character references decoded.
func htmlTokenText(doc string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(doc))
	var skipping atom.Atom // the skipped element we are inside, if any
	depth := 0             // nesting of that element
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			if skipping == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipping != 0 {
				if a == skipping && tt == html.StartTagToken {
					depth++
				} else if a == skipping && tt == html.EndTagToken {
					if depth--; depth == 0 {
						skipping = 0
					}
				}
				continue
			}
			if tt == html.StartTagToken && (skippedElements[a] || a == atom.Svg) {
				skipping, depth = a, 1
				continue
			}
			if blockElements[a] {
				b.WriteByte(' ')
			}
		}
	}
}
