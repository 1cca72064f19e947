package claims

import "testing"

// Who carries a collapsed call's usage, in every order of events.
func TestFlightCarrier(t *testing.T) {
	u := &ProviderUsage{Provider: "p", InputTokens: 7}
	type step struct {
		op   string // finish, take-starter, take-joined, leave
		want bool   // the step carries the usage
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"the starter waits", []step{{"finish", false}, {"take-joined", false}, {"take-starter", true}, {"take-joined", false}}},
		{"the starter left before the end", []step{{"leave", false}, {"finish", false}, {"take-joined", true}, {"take-joined", false}}},
		{"the starter left after the others saw the end", []step{{"finish", false}, {"take-joined", false}, {"leave", true}, {"take-joined", false}}},
		{"the starter left after taking", []step{{"finish", false}, {"take-starter", true}, {"leave", false}}},
		{"nobody else waits", []step{{"leave", false}, {"finish", false}}},
	}
	for _, tc := range tests {
		f := &flight{}
		carried := 0
		for i, st := range tc.steps {
			var got bool
			var gotU ProviderUsage
			switch st.op {
			case "finish":
				f.finish(u)
			case "take-starter":
				gotU, got = f.take(true)
			case "take-joined":
				gotU, got = f.take(false)
			case "leave":
				gotU, got = f.leave()
			}
			if got != st.want || (got && gotU != *u) {
				t.Errorf("%s: step %d (%s) carried %v %+v, want %v", tc.name, i, st.op, got, gotU, st.want)
			}
			if got {
				carried++
			}
		}
		if carried > 1 {
			t.Errorf("%s: carried %d times", tc.name, carried)
		}
	}
	// No provider call (nil usage): nobody carries anything.
	f := &flight{}
	f.finish(nil)
	if _, ok := f.take(true); ok {
		t.Error("nil usage carried")
	}
}
