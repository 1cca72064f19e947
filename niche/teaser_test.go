package niche

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// teaserReference is the straightforward Teaser: collapse all of s, then
// cut. Teaser must return exactly what it returns.
func teaserReference(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	if max < 2 {
		return "…"
	}
	cut, n := len(s), 0
	for i := range s {
		if n == max-1 {
			cut = i
			break
		}
		n++
	}
	head := s[:cut]
	if s[cut] != ' ' {
		if sp := strings.LastIndexByte(head, ' '); sp > 0 {
			head = head[:sp]
		}
	}
	head = strings.TrimRightFunc(head, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r)
	})
	return head + "…"
}

// TestTeaserMatchesReference compares Teaser with the reference on
// random texts of words, punctuation and mixed white space around the cut.
func TestTeaserMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "bb", "word", "café", "日本語", "x.", ",", " ", "  ", "\t", "\n ", "\u00a0", "\u3000", "—", "…", "end!", "\xff", "\xe2\x80"}
	for i := range 20000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		max := r.IntN(30)
		if got, want := Teaser(s, max), teaserReference(s, max); got != want {
			t.Fatalf("case %d: Teaser(%q, %d) = %q, reference %q", i, s, max, got, want)
		}
	}
}

func FuzzTeaser(f *testing.F) {
	f.Add("Owners of independent cafés lose money on waste — every single week!", 20)
	f.Add("  a  b  ", 1)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 400 {
			return
		}
		if got, want := Teaser(s, max), teaserReference(s, max); got != want {
			t.Fatalf("Teaser(%q, %d) = %q, reference %q", s, max, got, want)
		}
	})
}

func BenchmarkTeaser(b *testing.B) {
	s := strings.Repeat("Owners of independent cafés lose money on waste — every single week! ", 20)
	for b.Loop() {
		Teaser(s, DefaultTeaserLength)
	}
}
