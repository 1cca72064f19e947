package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// importFileFor writes a catalogue of three signals and one draft (plus
// bad, a line of its own when set) and returns its path. The pages are on
// loopback addresses, which captures refuse at once (no lookup, no
// network).
func importFileFor(t *testing.T, bad string) string {
	t.Helper()
	var lines []string
	for i, u := range []string{"http://127.0.0.1/t/1", "http://127.0.0.2/q/2", "http://127.0.0.3/r/3"} {
		lines = append(lines, fmt.Sprintf(`{"type":"signal","id":"sig_%032x","kind":"complaint","sourceUrl":%q,"origin":"imp","externalId":"x%d","title":"Signal %d","excerpt":"text","observedAt":"2026-05-01T00:00:00Z","license":"CC BY 4.0","attribution":"someone"}`, 500+i, u, i, i))
	}
	lines = append(lines, fmt.Sprintf(`{"type":"draft","operationId":"imp-zither","draft":{"title":"Zither tuning for music schools","problem":"Music schools retune dozens of zithers by hand every term.","buyer":"Music schools","category":"Education","solution_hypothesis":"A tuning service booked per term.","pain":3,"frequency":2,"willingness_to_pay":2,"reachable_buyers":2,"feasibility":3,"competition_gap":2,"evaluation_notes":"Notes that are long enough to pass the bound here.","signal_ids":["sig_%032x","sig_%032x","sig_%032x"],"publish":false}}`, 500, 501, 502))
	if bad != "" {
		lines = append(lines, bad)
	}
	p := filepath.Join(t.TempDir(), "catalogue.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// -niche-import imports a catalogue at start, and again imports nothing
// twice; a file with a bad line stops the start naming the line, with
// nothing stored.
func TestNicheImportAtStart(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ASSAY_DATA": t.TempDir(), "ASSAY_NICHE_IMPORT": importFileFor(t, ""), "ASSAY_LOG_LEVEL": "info"}
	for run, want := range []string{"niche import: 1 evaluations created, 0 already stored", "niche import: 0 evaluations created, 1 already stored"} {
		t.Run(fmt.Sprint("start ", run), func(t *testing.T) { // each start stops when its subtest ends
			if _, logs := startServerOut(t, env, nil); !strings.Contains(logs, want) {
				t.Fatalf("no %q in\n%s", want, logs)
			}
		})
	}
	err := runErr(t, map[string]string{"ASSAY_NICHE_IMPORT": importFileFor(t, `{"type":"draft","operationId":"broken"}`)})
	if err == nil || !strings.Contains(err.Error(), "line 5") {
		t.Fatalf("a file with a bad line: %v", err)
	}
}
