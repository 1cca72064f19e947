package shapes

import "regexp"

// matcher checks a string against a registry pattern. Patterns made of
// ASCII character classes with fixed counts and a final repeated class
// (all of the registry today) run on a small hand-built automaton, which
// is several times faster than regexp; anything else uses regexp.
type matcher struct {
	re    *regexp.Regexp
	elems []patElem // nil: use re
}

// patElem is one class of a simple pattern with its repetition bounds
// (max < 0: unbounded).
type patElem struct {
	class    [4]uint64 // bitmap of accepted ASCII bytes
	min, max int
}

func (m *matcher) String() string { return m.re.String() }

// Match reports whether s matches the whole pattern.
func (m *matcher) Match(s []byte) bool {
	if m.elems == nil {
		return m.re.Match(s)
	}
	i := 0
	for _, e := range m.elems {
		n := 0
		for i < len(s) && (e.max < 0 || n < e.max) && s[i] < 128 && e.class[s[i]>>6]&(1<<(s[i]&63)) != 0 {
			i, n = i+1, n+1
		}
		if n < e.min {
			return false
		}
	}
	return i == len(s)
}

// newMatcher compiles src, with the fast path when src has the form
// ^(CLASS QUANT?)+$ where every element but the last has a fixed count.
func newMatcher(src string) *matcher {
	m := &matcher{re: regexp.MustCompile(src)}
	if len(src) < 2 || src[0] != '^' || src[len(src)-1] != '$' {
		return m
	}
	var elems []patElem
	for p := src[1 : len(src)-1]; p != ""; {
		e, rest, ok := parseClass(p)
		if !ok {
			return m
		}
		if e.min, e.max, p, ok = parseQuant(rest); !ok {
			return m
		}
		elems = append(elems, e)
	}
	for _, e := range elems[:len(elems)-1] {
		if e.min != e.max {
			return m
		}
	}
	m.elems = elems
	return m
}

// parseClass reads a character class of plain ASCII characters and ranges
// ("[A-Za-z0-9_]") at the start of p and returns the rest of p.
func parseClass(p string) (patElem, string, bool) {
	var e patElem
	if p[0] != '[' {
		return e, "", false
	}
	k := 1
	for k < len(p) && p[k] != ']' {
		lo := p[k]
		if lo == '\\' || lo == '^' || lo == '[' || lo >= 128 {
			return e, "", false
		}
		hi := lo
		if k+2 < len(p) && p[k+1] == '-' && p[k+2] != ']' {
			hi = p[k+2]
			k += 2
		}
		for c := int(lo); c <= int(hi); c++ {
			e.class[c>>6] |= 1 << (c & 63)
		}
		k++
	}
	if k >= len(p) {
		return e, "", false
	}
	return e, p[k+1:], true
}

// parseQuant reads an optional quantifier (+, *, {n}, {n,m}, {n,}) at the
// start of p: its repetition bounds (max < 0: unbounded) and the rest of p.
func parseQuant(p string) (lo, hi int, rest string, ok bool) {
	switch {
	case p != "" && p[0] == '+':
		return 1, -1, p[1:], true
	case p != "" && p[0] == '*':
		return 0, -1, p[1:], true
	case p == "" || p[0] != '{':
		return 1, 1, p, true
	}
	k := 1
	for k < len(p) && isDigit(p[k]) {
		lo = lo*10 + int(p[k]-'0')
		k++
	}
	hi = lo
	if k < len(p) && p[k] == ',' {
		k++
		hi = 0
		for k < len(p) && isDigit(p[k]) {
			hi = hi*10 + int(p[k]-'0')
			k++
		}
	}
	if k >= len(p) || p[k] != '}' {
		return 0, 0, "", false
	}
	return lo, hi, p[k+1:], true
}
