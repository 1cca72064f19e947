package niche

import (
	"math/rand/v2"
	"testing"
)

// TestNormalizeASCIIIsNormalize checks the ASCII fast path of normalize
// against the Unicode path on random ASCII strings (every byte value
// below 128, runs of letters, digits, apostrophes and punctuation).
func TestNormalizeASCIIIsNormalize(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	alphabet := []byte("aZ09'' -.,_\t\n!")
	for i := range 20000 {
		b := make([]byte, rng.IntN(40))
		for j := range b {
			if i%2 == 0 {
				b[j] = byte(rng.IntN(128))
			} else {
				b[j] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		s := string(b)
		fast, ok := normalizeASCII(s)
		if !ok {
			t.Fatalf("%q: not taken as ASCII", s)
		}
		if slow := normalizeUnicode(s); fast != slow {
			t.Fatalf("%q: fast path %q, Unicode path %q", s, fast, slow)
		}
	}
	if _, ok := normalizeASCII("café"); ok {
		t.Fatal("café taken as ASCII")
	}
	if got := normalize("Landlord's  CAFÉ—rent"); got != "landlords cafe rent" {
		t.Fatalf("normalize: %q", got)
	}
}
