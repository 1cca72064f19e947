package shapes

import (
	"github.com/assaykit/assay/internal/valid"
	"regexp"
	"testing"
)

// TestMatcherAgreesWithRegexp checks the fast pattern path against regexp
// on every registry pattern and a few others.
func TestMatcherAgreesWithRegexp(t *testing.T) {
	srcs := []string{`^[a-z]+$`, `^[A-Z][a-z0-9]{2}[x-z]*$`, `^(a|b)$`, `a[b]`}
	fast := 0
	for _, src := range valid.Patterns() {
		srcs = append(srcs, src)
	}
	inputs := []string{"", "a", "A", "ab", "Ab1", "Abc", "Ab1xyz", "a b", "é", "aé", "9abc", "a_b:c.d-e",
		"abcdefghijabcdefghijabcdefghijabcdefghij", "abcdefghijabcdefghijabcdefghijabcdefghijk", "x-", "-", ":", "a\n"}
	for _, src := range srcs {
		m, re := newMatcher(src), regexp.MustCompile(src)
		if m.elems != nil {
			fast++
		}
		for _, in := range inputs {
			if got, want := m.Match([]byte(in)), re.MatchString(in); got != want {
				t.Errorf("%s on %q: %v, regexp says %v", src, in, got, want)
			}
		}
	}
	if fast < len(valid.Patterns()) {
		t.Errorf("only %d patterns take the fast path", fast)
	}
}
