package snapshot

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Contains reports whether a quoted excerpt occurs in the snapshot's
// normalised text (Text). See Matcher for the rules. A snapshot without
// Text (not captured, or loaded from a store) contains nothing.
func (s *Snapshot) Contains(excerpt string) bool {
	if s == nil || s.Text == "" {
		return false
	}
	return s.Matcher().Contains(excerpt)
}

// Matcher returns a matcher over the snapshot's Text, for checking several
// excerpts against one snapshot without preparing the text each time.
func (s *Snapshot) Matcher() *Matcher {
	if s == nil {
		return NewMatcher("")
	}
	text := s.Text
	if s.ContentType != nil {
		if mt, _ := parseContentType(*s.ContentType); mediaKind(mt) == kindJSON && looksCanonicalJSON(text) {
			text = jsonSearchText(text)
		}
	}
	return NewMatcher(text)
}

// Matcher checks whether excerpts occur in a text. It is tolerant where
// quoting and typesetting vary and strict where meaning lives:
//
//   - Case, Unicode normalisation form, whitespace and line breaks are
//     ignored; typographic quotes, apostrophes and primes match their ASCII
//     forms; every dash and the minus sign match '-'.
//   - Both sides are split into tokens: words (letters, marks and digits),
//     numbers (digits with the separators '.' and ',' between digits, and a
//     sign when '-' or '+' precedes a digit at the start of a token), and
//     significant symbols (currency, mathematical and other symbols, and
//     '%', '‰', '‱', '°' and '#'). Other punctuation only separates tokens.
//   - The excerpt's tokens must appear as a contiguous run of whole tokens:
//     "8453" does not match "84530" nor "8,453", and a word such as "not"
//     can neither vanish nor appear.
//   - An ellipsis in the excerpt ("…" or "...", optionally in brackets or
//     parentheses) marks a gap: each part must appear, in order, without
//     overlapping.
//
// An excerpt with no tokens matches nothing.
type Matcher struct {
	canon string // " tok tok tok "
}

// NewMatcher prepares text for matching.
func NewMatcher(text string) *Matcher {
	return &Matcher{canon: canonTokens(text)}
}

// Contains reports whether excerpt occurs in the matcher's text.
func (m *Matcher) Contains(excerpt string) bool {
	if m == nil || m.canon == "" {
		return false
	}
	parts := excerptParts(excerpt)
	if len(parts) == 0 {
		return false
	}
	pos := 0
	for _, p := range parts {
		// p is " a b c "; the leading space of the next match may be the
		// trailing space of this one, hence len(p)-1.
		i := strings.Index(m.canon[pos:], p)
		if i < 0 {
			return false
		}
		pos += i + len(p) - 1
	}
	return true
}

// excerptParts splits an excerpt at its ellipses and returns each
// non-empty part in canonical token form.
func excerptParts(excerpt string) []string {
	s := foldTypography(excerpt)
	for _, gap := range []string{"[...]", "(...)", "[…]", "(…)", "…", "..."} {
		s = strings.ReplaceAll(s, gap, "\x00")
	}
	var parts []string
	for _, raw := range strings.Split(s, "\x00") {
		if c := canonTokens(raw); c != "" {
			parts = append(parts, c)
		}
	}
	return parts
}

var typography = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'", "\u2032", "'", "\u02BC", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`, "\u2033", `"`, "\u00AB", `"`, "\u00BB", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-", "\uFE58", "-", "\uFE63", "-", "\uFF0D", "-",
)

func foldTypography(s string) string {
	return typography.Replace(norm.NFC.String(s))
}

// canonTokens returns the tokens of s, case-folded and each followed and
// preceded by one space (" a b c "), or "" when s has none.
func canonTokens(s string) string {
	s = cases.Fold().String(foldTypography(s))
	var b strings.Builder
	b.Grow(len(s) + 2)
	inTok := false
	end := func() {
		if inTok {
			b.WriteByte(' ')
			inTok = false
		}
	}
	start := func() {
		if !inTok {
			if b.Len() == 0 {
				b.WriteByte(' ')
			}
			inTok = true
		}
	}
	prev := rune(-1)
	for i, r := range s {
		_, width := utf8.DecodeRuneInString(s[i:])
		next, _ := utf8.DecodeRuneInString(s[i+width:])
		switch {
		case isWordRune(r):
			start()
			b.WriteRune(r)
		case (r == '.' || r == ',') && inTok && isDigit(prev) && isDigit(next):
			b.WriteRune(r) // inside a number
		case (r == '-' || r == '+') && !inTok && isDigit(next) && !isWordRune(prev):
			start()
			b.WriteRune(r) // a sign
		case isSymbolRune(r):
			end()
			start()
			b.WriteRune(r)
			end()
		default:
			end()
		}
		prev = r
	}
	end()
	return b.String()
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.No, r)
}

func isDigit(r rune) bool { return unicode.IsDigit(r) }

func isSymbolRune(r rune) bool {
	switch r {
	case '%', '‰', '‱', '°', '#':
		return true
	}
	return unicode.In(r, unicode.Sc, unicode.Sm, unicode.So)
}

// looksCanonicalJSON is a cheap check that text is a JCS serialisation.
func looksCanonicalJSON(text string) bool {
	return text != "" && strings.ContainsRune(`{["-0123456789tfn`, rune(text[0]))
}

// jsonSearchText turns a canonical JSON text into searchable text: string
// escapes are resolved so that "a\nb" reads as two words.
func jsonSearchText(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	inStr := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '"':
			inStr = !inStr
			b.WriteByte(' ')
		case inStr && c == '\\' && i+1 < len(text):
			i++
			switch text[i] {
			case 'n', 't', 'r', 'b', 'f':
				b.WriteByte(' ')
			case 'u':
				i += 4 // \u00xx control character
				b.WriteByte(' ')
			default:
				b.WriteByte(text[i])
			}
		case !inStr && (c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ','):
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
