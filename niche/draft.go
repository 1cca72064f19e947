package niche

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/internal/valid"
)

// Draft is the NicheDraft of the interface document: what a curator
// writes. Its JSON names are the document's (snake_case); it states no
// additional-property rule, so unknown keys are ignored.
//
// Its validate tags state the document's bounds once: Normalize checks
// them on a Go value (validator/v10, after trimming the text) and
// shapes.Decode on a JSON body, with Pydantic's errors. Every field but
// Publish (default false) is required; the six criteria are pointers
// because 0 is a valid score: nil is a missing score, new(0) a score of 0.
type Draft struct {
	Title              string   `json:"title" validate:"required,min=8,max=180"`
	Problem            string   `json:"problem" validate:"required,min=30,max=2000"`
	Buyer              string   `json:"buyer" validate:"required,min=3,max=180"`
	Category           string   `json:"category" validate:"required,min=2,max=80"`
	SolutionHypothesis string   `json:"solution_hypothesis" validate:"required,min=20,max=2000"`
	Pain               *int     `json:"pain" validate:"required,gte=0,lte=5"`
	Frequency          *int     `json:"frequency" validate:"required,gte=0,lte=5"`
	WillingnessToPay   *int     `json:"willingness_to_pay" validate:"required,gte=0,lte=5"`
	ReachableBuyers    *int     `json:"reachable_buyers" validate:"required,gte=0,lte=5"`
	Feasibility        *int     `json:"feasibility" validate:"required,gte=0,lte=5"`
	CompetitionGap     *int     `json:"competition_gap" validate:"required,gte=0,lte=5"`
	EvaluationNotes    string   `json:"evaluation_notes" validate:"required,min=30,max=4000"`
	SignalIDs          []string `json:"signal_ids" validate:"required,min=1,max=100"`
	Publish            bool     `json:"publish"` // default false
	// Rationale is optional: a short reason per criterion, shown with the
	// score and kept in the revisions.
	Rationale *DraftRationale `json:"rationale,omitempty"`
}

// DraftRationale is the curator's short reason for each criterion's value
// (snake_case, like the draft). Each is optional; a given one has 10 to 300
// characters once trimmed.
type DraftRationale struct {
	Pain             string `json:"pain,omitempty" validate:"omitempty,min=10,max=300"`
	Frequency        string `json:"frequency,omitempty" validate:"omitempty,min=10,max=300"`
	WillingnessToPay string `json:"willingness_to_pay,omitempty" validate:"omitempty,min=10,max=300"`
	ReachableBuyers  string `json:"reachable_buyers,omitempty" validate:"omitempty,min=10,max=300"`
	Feasibility      string `json:"feasibility,omitempty" validate:"omitempty,min=10,max=300"`
	CompetitionGap   string `json:"competition_gap,omitempty" validate:"omitempty,min=10,max=300"`
}

// RationaleOf returns the draft's rationale as an evaluation shows it.
func (d Draft) RationaleOf() Rationale {
	if d.Rationale == nil {
		return Rationale{}
	}
	r := d.Rationale
	return Rationale{Pain: r.Pain, Frequency: r.Frequency, WillingnessToPay: r.WillingnessToPay,
		ReachableBuyers: r.ReachableBuyers, Feasibility: r.Feasibility, CompetitionGap: r.CompetitionGap}
}

// Dimensions returns the draft's six criteria (a missing one as 0).
func (d Draft) Dimensions() Dimensions {
	v := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	return Dimensions{Pain: v(d.Pain), Frequency: v(d.Frequency), WillingnessToPay: v(d.WillingnessToPay),
		ReachableBuyers: v(d.ReachableBuyers), Feasibility: v(d.Feasibility), CompetitionGap: v(d.CompetitionGap)}
}

// Normalize trims the text of surrounding white space, checks the bounds
// of the validate tags (all inclusive) on the trimmed draft and that every
// signal id is one, and returns the draft with signal ids deduplicated in
// order. An error is an *InvalidError naming the field, with Pydantic's
// message for a broken bound (title: "String should have at least 8
// characters"): the message the HTTP layer gives the same value before
// the engine sees it.
func (d Draft) Normalize() (Draft, error) {
	type text struct {
		name string
		v    *string
	}
	texts := []text{
		{"title", &d.Title}, {"problem", &d.Problem}, {"buyer", &d.Buyer}, {"category", &d.Category},
		{"solution_hypothesis", &d.SolutionHypothesis}, {"evaluation_notes", &d.EvaluationNotes},
	}
	if d.Rationale != nil {
		r := *d.Rationale // a copy: the caller's draft is left as it is
		d.Rationale = &r
		texts = append(texts, text{"rationale.pain", &r.Pain}, text{"rationale.frequency", &r.Frequency},
			text{"rationale.willingness_to_pay", &r.WillingnessToPay}, text{"rationale.reachable_buyers", &r.ReachableBuyers},
			text{"rationale.feasibility", &r.Feasibility}, text{"rationale.competition_gap", &r.CompetitionGap})
	}
	for _, f := range texts {
		*f.v = strings.TrimSpace(*f.v)
		if !utf8.ValidString(*f.v) {
			return d, invalid(f.name, "must be valid UTF-8")
		}
	}
	if err := check(&d); err != nil {
		return d, err
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

// check validates the tags of v (a pointer to a struct) and returns an
// *InvalidError for the first broken rule, with Pydantic's message.
func check(v any) error {
	if es := valid.Struct(v); len(es) > 0 {
		return &InvalidError{Field: es[0].Path(), Reason: es[0].Msg}
	}
	return nil
}
