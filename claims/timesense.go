package claims

import (
	"strings"
	"unicode"
)

// timeCues are the words and phrases that make a statement about a state
// that changes over time (see TimeSensitive). Phrases are matched on whole
// words, case-insensitively.
var timeCues = []string{
	"current", "currently", "latest", "today", "today's", "now", "nowadays", "presently",
	"at present", "at the moment", "right now", "as of now", "as of today",
	"this year", "this month", "this week", "this quarter", "so far", "to date",
	"still", "recently", "most recent", "newest", "ongoing", "incumbent",
	"up to date", "up-to-date",
}

// TimeSensitive reports whether a statement's wording says it is about a
// state that changes over time: it contains one of the cues current,
// currently, latest, today, now, nowadays, presently, at present, at the
// moment, right now, as of now/today, this year/month/week/quarter, so
// far, to date, still, recently, most recent, newest, ongoing, incumbent
// or up to date (whole words, any case). The engine applies it to facts a
// provider did not mark (ProviderFact.TimeSensitive), and claims/corpus
// marks its facts with it.
func TimeSensitive(statement string) bool {
	words := strings.FieldsFunc(strings.ToLower(statement), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’' && r != '-'
	})
	for i, w := range words {
		words[i] = strings.Trim(strings.ReplaceAll(w, "’", "'"), "'-")
	}
	text := " " + strings.Join(words, " ") + " "
	for _, c := range timeCues {
		if strings.Contains(text, " "+c+" ") {
			return true
		}
	}
	return false
}
