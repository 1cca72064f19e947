package niche

// DefaultTeaserLength is the longest problem teaser of a preview, in
// characters.
const DefaultTeaserLength = 160

// Preview is the free view of a published evaluation. It is built by
// copying an allow-list of fields into this separate type, never by
// blanking fields of the full evaluation: the solution hypothesis, the
// evaluation notes, the criteria and the evidence have no field here, and
// the problem appears only as a teaser cut at a word boundary.
type Preview struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	Buyer        string `json:"buyer"`
	Category     string `json:"category"`
	Score        int    `json:"score"`
	ScoreVersion string `json:"scoreVersion"`
	ScoreType    string `json:"scoreType"`
	// SignalCount is the number of linked signals that are not rejected.
	SignalCount int `json:"signalCount"`
	// ProblemTeaser is the start of the problem statement.
	ProblemTeaser string `json:"problemTeaser"`
	// Unlock says how to read the full evaluation (set by the HTTP
	// layer, which knows the routes and prices).
	Unlock *Unlock `json:"unlock,omitempty"`
}

// Unlock names the ways to read a full evaluation.
type Unlock struct {
	// Subscription is absent when the host sells no subscription (no
	// checkout route is mounted and none was configured).
	Subscription *UnlockSubscription `json:"subscription,omitempty"`
	PayPerCall   UnlockPayPerCall    `json:"payPerCall"`
}

// UnlockSubscription points to the subscription checkout.
type UnlockSubscription struct {
	CheckoutMethod string `json:"checkoutMethod"`
	CheckoutPath   string `json:"checkoutPath"`
	// Header is how subscribers authenticate: "Authorization: Bearer nd_…".
	Header string `json:"header"`
}

// UnlockPayPerCall points to the pay-per-call route of one evaluation.
// Amounts are spelt amountMicrousd, as everywhere in the SDK.
type UnlockPayPerCall struct {
	Method         string   `json:"method"`
	Path           string   `json:"path"`
	AmountMicroUSD int64    `json:"amountMicrousd"`
	PriceUSD       string   `json:"priceUsd"`
	Asset          string   `json:"asset"`
	Network        string   `json:"network"`
	Protocols      []string `json:"protocols"`
}

// Listing is what the public reads need of a published evaluation: the
// columns the preview allow-list is built from. Stores read these columns
// alone for lists, free searches and previews, so the solution
// hypothesis, the notes, the criteria and the evidence are not even read
// from the database for them.
type Listing struct {
	ID           string
	Title        string
	Problem      string
	Buyer        string
	Category     string
	Score        int
	ScoreVersion string
	// SignalCount is the number of linked signals that are not rejected
	// (stores count them when they read the listing).
	SignalCount int
}

// Listing returns the listing of r. A Record does not know the moderation
// state of its signals: SignalCount counts every linked id.
func (r *Record) Listing() Listing {
	return Listing{ID: r.ID, Title: r.Title, Problem: r.Problem, Buyer: r.Buyer, Category: r.Category,
		Score: r.Score, ScoreVersion: r.ScoreVersion, SignalCount: len(r.SignalIDs)}
}

// Preview projects l onto the preview allow-list. teaserLength ≤ 0 means
// DefaultTeaserLength.
func (l *Listing) Preview(teaserLength int) Preview {
	if teaserLength <= 0 {
		teaserLength = DefaultTeaserLength
	}
	return Preview{
		ID:            l.ID,
		Title:         l.Title,
		Buyer:         l.Buyer,
		Category:      l.Category,
		Score:         l.Score,
		ScoreVersion:  l.ScoreVersion,
		ScoreType:     ScoreType,
		SignalCount:   l.SignalCount,
		ProblemTeaser: Teaser(l.Problem, teaserLength),
	}
}

// PreviewOf projects r onto the preview allow-list. teaserLength ≤ 0 means
// DefaultTeaserLength.
func PreviewOf(r *Record, teaserLength int) Preview {
	l := r.Listing()
	return l.Preview(teaserLength)
}
