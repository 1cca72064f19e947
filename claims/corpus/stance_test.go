package corpus

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
)

// TestStanceRules covers each row of the lexical stance rule.
func TestStanceRules(t *testing.T) {
	tests := []struct {
		name     string
		fact     string
		sentence string
		want     claims.Relationship // "" when the sentence does not bear on the fact
	}{
		// Numbers.
		{"same number supports", "Base mainnet uses chain ID 8453.", "The Base mainnet chain ID is 8453.", claims.Supports},
		{"different bare number contradicts", "Base mainnet uses chain ID 8453.", "Pretty sure the chain ID of Base mainnet is 8543.", claims.Contradicts},
		{"same number at coarser precision supports", "Mount Everest is 8,849 metres tall.", "The height of Mount Everest is 8,848.86 metres.", claims.Supports},
		{"different number in the same unit contradicts", "Mount Everest is 8,848 metres tall.", "The height of Mount Everest is 8,848.86 metres.", claims.Contradicts},
		{"different unit is not the same quantity", "The speed of light in vacuum is 299,792,458 metres per second.", "The speed of light in vacuum is about 300,000 kilometres per second.", claims.Context},
		{"percent against percent contradicts", "Two doses of the MMR vaccine are about 97% effective against measles.", "The MMR vaccine is only 50% effective against measles, even after two doses.", claims.Contradicts},
		{"approximate number within 2% supports", "Two doses of the MMR vaccine are about 97% effective against measles.", "Two doses of MMR vaccine were 96% effective against measles.", claims.Supports},
		{"range endpoints count", "Adults should do at least 150 minutes of moderate-intensity physical activity per week.", "Adults aged 18 to 64 should do at least 150 to 300 minutes of moderate-intensity aerobic physical activity per week.", claims.Supports},
		{"number words", "USDC on Base has 6 decimals.", "USDC on Base uses six decimals.", claims.Supports},
		// Dates.
		{"same year supports", "RFC 9110 was published in June 2022.", "RFC 9110 was published in June 2022 as an Internet Standard.", claims.Supports},
		{"different year contradicts", "RFC 9110 was published in 2019.", "RFC 9110 was published in June 2022 as an Internet Standard.", claims.Contradicts},
		{"another RFC number is another subject", "RFC 9110 was published in June 2022.", "RFC 7231 was published in June 2014.", claims.Context},
		// Negation.
		{"negation with the same number contradicts", "HTTP status code 402 means Payment Required.", "Actually the HTTP status code 402 does not mean Payment Required anymore, it means Payment Failed.", claims.Contradicts},
		{"negated statement without numbers contradicts", "The kilogram is defined by the international prototype kept near Paris.", "The kilogram is no longer defined by the international prototype kept near Paris.", claims.Contradicts},
		{"statement without numbers supports", "Canberra is the capital of Australia.", "Canberra is the capital of Australia.", claims.Supports},
		{"negation in an aside is ignored", "The Amazon is the longest river in the world.", "By our measurement the Amazon, not the Nile, is the longest river in the world.", claims.Supports},
		{"negation in an aside about the subject counts", "The Nile is the longest river in the world.", "By our measurement the Amazon, not the Nile, is the longest river in the world.", claims.Contradicts},
		{"negative claim against positive sentence", "Water does not boil at 100 °C at sea level.", "At sea level, pure water boils at about 100 °C.", claims.Contradicts},
		{"negative claim against negative sentence", "Sydney is not the capital of Australia.", "Sydney, the largest city, is not the capital of Australia.", claims.Supports},
		// Coverage and clauses.
		{"missing key term: no stance", "Base Sepolia uses chain ID 8453.", "Base mainnet uses chain ID 8453.", claims.Context},
		{"clause decides", "Base Sepolia uses chain ID 8453.", "Base mainnet uses chain ID 8453, while Base Sepolia uses chain ID 84532.", claims.Contradicts},
		{"clause decides the other way", "Base mainnet uses chain ID 8453.", "Base mainnet uses chain ID 8453, while Base Sepolia uses chain ID 84532.", claims.Supports},
		{"supporting and contradicting clauses make context", "Base mainnet uses chain ID 8453.", "Base mainnet uses chain ID 8453; some say the Base mainnet chain ID is 8543.", claims.Context},
		{"unrelated sentence", "Base mainnet uses chain ID 8453.", "Measles is a highly contagious viral disease.", ""},
		{"partial mention is context", "Canberra is the capital of Australia.", "Sydney is the capital of Australia.", claims.Context},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := testLex.judge(testLex.newFact(tc.fact), tc.sentence)
			if j.rel != tc.want {
				t.Errorf("judge(%q, %q) = %q (%s, coverage %.2f), want %q", tc.fact, tc.sentence, j.rel, j.reason, j.coverage, tc.want)
			}
			if (j.rel == claims.Supports || j.rel == claims.Contradicts) && j.reason == "" {
				t.Error("a stance without a reason")
			}
		})
	}
}

func TestNewFact(t *testing.T) {
	f := testLex.newFact("RFC 9110 was published in June 2022.")
	if d := cmp.Diff([]string{"rfc", "rfc9110", "publi"}, f.keys); d != "" {
		t.Errorf("keys (-want +got):\n%s", d)
	}
	if len(f.nums) != 1 || f.nums[0].value != 2022 || f.nums[0].unit != "year" {
		t.Errorf("numbers = %+v", f.nums)
	}
	g := testLex.newFact("Water does not boil at 100 °C at sea level.")
	if !g.negated || len(g.nums) != 1 || g.nums[0].unit != "celsius" {
		t.Errorf("fact = %+v", g)
	}
	if d := cmp.Diff([]string{"water", "boil", "sea", "level"}, g.keys); d != "" {
		t.Errorf("keys (-want +got):\n%s", d)
	}
}

func TestSplitFacts(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Base mainnet uses chain ID 8453 and USDC on Base has 6 decimals.", []string{"Base mainnet uses chain ID 8453", "USDC on Base has 6 decimals."}},
		{"Canberra is the capital of Australia; Wellington is the capital of New Zealand.", []string{"Canberra is the capital of Australia", "Wellington is the capital of New Zealand."}},
		{"Water boils at 100 °C at sea level and freezes at 0 °C.", []string{"Water boils at 100 °C at sea level", "Water freezes at 0 °C."}},
		{"Salt and pepper are common spices.", []string{"Salt and pepper are common spices."}},
		{"Measles is contagious and spreads through the air.", []string{"Measles is contagious and spreads through the air."}}, // "spreads" is no linking verb
		{"A is 1, B is 2, and C is 3.", []string{"A is 1, B is 2", "C is 3."}},
		{"  ", []string{""}},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, testLex.splitFacts(tc.in)); d != "" {
			t.Errorf("splitFacts(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestVerdictTable(t *testing.T) {
	tests := []struct {
		ws, wc float64
		want   claims.Status
		conf   float64
	}{
		{0, 0, claims.StatusInsufficientEvidence, 0},
		{3, 0, claims.StatusConfirmed, 0.7},
		{6, 0, claims.StatusConfirmed, 0.9},
		{0, 2, claims.StatusContradicted, 0.63},
		{4, 2, claims.StatusConfirmed, 0.59},
		{2, 4, claims.StatusContradicted, 0.59},
		{3, 2, claims.StatusAmbiguous, 0.3},
	}
	for _, tc := range tests {
		st, c := verdict(tc.ws, tc.wc)
		if st != tc.want || c != tc.conf {
			t.Errorf("verdict(%v, %v) = %s %.2f, want %s %.2f", tc.ws, tc.wc, st, c, tc.want, tc.conf)
		}
	}
	overallTests := []struct {
		in   []claims.Status
		want claims.Status
	}{
		{[]claims.Status{claims.StatusConfirmed, claims.StatusConfirmed}, claims.StatusConfirmed},
		{[]claims.Status{claims.StatusConfirmed, claims.StatusContradicted}, claims.StatusPartiallyConfirmed},
		{[]claims.Status{claims.StatusConfirmed, claims.StatusInsufficientEvidence}, claims.StatusPartiallyConfirmed},
		{[]claims.Status{claims.StatusContradicted, claims.StatusInsufficientEvidence}, claims.StatusContradicted},
		{[]claims.Status{claims.StatusAmbiguous, claims.StatusInsufficientEvidence}, claims.StatusAmbiguous},
		{[]claims.Status{claims.StatusInsufficientEvidence}, claims.StatusInsufficientEvidence},
		{nil, claims.StatusInsufficientEvidence},
	}
	for _, tc := range overallTests {
		if got := overall(tc.in); got != tc.want {
			t.Errorf("overall(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
