package nichestore

import (
	"testing"

	"github.com/assaykit/assay/niche"
)

// Tests of internals that need no database.

func TestMayHaveToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"owners of shops", false}, // a whole word: certain, not uncertain
		{"shop owner", false},
		{"ownersꟊ shop", true},
		{"ownersᦰ shop", true},
		{"shop ꟊowners", true},
		{"shop ꟊownersꟊ", true},
		{"xowners shop", false},
		{"ownersx", false},
		{"ownersꟊx", true},
		{"", false},
	} {
		c := niche.Candidate{Body: tc.text}
		if got := mayHaveToken(&c, "owners"); got != tc.want {
			t.Errorf("mayHaveToken(%q, owners) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
