package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Confidence bounds of the verdict rules.
const (
	maxDecisiveConfidence = 0.95 // confirmed or contradicted
	maxPartialConfidence  = 0.75 // partially_confirmed
	ambiguousConfidence   = 0.40
	maxWeakConfidence     = 0.49 // insufficient_evidence
	staleOnlyConfidence   = 0.60 // a fact that rests only on stale evidence
)

func validStatus(s Status) bool {
	switch s {
	case StatusConfirmed, StatusPartiallyConfirmed, StatusContradicted, StatusInsufficientEvidence, StatusAmbiguous:
		return true
	}
	return false
}

// factTally is what a fact's surviving evidence says.
type factTally struct {
	support, contra map[string]bool // registrable domains
	used            []*evWork       // the evidence the verdict rests on
	staleOnly       bool
	superseded      []*evWork // stale evidence set aside for fresher evidence that disagrees
	outdated        []*evWork // stale evidence of a time-sensitive fact: never counts
}

// tallyFact counts the independent sources (registrable domains) behind a
// fact. Only counting evidence is used (matched, admitted by the policy,
// supports or contradicts, quote verified on its page). For a fact whose
// truth changes over time (sensitive), stale evidence (published before
// the freshness window, or dated in the future) never counts. For other
// facts, stale evidence is superseded when fresh or undated counting
// evidence exists and none of it takes the same side; when the fact has no
// fresh counting evidence at all, stale evidence is used and the fact is
// marked staleOnly.
func tallyFact(ids []string, byID map[string]*evWork, sensitive bool) factTally {
	t := factTally{support: map[string]bool{}, contra: map[string]bool{}}
	var counting []*evWork
	freshSides := map[Relationship]bool{}
	for _, id := range ids {
		ev := byID[id]
		switch {
		case ev == nil || !ev.counts():
			continue
		case sensitive && ev.stale:
			t.outdated = append(t.outdated, ev)
			continue
		}
		counting = append(counting, ev)
		if !ev.stale {
			freshSides[ev.Relationship] = true
		}
	}
	for _, ev := range counting {
		if !ev.stale || len(freshSides) == 0 || freshSides[ev.Relationship] {
			t.used = append(t.used, ev)
		} else {
			t.superseded = append(t.superseded, ev)
		}
	}
	t.staleOnly = len(freshSides) == 0 && len(counting) > 0
	for _, ev := range t.used {
		if ev.Relationship == Contradicts {
			t.contra[ev.reg] = true
		} else {
			t.support[ev.reg] = true
		}
	}
	return t
}

// ruleStatus is the fact verdict table (see the package documentation).
func ruleStatus(nSupport, nContra, minimum int) Status {
	switch {
	case nSupport > 0 && nContra > 0:
		return StatusAmbiguous
	case nSupport >= minimum:
		return StatusConfirmed
	case nContra >= minimum:
		return StatusContradicted
	}
	return StatusInsufficientEvidence
}

// combineStatus lets the model's own fact status make a decisive verdict
// more cautious, never stronger (see the package documentation). The model
// may lower confirmed or contradicted to partially_confirmed or
// insufficient_evidence (it judged the support partial or inadequate); a
// model status on the other side turns the verdict into ambiguous. A model
// "ambiguous" is not adopted on its own: ambiguity is computed from the
// evidence relationships (and stale evidence may have been superseded).
func combineStatus(rule, model Status) Status {
	switch rule {
	case StatusConfirmed:
		switch model {
		case StatusContradicted:
			return StatusAmbiguous
		case StatusPartiallyConfirmed, StatusInsufficientEvidence:
			return model
		}
	case StatusContradicted:
		switch model {
		case StatusConfirmed, StatusPartiallyConfirmed:
			return StatusAmbiguous
		case StatusInsufficientEvidence:
			return model
		}
	}
	return rule
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func clamp01(f float64) float64 {
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	return min(f, 1)
}

// ruleConfidence is the confidence the rules allow for a fact: it grows
// with the number of independent sources that decide it.
func ruleConfidence(status Status, t factTally) float64 {
	var c float64
	support, contra := float64(len(t.support)), float64(len(t.contra))
	switch status {
	case StatusConfirmed:
		c = min(maxDecisiveConfidence, 0.55+0.1*support)
	case StatusContradicted:
		c = min(maxDecisiveConfidence, 0.55+0.1*contra)
	case StatusPartiallyConfirmed:
		c = min(maxPartialConfidence, 0.45+0.1*support)
	case StatusAmbiguous:
		c = ambiguousConfidence
	default:
		c = min(maxWeakConfidence, 0.1+0.1*(support+contra))
	}
	if t.staleOnly {
		c = min(c, staleOnlyConfidence)
	}
	return c
}

// judgement is the verdict of a whole result.
type judgement struct {
	status      Status
	independent int             // distinct registrable domains the fact verdicts rest on
	regs        map[string]bool // those domains
}

// judge recomputes every fact's status and confidence from its evidence,
// adds conflicts for facts with support and contradiction, and derives the
// top-level status from the facts.
func (d *draft) judge() judgement {
	eff := d.eff
	used := map[string]bool{}
	var recomputed int
	d.quoteLimitations()
	for i := range d.facts {
		f := &d.facts[i]
		t := tallyFact(f.EvidenceIDs, d.evByID, d.sensitive[i])
		for _, ev := range t.used {
			used[ev.reg] = true
			ev.counted = true
		}
		rule := ruleStatus(len(t.support), len(t.contra), eff.MinimumSources)
		model := f.Status
		final := rule
		if validStatus(model) {
			final = combineStatus(rule, model)
		}
		conf := ruleConfidence(final, t)
		if final == model {
			conf = min(conf, clamp01(f.Confidence))
		}
		f.Confidence = round2(conf)
		if final != model {
			recomputed++
			note := fmt.Sprintf("[Status recomputed by the evidence rules: %s independent supporting and %s contradicting counted; the provider said %q.]",
				plural(len(t.support), "source", "sources"), plural(len(t.contra), "source", "sources"), string(model))
			f.Explanation = strings.TrimSpace(f.Explanation + " " + note)
		}
		if t.staleOnly {
			d.limit("Atomic fact %d rests only on evidence older than the freshness window; its confidence is capped at %.2f.", i+1, staleOnlyConfidence)
		}
		for _, ev := range t.superseded {
			ev.uncounted = appendUnique(ev.uncounted, "superseded by fresher evidence that disagrees")
			d.limit("Evidence %s is older than the freshness window and is superseded by fresher evidence that disagrees with it.", ev.ID)
		}
		if len(t.outdated) > 0 {
			var ids []string
			for _, ev := range t.outdated {
				ev.uncounted = appendUnique(ev.uncounted, "older than the freshness window of a fact that changes over time")
				ids = append(ids, ev.ID)
			}
			if len(t.used) == 0 {
				d.limit("Atomic fact %d concerns a state that changes over time and rests only on evidence older than the %d-hour freshness window (%s); it is insufficient_evidence.",
					i+1, eff.FreshnessHours, strings.Join(ids, ", "))
			} else {
				d.limit("Atomic fact %d concerns a state that changes over time; evidence %s, older than the %d-hour freshness window, did not count for it.",
					i+1, strings.Join(ids, ", "), eff.FreshnessHours)
			}
		}
		f.Status = final
		if len(t.support) > 0 && len(t.contra) > 0 && eff.IncludeConflicts {
			var ids []string
			for _, ev := range t.used {
				ids = appendUnique(ids, ev.ID)
			}
			d.addConflict("Sources disagree on: "+f.Statement, ids)
		}
	}
	if recomputed > 0 {
		d.limit("The status of %s was recomputed from the evidence and differs from the provider's.", plural(recomputed, "atomic fact", "atomic facts"))
	}
	j := judgement{independent: len(used), regs: used}
	j.status = topStatus(d.facts, j.independent, eff.MinimumSources)
	return j
}

func (d *draft) addConflict(summary string, ids []string) {
	if len(ids) < 2 {
		return
	}
	want := slices.Sorted(slices.Values(ids))
	for _, c := range d.conflicts {
		if slices.Equal(slices.Sorted(slices.Values(c.EvidenceIDs)), want) {
			return
		}
	}
	d.conflicts = append(d.conflicts, Conflict{Summary: summary, EvidenceIDs: ids})
}

// topStatus is the top-level table (first matching row wins).
func topStatus(facts []AtomicFact, independent, minimum int) Status {
	count := map[Status]int{}
	for _, f := range facts {
		count[f.Status]++
	}
	n := len(facts)
	switch {
	case n == 0 || independent < minimum:
		return StatusInsufficientEvidence
	case count[StatusConfirmed] == n:
		return StatusConfirmed
	case count[StatusContradicted] == n:
		return StatusContradicted
	case count[StatusConfirmed]+count[StatusPartiallyConfirmed] > 0:
		return StatusPartiallyConfirmed
	case count[StatusContradicted] > 0:
		return StatusContradicted
	case count[StatusAmbiguous] > 0:
		return StatusAmbiguous
	}
	return StatusInsufficientEvidence
}

// conclusionFor is the conclusion the service writes when it does not
// adopt the provider's.
func conclusionFor(status Status, facts []AtomicFact, independent, minimum int) string {
	count := map[Status]int{}
	for _, f := range facts {
		count[f.Status]++
	}
	n := len(facts)
	switch status {
	case StatusConfirmed:
		return fmt.Sprintf("Confirmed: all %s supported by at least %s and contradicted by none.",
			plural(n, "atomic fact is", "atomic facts are"), plural(minimum, "independent matched source", "independent matched sources"))
	case StatusPartiallyConfirmed:
		return fmt.Sprintf("Partially confirmed: %d of %d atomic facts are confirmed (or partially confirmed); %d contradicted, %d ambiguous, %d without sufficient evidence.",
			count[StatusConfirmed]+count[StatusPartiallyConfirmed], n, count[StatusContradicted], count[StatusAmbiguous], count[StatusInsufficientEvidence])
	case StatusContradicted:
		return fmt.Sprintf("Contradicted: %d of %d atomic facts are contradicted by the evidence and none is confirmed.", count[StatusContradicted], n)
	case StatusAmbiguous:
		return fmt.Sprintf("Ambiguous: the evidence conflicts on %d of %d atomic facts and none is confirmed or contradicted.", count[StatusAmbiguous], n)
	}
	if n > 0 && independent >= minimum {
		// Row 7: enough sources in all, but no fact is settled by them.
		return fmt.Sprintf("Insufficient evidence: the facts together rest on %s, but %s sufficient evidence on its own. The claim is neither confirmed nor refuted.",
			plural(independent, "independent matched source", "independent matched sources"), plural(n, "atomic fact lacks", "atomic facts each lack"))
	}
	return fmt.Sprintf("Insufficient evidence: the usable evidence comes from %s; %d required. The claim is neither confirmed nor refuted.",
		plural(independent, "independent matched source", "independent matched sources"), minimum)
}

// citedIDs are the evidence ids referenced by facts, or by conflicts when
// conflicts are included.
func (d *draft) citedIDs() map[string]bool {
	out := map[string]bool{}
	for _, f := range d.facts {
		for _, id := range f.EvidenceIDs {
			out[id] = true
		}
	}
	for _, c := range d.conflicts {
		for _, id := range c.EvidenceIDs {
			out[id] = true
		}
	}
	return out
}

// ensureFacts gives a result without model facts one fact: the claim
// itself, resting on every surviving evidence item.
func (d *draft) ensureFacts() {
	if len(d.facts) > 0 {
		return
	}
	ids := []string{}
	for _, ev := range d.evidence {
		ids = append(ids, ev.ID)
	}
	d.facts = []AtomicFact{{
		Statement:   d.eff.Claim,
		Status:      d.resp.Analysis.Status,
		Confidence:  1,
		Explanation: "The provider returned no atomic facts; the claim was judged as a single fact from all surviving evidence.",
		EvidenceIDs: ids,
	}}
	d.sensitive = []bool{TimeSensitive(d.eff.Claim)}
	d.limit("The provider returned no atomic facts; the claim was judged as a single fact.")
}

// quoteLimitations names the evidence that a fact cites and that would have
// counted but for its quote: not found on its page, or not checked (why).
func (d *draft) quoteLimitations() {
	cited := d.citedIDs()
	var notFound []string
	for _, ev := range d.evidence {
		if !cited[ev.ID] || !ev.ProviderSourceMatched || !ev.admitted || ev.Relationship == Context {
			continue
		}
		switch ev.quote {
		case QuoteNotFound:
			notFound = append(notFound, ev.ID)
		case QuoteNotChecked:
			d.limit("The quote of evidence %s was not checked, because %s; it was not counted.", ev.ID, ev.check)
		}
	}
	if len(notFound) > 0 {
		d.limit("The quote of evidence %s was not found on its page; it was not counted.", strings.Join(notFound, ", "))
	}
}
