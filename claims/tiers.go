package claims

import "time"

// SnapshotMode says which sources a tier snapshots.
type SnapshotMode string

// Snapshot modes.
const (
	SnapshotNone       SnapshotMode = "none"
	SnapshotCited      SnapshotMode = "cited"
	SnapshotAllSources SnapshotMode = "all_sources"
)

// Tier names.
const (
	Quick    = "quick"
	Standard = "standard"
	Deep     = "deep"
	Research = "research"
)

// DefaultTimeout is the documented time-out of one verification call.
const DefaultTimeout = 120 * time.Second

// Tier is one row of the tier table: what a verification of the tier
// checks. How it is sold (prices, HTTP paths, MCP tools) is the
// application layer's catalogue (package sell), not the domain's.
type Tier struct {
	Name            string        // quick, standard, deep, research
	MaxToolActions  int           // provider tool-call budget (search, open page, find in page)
	MaxOutputTokens int           // provider output-token budget (reasoning included)
	MaxCitedSources int           // cap on cited sources, and so on maxSources
	SnapshotMode    SnapshotMode  // which sources are snapshotted
	MaxSnapshots    int           // cap on snapshots per call
	Timeout         time.Duration // deadline of one call
}

// Tiers returns the tier table, cheapest first. The returned slice is a
// fresh copy.
func Tiers() []Tier {
	return []Tier{
		{Quick, 1, 1500, 3, SnapshotNone, 0, DefaultTimeout},
		{Standard, 3, 3000, 8, SnapshotCited, 3, DefaultTimeout},
		{Deep, 7, 6000, 15, SnapshotCited, 8, DefaultTimeout},
		{Research, 15, 12000, 20, SnapshotAllSources, 20, DefaultTimeout},
	}
}

// TierByName returns the named tier.
func TierByName(name string) (Tier, bool) {
	for _, t := range Tiers() {
		if t.Name == name {
			return t, true
		}
	}
	return Tier{}, false
}

// CheckablePages is how many pages a call on the tier can check evidence
// excerpts on: its MaxSnapshots when it takes snapshots (every counting
// quote is verified on a captured, archived page), else its
// MaxCitedSources (quick: the cited pages are fetched for the check and
// not listed in the result). A minimumSources above it is refused before payment, because
// only evidence whose quote was verified counts toward a verdict.
func (t Tier) CheckablePages() int {
	if t.SnapshotMode == SnapshotNone {
		return t.MaxCitedSources
	}
	return t.MaxSnapshots
}

// MaxMinimumSources is the largest minimumSources the tier accepts: the
// lower of its cited-source cap and CheckablePages. Check refuses a larger
// one before payment; the discovery documents publish it.
func (t Tier) MaxMinimumSources() int {
	return min(t.MaxCitedSources, t.CheckablePages())
}
