package shapes

// NicheDraft is a niche evaluation as a curator submits it (snake_case field
// names, as in the interface document; unknown keys are ignored).
type NicheDraft struct {
	Title              string   `json:"title"`               // 8..180
	Problem            string   `json:"problem"`             // 30..2000
	Buyer              string   `json:"buyer"`               // 3..180
	Category           string   `json:"category"`            // 2..80
	SolutionHypothesis string   `json:"solution_hypothesis"` // 20..2000
	Pain               int      `json:"pain"`                // 0..5
	Frequency          int      `json:"frequency"`           // 0..5
	WillingnessToPay   int      `json:"willingness_to_pay"`  // 0..5
	ReachableBuyers    int      `json:"reachable_buyers"`    // 0..5
	Feasibility        int      `json:"feasibility"`         // 0..5
	CompetitionGap     int      `json:"competition_gap"`     // 0..5
	EvaluationNotes    string   `json:"evaluation_notes"`    // 30..4000
	SignalIDs          []string `json:"signal_ids"`          // 1..100 items
	Publish            bool     `json:"publish"`             // default false
}
