package niche

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/assaykit/assay/internal/ids"
)

// Draft is the NicheDraft of the interface document: what a curator
// writes. Its JSON names are the document's (snake_case).
type Draft struct {
	Title              string   `json:"title"`
	Problem            string   `json:"problem"`
	Buyer              string   `json:"buyer"`
	Category           string   `json:"category"`
	SolutionHypothesis string   `json:"solution_hypothesis"`
	Pain               int      `json:"pain"`
	Frequency          int      `json:"frequency"`
	WillingnessToPay   int      `json:"willingness_to_pay"`
	ReachableBuyers    int      `json:"reachable_buyers"`
	Feasibility        int      `json:"feasibility"`
	CompetitionGap     int      `json:"competition_gap"`
	EvaluationNotes    string   `json:"evaluation_notes"`
	SignalIDs          []string `json:"signal_ids"`
	Publish            bool     `json:"publish"`
}

// Dimensions returns the draft's six criteria.
func (d Draft) Dimensions() Dimensions {
	return Dimensions{Pain: d.Pain, Frequency: d.Frequency, WillingnessToPay: d.WillingnessToPay,
		ReachableBuyers: d.ReachableBuyers, Feasibility: d.Feasibility, CompetitionGap: d.CompetitionGap}
}

// Normalize checks the NicheDraft bounds of the interface document (all
// inclusive) and returns the draft with text trimmed of surrounding
// white space and signal ids deduplicated in order. The HTTP layer
// validates the same bounds with Pydantic's messages before the engine
// sees a draft; this check keeps direct users of the engine honest.
func (d Draft) Normalize() (Draft, error) {
	type textRule struct {
		name     string
		v        *string
		min, max int
	}
	for _, r := range []textRule{
		{"title", &d.Title, 8, 180},
		{"problem", &d.Problem, 30, 2000},
		{"buyer", &d.Buyer, 3, 180},
		{"category", &d.Category, 2, 80},
		{"solution_hypothesis", &d.SolutionHypothesis, 20, 2000},
		{"evaluation_notes", &d.EvaluationNotes, 30, 4000},
	} {
		*r.v = strings.TrimSpace(*r.v)
		if !utf8.ValidString(*r.v) {
			return d, invalid(r.name, "must be valid UTF-8")
		}
		if n := utf8.RuneCountInString(*r.v); n < r.min || n > r.max {
			return d, invalid(r.name, "must have %d to %d characters (has %d)", r.min, r.max, n)
		}
	}
	for _, c := range []struct {
		name string
		v    int
	}{
		{"pain", d.Pain}, {"frequency", d.Frequency}, {"willingness_to_pay", d.WillingnessToPay},
		{"reachable_buyers", d.ReachableBuyers}, {"feasibility", d.Feasibility}, {"competition_gap", d.CompetitionGap},
	} {
		if c.v < 0 || c.v > 5 {
			return d, invalid(c.name, "must be an integer from 0 to 5")
		}
	}
	if n := len(d.SignalIDs); n < 1 || n > 100 {
		return d, invalid("signal_ids", "must list 1 to 100 signal ids (has %d)", n)
	}
	seen := make(map[string]bool, len(d.SignalIDs))
	out := make([]string, 0, len(d.SignalIDs))
	for i, id := range d.SignalIDs {
		id = strings.TrimSpace(id)
		if !ids.Valid(ids.Signal, id) {
			return d, invalid(fmt.Sprintf("signal_ids[%d]", i), "%q is not a signal id (sig_ followed by 32 lowercase hex digits)", id)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	d.SignalIDs = out
	return d, nil
}
