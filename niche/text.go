package niche

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxQueryTokens bounds the number of distinct words of a search query
// that are matched; further words are ignored.
const MaxQueryTokens = 16

// SearchText is the normalised form in which text is indexed and queries
// are matched, identical for every store: Unicode NFKC, lower case,
// diacritics removed, and every run of characters that are neither
// letters nor digits replaced by one space, trimmed. Both databases index
// this text (SQLite's unicode61 tokenizer and PostgreSQL's simple
// configuration then split it on spaces alone), so their matches agree.
func SearchText(s string) string {
	if s == "" {
		return ""
	}
	s = norm.NFKC.String(s)
	s = strings.ToLower(s)
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	space := false
	for _, r := range d {
		switch {
		case unicode.Is(unicode.Mn, r):
			// A combining mark: drop it (é → e).
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return norm.NFC.String(b.String())
}

// Query is a normalised search query.
type Query struct {
	// Raw is the query as given.
	Raw string `json:"raw"`
	// Normalized is SearchText(Raw).
	Normalized string `json:"normalized"`
	// Tokens are the distinct words that must all match (AND), in order of
	// first appearance, at most MaxQueryTokens.
	Tokens []string `json:"tokens"`
}

// ParseQuery normalises a user query. It never fails: a query without any
// letter or digit has no tokens and matches nothing.
func ParseQuery(raw string) Query {
	q := Query{Raw: raw, Normalized: SearchText(raw), Tokens: []string{}}
	seen := map[string]bool{}
	for _, t := range strings.Fields(q.Normalized) {
		if seen[t] {
			continue
		}
		seen[t] = true
		q.Tokens = append(q.Tokens, t)
		if len(q.Tokens) == MaxQueryTokens {
			break
		}
	}
	return q
}

// Empty reports whether the query has no token.
func (q Query) Empty() bool { return len(q.Tokens) == 0 }

// FTS5 returns the query as an SQLite FTS5 MATCH expression: every token
// quoted (inner quotes doubled) and joined by spaces, which FTS5 reads as
// AND. User input never reaches FTS5 unquoted.
func (q Query) FTS5() string {
	parts := make([]string, len(q.Tokens))
	for i, t := range q.Tokens {
		parts[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(parts, " ")
}

// Phrase returns the tokens joined by single spaces, in their order.
func (q Query) Phrase() string { return strings.Join(q.Tokens, " ") }

// CategoryKey is the case-insensitive form of a category used for
// filtering: NFKC, trimmed, lower case.
func CategoryKey(category string) string {
	// Control characters (NUL included, which PostgreSQL text cannot hold)
	// are not part of any category.
	category = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, category)
	return strings.ToLower(strings.TrimSpace(norm.NFKC.String(category)))
}

// Teaser returns s cut to at most max characters at a word boundary, with
// an ellipsis when it was cut. Runs of white space count as one space and
// surrounding white space is dropped. Text without any space inside the
// limit is cut at the limit.
//
// Only the start of s that can appear in the teaser is examined, so the
// cost does not grow with the length of s.
func Teaser(s string, max int) string {
	// Collapse white space into b until it holds max+1 runes (enough to
	// know whether the text is longer than max and where to cut). Bytes
	// are copied as they are, invalid UTF-8 included. cut is where rune
	// max-1 starts: a cut text keeps max-1 runes and adds the ellipsis.
	b := make([]byte, 0, min(len(s), 4*(max+1))+len("…"))
	n, cut, space := 0, -1, false
	for i := 0; i < len(s); {
		c, size := s[i], 1
		var isSpace bool
		if c < utf8.RuneSelf {
			isSpace = c == ' ' || '\t' <= c && c <= '\r'
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			isSpace = unicode.IsSpace(r)
		}
		if isSpace {
			space = true
			i += size
			continue
		}
		if space && n > 0 {
			if n == max+1 {
				break
			}
			if n == max-1 {
				cut = len(b)
			}
			b = append(b, ' ')
			n++
		}
		space = false
		if n == max+1 {
			break
		}
		if n == max-1 {
			cut = len(b)
		}
		b = append(b, s[i:i+size]...)
		n++
		i += size
	}
	if n <= max {
		return string(b)
	}
	if max < 2 {
		return "…"
	}
	head := b[:cut]
	if b[cut] != ' ' {
		if sp := bytes.LastIndexByte(head, ' '); sp > 0 {
			head = head[:sp]
		}
	}
	for len(head) > 0 {
		r, size := utf8.DecodeLastRune(head)
		if !unicode.IsSpace(r) && !unicode.IsPunct(r) {
			break
		}
		head = head[:len(head)-size]
	}
	return string(append(head, "…"...))
}
