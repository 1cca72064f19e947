package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
)

// demoRow is one row of the README's "Demo claims" table: a command and the
// verdict the README says it gets.
var demoRow = regexp.MustCompile("^\\| `go run \\./examples/verify ([^`]*)` \\| `([a-z_]+)` \\|")

// readmeDemoClaims reads the rows of the README's "Demo claims" table.
func readmeDemoClaims(t *testing.T) [][2]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n### Demo claims\n")
	if !ok {
		t.Fatal(`README.md has no "### Demo claims" section`)
	}
	if end := strings.Index(section, "\n#"); end >= 0 {
		section = section[:end]
	}
	var rows [][2]string
	for _, line := range strings.Split(section, "\n") {
		if m := demoRow.FindStringSubmatch(line); m != nil {
			rows = append(rows, [2]string{m[1], m[2]})
		}
	}
	return rows
}

// shellWords splits a command line the way a POSIX shell splits this
// simple subset: words separated by spaces, "..." and '...' quoting.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// Every command of the README's demo-claims table, run as the program
// runs it, gets the verdict the README states, and the README shows each
// of confirmed, contradicted, partially_confirmed and
// insufficient_evidence.
func TestREADMEDemoClaims(t *testing.T) {
	rows := readmeDemoClaims(t)
	seen := map[claims.Status]bool{}
	for _, row := range rows {
		args, want := shellWords(t, row[0]), claims.Status(row[1])
		seen[want] = true
		t.Run(row[0], func(t *testing.T) {
			out, err := runVerify(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			var res claims.Result
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			if res.Status != want {
				t.Fatalf("status %s, the README says %s; limitations %q", res.Status, want, res.Limitations)
			}
			// The rule the README states: whatever counted was verified.
			for _, e := range res.Evidence {
				if e.Counted && e.Quote != claims.QuoteVerified {
					t.Errorf("evidence %s counted without a verified quote: %q", e.ID, e.QualityReason)
				}
			}
		})
	}
	for _, s := range []claims.Status{claims.StatusConfirmed, claims.StatusContradicted, claims.StatusPartiallyConfirmed, claims.StatusInsufficientEvidence} {
		if !seen[s] {
			t.Errorf("the README's demo claims reach no %s verdict", s)
		}
	}
	// The showcase of "Using the engine without HTTP" is among them.
	readme, _ := os.ReadFile("../../README.md")
	const showcase = `go run ./examples/verify -tier deep -claim "USDC on Base has 6 decimals."`
	if !strings.Contains(string(readme), "`"+showcase+"` does this") {
		t.Errorf("the README's showcase is not %s", showcase)
	}
	found := false
	for _, row := range rows {
		found = found || ("go run ./examples/verify "+row[0] == showcase && row[1] == string(claims.StatusConfirmed))
	}
	if !found {
		t.Errorf("the showcase %s is not listed as confirmed", showcase)
	}
}
