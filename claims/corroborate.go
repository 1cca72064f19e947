package claims

import (
	"fmt"
	"slices"
	"strings"

	"github.com/assaykit/assay/internal/urlnorm"
	"github.com/assaykit/assay/snapshot"
)

// answerNames lists the providers of answers: "a", "a and b", "a, b and c".
func answerNames(as []*answer) string {
	var names []string
	for _, a := range as {
		names = append(names, a.name)
	}
	return joinAnd(names)
}

func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// prefixed returns a copy of resp whose evidence ids and search call ids
// start with "<name>:" (the answers after the first, so that ids stay
// unique in the merged result). Items without an id get the one reconcile
// would give them first.
func prefixed(resp *ProviderResponse, name string) *ProviderResponse {
	c := *resp
	p := func(id string) string { return name + ":" + clean(id) }
	c.SearchCalls = slices.Clone(resp.SearchCalls)
	for i := range c.SearchCalls {
		if c.SearchCalls[i].ID != "" {
			c.SearchCalls[i].ID = p(c.SearchCalls[i].ID)
		}
	}
	a := &c.Analysis
	a.Evidence = slices.Clone(resp.Analysis.Evidence)
	for i := range a.Evidence {
		id := clean(a.Evidence[i].ID)
		if id == "" {
			id = fmt.Sprintf("e%d", i+1)
		}
		a.Evidence[i].ID = p(id)
	}
	a.AtomicFacts = slices.Clone(resp.Analysis.AtomicFacts)
	for i := range a.AtomicFacts {
		a.AtomicFacts[i].EvidenceIDs = mapStrings(a.AtomicFacts[i].EvidenceIDs, p)
	}
	a.Conflicts = slices.Clone(resp.Analysis.Conflicts)
	for i := range a.Conflicts {
		a.Conflicts[i].EvidenceIDs = mapStrings(a.Conflicts[i].EvidenceIDs, p)
	}
	return &c
}

func mapStrings(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

// side is where a provider's own judgement of the claim stands.
type side int

const (
	sideNone        side = iota // insufficient_evidence or ambiguous
	sideSupports                // confirmed or partially_confirmed
	sideContradicts             // contradicted
)

func sideOf(s Status) side {
	switch s {
	case StatusConfirmed, StatusPartiallyConfirmed:
		return sideSupports
	case StatusContradicted:
		return sideContradicts
	}
	return sideNone
}

// judged is one answer judged on its own evidence.
type judged struct {
	a   *answer
	d   *draft
	j   judgement
	res *Result
}

// corroborate judges every answer on its own evidence by the
// single-provider rules, then merges them by the corroboration rules of
// the package documentation.
func corroborate(eff *Effective, drafts []*draft, answers []*answer) *Result {
	js := make([]judged, len(drafts))
	for i, d := range drafts {
		j := d.judge()
		js[i] = judged{a: answers[i], d: d, j: j, res: d.finish(j, answers[i].name)}
	}
	var supporters, contradictors []string
	for _, x := range js {
		switch sideOf(x.res.Status) {
		case sideSupports:
			supporters = append(supporters, x.a.name)
		case sideContradicts:
			contradictors = append(contradictors, x.a.name)
		}
	}
	disagree := len(supporters) > 0 && len(contradictors) > 0

	m := &Result{Claim: eff.Claim, AtomicFacts: []AtomicFact{}, ProviderSources: []ProviderSource{}, Evidence: []Evidence{},
		Snapshots: []snapshot.Snapshot{}, Conflicts: []Conflict{}, Limitations: []string{}}
	var limits []string
	var verdicts []string
	for _, x := range js {
		verdicts = append(verdicts, fmt.Sprintf("%s: %s", x.a.name, x.res.Status))
	}
	limits = append(limits, fmt.Sprintf("Corroboration: %s were asked; each answer was judged on the evidence reached through it (%s).",
		answerNames(answers), strings.Join(verdicts, "; ")))
	regs := map[string]bool{}
	for _, x := range js {
		if x.res.ObservedAt.After(m.ObservedAt) {
			m.ObservedAt = x.res.ObservedAt
		}
		for r := range x.j.regs {
			regs[r] = true
		}
		for _, f := range x.res.AtomicFacts {
			m.AtomicFacts = append(m.AtomicFacts, corroborateFact(f, x, js, disagree))
		}
		m.Evidence = append(m.Evidence, x.res.Evidence...)
		m.Conflicts = append(m.Conflicts, x.res.Conflicts...)
		limits = appendUnique(limits, ownLimitations(x, js)...)
	}
	if disagree && eff.IncludeConflicts {
		m.Conflicts = append(m.Conflicts, providerConflict(js, supporters, contradictors))
	}
	m.Status = topStatus(m.AtomicFacts, len(regs), eff.MinimumSources)
	m.Conclusion = corroboratedConclusion(m.Status, js, m.AtomicFacts, len(regs), eff.MinimumSources)
	m.ProviderSources, m.Snapshots = mergeSources(js)
	m.Limitations = limits
	m.Provenance = mergeProvenance(js, m)
	return m
}

// ownLimitations are the limitations of answer x, those that not every
// answer shares starting with "<provider>: " (they speak of "the
// provider", which is then that one).
func ownLimitations(x judged, js []judged) []string {
	var out []string
	for _, l := range x.res.Limitations {
		shared := true
		for _, y := range js {
			if !slices.Contains(y.res.Limitations, l) {
				shared = false
				break
			}
		}
		if !shared {
			l = x.a.name + ": " + l
		}
		out = append(out, l)
	}
	return out
}

// corroborateFact applies the corroboration rules to one fact judged on
// the evidence of answer x.
func corroborateFact(f AtomicFact, x judged, js []judged, disagree bool) AtomicFact {
	f.EvidenceIDs = slices.Clone(f.EvidenceIDs)
	var short []string
	for _, y := range js {
		if y.a == x.a {
			continue
		}
		want := sideSupports
		if f.Status == StatusContradicted {
			want = sideContradicts
		}
		if sideOf(y.res.Status) != want {
			short = append(short, fmt.Sprintf("%s: %s", y.a.name, y.res.Status))
		}
	}
	from := f.Status
	switch {
	case disagree && (f.Status == StatusConfirmed || f.Status == StatusPartiallyConfirmed || f.Status == StatusContradicted):
		f.Status, f.Confidence = StatusAmbiguous, min(f.Confidence, ambiguousConfidence)
	case f.Status == StatusConfirmed && len(short) > 0:
		f.Status, f.Confidence = StatusPartiallyConfirmed, min(f.Confidence, maxPartialConfidence)
	case f.Status == StatusContradicted && len(short) > 0:
		f.Status, f.Confidence = StatusInsufficientEvidence, min(f.Confidence, maxWeakConfidence)
	}
	note := fmt.Sprintf("[Judged on the evidence reached through %s.]", x.a.name)
	if f.Status != from {
		why := "the providers disagree"
		if !disagree {
			why = "not corroborated by " + strings.Join(short, ", ")
		}
		note = fmt.Sprintf("[Judged %s on the evidence reached through %s; %s under the corroboration rules: %s.]", from, x.a.name, f.Status, why)
	}
	f.Explanation = strings.TrimSpace(f.Explanation + " " + note)
	return f
}

// providerConflict names the counting evidence of both sides when the
// providers disagree.
func providerConflict(js []judged, supporters, contradictors []string) Conflict {
	ids := []string{}
	for _, x := range js {
		if sideOf(x.res.Status) == sideNone {
			continue
		}
		for _, ev := range x.res.Evidence {
			if ev.Counted {
				ids = appendUnique(ids, ev.ID)
			}
		}
	}
	return Conflict{
		Summary: fmt.Sprintf("Providers disagree: the evidence reached through %s supports the claim, the evidence reached through %s contradicts it.",
			joinAnd(supporters), joinAnd(contradictors)),
		EvidenceIDs: ids,
	}
}

// corroboratedConclusion says what the merged status rests on.
func corroboratedConclusion(status Status, js []judged, facts []AtomicFact, independent, minimum int) string {
	agree := true
	var names []string
	for _, x := range js {
		names = append(names, x.a.name)
		if x.res.Status != status {
			agree = false
		}
	}
	if agree {
		return fmt.Sprintf("Corroborated by %s. %s", joinAnd(names), js[0].res.Conclusion)
	}
	var each []string
	for _, x := range js {
		each = append(each, fmt.Sprintf("through %s, %s", x.a.name, x.res.Status))
	}
	return fmt.Sprintf("%s The providers' evidence gave different verdicts (%s); under the corroboration rules the claim is %s.",
		conclusionFor(status, facts, independent, minimum), strings.Join(each, "; "), status)
}

// mergeSources unions the provider sources (by sourceId: one page reached
// through several providers is one source whose searchCallIds name the
// calls of each; its provider is the first that reported it) and the
// snapshots (by id: the drafts share one set of captures).
func mergeSources(js []judged) ([]ProviderSource, []snapshot.Snapshot) {
	srcs := []ProviderSource{}
	byID := map[string]int{}
	snaps := []snapshot.Snapshot{}
	seenSnap := map[string]bool{}
	for _, x := range js {
		for _, s := range x.res.ProviderSources {
			i, ok := byID[s.SourceID]
			if !ok {
				byID[s.SourceID] = len(srcs)
				srcs = append(srcs, s)
				continue
			}
			t := &srcs[i]
			t.SearchCallIDs = appendUnique(t.SearchCallIDs, s.SearchCallIDs...)
			t.Actions = appendUnique(t.Actions, s.Actions...)
			t.Queries = appendUnique(t.Queries, s.Queries...)
			t.EvidenceIDs = appendUnique(t.EvidenceIDs, s.EvidenceIDs...)
			t.Cited = t.Cited || s.Cited
			if t.Title == nil {
				t.Title = s.Title
			}
			if t.SnapshotID == nil {
				t.SnapshotID = s.SnapshotID
			}
		}
		for _, s := range x.res.Snapshots {
			if !seenSnap[s.ID] {
				seenSnap[s.ID] = true
				snaps = append(snaps, s)
			}
		}
	}
	return srcs, snaps
}

// mergeProvenance names every answering provider, joined by "+", in
// provider, model and providerResponseId, and adds up their counters.
func mergeProvenance(js []judged, m *Result) Provenance {
	var provs, models, rids []string
	var p Provenance
	consulted := map[string]bool{}
	for _, x := range js {
		q := x.res.Provenance
		provs, models, rids = append(provs, q.Provider), append(models, q.Model), append(rids, q.ProviderResponseID)
		p.SearchedWeb = p.SearchedWeb || q.SearchedWeb
		p.MatchedEvidenceCount += q.MatchedEvidenceCount
		p.WebSearchCallCount += q.WebSearchCallCount
		p.InputTokens += q.InputTokens
		p.CachedInputTokens += q.CachedInputTokens
		p.OutputTokens += q.OutputTokens
		for _, s := range x.d.sources {
			if s.opened || s.consulted {
				consulted[s.key] = true
			}
		}
	}
	p.Provider, p.Model, p.ProviderResponseID = strings.Join(provs, "+"), strings.Join(models, "+"), strings.Join(rids, "+")
	p.ConsultedSourceCount = len(consulted)
	p.ProviderSourceCount = len(m.ProviderSources)
	cited := map[string]bool{}
	for _, ev := range m.Evidence {
		if k, err := urlnorm.Key(ev.URL); err == nil && ev.Cited {
			cited[k] = true
		}
	}
	p.CitedSourceCount = len(cited)
	for _, s := range m.Snapshots {
		if s.Status == snapshot.StatusCaptured {
			p.SnapshottedSourceCount++
		}
	}
	return p
}
