package niche

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Search index (Options.DisableSearchIndex).
//
// With a store implementing IndexSource (store.DB on SQLite and
// PostgreSQL, nichetest.MemStore) the engine keeps the published
// evaluations' search rows in memory with one postings list per word and
// access level (the preview level: Title and Preview; the full level:
// Title, Body and Extra), each ordered newest first (the store's creation
// order, SearchRow.Seq), each posting holding the word's relevance in the
// document. Search then answers there instead of asking the store, under
// exactly the contract SearchCandidates states, so results are the same
// with and without the index and whatever the backend: the matches are
// the evaluations whose text of the level has every word; when more than
// SearchCandidates match, only the newest SearchWindow matches are
// ranked, by Relevance, the sort and the id. The database stays the
// source of truth: the index is derived.
//
// A search is one pass over the newest matches, at most SearchWindow of
// them (when no more than SearchCandidates match, that is all of them):
// the shortest postings list is walked and the others are joined to it by
// galloping both ways (a document another word's list skips is skipped in
// the walk too). Relevance is the sum of the postings' relevances plus
// the phrase bonus of multi-word queries, which is looked for in the
// document's text only when it could bring the match into the page. The
// best Top matches are kept in a bounded sorted slice compared on dense
// columns (score, update time), so nothing is sorted but the page, and
// the page is returned with its relevances and signal counts. No page is
// kept between searches: every search scans (a memo of popular words'
// pages would be a result cache, which Options.SearchCacheTTL is). A
// search answered by the index reads nothing from the store but the version
// (see Consistency). The engine still orders the page with the same
// comparison as every store's candidates.
//
// Consistency. The index is loaded from the store on the first search.
// This engine's own writes (curation, and moderation, which changes
// signal counts) are applied to it as they commit (the written
// evaluations' rows are read back). Other instances' writes are seen by
// polling the store's search version (IndexSource.SearchVersion, which
// also changes with a published evaluation's signal count) at most every
// SearchCacheTTL — on every search when the TTL is 0, one search at a
// time polling while the others go on — the staleness the result cache
// already documents; a changed version rebuilds the index from the store
// (one read of every published row) while other searches keep using the
// previous index. Any write, this engine's included, changes the
// version, so a catalogue being curated is rebuilt at most once per TTL
// — and, when a rebuild is costly (over costlyBuild of wall time, as at
// 100,000 evaluations), not again before four times its duration has
// passed, so that continuous curation spends at most about a fifth of a
// core on rebuilds. Other instances' writes to such a large catalogue
// then show within that longer time; this engine's own show at once.
//
// Memory and the collector. The documents, the dense columns and the
// postings hold no pointer: the text is copied into append-only chunks of
// 1 MB and documents refer to it by offsets, so a collection neither
// scans the index nor marks one object per string (with one string
// object per field, collections at 100,000 evaluations took hundreds of
// milliseconds of CPU, much of it in assists that stalled searches; now
// about ten). What remains for the collector is the maps from words to
// postings and from ids to documents. On bench/niche's synthetic
// catalogue the index takes about 2.5 KB per evaluation (242 MB at
// 100,000) and loads in about 5 s on a loaded 2-core machine; the bench
// prints both.

// SearchRow is one published evaluation as a search index reads it.
type SearchRow struct {
	// Candidate is the evaluation at the full level: Title, Body and
	// Extra are SearchFields' Title, Body and Extra; Listing with its
	// SignalCount, so that a search answered by the index reads nothing
	// from the store.
	Candidate
	// Preview is SearchFields' Preview (the preview level's Body).
	Preview string
	// Seq is the store's creation order: newer is larger.
	Seq int64
	// CategoryKey is CategoryKey of the evaluation's category.
	CategoryKey string
}

// IndexSource is implemented by stores from which the engine can keep an
// in-memory search index (see Options.DisableSearchIndex).
type IndexSource interface {
	// SearchRows returns the search rows of the published evaluations,
	// all when ids is nil, else those among ids.
	SearchRows(ctx context.Context, ids []string) ([]SearchRow, error)
	// SearchVersion returns a number that changes whenever a search row
	// (its signal count included) is written, removed or changed (by any
	// instance).
	SearchVersion(ctx context.Context) (int64, error)
}

// The text fields of a document (indexDoc.text), kept in the index's
// text chunks.
const (
	fID           = iota
	fTitle        // SearchFields' Title (both levels)
	fBody         // the full level's Body
	fExtra        // the full level's Extra
	fPreview      // the preview level's Body
	fListingTitle // Listing.Title, Problem, Buyer, Category, ScoreVersion
	fProblem
	fBuyer
	fCategory
	fScoreVersion
	nFields
)

// indexDoc is one evaluation in the index: where its text fields are.
// It holds no pointer (nor do the dense columns of searchIndex), so that
// the collector neither scans the documents nor marks one object per
// string: at 100,000 evaluations that marking made every collection take
// hundreds of milliseconds of CPU, much of it as assists that stalled
// searches.
type indexDoc struct {
	text [nFields]span
}

// span is a string of textChunks.
type span struct{ chunk, off, n uint32 }

// textChunks hold the index's strings back to back in chunks of
// chunkSize bytes (larger strings get a chunk of their own). Bytes once
// written are never changed, so the strings get returns alias the chunks
// (unsafe.String) and stay valid after the index moves on.
type textChunks [][]byte

const chunkSize = 1 << 20

// put stores s and returns where.
func (c *textChunks) put(s string) span {
	if n := len(*c); n == 0 || cap((*c)[n-1])-len((*c)[n-1]) < len(s) {
		*c = append(*c, make([]byte, 0, max(chunkSize, len(s))))
	}
	i := len(*c) - 1
	off := len((*c)[i])
	(*c)[i] = append((*c)[i], s...)
	return span{uint32(i), uint32(off), uint32(len(s))}
}

// get returns the string at sp.
func (c textChunks) get(sp span) string {
	if sp.n == 0 {
		return ""
	}
	return unsafe.String(&c[sp.chunk][sp.off], int(sp.n))
}

// posting is a document having a word, with the word's relevance in it.
// It holds no pointer, so that the collector does not scan postings.
type posting struct {
	ord int32 // the document's place in searchIndex.all and the dense columns
	rel int8
}

// postings are the documents having a word, newest (largest seq) first.
type postings []posting

// scan is the one pass of a search over the newest window matches of
// lists (si the shortest), keeping the best k (top, best first); n is
// the number of matches seen. The phrase bonus (at most 8) is only
// looked for when it could bring a match into top.
func (x *searchIndex) scan(q CandidateQuery, lists []postings, si int, cat int32, bySort bool, k, window int) (top []hit, n int) {
	shortest, seqs := lists[si], x.seqs
	cur := make([]int, len(lists)) // each list's cursor: its postings before it are newer than the current match
	phrase := q.Query.Phrase()
	multi := len(q.Query.Tokens) > 1
	top = make([]hit, 0, k+1)
scan:
	for i := 0; i < len(shortest); {
		p := shortest[i]
		if cat >= 0 && x.cats[p.ord] != cat {
			i++
			continue
		}
		seq := seqs[p.ord]
		// Relevance: the sum of each word's relevance (kept in the
		// postings), plus the phrase's for several words.
		// A phrase can only be in a text having every word: titled and
		// bodied say whether every word's relevance has the title's 8 and
		// the body's 3 (relevances are 8t + 3b + e).
		rel, older := int32(p.rel), int64(-1)
		titled, bodied := p.rel >= 8, p.rel%8 >= 3
		for j, l := range lists {
			if j == si {
				continue
			}
			c := x.seek(l, cur[j], seq)
			if cur[j] = c; c == len(l) {
				break scan // no older document has this word
			}
			if s := seqs[l[c].ord]; s != seq {
				older = s // no document between s and seq has word j
				break
			}
			r := l[c].rel
			rel += int32(r)
			titled, bodied = titled && r >= 8, bodied && r%8 >= 3
		}
		if older >= 0 {
			i = x.seek(shortest, i+1, older)
			continue
		}
		i++
		n++
		full := len(top) == k
		if multi && (!full || rel+8 >= top[k-1].rel) {
			body := fPreview
			if q.Full {
				body = fBody
			}
			if titled && ContainsWord(x.field(p.ord, fTitle), phrase) {
				rel += 6
			}
			if bodied && ContainsWord(x.field(p.ord, body), phrase) {
				rel += 2
			}
		}
		h := hit{p.ord, rel}
		if !full || x.worse(top[k-1], h, bySort) {
			i := len(top)
			for i > 0 && x.worse(top[i-1], h, bySort) {
				i--
			}
			top = slices.Insert(top, i, h)
			if len(top) > k {
				top = top[:k]
			}
		}
		if n == window {
			break
		}
	}
	return top, n
}

// seek returns the first place from c on in l (newest first) whose
// document is not newer than seq, galloping from c.
func (x *searchIndex) seek(l postings, c int, seq int64) int {
	if c >= len(l) || x.seqs[l[c].ord] <= seq {
		return c
	}
	lo, step := c, 1
	for lo+step < len(l) && x.seqs[l[lo+step].ord] > seq {
		lo, step = lo+step, step*2
	}
	// The first place in (lo, min(lo+step, len(l))] not newer than seq.
	lo, hi := lo+1, min(lo+step, len(l))
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if x.seqs[l[mid].ord] > seq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// bySeq finds seq in postings (newest first) with slices.BinarySearchFunc.
func (x *searchIndex) bySeq(e posting, seq int64) int { return cmp.Compare(seq, x.seqs[e.ord]) }

// searchIndex is the in-memory search index of an engine.
type searchIndex struct {
	src   IndexSource
	every time.Duration
	now   func() time.Time

	build sync.Mutex // held by the one goroutine loading or refreshing

	mu      sync.RWMutex
	loaded  bool
	dirty   bool // a write could not be applied: rebuild at the next check
	version int64
	checked time.Time
	// built and buildCost are when the last full build ended and how long
	// it took, in wall time (they bound the rebuilds' share of the CPU).
	built     time.Time
	buildCost time.Duration
	wall      func() time.Time // time.Now; tests replace it
	docs      map[string]int32 // ord by id (the key is in text)
	all       []indexDoc       // by posting.ord; removed documents stay until a rebuild
	text      textChunks
	// Dense columns by ord, read by the scans of postings and the
	// ranking without touching the text: the document's seq, score,
	// UpdatedAt in Unix nanoseconds, category (catIDs) and signal count.
	seqs    []int64
	scores  []int
	updated []int64
	cats    []int32
	counts  []int32
	catIDs  map[string]int32
	full    map[string]postings
	prev    map[string]postings
}

// costlyBuild is the wall time above which a full build is costly enough
// to be rate-limited (see Consistency in the type's documentation).
const costlyBuild = 250 * time.Millisecond

func newSearchIndex(src IndexSource, every time.Duration, now func() time.Time) *searchIndex {
	return &searchIndex{src: src, every: every, now: now, wall: time.Now}
}

// ensure loads the index or refreshes it when due. Only the first load
// makes searches wait; a refresh runs in the search that finds it due
// while the others use the index as it is.
func (x *searchIndex) ensure(ctx context.Context) error {
	x.mu.RLock()
	loaded, dirty, checked := x.loaded, x.dirty, x.checked
	x.mu.RUnlock()
	if loaded && !dirty && x.every > 0 && x.now().Sub(checked) < x.every {
		return nil
	}
	if loaded {
		if !x.build.TryLock() {
			return nil
		}
	} else {
		x.build.Lock()
	}
	defer x.build.Unlock()
	x.mu.RLock()
	loaded, dirty, version, built, cost := x.loaded, x.dirty, x.version, x.built, x.buildCost
	x.mu.RUnlock()
	checkedAt := x.now()
	v, err := x.src.SearchVersion(ctx)
	if err != nil {
		return err
	}
	cooling := cost > costlyBuild && x.wall().Sub(built) < 4*cost
	if loaded && !dirty && (v == version || cooling) {
		x.mu.Lock()
		x.checked = checkedAt
		x.mu.Unlock()
		return nil
	}
	start := x.wall()
	// Read the version before the rows: rows newer than v only make the
	// next check rebuild once more.
	rows, err := x.src.SearchRows(ctx, nil)
	if err != nil {
		return err
	}
	nx := &searchIndex{docs: make(map[string]int32, len(rows)), catIDs: map[string]int32{},
		full: map[string]postings{}, prev: map[string]postings{}}
	slices.SortFunc(rows, func(a, b SearchRow) int { return cmp.Compare(b.Seq, a.Seq) })
	for i := range rows {
		ord := nx.add(&rows[i])
		rows[i] = SearchRow{} // the index holds its own copy of the text
		nx.eachWord(ord, func(m map[string]postings, w string, rel int8) { m[w] = append(m[w], posting{ord, rel}) })
	}
	x.mu.Lock()
	x.docs, x.all, x.text, x.full, x.prev = nx.docs, nx.all, nx.text, nx.full, nx.prev
	x.seqs, x.scores, x.updated, x.cats, x.counts, x.catIDs = nx.seqs, nx.scores, nx.updated, nx.cats, nx.counts, nx.catIDs
	x.loaded, x.dirty, x.version, x.checked = true, false, v, checkedAt
	x.built = x.wall()
	x.buildCost = x.built.Sub(start)
	x.mu.Unlock()
	return nil
}

// add appends r's document to all, the text, the dense columns and docs
// (not to the postings) and returns its ord.
func (x *searchIndex) add(r *SearchRow) int32 {
	ord := int32(len(x.all))
	var d indexDoc
	l := &r.Listing
	for f, s := range [nFields]string{fID: r.ID, fTitle: r.Title, fBody: r.Body, fExtra: r.Extra, fPreview: r.Preview,
		fListingTitle: l.Title, fProblem: l.Problem, fBuyer: l.Buyer, fCategory: l.Category, fScoreVersion: l.ScoreVersion} {
		d.text[f] = x.text.put(s)
	}
	cat, ok := x.catIDs[r.CategoryKey]
	if !ok {
		cat = int32(len(x.catIDs))
		x.catIDs[strings.Clone(r.CategoryKey)] = cat
	}
	x.all, x.seqs = append(x.all, d), append(x.seqs, r.Seq)
	x.scores, x.updated, x.cats = append(x.scores, r.Score), append(x.updated, r.UpdatedAt.UnixNano()), append(x.cats, cat)
	x.counts = append(x.counts, int32(l.SignalCount))
	x.docs[x.field(ord, fID)] = ord
	return ord
}

// field is text field f of document ord.
func (x *searchIndex) field(ord int32, f int) string { return x.text.get(x.all[ord].text[f]) }

// candidate is document ord's Candidate at the full or the preview level.
func (x *searchIndex) candidate(ord int32, full bool) Candidate {
	t := func(f int) string { return x.field(ord, f) }
	c := Candidate{ID: t(fID), Score: x.scores[ord], UpdatedAt: time.Unix(0, x.updated[ord]).UTC(), Title: t(fTitle)}
	if full {
		c.Body, c.Extra = t(fBody), t(fExtra)
	} else {
		c.Body = t(fPreview)
	}
	c.Listing = Listing{ID: c.ID, Title: t(fListingTitle), Problem: t(fProblem), Buyer: t(fBuyer), Category: t(fCategory),
		Score: c.Score, ScoreVersion: t(fScoreVersion), SignalCount: int(x.counts[ord])}
	return c
}

// eachWord calls add once for every distinct word of document ord's text
// at each level, with that level's postings map and the word's relevance
// there (Relevance of the one-word query: 8 for the title, 3 for the
// body, 1 for the extra text). The words are in the index's text.
func (x *searchIndex) eachWord(ord int32, add func(m map[string]postings, w string, rel int8)) {
	for _, lv := range []struct {
		m     map[string]postings
		texts [3]int
	}{{x.full, [3]int{fTitle, fBody, fExtra}}, {x.prev, [3]int{fTitle, fPreview, -1}}} {
		rels := map[string]int8{}
		var order []string
		for i, f := range lv.texts {
			if f < 0 {
				continue
			}
			text := x.field(ord, f)
			bit := int8(1) << i
			for _, w := range strings.FieldsFunc(text, isSpace) {
				r, seen := rels[w]
				if !seen {
					order = append(order, w)
				}
				rels[w] = r | bit
			}
		}
		for _, w := range order {
			b := rels[w]
			add(lv.m, w, 8*(b&1)+3*(b>>1&1)+(b>>2&1))
		}
	}
}

// touch applies this engine's write of the evaluations ids: their rows
// are read back from the store and replace what the index held.
func (x *searchIndex) touch(ctx context.Context, ids ...string) {
	x.mu.RLock()
	loaded := x.loaded
	x.mu.RUnlock()
	if !loaded {
		return
	}
	rows, err := x.src.SearchRows(context.WithoutCancel(ctx), ids)
	x.mu.Lock()
	defer x.mu.Unlock()
	if err != nil {
		x.dirty = true
		return
	}
	for _, id := range ids {
		if ord, ok := x.docs[id]; ok {
			delete(x.docs, id)
			seq := x.seqs[ord]
			x.eachWord(ord, func(m map[string]postings, w string, _ int8) {
				p := m[w]
				if i, ok := slices.BinarySearchFunc(p, seq, x.bySeq); ok {
					p = slices.Delete(p, i, i+1)
				}
				if len(p) == 0 {
					delete(m, w)
				} else {
					m[w] = p
				}
			})
		}
	}
	for i := range rows {
		if _, ok := x.docs[rows[i].ID]; ok {
			continue // listed twice
		}
		ord := x.add(&rows[i])
		seq := x.seqs[ord]
		x.eachWord(ord, func(m map[string]postings, w string, rel int8) {
			p := m[w]
			i, _ := slices.BinarySearchFunc(p, seq, x.bySeq)
			m[w] = slices.Insert(p, i, posting{ord, rel})
		})
	}
}

// hit is a match of a search of the index: the document's place in
// searchIndex.all and its Relevance.
type hit struct {
	ord int32
	rel int32
}

// worse reports whether a ranks after b (Relevance, then the sort, then
// the most recently updated, then the id), from the dense columns.
func (x *searchIndex) worse(a, b hit, bySort bool) bool {
	if a.rel != b.rel {
		return a.rel < b.rel
	}
	if bySort && x.scores[a.ord] != x.scores[b.ord] {
		return x.scores[a.ord] < x.scores[b.ord]
	}
	if x.updated[a.ord] != x.updated[b.ord] {
		return x.updated[a.ord] < x.updated[b.ord]
	}
	return x.field(a.ord, fID) > x.field(b.ord, fID)
}

// candidates is SearchCandidates answered from the index, except that it
// returns only the best Ranked() matches (best first) with their
// Relevance, also when no more than Limit match: the engine ranks the
// matches it is given by the same ordering and keeps the first Top, so
// the best Ranked() of them are the same page.
func (x *searchIndex) candidates(ctx context.Context, q CandidateQuery) ([]Candidate, []int, bool, error) {
	if q.Query.Empty() || q.Limit <= 0 {
		return []Candidate{}, []int{}, false, nil
	}
	if err := x.ensure(ctx); err != nil {
		return nil, nil, false, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	m := x.prev
	if q.Full {
		m = x.full
	}
	lists := make([]postings, len(q.Query.Tokens))
	for i, t := range q.Query.Tokens {
		if lists[i] = m[t]; len(lists[i]) == 0 {
			return []Candidate{}, []int{}, false, nil
		}
	}
	si := 0
	for i, l := range lists {
		if len(l) < len(lists[si]) {
			si = i
		}
	}
	window := max(cmp.Or(q.Window, 2000), q.Limit)
	cat := int32(-1)
	if q.CategoryKey != "" {
		c, ok := x.catIDs[q.CategoryKey]
		if !ok {
			return []Candidate{}, []int{}, false, nil
		}
		cat = c
	}
	bySort := q.Sort != SortRecent
	k := q.Ranked()
	top, n := x.scan(q, lists, si, cat, bySort, k, window)
	out := make([]Candidate, len(top))
	rels := make([]int, len(top))
	for i, h := range top {
		out[i], rels[i] = x.candidate(h.ord, q.Full), int(h.rel)
	}
	return out, rels, n > q.Limit, nil
}

// isSpace separates the words of normalised text (SearchText writes single
// spaces), exactly as ContainsWord reads it.
func isSpace(r rune) bool { return r == ' ' }
