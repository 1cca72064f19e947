package snapshot_test

import (
	"testing"

	"github.com/assaykit/assay/snapshot"
)

func TestContains(t *testing.T) {
	text := `Base is an Ethereum L2. Its mainnet chain id is 8453 and its testnet uses 84532. ` +
		`The fee did not change in 2024 – it stayed at 0.5% (or 12,5 cents). “Quoted words” and don’t stop. ` +
		`Revenue was $8.4 million, −3 °C overnight. CAFÉ au lait. Schloß Neuschwanstein.`
	s := &snapshot.Snapshot{Text: text}
	tests := []struct {
		excerpt string
		want    bool
	}{
		{"mainnet chain id is 8453", true},
		{"MAINNET   chain\nid is\t8453", true},
		{"chain id is 845", false},
		{"chain id is 84530", false},
		{"testnet uses 8453", false},
		{"testnet uses 84532", true},
		{"The fee did change in 2024", false},         // "not" vanished
		{"The fee did not not change", false},         // a word appeared
		{"The fee did not change in 2024 - it", true}, // en dash vs hyphen
		{"change in 2024 — it stayed", true},          // em dash
		{"stayed at 0.5%", true},
		{"stayed at 0.5", true}, // the symbol is a token of its own; dropping it at the end is fine
		{"stayed at 05%", false},
		{"stayed at 0,5%", false},
		{"(or 12,5 cents)", true},
		{"or 125 cents", false},
		{`"Quoted words" and don't stop`, true},
		{"‘Quoted words’ and don’t stop", true},
		{"Quoted words and dont stop", false},
		{"Revenue was $8.4 million", true},
		{"Revenue was $84 million", false},
		{"Revenue was €8.4 million", false},
		{"-3 °C overnight", true},
		{"3 °C overnight", false}, // the sign is part of the number
		{"café AU LAIT", true},
		{"cafe au lait", false}, // accents are not ignored
		{"Schloss Neuschwanstein", true},
		{"Base is an Ethereum L2 … chain id is 8453", true},
		{"Base is an Ethereum L2 ... testnet uses 84532", true},
		{"Base is […] Ethereum L2", true},
		{"chain id is 8453 … Base is an Ethereum L2", false}, // order matters
		{"8453 … 8453", false},                               // no overlap
		{"L2 … L2", false},
		{"…", false},
		{"", false},
		{"  !!! ", false},
		{"Ethereum", true},
		{"Ether", false},
	}
	for _, tc := range tests {
		if got := s.Contains(tc.excerpt); got != tc.want {
			t.Errorf("Contains(%q) = %v, want %v", tc.excerpt, got, tc.want)
		}
	}
	if (&snapshot.Snapshot{}).Contains("anything") {
		t.Error("empty text contains something")
	}
	var nilSnap *snapshot.Snapshot
	if nilSnap.Contains("x") {
		t.Error("nil snapshot contains something")
	}
	m := s.Matcher()
	if !m.Contains("Neuschwanstein") || m.Contains("Neuschwan") {
		t.Error("matcher")
	}
}

func TestContainsJSON(t *testing.T) {
	nz := snapshot.Normalize([]byte(`{"note":"line one\nline two","quote":"he said \"no\"","n":8453}`), "application/json")
	ct := "application/json"
	s := &snapshot.Snapshot{Text: nz.Text, ContentType: &ct}
	for excerpt, want := range map[string]bool{
		"line one line two":    true,
		"he said \"no\"":       true,
		"he said yes":          false,
		"8453":                 true,
		"nline":                false,
		"n 8453 note line one": true,
	} {
		if got := s.Contains(excerpt); got != want {
			t.Errorf("Contains(%q) = %v over %s", excerpt, got, nz.Text)
		}
	}
}
