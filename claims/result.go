package claims

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/assaykit/assay/snapshot"
)

// finish assembles the result (without its verification id) from a judged
// draft.
func (d *draft) finish(j judgement, providerName string) *Result {
	eff, resp := d.eff, d.resp
	res := &Result{
		Claim:           eff.Claim,
		Status:          j.status,
		ObservedAt:      d.returnedAt.UTC(),
		AtomicFacts:     []AtomicFact{},
		ProviderSources: []ProviderSource{},
		Evidence:        []Evidence{},
		Snapshots:       []snapshot.Snapshot{},
		Conflicts:       []Conflict{},
		Limitations:     []string{},
	}
	modelStatus := resp.Analysis.Status
	conclusion := clean(resp.Analysis.Conclusion)
	if j.status != modelStatus || conclusion == "" {
		if conclusion != "" && modelStatus != j.status {
			d.limit("The provider's overall status was %q; the evidence rules give %q, so its conclusion was not adopted. It read: %q",
				string(modelStatus), string(j.status), conclusion)
		}
		conclusion = conclusionFor(j.status, d.facts, j.independent, eff.MinimumSources)
	}
	res.Conclusion = conclusion

	for _, f := range d.facts {
		f.EvidenceIDs = append([]string{}, f.EvidenceIDs...)
		res.AtomicFacts = append(res.AtomicFacts, f)
	}
	for _, c := range d.conflicts {
		res.Conflicts = append(res.Conflicts, Conflict{Summary: c.Summary, EvidenceIDs: append([]string{}, c.EvidenceIDs...)})
	}

	cited := d.citedIDs()
	citedPages := map[string]bool{}
	var matched int
	for _, ev := range d.evidence {
		e := ev.Evidence
		e.Cited = cited[e.ID]
		if e.Cited {
			citedPages[ev.key] = true
		}
		if e.RetrievedAt.IsZero() {
			e.RetrievedAt = d.returnedAt.UTC()
		}
		if e.ProviderSourceMatched {
			matched++
		}
		e.Quote, e.Counted = ev.quote, ev.counted
		e.QualityReason = ev.qualityReason(e.QualityReason, e.Cited, eff.SourcePolicy)
		if s := d.srcByKey[ev.key]; s != nil {
			s.EvidenceIDs = appendUnique(s.EvidenceIDs, e.ID)
			s.consulted = true
			if e.Cited {
				s.Cited = true
			}
		}
		res.Evidence = append(res.Evidence, e)
	}
	var consulted int
	for _, s := range d.sources {
		if s.opened || s.consulted {
			consulted++
		}
		res.ProviderSources = append(res.ProviderSources, s.ProviderSource)
	}
	captured := map[string]bool{}
	for _, s := range d.snapshots {
		res.Snapshots = append(res.Snapshots, *s)
		if s.Status == snapshot.StatusCaptured {
			captured[s.ID] = true
		}
	}
	// searchedWeb: a web search action happened. An offline provider's
	// searches are of a local collection: not web searches, and not
	// counted as web search calls.
	searches, webCalls := searchActions(resp), len(resp.SearchCalls)
	if d.offline {
		if webCalls > 0 {
			d.limit("The provider (%s) searched a local document collection, not the web (%s); searchedWeb is false and webSearchCallCount is 0.",
				providerName, plural(webCalls, "tool action", "tool actions"))
		}
		searches, webCalls = 0, 0
	}
	res.Limitations = appendUnique(cleanAll(resp.Analysis.Limitations), d.limitations...)
	model := clean(resp.Model)
	res.Provenance = Provenance{
		Provider:               providerName,
		Model:                  model,
		ProviderResponseID:     clean(resp.ResponseID),
		SearchedWeb:            searches > 0,
		ConsultedSourceCount:   consulted,
		CitedSourceCount:       len(citedPages),
		ProviderSourceCount:    len(d.sources),
		MatchedEvidenceCount:   matched,
		SnapshottedSourceCount: len(captured),
		WebSearchCallCount:     webCalls,
		InputTokens:            max(0, resp.Usage.InputTokens),
		CachedInputTokens:      max(0, resp.Usage.CachedInputTokens),
		OutputTokens:           max(0, resp.Usage.OutputTokens),
	}
	return res
}

// Clauses that close qualityReason (see evWork.qualityReason).
const (
	countedClause    = "counted toward the verdict"
	notCountedClause = "not counted"
)

// qualityReason is the item's qualityReason: the quote check first
// (checkClause), then why the source is of its type (classification), the
// notes (dates, staleness), and last whether the item counted toward a
// fact's verdict, with the reasons when it did not.
func (ev *evWork) qualityReason(classification string, cited bool, policy string) string {
	parts := []string{ev.checkClause()}
	if classification != "" {
		parts = append(parts, classification)
	}
	parts = append(parts, ev.notes...)
	if ev.counted {
		return strings.Join(append(parts, countedClause), "; ")
	}
	var why []string
	if ev.quote != QuoteVerified {
		why = append(why, "its quote was not verified")
	}
	if !ev.ProviderSourceMatched {
		why = append(why, "not matched to any source the provider consulted")
	}
	if !ev.admitted {
		why = append(why, "its source type does not count under the "+policy+" policy")
	}
	if ev.Relationship == Context {
		why = append(why, "context only")
	}
	if !cited {
		why = append(why, "no atomic fact cites it")
	}
	why = append(why, ev.uncounted...)
	last := notCountedClause
	if len(why) > 0 {
		last += ": " + strings.Join(why, ", ")
	}
	return strings.Join(append(parts, last), "; ")
}

// restoreChecks sets the typed quote outcome and counted flag of evidence
// read back from JSON (a Store) from its qualityReason, which states both
// (see Evidence.Quote). Items whose qualityReason does not follow the
// format keep the zero values.
func restoreChecks(evs []Evidence) {
	for i := range evs {
		e := &evs[i]
		if e.Quote != "" {
			continue
		}
		switch q := e.QualityReason; {
		case strings.HasPrefix(q, "quote verified on "):
			e.Quote = QuoteVerified
		case strings.HasPrefix(q, "quote not found on "):
			e.Quote = QuoteNotFound
		case strings.HasPrefix(q, "not checked, because "):
			e.Quote = QuoteNotChecked
		default:
			continue
		}
		e.Counted = strings.HasSuffix(e.QualityReason, "; "+countedClause)
	}
}

// searchActions counts the search actions of a response (the calls that
// carry a per-call fee).
func searchActions(resp *ProviderResponse) int {
	n := 0
	for _, c := range resp.SearchCalls {
		if c.Action == "" || c.Action == ActionSearch {
			n++
		}
	}
	return n
}

// DecodeResult reads a ClaimVerificationResult from its JSON (a result as
// delivered, or read back from anywhere), with every slice non-nil and
// each evidence item's Quote and Counted restored from its qualityReason,
// which states both. The offline bundle verifier uses it.
func DecodeResult(data []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("claims: not a verification result: %w", err)
	}
	normalize(&r)
	return &r, nil
}

// normalize makes every slice of a result non-nil so that it serialises
// with [] and never null (results read from elsewhere may lack them).
func normalize(r *Result) {
	if r.AtomicFacts == nil {
		r.AtomicFacts = []AtomicFact{}
	}
	for i := range r.AtomicFacts {
		if r.AtomicFacts[i].EvidenceIDs == nil {
			r.AtomicFacts[i].EvidenceIDs = []string{}
		}
	}
	if r.ProviderSources == nil {
		r.ProviderSources = []ProviderSource{}
	}
	for i := range r.ProviderSources {
		p := &r.ProviderSources[i]
		for _, s := range []*[]string{&p.SearchCallIDs, &p.Actions, &p.Queries, &p.EvidenceIDs} {
			if *s == nil {
				*s = []string{}
			}
		}
	}
	if r.Evidence == nil {
		r.Evidence = []Evidence{}
	}
	restoreChecks(r.Evidence)
	if r.Snapshots == nil {
		r.Snapshots = []snapshot.Snapshot{}
	}
	if r.Conflicts == nil {
		r.Conflicts = []Conflict{}
	}
	for i := range r.Conflicts {
		if r.Conflicts[i].EvidenceIDs == nil {
			r.Conflicts[i].EvidenceIDs = []string{}
		}
	}
	if r.Limitations == nil {
		r.Limitations = []string{}
	}
}

// cloneResult deep-copies a result (the single-flight result is shared by
// every waiting caller and must not be modified).
func cloneResult(r *Result) *Result {
	c := *r
	c.AtomicFacts = make([]AtomicFact, len(r.AtomicFacts))
	for i, f := range r.AtomicFacts {
		f.EvidenceIDs = slices.Clone(f.EvidenceIDs)
		c.AtomicFacts[i] = f
	}
	c.ProviderSources = make([]ProviderSource, len(r.ProviderSources))
	for i, p := range r.ProviderSources {
		p.SearchCallIDs, p.Actions = slices.Clone(p.SearchCallIDs), slices.Clone(p.Actions)
		p.Queries, p.EvidenceIDs = slices.Clone(p.Queries), slices.Clone(p.EvidenceIDs)
		c.ProviderSources[i] = p
	}
	c.Evidence = slices.Clone(r.Evidence)
	c.Snapshots = slices.Clone(r.Snapshots)
	c.Conflicts = make([]Conflict, len(r.Conflicts))
	for i, x := range r.Conflicts {
		x.EvidenceIDs = slices.Clone(x.EvidenceIDs)
		c.Conflicts[i] = x
	}
	c.Limitations = slices.Clone(r.Limitations)
	normalize(&c)
	return &c
}

func describe(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
