package niche

// Dimensions are the six editorial criteria of an evaluation, each an
// integer 0..5.
type Dimensions struct {
	Pain             int `json:"pain"`
	Frequency        int `json:"frequency"`
	WillingnessToPay int `json:"willingnessToPay"`
	ReachableBuyers  int `json:"reachableBuyers"`
	Feasibility      int `json:"feasibility"`
	CompetitionGap   int `json:"competitionGap"`
}

// Weights are the share of each criterion in the score, in percent; they
// add up to 100.
type Weights struct {
	Pain             int `json:"pain"`
	Frequency        int `json:"frequency"`
	WillingnessToPay int `json:"willingnessToPay"`
	ReachableBuyers  int `json:"reachableBuyers"`
	Feasibility      int `json:"feasibility"`
	CompetitionGap   int `json:"competitionGap"`
}

// Sum returns the total of the weights.
func (w Weights) Sum() int {
	return w.Pain + w.Frequency + w.WillingnessToPay + w.ReachableBuyers + w.Feasibility + w.CompetitionGap
}

// Scorer turns the criteria into a score 0..100. A Scorer is versioned:
// scores are computed when an evaluation is written and stored with the
// version, so changing the formula means a new version and a rescore
// (Engine.Rescore recomputes every stored score with the engine's
// scorer, one recorded revision per changed evaluation).
type Scorer interface {
	// Version names the formula, e.g. "editorial-v1".
	Version() string
	// Weights returns the published weights (they must add up to 100).
	Weights() Weights
	// Score returns the integer score 0..100 of d (criteria 0..5). The
	// engine clamps a value outside 0..100 and logs a warning.
	Score(d Dimensions) int
}

// WeightedScorer is the linear formula
//
//	score = (Σ weight_i · value_i) / 5
//
// with integer weights in percent summing to 100 and values 0..5, which is
// an integer 0..100 whenever every weight is a multiple of 5 (the division
// is exact); otherwise it is rounded half up.
type WeightedScorer struct {
	// Name is the version reported by Version.
	Name string
	// W are the weights in percent.
	W Weights
}

// DefaultScorerVersion is the version of DefaultScorer.
const DefaultScorerVersion = "editorial-v1"

// DefaultScorer returns the default formula, version "editorial-v1": pain
// 25 %, frequency 20 %, willingness to pay 20 %, reachable buyers 15 %,
// feasibility 10 %, competition gap 10 %, that is
//
//	score = 5·pain + 4·frequency + 4·willingness_to_pay + 3·reachable_buyers + 2·feasibility + 2·competition_gap
//
// For example (4,4,2,3,3,2) scores 63 and (3,2,1,2,3,1) scores 41.
func DefaultScorer() WeightedScorer {
	return WeightedScorer{Name: DefaultScorerVersion, W: Weights{
		Pain: 25, Frequency: 20, WillingnessToPay: 20, ReachableBuyers: 15, Feasibility: 10, CompetitionGap: 10,
	}}
}

// Version implements Scorer.
func (s WeightedScorer) Version() string { return s.Name }

// Weights implements Scorer.
func (s WeightedScorer) Weights() Weights { return s.W }

// Score implements Scorer. Values outside 0..5 are clamped.
func (s WeightedScorer) Score(d Dimensions) int {
	c := func(v int) int { return min(max(v, 0), 5) }
	sum := s.W.Pain*c(d.Pain) + s.W.Frequency*c(d.Frequency) + s.W.WillingnessToPay*c(d.WillingnessToPay) +
		s.W.ReachableBuyers*c(d.ReachableBuyers) + s.W.Feasibility*c(d.Feasibility) + s.W.CompetitionGap*c(d.CompetitionGap)
	total := s.W.Sum()
	if total <= 0 {
		return 0
	}
	// Normalise to 0..100 whatever the weights add up to, rounding half up.
	return min(max((sum*20+total/2)/total, 0), 100)
}
