package corpus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNumbersAndUnits(t *testing.T) {
	type num struct {
		Value    float64
		Decimals int
		Unit     string
		Approx   bool
		Ident    string
	}
	tests := []struct {
		text string
		want []num
	}{
		{"The height of Mount Everest is 8,848.86 metres.", []num{{8848.86, 2, "metre", false, ""}}},
		{"Base Mainnet uses chain ID 8453.", []num{{8453, 0, "", false, ""}}},
		{"USDC has six decimal places", []num{{6, 0, "decimal", false, ""}}},
		{"Two doses are about 97% effective", []num{{2, 0, "dose", false, ""}, {97, 0, "percent", true, ""}}},
		{"at least 150 to 300 minutes per week", []num{{150, 0, "minute", false, ""}, {300, 0, "minute", false, ""}}},
		{"equal to 0 kelvin or -273.15 °C", []num{{0, 0, "kelvin", false, ""}, {-273.15, 2, "celsius", false, ""}}},
		{"water boils at 100 degrees Celsius", []num{{100, 0, "celsius", false, ""}}},
		{"RFC 9110 was published in June 2022", []num{{9110, 0, "", false, "rfc"}, {2022, 0, "year", false, ""}}},
		{"announced on 8 December 2020", []num{{8, 0, "dayofmonth", false, ""}, {2020, 0, "year", false, ""}}},
		{"an amount of 1,000,000 base units", []num{{1000000, 0, "", false, ""}}},
		{"section 15.5.3 and COVID-19", []num{{19, 0, "", false, ""}}}, // 15.5.3 is an identifier word; "-19" is no minus
		{"one of the largest networks", nil},                           // a number word without a unit is a word
		{"roughly 70 °C", []num{{70, 0, "celsius", true, ""}}},
	}
	for _, tc := range tests {
		var got []num
		for _, tok := range testLex.analyse(tc.text) {
			if n := tok.num; n != nil {
				got = append(got, num{n.value, n.decimals, n.unit, n.approx, n.ident})
			}
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%q (-want +got):\n%s", tc.text, d)
		}
	}
}

func TestSameValue(t *testing.T) {
	n := func(v float64, dec int, approx bool) *number { return &number{value: v, decimals: dec, approx: approx} }
	tests := []struct {
		a, b *number
		want bool
	}{
		{n(8849, 0, false), n(8848.86, 2, false), true},  // compared at the coarser precision
		{n(8848, 0, false), n(8848.86, 2, false), false}, // 8848.86 rounds to 8849
		{n(8453, 0, false), n(8543, 0, false), false},
		{n(97, 0, true), n(96, 0, false), true},  // approximate: within 2 %
		{n(97, 0, true), n(93, 0, false), false}, // beyond 2 %
		{n(6, 0, false), n(18, 0, false), false}, //
		{n(-273.15, 2, false), n(-273, 0, false), true},
	}
	for _, tc := range tests {
		if got := sameValue(tc.a, tc.b); got != tc.want {
			t.Errorf("sameValue(%v, %v) = %v, want %v", *tc.a, *tc.b, got, tc.want)
		}
	}
}

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"One sentence. Two sentences! Three? Four.", []string{"One sentence.", "Two sentences!", "Three?", "Four."}},
		{"The height is 8,848.86 metres. It was measured in 2020.", []string{"The height is 8,848.86 metres.", "It was measured in 2020."}},
		{"Use e.g. Base or Ethereum. Dr. Smith agreed.", []string{"Use e.g. Base or Ethereum.", "Dr. Smith agreed."}},
		{"Signed by J. R. Tolkien. Then lowercase. after all", []string{"Signed by J. R. Tolkien.", "Then lowercase. after all"}},
		{"RFC 9110 section 15.5.3 defines it. 402 is reserved.", []string{"RFC 9110 section 15.5.3 defines it.", "402 is reserved."}},
		{"He said \"stop.\" Then left.", []string{"He said \"stop.\"", "Then left."}},
	}
	for _, tc := range tests {
		got := splitSentences(tc.in)
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, d)
		}
		for _, s := range got {
			if !contains(tc.in, s) {
				t.Errorf("%q is not a substring of %q", s, tc.in)
			}
		}
	}
}

func contains(s, sub string) bool { return len(sub) > 0 && len(s) >= len(sub) && indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestNormTerm(t *testing.T) {
	tests := map[string]string{
		"vaccination": "vacci", "vaccine": "vacci", "published": "publi", "publication": "publi",
		"decimals": "decim", "chains": "chain", "doses": "dose", "tall": "heigh", "height": "heigh",
		"id": "id", "ids": "id", "base's": "base", "mainnet": "mainn", "gas": "gas",
	}
	for in, want := range tests {
		if got := testLex.normTerm(in); got != want {
			t.Errorf("normTerm(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitClauses(t *testing.T) {
	got := splitClauses("Base Mainnet uses chain ID 8453, while Base Sepolia uses chain ID 84532; both use ETH, and blocks are fast.")
	want := []string{"Base Mainnet uses chain ID 8453", "Base Sepolia uses chain ID 84532", " both use ETH", "blocks are fast."}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// testLex is the lexicon of the unit tests.
var testLex = newLexicon()
