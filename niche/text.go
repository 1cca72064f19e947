package niche

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"
	"github.com/kljensen/snowball/hungarian"
	"github.com/kljensen/snowball/norwegian"
	"github.com/kljensen/snowball/russian"
	"github.com/kljensen/snowball/spanish"
	"github.com/kljensen/snowball/swedish"
	"golang.org/x/text/unicode/norm"
)

// MaxQueryTokens bounds the number of distinct words of a search query
// that are matched; further words are ignored.
const MaxQueryTokens = 16

// Language selects the word rules of search: how text is cut into the
// terms that stores index and queries match. The zero value is English.
// Every language first normalises (see Language.SearchText) and then
// stems each word with the Snowball stemmer of that language
// (github.com/kljensen/snowball: Porter2 for English), so that inflected
// forms share one term: landlord and landlords, tenant and tenants,
// invoice, invoices and invoicing. English adds one rule of its own (see
// relatedStem): a few trade nouns are folded into their trade, so that
// plumber, plumbers and plumbing match each other.
//
// A store indexes with one language and the engine must parse queries
// with the same: a host that wants another sets niche.Options.Language
// and the store's own option (store.Options.SearchLanguage,
// nichemem.Store.Language) to it; New refuses an engine whose
// language differs from its store's, and the SQL store re-indexes its
// rows when it is opened with a language other than the one they were
// indexed with.
type Language string

// The languages of search. Besides English and NoStemming, the other
// Snowball stemmers of github.com/kljensen/snowball are available by name.
const (
	// English is the default: Porter2 plus relatedStem.
	English Language = "english"
	// NoStemming matches normalised words exactly, in any script.
	NoStemming Language = "none"
	French     Language = "french"
	Spanish    Language = "spanish"
	Russian    Language = "russian"
	Swedish    Language = "swedish"
	Norwegian  Language = "norwegian"
	Hungarian  Language = "hungarian"
)

// ErrLanguage is returned for a Language that is not one of the above.
var ErrLanguage = errors.New("niche: unknown search language")

// Validate returns ErrLanguage (wrapped) unless l is a known language or
// empty (English).
func (l Language) Validate() error {
	if _, ok := l.stemmer(); !ok {
		return fmt.Errorf("%w %q", ErrLanguage, string(l))
	}
	return nil
}

// Or returns l, or English when l is empty.
func (l Language) Or() Language { return cmp.Or(l, English) }

// stemmer returns the stemming function of l; false for an unknown
// language.
func (l Language) stemmer() (func(string) string, bool) {
	var f func(string, bool) string
	switch l.Or() {
	case English:
		return func(w string) string { return relatedStem(english.Stem(w, true)) }, true
	case NoStemming:
		return func(w string) string { return w }, true
	case French:
		f = french.Stem
	case Spanish:
		f = spanish.Stem
	case Russian:
		f = russian.Stem
	case Swedish:
		f = swedish.Stem
	case Norwegian:
		f = norwegian.Stem
	case Hungarian:
		f = hungarian.Stem
	default:
		return nil, false
	}
	return func(w string) string { return f(w, true) }, true
}

// relatedStem is English's rule beyond Porter2: the Porter2 stems of a
// few nouns naming a trade or its worker are folded into the stem of the
// trade's activity (plumber → plumb, as plumbing stems; likewise roofer,
// painter, builder, baker, cleaner), because the catalogue's buyers are
// named both ways. Porter2 alone keeps agent nouns in -er apart from the
// verb (owner is not own), and so does this rule for every other word;
// trades whose two forms Porter2 already joins (gardener and gardening,
// caterer and catering, bookkeeper and bookkeeping) need no entry.
func relatedStem(stem string) string {
	switch stem {
	case "plumber":
		return "plumb"
	case "roofer":
		return "roof"
	case "painter":
		return "paint"
	case "builder":
		return "build"
	case "baker":
		return "bake"
	case "cleaner":
		return "clean"
	}
	return stem
}

// SearchText is the text in which l indexes s and matches queries,
// identical for every store: Unicode NFKC, lower case, diacritics and
// apostrophes removed, every run of characters that are neither letters nor digits
// replaced by one space, trimmed, and then every word replaced by its
// stem. Both databases index this text (SQLite's unicode61 tokenizer and
// PostgreSQL's simple configuration then split it on spaces alone), so
// their matches agree. An unknown language stems nothing (New and the
// stores refuse one).
func (l Language) SearchText(s string) string {
	stem, ok := l.stemmer()
	if !ok || l == NoStemming {
		stem = nil
	}
	return searchText(s, stem)
}

// searchText normalises s and stems its words with stem (nil: none).
func searchText(s string, stem func(string) string) string {
	n := normalize(s)
	if n == "" || stem == nil {
		return n
	}
	words := strings.Fields(n)
	for i, w := range words {
		if st := stem(w); st != "" {
			words[i] = st
		}
	}
	return strings.Join(words, " ")
}

// SearchText is English.SearchText(s).
func SearchText(s string) string { return English.SearchText(s) }

// normalize is SearchText without stemming.
func normalize(s string) string {
	if s == "" {
		return ""
	}
	if out, ok := normalizeASCII(s); ok {
		return out
	}
	return normalizeUnicode(s)
}

// normalizeUnicode is normalize of any string.
func normalizeUnicode(s string) string {
	s = norm.NFKC.String(s)
	s = strings.ToLower(s)
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	space := false
	for _, r := range d {
		switch {
		case unicode.Is(unicode.Mn, r), r == '\'', r == '’':
			// A combining mark: drop it (é → e). An apostrophe joins
			// (landlord's → landlords, which stems as landlord).
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

// normalizeASCII is normalize of an ASCII string (ok false otherwise),
// which the Unicode forms leave as it is: the same result without their
// four passes and a table look-up per character (most of an import's
// text is ASCII, and normalising it was a tenth of the import's CPU).
func normalizeASCII(s string) (string, bool) {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return "", false
		}
	}
	b := make([]byte, 0, len(s))
	space := false
	for i := range len(s) {
		c := s[i]
		switch {
		case c == '\'':
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			if space && len(b) > 0 {
				b = append(b, ' ')
			}
			space = false
			b = append(b, c)
		case 'A' <= c && c <= 'Z':
			if space && len(b) > 0 {
				b = append(b, ' ')
			}
			space = false
			b = append(b, c+'a'-'A')
		default:
			space = true
		}
	}
	return string(b), true
}

// Query is a normalised search query.
type Query struct {
	// Raw is the query as given.
	Raw string `json:"raw"`
	// Normalized is Raw normalised as SearchText does, before stemming
	// (what the caller typed, in the form it is matched).
	Normalized string `json:"normalized"`
	// Tokens are the distinct terms that must all match (AND): the stems
	// of Normalized's words (Language.SearchText), in order of first
	// appearance, at most MaxQueryTokens.
	Tokens []string `json:"tokens"`
}

// ParseQuery is English.ParseQuery(raw).
func ParseQuery(raw string) Query { return English.ParseQuery(raw) }

// ParseQuery normalises and stems a user query with l's rules. It never
// fails: a query without any letter or digit has no tokens and matches
// nothing.
func (l Language) ParseQuery(raw string) Query {
	q := Query{Raw: raw, Normalized: normalize(raw), Tokens: []string{}}
	seen := map[string]bool{}
	for _, t := range strings.Fields(l.SearchText(q.Normalized)) {
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
