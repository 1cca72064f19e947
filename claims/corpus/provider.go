package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/assaykit/assay/claims"
)

// Provenance labels.
const (
	ProviderName = "corpus"
	Model        = "bm25-lexical-v1"
	SourceName   = "corpus_web_search"
)

// Defaults.
const (
	DefaultSearchResults    = 6  // documents one query retrieves
	DefaultMaxResults       = 10 // documents one search action reports
	DefaultSnippetSentences = 2  // sentences a search result shows
)

// MaxFacts is the largest number of atomic facts checked separately; the
// parts beyond it are checked together as one statement.
const MaxFacts = 20

// Options configures a Provider. Nil means defaults.
type Options struct {
	// Now is the clock used when a query has no Now (default time.Now).
	Now func() time.Time
	// Logger receives a debug record per search; nil discards.
	Logger *slog.Logger
	// SearchResults is how many documents each query retrieves.
	SearchResults int
	// MaxResults caps the documents of the search action (all queries).
	MaxResults int
	// SnippetSentences is how many sentences of a document that was not
	// opened the provider may read (its search snippet).
	SnippetSentences int
}

// Provider is an offline claims.SearchProvider over a Collection. It is
// deterministic and safe for concurrent use.
type Provider struct {
	c    *Collection
	opts Options
	log  *slog.Logger
}

var _ claims.SearchProvider = (*Provider)(nil)

// New returns a provider over c.
func New(c *Collection, opts *Options) (*Provider, error) {
	if c == nil || len(c.docs) == 0 {
		return nil, errors.New("corpus: empty collection")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SearchResults <= 0 {
		o.SearchResults = DefaultSearchResults
	}
	if o.MaxResults <= 0 {
		o.MaxResults = DefaultMaxResults
	}
	if o.SnippetSentences <= 0 {
		o.SnippetSentences = DefaultSnippetSentences
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Provider{c: c, opts: o, log: log}, nil
}

// Name returns "corpus".
func (p *Provider) Name() string { return ProviderName }

// Collection returns the provider's collection.
func (p *Provider) Collection() *Collection { return p.c }

// Capabilities: the provider applies allowed and blocked domain lists of
// any length itself (MaxDomains reports the request's own cap, 100), and
// it is Offline: it searches its collection, not the web.
func (p *Provider) Capabilities() claims.ProviderCapabilities {
	return claims.ProviderCapabilities{DomainFilter: true, MaxDomains: 100, BlockedDomainFilter: true, SourceName: SourceName, Offline: true}
}

// kindWeight is the weight of a source kind in the verdict rule.
func kindWeight(kind string) float64 {
	switch kind {
	case KindOfficial, KindAcademic:
		return 3
	case KindReference, KindNews:
		return 2
	}
	return 1
}

// ranked is one retrieved document.
type ranked struct {
	doc    *Document
	score  float64
	opened bool
	read   []int // sentence indexes the provider could read
}

// candidate is a passage that bears on a fact.
type candidate struct {
	fact, rank, sent int
	j                judgement
}

// item is one evidence item being assembled.
type item struct {
	id    string
	rank  int
	sent  int
	rel   claims.Relationship
	facts []int
	why   string
}

// trace is the Raw payload: how the answer was produced.
type trace struct {
	Model      string       `json:"model"`
	Collection string       `json:"collection"`
	Documents  int          `json:"documents"`
	Candidates int          `json:"candidates"`
	Facts      []traceFact  `json:"facts"`
	Results    []traceHit   `json:"results"`
	Evidence   []traceEvid  `json:"evidence"`
	Weights    []traceScore `json:"weights"`
}

type traceFact struct {
	Statement string   `json:"statement"`
	KeyTerms  []string `json:"keyTerms"`
	Numbers   []string `json:"numbers"`
	Negated   bool     `json:"negated"`
}

type traceHit struct {
	URL    string  `json:"url"`
	Score  float64 `json:"bm25"`
	Opened bool    `json:"opened"`
	Read   int     `json:"sentencesRead"`
}

type traceEvid struct {
	ID     string `json:"id"`
	Facts  []int  `json:"facts"`
	Reason string `json:"rule"`
}

type traceScore struct {
	Fact       int     `json:"fact"`
	Support    float64 `json:"supportWeight"`
	Contradict float64 `json:"contradictWeight"`
	Status     string  `json:"status"`
}

// Search answers q from the collection: one search action (the atomic
// facts as queries, the retrieved documents as sources) and one open_page
// action per document it reads in full, within q's tool budget.
func (p *Provider) Search(ctx context.Context, q *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	if err := ctx.Err(); err != nil {
		kind := claims.ProviderFailed
		if errors.Is(err, context.DeadlineExceeded) {
			kind = claims.ProviderTimeout
		}
		return nil, &claims.ProviderError{Kind: kind, Err: fmt.Errorf("corpus: %w", err)}
	}
	if q == nil || strings.TrimSpace(q.Claim) == "" {
		return nil, &claims.ProviderError{Kind: claims.ProviderFailed, Err: errors.New("corpus: empty query")}
	}
	now := q.Now
	if now.IsZero() {
		now = p.opts.Now()
	}
	tier, _ := claims.TierByName(q.Tier)
	budget := firstPositive(q.MaxToolActions, tier.MaxToolActions, 1)
	maxEvidence := firstPositive(q.MaxSources, tier.MaxCitedSources, 8)

	limits := []string{
		fmt.Sprintf("Results come from an %s of %d documents served on loopback, not the live web.", p.c.label, len(p.c.docs)),
		"Stances come from a transparent lexical rule (key terms, numbers, negation), not from reading comprehension; rephrased or implicit statements are not recognised.",
	}
	cands, notes := p.candidates(q)
	limits = append(limits, notes...)

	// Atomic facts and retrieval.
	var facts []fact
	var queries []string
	lx := p.c.lex
	parts := lx.splitFacts(q.Claim)
	if len(parts) > MaxFacts {
		limits = append(limits, fmt.Sprintf("The claim has %d parts; parts %d to %d were checked together as one statement.", len(parts), MaxFacts, len(parts)))
		parts = append(parts[:MaxFacts-1], strings.Join(parts[MaxFacts-1:], "; "))
	}
	for _, s := range parts {
		facts = append(facts, lx.newFact(s))
		queries = append(queries, s)
	}
	results := p.retrieve(facts, cands)

	// The search action and the pages opened within the budget.
	search := claims.SearchCall{ID: "corpus_search_1", Action: claims.ActionSearch, Queries: queries, Sources: []claims.SourceRef{}}
	for _, r := range results {
		search.Sources = append(search.Sources, claims.SourceRef{URL: r.doc.URL, Title: r.doc.Title})
	}
	calls := []claims.SearchCall{search}
	p.snippets(results, facts)
	for _, i := range openOrder(lx, results, facts) {
		if len(calls) >= budget {
			break
		}
		r := &results[i]
		r.opened = true
		r.read = make([]int, len(r.doc.sentences))
		for k := range r.read {
			r.read[k] = k
		}
		calls = append(calls, claims.SearchCall{ID: fmt.Sprintf("corpus_open_%d", len(calls)+1), Action: claims.ActionOpenPage, URL: r.doc.URL})
	}
	if opened := len(calls) - 1; opened < len(results) {
		limits = append(limits, fmt.Sprintf("The tool budget of %d action(s) allowed opening %d of %d retrieved documents; the others were judged only from their search snippets.", budget, opened, len(results)))
	}

	// Judge every readable sentence against every fact.
	var stance, context []candidate
	for fi, f := range facts {
		for ri, r := range results {
			var sup, con bool
			bestCtx := candidate{rank: -1}
			for _, si := range r.read {
				j := lx.judge(f, r.doc.sentences[si].text)
				switch {
				case j.rel == claims.Supports && !sup:
					sup = true
					stance = append(stance, candidate{fi, ri, si, j})
				case j.rel == claims.Contradicts && !con:
					con = true
					stance = append(stance, candidate{fi, ri, si, j})
				case j.rel == claims.Context && (bestCtx.rank < 0 || j.coverage > bestCtx.j.coverage):
					bestCtx = candidate{fi, ri, si, j}
				}
			}
			if !sup && !con && bestCtx.rank >= 0 {
				context = append(context, bestCtx)
			}
		}
	}
	tallies := tally(facts, stance, results)
	items, dropped := selectEvidence(facts, stance, context, tallies, maxEvidence)
	if dropped > 0 {
		limits = append(limits, fmt.Sprintf("%d further passage(s) were left out by the limit of %d evidence items.", dropped, maxEvidence))
	}

	resp := p.assemble(q, now, facts, results, items, tallies)
	resp.SearchCalls = calls
	resp.Analysis.Limitations = append(limits, resp.Analysis.Limitations...)

	tr := trace{Model: Model, Collection: p.c.label, Documents: len(p.c.docs), Candidates: len(cands)}
	for _, f := range facts {
		tf := traceFact{Statement: f.statement, KeyTerms: f.keys, Numbers: []string{}, Negated: f.negated}
		for _, n := range f.nums {
			tf.Numbers = append(tf.Numbers, fmtNum(n)+unitSuffix(n.unit))
		}
		tr.Facts = append(tr.Facts, tf)
	}
	for _, r := range results {
		tr.Results = append(tr.Results, traceHit{URL: r.doc.URL, Score: math.Round(r.score*1e4) / 1e4, Opened: r.opened, Read: len(r.read)})
	}
	for _, it := range items {
		tr.Evidence = append(tr.Evidence, traceEvid{ID: it.id, Facts: it.facts, Reason: it.why})
	}
	tr.Weights = resp.weights
	raw, _ := json.Marshal(tr) // plain data: cannot fail
	resp.Raw = raw
	key, _ := json.Marshal(struct {
		Q *claims.ProviderQuery
		N time.Time
		D string
	}{q, now, p.c.digest})
	resp.ResponseID = "corpus_" + shortHash(string(key))[:24]
	p.log.DebugContext(ctx, "corpus: search", "claim", q.Claim, "facts", len(facts), "results", len(results), "evidence", len(items), "status", resp.Analysis.Status)
	return &resp.ProviderResponse, nil
}

func firstPositive(vs ...int) int {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}

// candidates applies the domain lists, the source policy and asOf.
func (p *Provider) candidates(q *claims.ProviderQuery) ([]int, []string) {
	var notes []string
	allowed, blocked := cleanDomains(q.AllowedDomains), cleanDomains(q.BlockedDomains)
	var asOfEnd time.Time
	if q.AsOf != nil {
		y, m, d := q.AsOf.UTC().Date()
		asOfEnd = time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	}
	var out []int
	afterAsOf, byDomain := 0, 0
	for i, d := range p.c.docs {
		if (len(allowed) > 0 && !matchesAny(d.Host, allowed)) || matchesAny(d.Host, blocked) {
			byDomain++
			continue
		}
		if q.SourcePolicy == "official_only" && d.Kind != KindOfficial {
			continue
		}
		if !asOfEnd.IsZero() && d.PublishedAt != nil && !d.PublishedAt.Before(asOfEnd) {
			afterAsOf++
			continue
		}
		out = append(out, i)
	}
	if len(allowed) > 0 && byDomain == len(p.c.docs) {
		notes = append(notes, "No document of the corpus is on the allowed domains.")
	}
	if afterAsOf > 0 {
		notes = append(notes, fmt.Sprintf("%d document(s) published after asOf %s were not searched.", afterAsOf, q.AsOf.UTC().Format(time.DateOnly)))
	}
	if q.SourcePolicy == "official_only" {
		notes = append(notes, "Source policy official_only: only documents of kind official were searched.")
	}
	if j := strings.TrimSpace(q.Jurisdiction); j != "" {
		notes = append(notes, fmt.Sprintf("The corpus provider does not distinguish jurisdictions; the documents were not filtered for %q.", j))
	}
	if l := strings.ToLower(q.Language); l != "" && l != "auto" && !strings.HasPrefix(l, "en") {
		notes = append(notes, fmt.Sprintf("The corpus provider writes English only; the response language %q was not honoured.", q.Language))
	}
	return out, notes
}

func cleanDomains(in []string) []string {
	var out []string
	for _, d := range in {
		if d = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(d), ".")); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// matchesAny reports whether host equals or is a subdomain of a domain.
func matchesAny(host string, domains []string) bool {
	for _, d := range domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// retrieve runs one BM25 query per fact and merges the lists round-robin
// (best of each query first), without duplicates, up to MaxResults.
func (p *Provider) retrieve(facts []fact, cands []int) []ranked {
	var lists [][]hit
	for _, f := range facts {
		lists = append(lists, p.c.index.search(f.query, cands, p.opts.SearchResults))
	}
	seen := map[int]bool{}
	var out []ranked
	for depth := 0; len(out) < p.opts.MaxResults; depth++ {
		more := false
		for _, l := range lists {
			if depth >= len(l) {
				continue
			}
			more = true
			h := l[depth]
			if !seen[h.doc] && len(out) < p.opts.MaxResults {
				seen[h.doc] = true
				out = append(out, ranked{doc: p.c.docs[h.doc], score: h.score})
			}
		}
		if !more {
			break
		}
	}
	return out
}

// snippets sets what the provider can read of each result before opening
// it: its search snippet, the SnippetSentences sentences that match the
// most query weight (BM25 idf of the query terms they contain).
func (p *Provider) snippets(results []ranked, facts []fact) {
	query := map[string]bool{}
	for _, f := range facts {
		for _, t := range f.query {
			query[t] = true
		}
	}
	for i := range results {
		r := &results[i]
		type scored struct {
			i int
			s float64
		}
		var ss []scored
		for k, s := range r.doc.sentences {
			var sum float64
			seen := map[string]bool{}
			for _, t := range p.c.lex.tokenize(s.text) {
				if query[t.term] && !seen[t.term] {
					seen[t.term] = true
					sum += p.c.index.idf(t.term)
				}
			}
			if sum > 0 {
				ss = append(ss, scored{k, sum})
			}
		}
		sort.SliceStable(ss, func(a, b int) bool { return ss[a].s > ss[b].s })
		r.read = nil
		for k := 0; k < len(ss) && k < p.opts.SnippetSentences; k++ {
			r.read = append(r.read, ss[k].i)
		}
		sort.Ints(r.read)
	}
}

// openOrder is the order in which results are opened: first those whose
// snippet takes a stance on a fact, then those whose snippet is context,
// then the rest, each group by rank.
func openOrder(lx *lexicon, results []ranked, facts []fact) []int {
	prio := make([]int, len(results))
	order := make([]int, len(results))
	for i, r := range results {
		order[i] = i
		prio[i] = 2
		for _, si := range r.read {
			for _, f := range facts {
				switch lx.judge(f, r.doc.sentences[si].text).rel {
				case claims.Supports, claims.Contradicts:
					prio[i] = 0
				case claims.Context:
					prio[i] = min(prio[i], 1)
				}
			}
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return prio[order[a]] < prio[order[b]] })
	return order
}

// tallyT is the verdict input of one fact: the weight of every document
// that takes a side, from every passage read (reported or not).
type tallyT struct {
	sup, con map[int]float64 // result rank → weight
	ws, wc   float64
	status   claims.Status
	conf     float64
}

// tally applies the weights (kindWeight, halved for a document more than
// five years older than the newest document taking a side on the fact)
// and the verdict rule to each fact.
func tally(facts []fact, stance []candidate, results []ranked) []tallyT {
	out := make([]tallyT, len(facts))
	for fi := range facts {
		t := &out[fi]
		t.sup, t.con = map[int]float64{}, map[int]float64{}
		var newest time.Time
		for _, c := range stance {
			if pub := results[c.rank].doc.PublishedAt; c.fact == fi && pub != nil && pub.After(newest) {
				newest = *pub
			}
		}
		for _, c := range stance {
			if c.fact != fi {
				continue
			}
			d := results[c.rank].doc
			w := kindWeight(d.Kind)
			if d.PublishedAt != nil && !newest.IsZero() && d.PublishedAt.Before(newest.AddDate(-5, 0, 0)) {
				w /= 2
			}
			if c.j.rel == claims.Supports {
				t.sup[c.rank] = w
			} else {
				t.con[c.rank] = w
			}
		}
		for _, w := range t.sup {
			t.ws += w
		}
		for _, w := range t.con {
			t.wc += w
		}
		t.status, t.conf = verdict(t.ws, t.wc)
	}
	return out
}

// selectEvidence picks at most max evidence items so that the reported
// evidence shows each verdict: first, for every fact, the heaviest passage
// of its winning side (both sides when ambiguous); then the heaviest of its
// losing side; then the other stance passages, heaviest first; then one
// context passage per document that gave no stance passage. It returns how
// many stance passages were left out.
func selectEvidence(facts []fact, stance, context []candidate, tallies []tallyT, max int) ([]*item, int) {
	weight := func(c candidate) float64 {
		if c.j.rel == claims.Supports {
			return tallies[c.fact].sup[c.rank]
		}
		return tallies[c.fact].con[c.rank]
	}
	order := make([]int, len(stance))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ca, cb := stance[order[a]], stance[order[b]]
		if wa, wb := weight(ca), weight(cb); wa != wb {
			return wa > wb
		}
		return ca.rank < cb.rank
	})
	var items []*item
	byKey := map[string]*item{}
	taken := make([]bool, len(stance))
	add := func(c candidate) bool {
		key := fmt.Sprintf("%d/%d/%s", c.rank, c.sent, c.j.rel)
		if it, ok := byKey[key]; ok {
			if !containsInt(it.facts, c.fact) {
				it.facts = append(it.facts, c.fact)
			}
			return true
		}
		if len(items) >= max {
			return false
		}
		it := &item{id: fmt.Sprintf("e%d", len(items)+1), rank: c.rank, sent: c.sent, rel: c.j.rel, facts: []int{c.fact}, why: c.j.reason}
		byKey[key] = it
		items = append(items, it)
		return true
	}
	pick := func(fi int, rel claims.Relationship) {
		for _, k := range order {
			if c := stance[k]; c.fact == fi && c.j.rel == rel && !taken[k] {
				taken[k] = add(c)
				return
			}
		}
	}
	sides := func(st claims.Status) (win, lose []claims.Relationship) {
		switch st {
		case claims.StatusConfirmed:
			return []claims.Relationship{claims.Supports}, []claims.Relationship{claims.Contradicts}
		case claims.StatusContradicted:
			return []claims.Relationship{claims.Contradicts}, []claims.Relationship{claims.Supports}
		case claims.StatusAmbiguous:
			return []claims.Relationship{claims.Supports, claims.Contradicts}, nil
		}
		return nil, nil
	}
	for fi := range facts {
		win, _ := sides(tallies[fi].status)
		for _, rel := range win {
			pick(fi, rel)
		}
	}
	for fi := range facts {
		_, lose := sides(tallies[fi].status)
		for _, rel := range lose {
			pick(fi, rel)
		}
	}
	for _, k := range order {
		if !taken[k] {
			taken[k] = add(stance[k])
		}
	}
	dropped := 0
	for _, t := range taken {
		if !t {
			dropped++
		}
	}
	used := map[int]bool{}
	for _, it := range items {
		used[it.rank] = true
	}
	sort.SliceStable(context, func(a, b int) bool { return context[a].rank < context[b].rank })
	for _, c := range context {
		if !used[c.rank] {
			used[c.rank] = true
			add(c) // context decides nothing: left out silently when full
		}
	}
	return items, dropped
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// assembled is a response under construction.
type assembled struct {
	claims.ProviderResponse
	weights []traceScore
}

// assemble writes the analysis: evidence items, facts with the tallied
// verdicts, conflicts, overall status and conclusion.
func (p *Provider) assemble(q *claims.ProviderQuery, now time.Time, facts []fact, results []ranked, items []*item, tallies []tallyT) *assembled {
	a := &assembled{}
	a.Provider, a.Model = ProviderName, Model
	a.Citations = []claims.Citation{}
	an := &a.Analysis
	an.Evidence = []claims.ProviderEvidence{}
	an.Conflicts = []claims.Conflict{}
	an.Limitations = []string{}

	var freshStart time.Time
	if q.FreshnessHours > 0 {
		freshStart = now.Add(-time.Duration(q.FreshnessHours) * time.Hour)
	}
	stale := 0
	cited := map[string]bool{}
	for _, it := range items {
		r := results[it.rank]
		d := r.doc
		how := "search snippet"
		if r.opened {
			how = "opened page"
		}
		reason := fmt.Sprintf("%s source (%s); BM25 rank %d of %d; %s", d.Kind, d.Publisher, it.rank+1, len(results), how)
		if pub := d.Published(); pub != nil {
			reason += "; published " + *pub
		} else {
			reason += "; no publication date"
		}
		if !freshStart.IsZero() && (d.PublishedAt == nil || d.PublishedAt.Before(freshStart)) {
			reason += fmt.Sprintf("; outside the %d-hour freshness window", q.FreshnessHours)
			stale++
		}
		reason += "; lexical rule: " + it.why
		an.Evidence = append(an.Evidence, claims.ProviderEvidence{
			ID:            it.id,
			URL:           d.URL,
			Title:         d.Title,
			Publisher:     d.Publisher,
			PublishedAt:   d.Published(),
			Excerpt:       d.sentences[it.sent].text,
			Relationship:  it.rel,
			SourceType:    d.Kind,
			QualityReason: reason,
		})
		if it.rel != claims.Context && !cited[d.URL] {
			cited[d.URL] = true
			a.Citations = append(a.Citations, claims.Citation{URL: d.URL, Title: d.Title})
		}
	}
	if stale > 0 {
		an.Limitations = append(an.Limitations, fmt.Sprintf("%d of %d evidence document(s) are older than the %d-hour freshness window or undated; the corpus is a static collection.", stale, len(items), q.FreshnessHours))
	}
	if len(results) == 0 {
		an.Limitations = append(an.Limitations, "The search found no document matching the claim.")
	}

	var statuses []claims.Status
	for fi, f := range facts {
		t := tallies[fi]
		ids := []string{}
		var supIDs, conIDs []string
		for _, it := range items {
			if !containsInt(it.facts, fi) {
				continue
			}
			ids = append(ids, it.id)
			switch it.rel {
			case claims.Supports:
				supIDs = append(supIDs, it.id)
			case claims.Contradicts:
				conIDs = append(conIDs, it.id)
			}
		}
		st, conf := t.status, t.conf
		expl := fmt.Sprintf("%d supporting document(s) (weight %s) and %d contradicting document(s) (weight %s) in the corpus; %s.",
			len(t.sup), fmtWeight(t.ws), len(t.con), fmtWeight(t.wc), ruleText(st, t.ws, t.wc))
		if hidden := len(t.sup) + len(t.con) - len(supIDs) - len(conIDs); hidden > 0 {
			expl += fmt.Sprintf(" Passages of %d of these document(s) are not listed because of the evidence limit.", hidden)
		}
		if st != claims.StatusInsufficientEvidence && len(supIDs)+len(conIDs) == 0 {
			st, conf = claims.StatusInsufficientEvidence, 0
			expl += " None of them could be listed, so the statement is reported as insufficient evidence."
		}
		sensitive := claims.TimeSensitive(f.statement)
		an.AtomicFacts = append(an.AtomicFacts, claims.ProviderFact{Statement: f.statement, Status: st, Confidence: conf, Explanation: expl,
			EvidenceIDs: ids, TimeSensitive: &sensitive})
		statuses = append(statuses, st)
		a.weights = append(a.weights, traceScore{Fact: fi, Support: t.ws, Contradict: t.wc, Status: string(st)})
		if q.IncludeConflicts && len(supIDs) > 0 && len(conIDs) > 0 {
			an.Conflicts = append(an.Conflicts, claims.Conflict{
				Summary:     fmt.Sprintf("Sources disagree on %q: %d supporting and %d contradicting document(s).", f.statement, len(t.sup), len(t.con)),
				EvidenceIDs: append(append([]string{}, supIDs...), conIDs...),
			})
		}
	}
	an.Status = overall(statuses)
	an.Conclusion = conclusion(an.Status, an.AtomicFacts)
	return a
}

// verdict is the rule table of one fact, from the support weight ws and
// contradiction weight wc (official and academic 3, reference and news 2,
// other kinds 1; halved for a document more than five years older than the
// newest one that takes a side).
//
//	ws > 0, wc = 0       confirmed
//	wc > 0, ws = 0       contradicted
//	ws ≥ 2·wc > 0        confirmed (conflict reported)
//	wc ≥ 2·ws > 0        contradicted (conflict reported)
//	both, neither twice  ambiguous
//	neither              insufficient_evidence
//
// Confidence is 0.5 + 0.4·(win−lose)/(win+lose)·min(1, win/6) for a decided
// fact, 0.3 for ambiguous and 0 for insufficient evidence.
func verdict(ws, wc float64) (claims.Status, float64) {
	decided := func(win, lose float64) float64 {
		c := 0.5 + 0.4*(win-lose)/(win+lose)*math.Min(1, win/6)
		return math.Round(c*100) / 100
	}
	switch {
	case ws == 0 && wc == 0:
		return claims.StatusInsufficientEvidence, 0
	case wc == 0 || ws >= 2*wc:
		return claims.StatusConfirmed, decided(ws, wc)
	case ws == 0 || wc >= 2*ws:
		return claims.StatusContradicted, decided(wc, ws)
	}
	return claims.StatusAmbiguous, 0.3
}

func ruleText(st claims.Status, ws, wc float64) string {
	switch {
	case st == claims.StatusInsufficientEvidence:
		return "no passage states or denies it in the words of the claim"
	case st == claims.StatusAmbiguous:
		return "neither side outweighs the other twice over"
	case ws > 0 && wc > 0:
		return "one side outweighs the other at least twice over"
	}
	return "all passages found agree"
}

func fmtWeight(w float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", w), "0"), ".")
}

// overall derives the claim's status from its facts: all confirmed →
// confirmed; some confirmed → partially_confirmed; none confirmed and some
// contradicted → contradicted; else any ambiguous → ambiguous; else
// insufficient_evidence.
func overall(st []claims.Status) claims.Status {
	count := map[claims.Status]int{}
	for _, s := range st {
		count[s]++
	}
	switch {
	case len(st) > 0 && count[claims.StatusConfirmed] == len(st):
		return claims.StatusConfirmed
	case count[claims.StatusConfirmed] > 0:
		return claims.StatusPartiallyConfirmed
	case count[claims.StatusContradicted] > 0:
		return claims.StatusContradicted
	case count[claims.StatusAmbiguous] > 0:
		return claims.StatusAmbiguous
	}
	return claims.StatusInsufficientEvidence
}

func conclusion(st claims.Status, facts []claims.ProviderFact) string {
	lead := map[claims.Status]string{
		claims.StatusConfirmed:            "The corpus documents found support every part of the claim.",
		claims.StatusPartiallyConfirmed:   "The corpus documents found support some parts of the claim but not all of it.",
		claims.StatusContradicted:         "The corpus documents found contradict the claim.",
		claims.StatusAmbiguous:            "The corpus documents found disagree without settling the claim.",
		claims.StatusInsufficientEvidence: "The corpus documents found neither support nor contradict the claim.",
	}[st]
	if len(facts) < 2 {
		return lead
	}
	parts := []string{lead}
	for i, f := range facts {
		parts = append(parts, fmt.Sprintf("Part %d (%q): %s.", i+1, f.Statement, strings.ReplaceAll(string(f.Status), "_", " ")))
	}
	return strings.Join(parts, " ")
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
