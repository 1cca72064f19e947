package corpus

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/assaykit/assay/claims"
)

// fact is one atomic part of a claim, prepared for matching.
type fact struct {
	statement string
	keys      []string  // key terms a passage must contain (normalised)
	nums      []*number // quantities the passage must state
	negated   bool      // the statement itself is negative
	query     []string  // retrieval terms
}

// analyse prepares tokens: units and marks are set, and number words
// without a unit go back to being plain words ("one of the largest").
func (lx *lexicon) analyse(s string) []token {
	toks := lx.tokenize(s)
	lx.annotate(toks)
	for i := range toks {
		if n := toks[i].num; n != nil && n.unit == "" && n.ident == "" && !isDigits(toks[i].text) {
			toks[i].num = nil
		}
	}
	return toks
}

func isDigits(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != ',' && r != '.' }) < 0
}

// newFact extracts the key terms, quantities and polarity of a statement.
// Key terms are the normalised words that are not stop words, weak words,
// negations, approximation markers, unit words following a number, or month
// names; "RFC 9110" becomes the single key term "rfc9110".
func (lx *lexicon) newFact(statement string) fact {
	f := fact{statement: statement}
	toks := lx.analyse(statement)
	stop, weak, neg, approx, unitMap, months := lx.stop, lx.weak, lx.neg, lx.approx, lx.units, lx.months
	seen := map[string]bool{}
	addKey := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			f.keys = append(f.keys, k)
		}
	}
	seenQ := map[string]bool{}
	for i, t := range toks {
		if !stop[t.text] && !neg[t.text] && t.term != "" && !seenQ[t.term] {
			seenQ[t.term] = true
			f.query = append(f.query, t.term)
		}
		switch {
		case t.num != nil && t.num.ident != "":
			addKey(t.num.ident + t.term)
		case t.num != nil:
			f.nums = append(f.nums, t.num)
		case stop[t.text], weak[t.text], neg[t.text], approx[t.text]:
		case months[t.text] && nearNumber(toks, i):
		case unitMap[t.text] != "" && lx.afterNumber(toks, i):
		case t.text == "degree" || t.text == "degrees" || t.text == "cent":
		default:
			addKey(t.term)
		}
	}
	f.negated = lx.negatedFor(statement, f)
	return f
}

func nearNumber(toks []token, i int) bool {
	return (i > 0 && toks[i-1].num != nil) || (i+1 < len(toks) && toks[i+1].num != nil)
}

// afterNumber reports whether a quantity precedes token i, allowing stop
// words and a degree word in between.
func (lx *lexicon) afterNumber(toks []token, i int) bool {
	stop := lx.stop
	for k := i - 1; k >= 0 && k >= i-3; k-- {
		if toks[k].num != nil {
			return true
		}
		if !stop[toks[k].text] && toks[k].text != "degree" && toks[k].text != "degrees" && toks[k].text != "per" {
			return false
		}
	}
	return false
}

// negatedFor reports whether a negation word stands in a comma-delimited
// segment of text that also contains one of f's key terms or numbers, so
// that "Canberra, not Sydney, is the capital" does not negate the capital.
func (lx *lexicon) negatedFor(text string, f fact) bool {
	neg := lx.neg
	keys := map[string]bool{}
	for _, k := range f.keys {
		keys[k] = true
	}
	for _, seg := range strings.Split(text, ",") {
		toks := lx.analyse(seg)
		hasNeg, relevant := false, false
		for _, t := range toks {
			if neg[t.text] {
				hasNeg = true
			}
			if keys[t.term] || (t.num != nil && t.num.ident != "" && keys[t.num.ident+t.term]) {
				relevant = true
			}
			if t.num != nil && t.num.ident == "" {
				for _, n := range f.nums {
					if sameValue(n, t.num) {
						relevant = true
					}
				}
			}
		}
		if hasNeg && relevant {
			return true
		}
	}
	return false
}

// judgement is the stance of one passage towards one fact.
type judgement struct {
	rel      claims.Relationship // "" when the passage does not bear on the fact
	coverage float64             // share of key terms present
	reason   string
}

// judge applies the lexical stance rule to one sentence:
//
//  1. The sentence is cut into clauses (splitClauses). A clause bears on
//     the fact only if it contains every key term of the fact.
//  2. Its polarity is negative when a negation word stands in a
//     comma-delimited segment with a key term or a number of the fact.
//  3. A fact without numbers is supported by a bearing clause of the same
//     polarity and contradicted by one of the opposite polarity.
//  4. A fact with numbers is supported when every number appears in the
//     clause with the same value (compared at the coarser precision, within
//     1 % when approximate) and a compatible unit, with the same polarity;
//     with the opposite polarity it is contradicted. When a number is
//     missing but the clause states another value in the same unit (or
//     both unitless), the clause contradicts; otherwise it is context.
//  5. Clauses that support and contradict in one sentence make it context.
func (lx *lexicon) judge(f fact, sentence string) judgement {
	var sup, con *judgement
	best := judgement{}
	for _, clause := range splitClauses(sentence) {
		j := lx.judgeClause(f, clause)
		switch j.rel {
		case claims.Supports:
			if sup == nil {
				sup = &j
			}
		case claims.Contradicts:
			if con == nil {
				con = &j
			}
		}
		if j.coverage > best.coverage {
			best.coverage = j.coverage
		}
	}
	switch {
	case sup != nil && con != nil:
		return judgement{rel: claims.Context, coverage: 1, reason: "one clause supports and another contradicts the statement"}
	case sup != nil:
		return *sup
	case con != nil:
		return *con
	}
	// Coverage over the whole sentence decides whether it is context.
	if c := coverage(f, lx.analyse(sentence)); c > best.coverage {
		best.coverage = c
	}
	if best.coverage >= 0.6 {
		best.rel = claims.Context
		best.reason = fmt.Sprintf("mentions %.0f%% of the key terms without settling the statement", 100*best.coverage)
	}
	return best
}

func coverage(f fact, toks []token) float64 {
	if len(f.keys) == 0 {
		return 0
	}
	terms := map[string]bool{}
	for _, t := range toks {
		terms[t.term] = true
		if t.num != nil && t.num.ident != "" {
			terms[t.num.ident+t.term] = true
		}
	}
	n := 0
	for _, k := range f.keys {
		if terms[k] {
			n++
		}
	}
	return float64(n) / float64(len(f.keys))
}

func (lx *lexicon) judgeClause(f fact, clause string) judgement {
	toks := lx.analyse(clause)
	j := judgement{coverage: coverage(f, toks)}
	if j.coverage < 1 {
		return j
	}
	flip := lx.negatedFor(clause, f) != f.negated
	if len(f.nums) == 0 {
		if flip {
			j.rel, j.reason = claims.Contradicts, "contains every key term with the opposite polarity (negation)"
		} else {
			j.rel, j.reason = claims.Supports, "contains every key term with the same polarity"
		}
		return j
	}
	var nums []*number
	for _, t := range toks {
		if t.num != nil && t.num.ident == "" {
			nums = append(nums, t.num)
		}
	}
	var missing []*number
	for _, fn := range f.nums {
		found := false
		for _, cn := range nums {
			if sameValue(fn, cn) && (fn.unit == "" || fn.unit == cn.unit) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, fn)
		}
	}
	if len(missing) == 0 {
		if flip {
			j.rel, j.reason = claims.Contradicts, "states the same numbers ("+numList(f.nums)+") with the opposite polarity (negation)"
		} else {
			j.rel, j.reason = claims.Supports, "contains every key term and the same numbers ("+numList(f.nums)+")"
		}
		return j
	}
	if flip {
		return j
	}
	for _, fn := range missing {
		for _, cn := range nums {
			if cn.unit == fn.unit && !sameValue(fn, cn) {
				j.rel = claims.Contradicts
				j.reason = fmt.Sprintf("states %s where the claim has %s%s", fmtNum(cn), fmtNum(fn), unitSuffix(fn.unit))
				return j
			}
		}
	}
	return j
}

func numList(ns []*number) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmtNum(n) + unitSuffix(n.unit)
	}
	return strings.Join(parts, ", ")
}

func fmtNum(n *number) string {
	return strconv.FormatFloat(n.value, 'f', n.decimals, 64)
}

func unitSuffix(u string) string {
	switch u {
	case "", "year", "dayofmonth":
		return ""
	case "percent":
		return "%"
	}
	return " " + u
}

// linkVerbs mark a clause as a statement for atomic-fact splitting.
func linkVerbs() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`is are was were has have had uses use used defines defined means mean
		boils freezes equals contains includes recommends recommend requires measures stands lies
		became launched opened reached runs produces specifies reserves reserved covers protects
		causes reduces should must can`) {
		m[w] = true
	}
	return m
}

// splitFacts splits a compound claim into atomic statements: at ';', and
// at " and " (or ", and ") when both sides contain a linking verb (is, has,
// uses, defines, ...) or a digit. A right-hand side that starts with its
// verb borrows the left-hand side's subject ("Water boils at 100 °C and
// freezes at 0 °C" gives "Water freezes at 0 °C").
func (lx *lexicon) splitFacts(claim string) []string {
	var out []string
	for _, part := range strings.Split(claim, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		out = append(out, lx.splitAnd(part)...)
	}
	if len(out) == 0 {
		return []string{strings.TrimSpace(claim)}
	}
	return out
}

func (lx *lexicon) splitAnd(s string) []string {
	verbs := lx.link
	statement := func(x string) bool {
		words := strings.Fields(strings.ToLower(x))
		if len(words) < 2 {
			return false
		}
		for _, w := range words {
			if verbs[strings.Trim(w, ".,;:!?\"'")] || strings.ContainsAny(w, "0123456789") {
				return true
			}
		}
		return false
	}
	for from := 0; ; {
		i := strings.Index(s[from:], " and ")
		if i < 0 {
			return []string{trimStatement(s)}
		}
		i += from
		left, right := strings.TrimSuffix(s[:i], ","), s[i+len(" and "):]
		if statement(left) && statement(right) {
			first := strings.ToLower(strings.Fields(right)[0])
			if verbs[first] {
				if subj := subjectOf(left, verbs); subj != "" {
					right = subj + " " + right
				}
			}
			return append([]string{trimStatement(left)}, lx.splitAnd(right)...)
		}
		from = i + len(" and ")
	}
}

// subjectOf returns the words of s before its first linking verb.
func subjectOf(s string, verbs map[string]bool) string {
	words := strings.Fields(s)
	for i, w := range words {
		if verbs[strings.ToLower(w)] {
			return strings.Join(words[:i], " ")
		}
	}
	return ""
}

func trimStatement(s string) string {
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ",;"))
}
