package corpus

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// lexicon holds the word lists of the lexical rules, built once per
// collection.
type lexicon struct {
	stop, weak, neg, approx, ident, months, link map[string]bool
	units, synonyms                              map[string]string
	numbers                                      map[string]float64
}

func newLexicon() *lexicon {
	return &lexicon{
		stop: stopWords(), weak: weakWords(), neg: negationWords(), approx: approxWords(),
		ident: identWords(), months: monthWords(), link: linkVerbs(),
		units: units(), synonyms: synonyms(), numbers: numberWords(),
	}
}

// token is one word or number of a text.
type token struct {
	text  string  // surface form, lowercased, typographic apostrophes folded
	term  string  // normalised term (see normTerm); "" for punctuation-only
	num   *number // set for numbers and number words
	pct   bool    // a '%' directly followed the number
	deg   bool    // a '°' directly followed the number
	minus bool    // a minus sign directly preceded the number
}

// number is a numeric value found in a text.
type number struct {
	value    float64
	decimals int    // digits after the decimal point
	unit     string // canonical unit (see unitOf), "year", "dayofmonth" or ""
	approx   bool   // preceded by about, approximately, ...
	ident    string // "rfc" when the number names a thing (RFC 9110), not a quantity
}

// tokenize splits s into tokens: runs of letters, digits and inner
// apostrophes; numbers keep their thousands separators and decimal point
// ("8,848.86"); everything else separates tokens.
func (lx *lexicon) tokenize(s string) []token {
	var out []token
	rs := []rune(strings.ToLower(s))
	for i := 0; i < len(rs); {
		r := rs[i]
		if !isWordRune(r) {
			i++
			continue
		}
		start := i
		if unicode.IsDigit(r) {
			for i < len(rs) && (unicode.IsDigit(rs[i]) || ((rs[i] == ',' || rs[i] == '.') && i+1 < len(rs) && unicode.IsDigit(rs[i+1]))) {
				i++
			}
			// A number glued to letters ("10k", "l2") is a word.
			if i < len(rs) && unicode.IsLetter(rs[i]) {
				for i < len(rs) && isWordRune(rs[i]) {
					i++
				}
				out = append(out, lx.wordToken(string(rs[start:i])))
				continue
			}
			tok := numberToken(string(rs[start:i]))
			if start > 0 && (rs[start-1] == '-' || rs[start-1] == '\u2212') && (start < 2 || !isWordRune(rs[start-2])) {
				tok.minus = true
				if tok.num != nil {
					tok.num.value = -tok.num.value
				}
			}
			if i < len(rs) && rs[i] == '%' {
				tok.pct = true
			}
			if i < len(rs) && rs[i] == '°' {
				tok.deg = true
			}
			out = append(out, tok)
			continue
		}
		for i < len(rs) && (isWordRune(rs[i]) || (isApostrophe(rs[i]) && i+1 < len(rs) && unicode.IsLetter(rs[i+1]))) {
			i++
		}
		out = append(out, lx.wordToken(string(rs[start:i])))
	}
	return out
}

func isWordRune(r rune) bool   { return unicode.IsLetter(r) || unicode.IsDigit(r) }
func isApostrophe(r rune) bool { return r == '\'' || r == '\u2019' }

func (lx *lexicon) wordToken(w string) token {
	w = strings.ReplaceAll(w, "\u2019", "'")
	t := token{text: w, term: lx.normTerm(w)}
	if v, ok := lx.numbers[w]; ok {
		t.num = &number{value: v}
	}
	return t
}

// numberToken parses "8,848.86", "8453", "6.02214076"; a token with more
// than one dot ("15.5.3") or misplaced commas is an identifier word.
func numberToken(s string) token {
	t := token{text: s, term: s}
	if strings.Count(s, ".") > 1 {
		return t
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if strings.Contains(intPart, ",") {
		groups := strings.Split(intPart, ",")
		for i, g := range groups {
			if (i == 0 && (len(g) < 1 || len(g) > 3)) || (i > 0 && len(g) != 3) {
				return t
			}
		}
		intPart = strings.Join(groups, "")
	}
	if strings.Contains(frac, ",") {
		return t
	}
	plain := intPart
	if frac != "" {
		plain += "." + frac
	}
	v, err := strconv.ParseFloat(plain, 64)
	if err != nil {
		return t
	}
	t.term = plain
	t.num = &number{value: v, decimals: len(frac)}
	return t
}

// numberWords returns the spelled-out numbers the stance rule reads.
func numberWords() map[string]float64 {
	return map[string]float64{
		"zero": 0, "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
		"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
		"fifteen": 15, "twenty": 20, "thirty": 30, "fifty": 50, "hundred": 100,
	}
}

// normTerm is the term used for retrieval and key-term matching:
// lowercase, possessive removed, a few synonyms folded (see synonyms), then
// truncated to five letters ("vaccination" and "vaccine" both become
// "vacci"); words of five letters or fewer lose a plural -s.
func (lx *lexicon) normTerm(w string) string {
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'")
	if s, ok := lx.synonyms[w]; ok {
		w = s
	}
	if utf8.RuneCountInString(w) > 5 {
		return string([]rune(w)[:5])
	}
	if len(w) >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		w = w[:len(w)-1]
	}
	return w
}

// synonyms folds words that name the same thing in the demo topics.
func synonyms() map[string]string {
	return map[string]string{
		"tall": "height", "high": "height", "heights": "height", "elevation": "height", "altitude": "height",
		"identifier": "id", "ids": "id",
		"metres": "metre", "meters": "metre", "meter": "metre",
	}
}

// stopWords are ignored for retrieval and key terms.
func stopWords() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the of in on at to for by with from as into onto over under about
		is are was were be been being am it its it's this that these those there here
		and or but if then than so such also too very just only even still yet
		which who whom whose what when where why how
		has have had having do does did done
		can could will would shall should may might must
		he she they them their his her we us our you your i me my
		all any each every some most more much many few other another same own both either
		per via upon while whereas after before during since until against between through
		least at up down out off again further once
		s t d ll re ve m o`) {
		m[w] = true
	}
	return m
}

// weakWords carry little meaning on their own: they count for retrieval but
// are not key terms a passage must contain.
func weakWords() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`use uses used using mean means meant call called calls equal equals
		become became becomes remain remains get gets got make makes made say says said
		state states stated list lists listed know known actually really honestly pretty sure
		exactly approximately about around roughly nearly almost some
		today now currently`) {
		m[w] = true
	}
	return m
}

// negationWords flip the polarity of the comma-delimited segment they are
// in.
func negationWords() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`not no never none neither nor cannot can't isn't aren't wasn't weren't
		doesn't don't didn't hasn't haven't hadn't won't wouldn't shouldn't
		false untrue incorrect wrong myth misconception`) {
		m[w] = true
	}
	return m
}

// approxWords mark the number that follows them as approximate.
func approxWords() map[string]bool {
	return map[string]bool{"about": true, "approximately": true, "around": true, "roughly": true, "nearly": true, "almost": true, "some": true, "circa": true, "approx": true}
}

// identWords make the number that directly follows them an identifier
// ("RFC 9110") rather than a quantity.
func identWords() map[string]bool {
	return map[string]bool{"rfc": true, "iso": true, "ieee": true, "eip": true, "erc": true, "bip": true, "cve": true, "section": true, "chapter": true, "article": true, "version": true}
}

// monthWords are month names.
func monthWords() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("january february march april may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec") {
		m[w] = true
	}
	return m
}

// units maps unit words (lowercase surface forms) to a canonical unit.
func units() map[string]string {
	m := map[string]string{}
	add := func(canon string, words string) {
		for _, w := range strings.Fields(words) {
			m[w] = canon
		}
	}
	add("metre", "m metre metres meter meters")
	add("kilometre", "km kilometre kilometres kilometer kilometers")
	add("centimetre", "cm centimetre centimetres centimeter centimeters")
	add("millimetre", "mm millimetre millimetres millimeter millimeters")
	add("foot", "ft foot feet")
	add("mile", "mi mile miles")
	add("second", "s sec secs second seconds")
	add("millisecond", "ms millisecond milliseconds")
	add("minute", "min mins minute minutes")
	add("hour", "h hr hrs hour hours")
	add("day", "day days")
	add("week", "week weeks")
	add("month", "month months")
	add("year", "year years yr yrs")
	add("percent", "percent per_cent")
	add("celsius", "c celsius")
	add("fahrenheit", "f fahrenheit")
	add("kelvin", "k kelvin kelvins")
	add("gram", "g gram grams")
	add("kilogram", "kg kilogram kilograms")
	add("milligram", "mg milligram milligrams")
	add("litre", "l litre litres liter liters")
	add("pascal", "pa pascal pascals")
	add("kilopascal", "kpa kilopascal kilopascals")
	add("decimal", "decimal decimals")
	add("dose", "dose doses")
	add("usd", "usd dollar dollars")
	add("byte", "byte bytes")
	return m
}

// annotate sets the unit, approximation and identifier marks of the
// numbers in a token list (one clause or sentence).
func (lx *lexicon) annotate(toks []token) {
	for i := range toks {
		n := toks[i].num
		if n == nil {
			continue
		}
		if i > 0 && lx.ident[toks[i-1].text] {
			n.ident = toks[i-1].text
			continue
		}
		for k := i - 1; k >= 0 && k >= i-2; k-- {
			if lx.approx[toks[k].text] {
				n.approx = true
			}
		}
		n.unit = lx.unitOf(toks, i)
		if n.unit == "" && isInt(n.value) && n.value >= 1800 && n.value <= 2100 && !strings.Contains(toks[i].text, ",") && n.decimals == 0 {
			n.unit = "year"
		}
	}
}

// unitOf is the unit of the number at toks[i]: a percent or degree sign,
// a day of a month, or the first unit word after it ("" when none).
func (lx *lexicon) unitOf(toks []token, i int) string {
	switch {
	case toks[i].pct:
		return "percent"
	case toks[i].deg && i+1 < len(toks) && (toks[i+1].text == "c" || toks[i+1].text == "f"):
		return lx.units[toks[i+1].text]
	case lx.dayOfMonth(toks, i):
		return "dayofmonth"
	}
	return lx.unitAfter(toks, i)
}

// dayOfMonth reports whether the number at toks[i] is a day next to a
// month name ("4 July", "July 4", but not "July 2024").
func (lx *lexicon) dayOfMonth(toks []token, i int) bool {
	n := toks[i].num
	if !isInt(n.value) || n.value < 1 || n.value > 31 {
		return false
	}
	if i+1 < len(toks) && lx.months[toks[i+1].text] {
		return true
	}
	return i > 0 && lx.months[toks[i-1].text] && (i+1 >= len(toks) || toks[i+1].num == nil || toks[i+1].num.value > 31)
}

// unitAfter is the unit named by the first word after the number at
// toks[i], skipping stop words and a range's second number ("150 to 300
// minutes").
func (lx *lexicon) unitAfter(toks []token, i int) string {
	for k := i + 1; k < len(toks) && k <= i+4; k++ {
		t := toks[k]
		if t.num != nil && k == i+2 && (toks[i+1].text == "to" || toks[i+1].text == "and" || toks[i+1].text == "or") {
			continue
		}
		if t.num != nil {
			return ""
		}
		switch {
		case t.text == "degree" || t.text == "degrees":
			if k+1 < len(toks) {
				return lx.units[toks[k+1].text]
			}
			return ""
		case t.text == "per" && k+1 < len(toks) && toks[k+1].text == "cent":
			return "percent"
		}
		if u, ok := lx.units[t.text]; ok {
			return u
		}
		if !lx.stop[t.text] {
			return ""
		}
	}
	return ""
}

func isInt(v float64) bool { return v == math.Trunc(v) }

// sameValue compares two numbers at the coarser of their precisions, or
// within 2 % when either is approximate: 8,849 equals 8,848.86; 8,848 does
// not; "about 97" equals 96.
func sameValue(a, b *number) bool {
	if a.approx || b.approx {
		d := math.Abs(a.value - b.value)
		return d <= 0.02*math.Max(math.Abs(a.value), math.Abs(b.value))
	}
	p := min(a.decimals, b.decimals)
	scale := math.Pow(10, float64(p))
	return math.Round(a.value*scale) == math.Round(b.value*scale)
}

// splitSentences splits a block of text into sentences: a '.', '!' or '?'
// followed by a space and an uppercase letter, digit or quote ends a
// sentence, unless the word before it is a known abbreviation or a single
// letter. Every sentence is an exact substring of the block.
func splitSentences(block string) []string {
	abbrev := map[string]bool{"e.g": true, "i.e": true, "etc": true, "vs": true, "dr": true, "mr": true, "mrs": true, "ms": true, "st": true, "no": true, "approx": true, "fig": true, "u.s": true, "inc": true, "ltd": true, "co": true, "jan": true, "feb": true, "aug": true, "sept": true, "oct": true, "nov": true, "dec": true, "ca": true, "al": true}
	var out []string
	start := 0
	for i := 0; i < len(block); i++ {
		c := block[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(block) && (block[j] == '"' || block[j] == ')' || block[j] == '\'') {
			j++
		}
		if j >= len(block) || block[j] != ' ' {
			continue
		}
		k := j
		for k < len(block) && block[k] == ' ' {
			k++
		}
		if k >= len(block) {
			continue
		}
		next, _ := utf8.DecodeRuneInString(block[k:])
		if !unicode.IsUpper(next) && !unicode.IsDigit(next) && next != '"' && next != '\u201c' && next != '(' {
			continue
		}
		if c == '.' {
			w := lastWord(block[start:i])
			if abbrev[strings.ToLower(w)] || (utf8.RuneCountInString(w) == 1 && unicode.IsUpper([]rune(w)[0])) {
				continue
			}
		}
		if s := strings.TrimSpace(block[start:j]); s != "" {
			out = append(out, s)
		}
		start = k
		i = k - 1
	}
	if s := strings.TrimSpace(block[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

func lastWord(s string) string {
	s = strings.TrimRight(s, " ")
	i := strings.LastIndexFunc(s, func(r rune) bool { return r == ' ' || r == '(' || r == '"' })
	return s[i+1:]
}

// splitClauses cuts a sentence at ';' and at ", while", ", whereas",
// ", but", " but ", ", and " so that each clause states one thing.
func splitClauses(sentence string) []string {
	parts := []string{sentence}
	for _, sep := range []string{";", ", while ", ", whereas ", ", but ", " but ", ", and ", ", although "} {
		var next []string
		for _, p := range parts {
			for _, q := range strings.Split(p, sep) {
				if strings.TrimSpace(q) != "" {
					next = append(next, q)
				}
			}
		}
		parts = next
	}
	return parts
}

// collapseSpace replaces whitespace runs by one space and trims.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
