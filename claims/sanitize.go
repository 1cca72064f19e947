package claims

import (
	"regexp"
	"strings"
	"unicode"
)

// Model output carries citation markup that must never reach a caller:
// private-use delimiters such as "\ue200cite\ue202turn1search0\ue201",
// what is left of them when a proxy dropped the private-use characters
// ("citeturn1search0"), and bracketed forms like "【4†source】".
var (
	privateUseSpan = regexp.MustCompile(`\x{E200}[^\x{E201}]{0,200}\x{E201}`)
	citeRemnant    = regexp.MustCompile(`\bcite(?:turn\d+(?:search|news|view|fetch|open|find|image)\d+)+`)
	bracketCite    = regexp.MustCompile(`【[^】]{0,80}†[^】]{0,80}】`)
	spaceRun       = regexp.MustCompile(`[ \t]{2,}`)
	// spaceBeforePunct only applies to strings markup was removed from.
	spaceBeforePunct = regexp.MustCompile(`[ \t]+([.,;:!?])`)
)

// clean removes private-use characters (U+E000–U+F8FF), citation markup
// and control characters other than newline and tab from a model string,
// collapses the runs of spaces this leaves and trims it.
func clean(s string) string {
	if s == "" {
		return s
	}
	before := s
	s = privateUseSpan.ReplaceAllString(s, "")
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 0xE000 && r <= 0xF8FF:
			return -1
		case r == '\n' || r == '\t':
			return r
		case unicode.IsControl(r), r == '\uFFFD':
			return -1
		}
		return r
	}, s)
	s = citeRemnant.ReplaceAllString(s, "")
	s = bracketCite.ReplaceAllString(s, "")
	if s != before {
		// Markup removed before punctuation leaves "word ." behind.
		s = spaceBeforePunct.ReplaceAllString(s, "$1")
	}
	s = spaceRun.ReplaceAllString(s, " ")
	return strings.TrimSpace(s)
}

func cleanAll(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if c := clean(s); c != "" {
			out = append(out, c)
		}
	}
	return out
}
