package shapes

// NicheDraft is a niche evaluation as a curator submits it (snake_case field
// names, as in the interface document). The document states no
// additional-property rule, so unknown keys are ignored.
type NicheDraft struct {
	Title              string   `json:"title" validate:"required,min=8,max=180"`
	Problem            string   `json:"problem" validate:"required,min=30,max=2000"`
	Buyer              string   `json:"buyer" validate:"required,min=3,max=180"`
	Category           string   `json:"category" validate:"required,min=2,max=80"`
	SolutionHypothesis string   `json:"solution_hypothesis" validate:"required,min=20,max=2000"`
	Pain               int      `json:"pain" validate:"required,gte=0,lte=5"`
	Frequency          int      `json:"frequency" validate:"required,gte=0,lte=5"`
	WillingnessToPay   int      `json:"willingness_to_pay" validate:"required,gte=0,lte=5"`
	ReachableBuyers    int      `json:"reachable_buyers" validate:"required,gte=0,lte=5"`
	Feasibility        int      `json:"feasibility" validate:"required,gte=0,lte=5"`
	CompetitionGap     int      `json:"competition_gap" validate:"required,gte=0,lte=5"`
	EvaluationNotes    string   `json:"evaluation_notes" validate:"required,min=30,max=4000"`
	SignalIDs          []string `json:"signal_ids" validate:"required,min=1,max=100"`
	Publish            bool     `json:"publish"` // default false
}
