package claims

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/assaykit/assay/internal/urlnorm"
	"github.com/assaykit/assay/snapshot"
)

// srcWork is a provider source being reconciled.
type srcWork struct {
	ProviderSource
	key       string
	opened    bool // an open_page or find_in_page action read it
	consulted bool
}

// evWork is an evidence item being reconciled.
type evWork struct {
	Evidence
	key        string
	host       string
	reg        string
	admitted   bool
	stale      bool
	dated      bool
	referenced bool       // by a fact of the model (before the cap)
	quote      QuoteCheck // the outcome of the quote check
	check      string     // the first clause of qualityReason: the check, as a sentence
	counted    bool       // a fact's verdict rests on it
	uncounted  []string   // why it did not count toward a fact that cites it
	index      int
	notes      []string // appended to qualityReason
}

// checkClause is the first clause of qualityReason: exactly one of "quote
// verified on …", "quote not found on …" and "not checked, because …".
func (ev *evWork) checkClause() string {
	if ev.quote == QuoteNotChecked {
		return "not checked, because " + ev.check
	}
	return ev.check
}

// counts reports whether the item may count toward a fact's verdict: it is
// matched to a provider source, admitted by the source policy, supports or
// contradicts, and its quote was verified on its page.
func (ev *evWork) counts() bool {
	return ev.ProviderSourceMatched && ev.admitted && ev.quote == QuoteVerified &&
		(ev.Relationship == Supports || ev.Relationship == Contradicts)
}

// draft is a result being built from one provider response.
type draft struct {
	eff         *Effective
	resp        *ProviderResponse
	returnedAt  time.Time
	sources     []*srcWork
	srcByKey    map[string]*srcWork
	evidence    []*evWork
	evByID      map[string]*evWork
	facts       []AtomicFact // model facts, evidence ids mapped to survivors
	sensitive   []bool       // per fact: its truth changes over time (see TimeSensitive)
	conflicts   []Conflict
	limitations []string
	snapshots   []*snapshot.Snapshot
	pageIDs     []string // every page fetched for the checks, listed or not (Record.PageIDs)
	offline     bool     // the provider searched a local collection, not the web
	checkLimit  int      // pages this draft may capture (its share of the tier's cap); 0: the tier's cap
}

func (d *draft) limit(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(d.limitations, msg) {
		d.limitations = append(d.limitations, msg)
	}
}

func sourceID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "src_" + hex.EncodeToString(sum[:])[:20]
}

func appendUnique(list []string, items ...string) []string {
	for _, it := range items {
		if it != "" && !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// domainFilter says why a host is excluded, or "".
func domainFilter(eff *Effective, host string) string {
	if d := firstMatch(host, eff.BlockedDomains); d != "" {
		return "blocked"
	}
	if len(eff.AllowedDomains) > 0 && !urlnorm.MatchesAny(host, eff.AllowedDomains) {
		return "outside"
	}
	return ""
}

// reconcile turns a provider response into a draft: provider sources from
// the search calls, evidence matched, filtered, deduplicated, classified,
// checked for freshness and capped, and facts and conflicts pointing only at
// surviving evidence.
func reconcile(eff *Effective, resp *ProviderResponse, returnedAt time.Time, cls *classifier, sourceName string) *draft {
	d := &draft{eff: eff, resp: resp, returnedAt: returnedAt, srcByKey: map[string]*srcWork{}, evByID: map[string]*evWork{}}
	d.buildSources(sourceName)
	d.buildEvidence(cls)
	return d
}

func (d *draft) buildSources(sourceName string) {
	var invalid, blocked, outside int
	for _, call := range d.resp.SearchCalls {
		action := call.Action
		switch action {
		case "":
			action = ActionSearch
		case "find":
			action = ActionFindInPage
		}
		cands := append([]SourceRef(nil), call.Sources...)
		if call.URL != "" {
			cands = append(cands, SourceRef{URL: call.URL})
		}
		queries := cleanAll(call.Queries)
		for _, c := range cands {
			canon, err := urlnorm.Canonical(c.URL)
			if err != nil {
				invalid++
				continue
			}
			key, _ := urlnorm.Key(canon)
			switch domainFilter(d.eff, urlnorm.Host(canon)) {
			case "blocked":
				blocked++
				continue
			case "outside":
				outside++
				continue
			}
			s := d.srcByKey[key]
			if s == nil {
				s = &srcWork{key: key, ProviderSource: ProviderSource{
					SourceID: sourceID(key), URL: canon, Provider: sourceName,
					SearchCallIDs: []string{}, Actions: []string{}, Queries: []string{}, EvidenceIDs: []string{},
				}}
				d.srcByKey[key] = s
				d.sources = append(d.sources, s)
			}
			if t := clean(c.Title); t != "" && s.Title == nil {
				s.Title = &t
			}
			s.SearchCallIDs = appendUnique(s.SearchCallIDs, call.ID)
			s.Actions = appendUnique(s.Actions, action)
			s.Queries = appendUnique(s.Queries, queries...)
			if action != ActionSearch {
				s.opened = true
			}
		}
	}
	if blocked > 0 {
		d.limit("%s reported by the provider on blocked domains were removed.", plural(blocked, "source", "sources"))
	}
	if outside > 0 {
		d.limit("%s reported by the provider outside allowedDomains were removed.", plural(outside, "source", "sources"))
	}
	if invalid > 0 {
		d.limit("%s reported by the provider had no valid http(s) URL and were ignored.", plural(invalid, "source", "sources"))
	}
}

func normExcerpt(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// buildEvidence turns the provider's evidence into the result's: filtered,
// deduplicated, classified and matched (admitEvidence), capped at
// maxSources (capEvidence), checked for freshness, and with facts and
// conflicts pointing only at surviving items (mapReferences).
func (d *draft) buildEvidence(cls *classifier) {
	kept, remap := d.admitEvidence(cls)
	d.capEvidence(kept, remap)
	d.checkFreshness()
	d.mapReferences(remap)
}

// evidenceDrops counts the evidence items admitEvidence left out, by
// reason, for the limitations.
type evidenceDrops struct {
	invalid, blocked, outside, dupContent, dupIDs int
}

// admitEvidence builds an item for every usable provider evidence item
// and returns them with remap, which sends a model evidence id to the id
// of the item that stands for it, or to "" when the item was dropped.
func (d *draft) admitEvidence(cls *classifier) ([]*evWork, map[string]string) {
	remap := map[string]string{}
	seenID := map[string]bool{}
	byContent := map[string]*evWork{}
	var drops evidenceDrops
	var kept []*evWork
	for i, pe := range d.resp.Analysis.Evidence {
		origID, id, first := evidenceID(pe.ID, i, seenID)
		if !first {
			drops.dupIDs++
		}
		record := func(to string) {
			if first {
				remap[origID] = to
			}
		}
		ev, why := d.newEvidence(pe, i, id, cls)
		if ev == nil {
			drops.add(why)
			record("")
			continue
		}
		ck := ev.key + "\x00" + string(ev.Relationship) + "\x00" + normExcerpt(ev.Excerpt)
		if prev := byContent[ck]; prev != nil {
			drops.dupContent++
			record(prev.ID)
			continue
		}
		byContent[ck] = ev
		record(id)
		kept = append(kept, ev)
	}
	d.dropLimitations(drops)
	return kept, remap
}

// evidenceID is the id of the i-th evidence item: the model's (or "e<i+1>"
// when it gave none), renamed "<id>_<n>" when an earlier item took it.
// first is false for a renamed item.
func evidenceID(raw string, i int, seen map[string]bool) (origID, id string, first bool) {
	origID = clean(raw)
	if origID == "" {
		origID = fmt.Sprintf("e%d", i+1)
	}
	first = !seen[origID]
	id = origID
	for n := 2; seen[id]; n++ {
		id = fmt.Sprintf("%s_%d", origID, n)
	}
	seen[id] = true
	return origID, id, first
}

// newEvidence builds the item for one provider evidence item, or returns
// nil and why it was dropped: "invalid" (no http(s) URL), or "blocked"
// or "outside" (see domainFilter).
func (d *draft) newEvidence(pe ProviderEvidence, i int, id string, cls *classifier) (*evWork, string) {
	canon, err := urlnorm.Canonical(clean(pe.URL))
	if err != nil {
		return nil, "invalid"
	}
	host := urlnorm.Host(canon)
	if why := domainFilter(d.eff, host); why != "" {
		return nil, why
	}
	key, _ := urlnorm.Key(canon)
	rel := Relationship(strings.ToLower(strings.TrimSpace(string(pe.Relationship))))
	if rel != Supports && rel != Contradicts && rel != Context {
		rel = Context
	}
	var published *string
	if pe.PublishedAt != nil {
		if p := clean(*pe.PublishedAt); p != "" {
			published = &p
		}
	}
	ev := &evWork{
		Evidence: Evidence{
			ID: id, URL: canon, Title: clean(pe.Title), Publisher: clean(pe.Publisher),
			PublishedAt: published, Excerpt: clean(pe.Excerpt), Relationship: rel,
		},
		key: key, host: host, reg: urlnorm.Registrable(host), index: i,
	}
	src := d.srcByKey[key]
	if ev.Title == "" && src != nil && src.Title != nil {
		ev.Title = *src.Title
	}
	if ev.Publisher == "" {
		ev.Publisher = ev.reg
	}
	c := cls.classify(canon, d.eff)
	ev.SourceType, ev.QualityReason = c.Type, c.Reason
	ev.admitted = admitted(d.eff.SourcePolicy, c.Type)
	if src != nil {
		ev.ProviderSourceMatched = true
		ev.Consulted = true
	}
	return ev, ""
}

func (x *evidenceDrops) add(why string) {
	switch why {
	case "invalid":
		x.invalid++
	case "blocked":
		x.blocked++
	case "outside":
		x.outside++
	}
}

// dropLimitations reports what admitEvidence left out.
func (d *draft) dropLimitations(x evidenceDrops) {
	if x.dupIDs > 0 {
		d.limit("The provider reused %s; the later items were renamed and are not referenced by any fact.", plural(x.dupIDs, "evidence id", "evidence ids"))
	}
	if x.dupContent > 0 {
		d.limit("%s duplicated earlier items (same page, relationship and excerpt) and were merged.", plural(x.dupContent, "evidence item", "evidence items"))
	}
	if x.blocked > 0 {
		d.limit("%s on blocked domains were removed.", plural(x.blocked, "evidence item", "evidence items"))
	}
	if x.outside > 0 {
		d.limit("%s outside allowedDomains were removed.", plural(x.outside, "evidence item", "evidence items"))
	}
	if x.invalid > 0 {
		d.limit("%s without a valid http(s) URL were removed.", plural(x.invalid, "evidence item", "evidence items"))
	}
}

// capEvidence keeps at most MaxSources distinct pages, chosen in priority
// order (referenced by a fact of the model, matched to a provider source,
// admitted by the policy, then the provider's order), and clears the
// remap entries of the items it drops.
func (d *draft) capEvidence(kept []*evWork, remap map[string]string) {
	keptByID := map[string]*evWork{}
	for _, ev := range kept {
		keptByID[ev.ID] = ev
	}
	for _, f := range d.resp.Analysis.AtomicFacts {
		for _, id := range f.EvidenceIDs {
			if ev := keptByID[remap[clean(id)]]; ev != nil {
				ev.referenced = true
			}
		}
	}
	order := slices.Clone(kept)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.referenced != b.referenced {
			return a.referenced
		}
		if a.ProviderSourceMatched != b.ProviderSourceMatched {
			return a.ProviderSourceMatched
		}
		if a.admitted != b.admitted {
			return a.admitted
		}
		return a.index < b.index
	})
	pages := map[string]bool{}
	dropped := map[*evWork]bool{}
	for _, ev := range order {
		if !pages[ev.key] && len(pages) >= d.eff.MaxSources {
			dropped[ev] = true
			continue
		}
		pages[ev.key] = true
	}
	if len(dropped) > 0 {
		d.limit("%s beyond the %d-source limit were left out.", plural(len(dropped), "evidence item", "evidence items"), d.eff.MaxSources)
	}
	for _, ev := range kept {
		if dropped[ev] {
			for from, to := range remap {
				if to == ev.ID {
					remap[from] = ""
				}
			}
			continue
		}
		d.evidence = append(d.evidence, ev)
		d.evByID[ev.ID] = ev
	}
}

// mapReferences builds the facts and conflicts of the model with only the
// ids of surviving items.
func (d *draft) mapReferences(remap map[string]string) {
	var unknown int
	mapIDs := func(in []string) []string {
		out := []string{}
		for _, id := range in {
			to, ok := remap[clean(id)]
			if !ok {
				unknown++
			}
			if to != "" && !slices.Contains(out, to) {
				out = append(out, to)
			}
		}
		return out
	}
	for _, f := range d.resp.Analysis.AtomicFacts {
		stmt := clean(f.Statement)
		if stmt == "" {
			continue
		}
		mf := AtomicFact{Statement: stmt, Status: f.Status, Confidence: f.Confidence, Explanation: clean(f.Explanation)}
		mf.EvidenceIDs = mapIDs(f.EvidenceIDs)
		d.facts = append(d.facts, mf)
		d.sensitive = append(d.sensitive, d.timeSensitive(stmt, f.TimeSensitive))
	}
	if d.eff.IncludeConflicts {
		for _, c := range d.resp.Analysis.Conflicts {
			ids := mapIDs(c.EvidenceIDs)
			if sum := clean(c.Summary); sum != "" && len(ids) >= 2 {
				d.conflicts = append(d.conflicts, Conflict{Summary: sum, EvidenceIDs: ids})
			}
		}
	}
	if unknown > 0 {
		d.limit("%s to evidence the provider never listed were removed.", plural(unknown, "reference", "references"))
	}
}

// parsePublished reads a publication date in the forms providers use and
// returns the earliest and latest instants it may stand for.
func parsePublished(s string) (earliest, latest time.Time, ok bool) {
	s = strings.TrimSpace(s)
	for _, l := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), t.UTC(), true
		}
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, t.AddDate(0, 0, 1).Add(-time.Nanosecond), true
	}
	if t, err := time.Parse("2006-01", s); err == nil {
		return t, t.AddDate(0, 1, 0).Add(-time.Nanosecond), true
	}
	if t, err := time.Parse("2006", s); err == nil {
		return t, t.AddDate(1, 0, 0).Add(-time.Nanosecond), true
	}
	return time.Time{}, time.Time{}, false
}

// timeSensitive decides whether a fact's truth changes over time: the
// provider's mark, else the wording of the claim; the fact's own wording
// always counts (see TimeSensitive and ProviderFact.TimeSensitive).
func (d *draft) timeSensitive(statement string, mark *bool) bool {
	if TimeSensitive(statement) {
		return true
	}
	if mark != nil {
		return *mark
	}
	return TimeSensitive(d.eff.Claim)
}

// checkFreshness marks evidence published before the freshness window that
// ends at asOf (end of that day) or, without asOf, at the time the provider
// answered. See the package documentation for how stale evidence counts.
// Limitations name the window by its length, never by the clock, so that
// identical calls give identical prose.
func (d *draft) checkFreshness() {
	eff := d.eff
	ref := d.returnedAt
	// The prose names the window's end without the clock, so that two
	// otherwise identical verifications state the same limitations; the
	// instant is the result's observedAt.
	if eff.AsOf != nil {
		ref = eff.AsOf.Time().AddDate(0, 0, 1)
	}
	var undated, future, afterAsOf []string
	for _, ev := range d.evidence {
		if ev.PublishedAt == nil {
			undated = append(undated, ev.ID)
			continue
		}
		earliest, latest, ok := parsePublished(*ev.PublishedAt)
		switch {
		case !ok:
			undated = append(undated, ev.ID)
			ev.notes = append(ev.notes, "publication date unreadable")
			continue
		case earliest.After(d.returnedAt.Add(24 * time.Hour)):
			// A date the page cannot have: not trusted as fresh. With a
			// window it is treated as older than the window (worse than
			// undated); without one, dates do not matter and it is undated.
			future = append(future, ev.ID)
			if eff.FreshnessHours > 0 {
				ev.stale = true
				ev.notes = append(ev.notes, "publication date in the future, not trusted: treated as older than the freshness window")
			} else {
				ev.notes = append(ev.notes, "publication date in the future, not trusted: treated as unknown")
			}
			continue
		}
		ev.dated = true
		if eff.AsOf != nil && earliest.After(ref) {
			afterAsOf = append(afterAsOf, ev.ID)
		}
		if eff.FreshnessHours > 0 && latest.Before(ref.Add(-time.Duration(eff.FreshnessHours)*time.Hour)) {
			ev.stale = true
			ev.notes = append(ev.notes, fmt.Sprintf("stale: published before the %d-hour freshness window", eff.FreshnessHours))
			d.limit("Evidence %s (published %s) is older than the %d-hour freshness window.", ev.ID, *ev.PublishedAt, eff.FreshnessHours)
		}
	}
	if len(undated) > 0 {
		d.limit("The freshness of %s could not be checked (no readable publication date): %s.", plural(len(undated), "evidence item", "evidence items"), strings.Join(undated, ", "))
	}
	if len(future) > 0 {
		if eff.FreshnessHours > 0 {
			d.limit("Evidence %s carried a publication date more than a day in the future; the date was not trusted and the evidence was treated as older than the %d-hour freshness window.",
				strings.Join(future, ", "), eff.FreshnessHours)
		} else {
			d.limit("Evidence %s carried a publication date more than a day in the future; the date was not trusted and the evidence was treated as undated.", strings.Join(future, ", "))
		}
	}
	if len(afterAsOf) > 0 {
		d.limit("Evidence %s was published after asOf (%s) and may describe a later state.", strings.Join(afterAsOf, ", "), eff.AsOf.String())
	}
}

// planChecks lists the pages whose excerpts the tier checks, in priority
// order, deduplicated by page, and gives every evidence item the reason
// its quote stays unchecked if its page is not among them:
//
//   - none (quick): the pages of evidence referenced by a fact (or a
//     conflict) and matched to a provider source, fetched for the check and
//     not kept, at most maxSources;
//   - cited (standard, deep): the same pages captured as snapshots, those
//     that could count first (admitted by the policy, supporting or
//     contradicting, with an excerpt), cut to the tier's maxSnapshots;
//   - all_sources (research): those first, then every other provider
//     source (blocked and disallowed sources were already removed).
func (d *draft) planChecks(referenced map[string]bool) []string {
	t := d.eff.Tier
	limit, verb := t.MaxSnapshots, "captured"
	if d.checkLimit > 0 {
		limit = d.checkLimit
	}
	if t.SnapshotMode == SnapshotNone {
		limit, verb = d.eff.MaxSources, "fetched"
	}
	seen := map[string]bool{}
	var urls []string
	add := func(key, u string) {
		if !seen[key] && len(urls) < limit {
			seen[key] = true
			urls = append(urls, u)
		}
	}
	wanted := func(ev *evWork) bool { return referenced[ev.ID] && ev.ProviderSourceMatched }
	for _, ev := range d.evidence {
		if wanted(ev) && ev.admitted && ev.Excerpt != "" && ev.Relationship != Context {
			add(ev.key, ev.URL)
		}
	}
	for _, ev := range d.evidence {
		if wanted(ev) {
			add(ev.key, ev.URL)
		}
	}
	if t.SnapshotMode == SnapshotAllSources {
		for _, s := range d.sources {
			add(s.key, s.URL)
		}
	}
	for _, ev := range d.evidence {
		ev.quote = QuoteNotChecked
		switch {
		case ev.Excerpt == "":
			ev.check = "the item has no excerpt"
		case seen[ev.key]:
			ev.check = "no record of its page came back" // replaced by the outcome
		case !referenced[ev.ID]:
			ev.check = "no atomic fact or conflict cites it, so its page was not " + verb
		case !ev.ProviderSourceMatched:
			ev.check = "its URL is not among the sources the provider consulted, so its page was not " + verb
		default:
			ev.check = fmt.Sprintf("the %s tier checks at most %s and this page was not among them",
				t.Name, plural(limit, "page", "pages"))
		}
	}
	return urls
}

// uncheckable gives every item whose page was to be checked the reason it
// could not be (snapshots not configured or failed).
func (d *draft) uncheckable(urls []string, why string) {
	keys := map[string]bool{}
	for _, u := range urls {
		if k, err := urlnorm.Key(u); err == nil {
			keys[k] = true
		}
	}
	for _, ev := range d.evidence {
		if ev.Excerpt != "" && keys[ev.key] {
			ev.check = why
		}
	}
}

// attachSnapshots links records to evidence and provider sources by the
// page key of the requested and final URL, and checks each excerpt against
// its page's text. archived is false for the quick tier, whose snapshot
// mode is none: its pages are kept for the evidence bundle (Record.PageIDs)
// but not listed in the result nor linked from it.
func (d *draft) attachSnapshots(snaps []*snapshot.Snapshot, archived bool) {
	byKey := map[string]*snapshot.Snapshot{}
	var failed int
	for _, s := range snaps {
		if s == nil {
			continue
		}
		d.pageIDs = append(d.pageIDs, s.ID)
		if archived {
			d.snapshots = append(d.snapshots, s)
		}
		if s.Status != snapshot.StatusCaptured {
			failed++
		}
		for _, u := range []string{s.RequestedURL, deref(s.FinalURL)} {
			if k, err := urlnorm.Key(u); err == nil {
				if prev := byKey[k]; prev == nil || (prev.Status != snapshot.StatusCaptured && s.Status == snapshot.StatusCaptured) {
					byKey[k] = s
				}
			}
		}
	}
	if failed > 0 {
		if archived {
			d.limit("%s could not be captured; their failure records are included.", plural(failed, "requested source snapshot", "requested source snapshots"))
		} else {
			d.limit("%s could not be fetched for the quote check.", plural(failed, "page", "pages"))
		}
	}
	if archived {
		for _, s := range d.sources {
			if snap := byKey[s.key]; snap != nil {
				id := snap.ID
				s.SnapshotID = &id
			}
		}
	}
	for _, ev := range d.evidence {
		snap := byKey[ev.key]
		if snap == nil {
			continue
		}
		page := "the page fetched for this check (not listed: the quick tier lists no snapshots; kept for the evidence bundle)"
		if archived {
			id := snap.ID
			ev.SnapshotID = &id
			page = "snapshot " + snap.ID
		}
		if snap.Status != snapshot.StatusCaptured {
			ev.check = notCaptured(snap, archived)
			continue
		}
		if archived {
			ev.Snapshotted = true
		}
		ev.RetrievedAt = snap.RetrievedAt.UTC()
		switch {
		case ev.Excerpt == "":
			// Nothing to compare: the reason set by planChecks stands.
		case snap.Text == "":
			// Captured, but there is no text to search (a PDF, or a page
			// whose text is empty or was not kept): not checked, which is
			// not the same as not found.
			ev.check = fmt.Sprintf("%s has no text to compare with: %s", page, textless(snap))
		case snap.Contains(ev.Excerpt):
			ev.quote = QuoteVerified
			ev.check = "quote verified on " + page
		default:
			ev.quote = QuoteNotFound
			if archived {
				ev.check = "quote not found on the captured page (snapshot " + snap.ID + ")"
			} else {
				ev.check = "quote not found on " + page
			}
		}
	}
}

// notCaptured says why the page of a failure record could not be checked.
func notCaptured(s *snapshot.Snapshot, archived bool) string {
	what := "the fetch of the page"
	if archived {
		what = "the capture in snapshot " + s.ID
	}
	reason := strings.TrimSpace(deref(s.FailureReason))
	if reason == "" {
		reason = string(s.Status)
	}
	switch s.Status {
	case snapshot.StatusBlocked:
		return fmt.Sprintf("the capture guard refused the page (%s): only pages fetched from public addresses are evidence", reason)
	case snapshot.StatusTooLarge:
		return fmt.Sprintf("%s stopped: the page is too large (%s)", what, reason)
	case snapshot.StatusUnsupported:
		return fmt.Sprintf("%s stopped: the content type is not supported (%s)", what, reason)
	}
	return fmt.Sprintf("%s failed (%s)", what, reason)
}

// emptySHA256 is the SHA-256 of the empty string: the normalizedSha256 of a
// page whose normalised text is empty.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// textless says why a captured snapshot has no text to check excerpts
// against.
func textless(s *snapshot.Snapshot) string {
	if s.NormalizedSHA256 == nil {
		mt := "unknown content type"
		if s.ContentType != nil {
			if m, _, err := mime.ParseMediaType(*s.ContentType); err == nil {
				mt = m
			} else if m, _, _ := strings.Cut(*s.ContentType, ";"); strings.TrimSpace(m) != "" {
				mt = strings.ToLower(strings.TrimSpace(m))
			}
		}
		if mt == "application/pdf" {
			mt = "PDF"
		}
		return "text not extractable (" + mt + ")"
	}
	if *s.NormalizedSHA256 == emptySHA256 {
		return "no text in the captured page"
	}
	return "the captured page's text is not available to check"
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
