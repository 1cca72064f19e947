package claims

import (
	"testing"
)

// Every row of the fact verdict table (package documentation).
func TestRuleStatusTable(t *testing.T) {
	tests := []struct {
		support, contra, minimum int
		want                     Status
	}{
		{2, 0, 2, StatusConfirmed},            // enough support, no contradiction
		{3, 0, 2, StatusConfirmed},            //
		{0, 2, 2, StatusContradicted},         // enough contradiction, no support
		{2, 1, 2, StatusAmbiguous},            // support and contradiction
		{1, 1, 1, StatusAmbiguous},            //
		{1, 0, 2, StatusInsufficientEvidence}, // too little support
		{0, 1, 2, StatusInsufficientEvidence}, // too little contradiction
		{0, 0, 1, StatusInsufficientEvidence}, // nothing counts
		{1, 0, 1, StatusConfirmed},            // minimumSources 1
	}
	for _, tc := range tests {
		if got := ruleStatus(tc.support, tc.contra, tc.minimum); got != tc.want {
			t.Errorf("ruleStatus(%d, %d, %d) = %s, want %s", tc.support, tc.contra, tc.minimum, got, tc.want)
		}
	}
}

// Every row of the model-combination table.
func TestCombineStatusTable(t *testing.T) {
	all := []Status{StatusConfirmed, StatusPartiallyConfirmed, StatusContradicted, StatusInsufficientEvidence, StatusAmbiguous}
	want := map[Status]map[Status]Status{
		StatusConfirmed: {
			StatusConfirmed: StatusConfirmed, StatusPartiallyConfirmed: StatusPartiallyConfirmed,
			StatusContradicted: StatusAmbiguous, StatusInsufficientEvidence: StatusInsufficientEvidence,
			StatusAmbiguous: StatusConfirmed,
		},
		StatusContradicted: {
			StatusConfirmed: StatusAmbiguous, StatusPartiallyConfirmed: StatusAmbiguous,
			StatusContradicted: StatusContradicted, StatusInsufficientEvidence: StatusInsufficientEvidence,
			StatusAmbiguous: StatusContradicted,
		},
	}
	for _, rule := range all {
		for _, model := range all {
			w := rule // ambiguous and insufficient rules are never changed by the model
			if row, ok := want[rule]; ok {
				w = row[model]
			}
			if got := combineStatus(rule, model); got != w {
				t.Errorf("combineStatus(rule %s, model %s) = %s, want %s", rule, model, got, w)
			}
		}
	}
}

// Every row of the top-level table.
func TestTopStatusTable(t *testing.T) {
	f := func(ss ...Status) []AtomicFact {
		out := make([]AtomicFact, len(ss))
		for i, s := range ss {
			out[i] = AtomicFact{Status: s}
		}
		return out
	}
	C, P, X, I, A := StatusConfirmed, StatusPartiallyConfirmed, StatusContradicted, StatusInsufficientEvidence, StatusAmbiguous
	tests := []struct {
		name        string
		facts       []AtomicFact
		independent int
		want        Status
	}{
		{"1 no facts", f(), 5, I},
		{"1 too few independent sources", f(C, C), 1, I},
		{"2 all confirmed", f(C, C), 2, C},
		{"3 all contradicted", f(X, X), 2, X},
		{"4 confirmed and contradicted", f(C, X), 3, P},
		{"4 confirmed and insufficient", f(C, I), 2, P},
		{"4 partially confirmed", f(P), 2, P},
		{"4 confirmed and ambiguous", f(C, A), 3, P},
		{"5 contradicted and insufficient", f(X, I), 2, X},
		{"5 contradicted and ambiguous", f(X, A), 3, X},
		{"6 ambiguous and insufficient", f(A, I), 2, A},
		{"7 all insufficient", f(I, I), 2, I},
	}
	for _, tc := range tests {
		if got := topStatus(tc.facts, tc.independent, 2); got != tc.want {
			t.Errorf("%s: topStatus = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestConfidenceBounds(t *testing.T) {
	two := factTally{support: map[string]bool{"a.gov": true, "b.com": true}, contra: map[string]bool{}}
	if c := ruleConfidence(StatusConfirmed, two); round2(c) != 0.75 {
		t.Errorf("confirmed confidence %v", c)
	}
	many := factTally{support: map[string]bool{"a": true, "b": true, "c": true, "d": true, "e": true, "f": true}}
	if c := ruleConfidence(StatusConfirmed, many); c != maxDecisiveConfidence {
		t.Errorf("confirmed confidence cap %v", c)
	}
	if c := ruleConfidence(StatusInsufficientEvidence, many); c > maxWeakConfidence {
		t.Errorf("insufficient confidence %v above %v", c, maxWeakConfidence)
	}
	if c := ruleConfidence(StatusAmbiguous, many); c != ambiguousConfidence {
		t.Errorf("ambiguous confidence %v", c)
	}
	stale := many
	stale.staleOnly = true
	if c := ruleConfidence(StatusConfirmed, stale); c != staleOnlyConfidence {
		t.Errorf("stale-only confidence %v", c)
	}
	if clamp01(-1) != 0 || clamp01(7) != 1 {
		t.Error("clamp01")
	}
}

func TestClean(t *testing.T) {
	tests := map[string]string{
		"plain text":                                       "plain text",
		"a \ue200cite\ue202turn0search1\ue201 b":           "a b",
		"end citeturn0search0turn1news2.":                  "end.",
		"Reuters 【3†source】.":                              "Reuters.",
		"keep .NET and v1 .2":                              "keep .NET and v1 .2",
		"x\ue000y\uf8ffz":                                  "xyz",
		"bell\x07 tab\tnl\n":                               "bell tab\tnl",
		"  spaced   out  ":                                 "spaced out",
		"excitement is not a cite, incite or citeturnover": "excitement is not a cite, incite or citeturnover",
	}
	for in, want := range tests {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}
