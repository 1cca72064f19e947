package pages

import (
	"strings"
	"testing"
)

func TestMarkQuote(t *testing.T) {
	text := "Chain IDs. Layer-2 networks register their own chain IDs; for example, Base mainnet uses chain ID 8453. Other text."
	for _, tc := range []struct {
		quote  string
		marked []string
	}{
		{"Base mainnet uses chain ID 8453", []string{"Base mainnet uses chain ID 8453"}},
		// Case, punctuation and spacing between the words are ignored.
		{"layer 2 networks  register", []string{"Layer-2 networks register"}},
		// An ellipsis is a gap: each part is marked, in order.
		{"Layer-2 networks … chain ID 8453", []string{"Layer-2 networks", "chain ID 8453"}},
		// Words in another order, or a number that is not whole, are not
		// found.
		{"8453 chain ID", nil},
		{"chain ID 845", nil},
		{"", nil},
	} {
		parts, found := markQuote(text, tc.quote, 1000)
		var got []string
		var all strings.Builder
		for _, p := range parts {
			all.WriteString(p.Text)
			if p.Marked {
				got = append(got, p.Text)
			}
		}
		if found != (len(tc.marked) > 0) || strings.Join(got, "|") != strings.Join(tc.marked, "|") {
			t.Errorf("%q: marked %q (found %v), want %q", tc.quote, got, found, tc.marked)
		}
		if all.String() != text {
			t.Errorf("%q: the parts do not add up to the text: %q", tc.quote, all.String())
		}
	}
	// A long text is cut around the mark, on character boundaries.
	long := strings.Repeat("é word ", 20000) + "the needle here " + strings.Repeat("ü tail ", 20000)
	parts, found := markQuote(long, "the needle", 1000)
	n := 0
	for _, p := range parts {
		n += len(p.Text)
		if !strings.HasPrefix(p.Text, "…") && !strings.HasSuffix(p.Text, "…") && !isValidUTF8(p.Text) {
			t.Errorf("cut inside a character: %q", p.Text)
		}
	}
	if !found || n > 1100 {
		t.Errorf("long text: found %v, %d bytes shown", found, n)
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
