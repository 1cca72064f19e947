package ids

import (
	"regexp"
	"strings"
	"testing"
)

func TestNewAndValid(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := New(Verification)
		if !Valid(Verification, id) {
			t.Fatalf("New produced invalid id %q", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "cv_", "cv_123", "cv_" + strings.Repeat("A", 32), "sig_" + strings.Repeat("a", 32), "cv_" + strings.Repeat("a", 33)} {
		if Valid(Verification, bad) {
			t.Errorf("Valid(%q) = true", bad)
		}
	}
}

func TestTokenAndHash(t *testing.T) {
	tok := Token(OrderToken)
	if !strings.HasPrefix(tok, OrderToken) || len(tok) != len(OrderToken)+43 {
		t.Fatalf("unexpected token %q", tok)
	}
	if Hash(tok) == Hash(Token(OrderToken)) {
		t.Fatal("two tokens hash alike")
	}
	if got := Hash("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("Hash(abc) = %s", got)
	}
	if !Equal(Hash(tok), Hash(tok)) || Equal("a", "b") {
		t.Fatal("Equal is wrong")
	}
}

func TestPatternMatchesValid(t *testing.T) {
	re := regexp.MustCompile(Pattern(Niche))
	for _, id := range []string{New(Niche), New(Niche), "niche_" + strings.Repeat("0", 32), "niche_" + strings.Repeat("A", 32), "niche_x",
		New(Order), "niche_" + strings.Repeat("a", 33), "xniche_" + strings.Repeat("a", 32), ""} {
		if re.MatchString(id) != Valid(Niche, id) {
			t.Errorf("%q: pattern %v, Valid %v", id, re.MatchString(id), Valid(Niche, id))
		}
	}
	if Pattern("a.b_") != `^a\.b_[0-9a-f]{32}$` {
		t.Errorf("prefix not quoted: %s", Pattern("a.b_"))
	}
}
