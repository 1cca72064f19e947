package niche

import "sync"

// Analyzer is a Language with a memo of its stems: its SearchText and
// SearchFields are exactly the Language's, with each distinct word
// stemmed once. Snowball stemming was most of the cost of writing an
// evaluation (about 280 µs of each one's 900 µs on bench/niche's
// catalogue); a catalogue's vocabulary is small, so bulk writers (the
// SQL store) keep one. Safe for concurrent use. The memo holds at most
// 1<<17 words and is emptied when full.
type Analyzer struct {
	lang Language
	stem func(string) string // nil: no stemming

	mu   sync.RWMutex
	memo map[string]string
}

// analyzerMemo bounds an Analyzer's memo.
const analyzerMemo = 1 << 17

// NewAnalyzer returns an Analyzer of l (empty: English); an unknown
// language is ErrLanguage.
func NewAnalyzer(l Language) (*Analyzer, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	a := &Analyzer{lang: l.Or(), memo: map[string]string{}}
	if a.lang != NoStemming {
		a.stem, _ = a.lang.stemmer()
	}
	return a, nil
}

// Language returns the analyzer's language.
func (a *Analyzer) Language() Language { return a.lang }

// SearchText is Language.SearchText.
func (a *Analyzer) SearchText(s string) string {
	if a.stem == nil {
		return searchText(s, nil)
	}
	return searchText(s, a.stemWord)
}

// SearchFields is Record.SearchFields in the analyzer's language.
func (a *Analyzer) SearchFields(r *Record) SearchFields { return r.searchFields(a.SearchText) }

func (a *Analyzer) stemWord(w string) string {
	a.mu.RLock()
	st, ok := a.memo[w]
	a.mu.RUnlock()
	if ok {
		return st
	}
	st = a.stem(w)
	a.mu.Lock()
	if len(a.memo) >= analyzerMemo {
		clear(a.memo)
	}
	a.memo[w] = st
	a.mu.Unlock()
	return st
}
