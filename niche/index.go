package niche

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Search index (Options.DisableSearchIndex).
//
// With a store implementing IndexSource (store/nichestore on SQLite and
// PostgreSQL, nichemem.Store) the engine keeps the published
// evaluations' search rows in memory with one postings list per word and
// access level (the preview level: Title and Preview; the full level:
// Title, Body and Extra), each ordered by the store's creation order
// (SearchRow.Seq; oldest first, so that a new evaluation is an append),
// each posting holding the word's relevance in the document. Search then
// answers there instead of asking the store, under exactly the contract
// SearchCandidates states, so results are the same with and without the
// index and whatever the backend: the matches are the evaluations whose
// text of the level has every word; when more than SearchCandidates
// match, only the newest SearchWindow matches are ranked, by Relevance,
// the sort and the id. The database stays the source of truth: the index
// is derived.
//
// A search is one pass over the newest matches, at most SearchWindow of
// them (when no more than SearchCandidates match, that is all of them):
// the shortest postings list is walked from its newest end and the others
// are joined to it by galloping (a document another word's list skips is
// skipped in the walk too). Relevance is the sum of the postings'
// relevances plus the phrase bonus of multi-word queries, which is looked
// for in the document's text only when it could bring the match into the
// page. The best Top matches are kept in a bounded sorted slice compared
// on dense columns (score, update time), so nothing is sorted but the
// page, and the page is returned with its relevances and signal counts.
// No page is kept between searches (a memo of popular words' pages would
// be a result cache, which Options.SearchCacheTTL is).
//
// Loading. The index is loaded in the background: at Engine.StartIndex,
// or at the first search. Until it is loaded, searches ask the store
// (SearchCandidates): the same results, at the store's cost. IndexStatus
// says whether it is ready (the example server's /readyz reports it);
// LoadIndex waits for it.
//
// Consistency: the change feed. A store that is a ChangeFeed
// (store/nichestore, nichemem.Store) records every change of a search row — a published
// evaluation written, withdrawn, or whose signal count changed — with a
// sequence number, in commit order, in the transaction of the change.
// The index remembers the last sequence number it applied and applies
// the entries after it: the rows of the evaluations they name are read
// back and replace what the index held. This engine's own writes are
// applied as they commit (so they show at once); other instances' when
// the store notifies (PostgreSQL LISTEN/NOTIFY, ChangeNotifier, with
// StartIndex) or when the feed is polled: every SearchCacheTTL, on the
// search that finds it due (on every search when the TTL is 0), or, with
// StartIndex, by its own loop (every SearchCacheTTL, at least every
// second without notifications). Nothing is rebuilt but at the load, or
// when the feed has a gap (its entries after the last one applied were
// pruned: an instance that fell far behind); IndexStatus counts both.
// An evaluation withdrawn is only marked dead (its postings are skipped
// by the scans), a revision replaces its postings in place and a new
// evaluation is appended, so applying one write costs about the reading
// of its row and the words of its text; when dead documents outnumber a
// quarter of the live ones the index is compacted from its own memory
// (no store read). Stores that are no ChangeFeed fall back to a version
// (IndexSource.SearchVersion): a changed version rebuilds the whole index
// from the store, at most once per SearchCacheTTL — and, when a rebuild
// is costly (over costlyBuild of wall time), not again before four times
// its duration has passed.
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
// 100,000); bench/niche prints its load time and where it goes.

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
	// instance). A ChangeFeed's is the sequence number of its last entry.
	SearchVersion(ctx context.Context) (int64, error)
}

// RowStreamer is implemented by index sources that hand over the search
// rows of the published evaluations one at a time, in seq order, in a
// SearchRow valid only during fn (store/nichestore: its strings alias the
// driver's buffers): a load then copies each string once and builds the
// postings while the rows are read.
type RowStreamer interface {
	EachSearchRow(ctx context.Context, fn func(*SearchRow) error) error
}

// ChangeFeed is implemented by index sources that log every change of a
// search row (see the index's Consistency).
type ChangeFeed interface {
	// SearchChanges returns up to limit entries after sequence number
	// after, in order. Sequence numbers follow each other without holes
	// and in commit order; gap is true when entries after after were
	// pruned (the caller must load anew).
	SearchChanges(ctx context.Context, after int64, limit int) (changes []SearchChange, gap bool, err error)
}

// SearchChange is one entry of a ChangeFeed: the search row of evaluation
// ID changed (written, withdrawn, or its signal count) at Seq.
type SearchChange struct {
	Seq int64
	ID  string
}

// ChangeNotifier is implemented by change feeds that can say when new
// entries were committed (PostgreSQL: LISTEN/NOTIFY).
type ChangeNotifier interface {
	// NotifiesSearchChanges reports whether WatchSearchChanges works on
	// this store (store/nichestore: on PostgreSQL, not on SQLite).
	NotifiesSearchChanges() bool
	// WatchSearchChanges calls notify once it listens (entries committed
	// before may be missing from what the caller read) and after entries
	// were committed, until ctx is done or the connection fails (then it
	// returns the error).
	WatchSearchChanges(ctx context.Context, notify func()) error
}

// notifier returns src's ChangeNotifier when it notifies.
func notifier(src any) (ChangeNotifier, bool) {
	n, ok := src.(ChangeNotifier)
	return n, ok && n.NotifiesSearchChanges()
}

// IndexStatus describes an engine's search index (Engine.IndexStatus).
type IndexStatus struct {
	// Enabled is false when the engine asks the store for every search.
	Enabled bool `json:"enabled"`
	// Ready is true once the index is loaded; searches until then ask
	// the store.
	Ready bool `json:"ready"`
	// Documents counts the published evaluations the index holds.
	Documents int `json:"documents"`
	// Seq is the last change feed entry applied (or the store's version).
	Seq int64 `json:"seq"`
	// FullLoads counts the loads from the store: the first, and one per
	// gap in the change feed (or, without a feed, per changed version).
	FullLoads int64 `json:"fullLoads"`
	// Applied counts the change feed entries applied incrementally.
	Applied int64 `json:"applied"`
	// Compactions counts the rebuilds from the index's own memory once
	// dead documents piled up (no store read).
	Compactions int64 `json:"compactions"`
	// LoadTime is how long the last full load took (wall time), of which
	// LoadReadTime reading the rows from the store and LoadBuildTime
	// building the index from them; LoadError is the error of the last
	// load or catch-up that failed, if the index is not ready or behind
	// because of it.
	LoadTime      time.Duration `json:"loadTime"`
	LoadReadTime  time.Duration `json:"loadReadTime"`
	LoadBuildTime time.Duration `json:"loadBuildTime"`
	LoadError     string        `json:"loadError,omitempty"`
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

// postings are the documents having a word, oldest (smallest seq) first,
// at most one per seq; a posting whose document is dead (withdrawn, or
// replaced by a revision that dropped the word) does not count.
type postings []posting

// scan is the one pass of a search over the newest window matches of
// lists (si the shortest), keeping the best k (top, best first); n is
// the number of matches seen. The phrase bonus (at most 8) is only
// looked for when it could bring a match into top.
func (x *searchIndex) scan(q CandidateQuery, lists []postings, si int, cat int32, bySort bool, k, window int) (top []hit, n int) {
	shortest, seqs, dead := lists[si], x.seqs, x.dead
	cur := make([]int, len(lists)) // each list's cursor: its postings after it are newer than the current match
	for j, l := range lists {
		cur[j] = len(l) - 1
	}
	phrase := q.Query.Phrase()
	multi := len(q.Query.Tokens) > 1
	top = make([]hit, 0, k+1)
scan:
	for i := len(shortest) - 1; i >= 0; {
		p := shortest[i]
		if dead[p.ord] || (cat >= 0 && x.cats[p.ord] != cat) {
			i--
			continue
		}
		seq := seqs[p.ord]
		// Relevance: the sum of each word's relevance (kept in the
		// postings), plus the phrase's for several words.
		// A phrase can only be in a text having every word: titled and
		// bodied say whether every word's relevance has the title's 8 and
		// the body's 3 (relevances are 8t + 3b + e).
		rel, older, missing := int32(p.rel), int64(-1), false
		titled, bodied := p.rel >= 8, p.rel%8 >= 3
		for j, l := range lists {
			if j == si {
				continue
			}
			c := x.seekDown(l, cur[j], seq)
			if cur[j] = c; c < 0 {
				break scan // no older document has this word
			}
			if s := seqs[l[c].ord]; s != seq {
				older = s // no document between s and seq has word j
				break
			}
			if dead[l[c].ord] {
				missing = true // this document no longer has word j
				break
			}
			r := l[c].rel
			rel += int32(r)
			titled, bodied = titled && r >= 8, bodied && r%8 >= 3
		}
		if older >= 0 {
			i = x.seekDown(shortest, i-1, older)
			continue
		}
		i--
		if missing {
			continue
		}
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

// seekDown returns the last place from c down in l (oldest first) whose
// document is not newer than seq (-1 when none), galloping down from c.
func (x *searchIndex) seekDown(l postings, c int, seq int64) int {
	if c < 0 || x.seqs[l[c].ord] <= seq {
		return c
	}
	hi, step := c, 1 // the documents from hi to c are newer than seq
	for hi-step >= 0 && x.seqs[l[hi-step].ord] > seq {
		hi, step = hi-step, step*2
	}
	lo := max(hi-step, -1) // not newer than seq (or before the start)
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if x.seqs[l[mid].ord] > seq {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo
}

// bySeq finds seq in postings (oldest first) with slices.BinarySearchFunc.
func (x *searchIndex) bySeq(e posting, seq int64) int { return cmp.Compare(x.seqs[e.ord], seq) }

// searchIndex is the in-memory search index of an engine.
type searchIndex struct {
	src   IndexSource
	feed  ChangeFeed // nil: src keeps no change feed (version polling)
	every time.Duration
	now   func() time.Time
	log   *slog.Logger

	build sync.Mutex // held by the one goroutine loading or applying changes

	loading   atomic.Bool // a background load is under way
	following atomic.Bool // StartIndex's loop applies the feed: searches do not poll
	loadedCh  chan struct{}
	loadOnce  sync.Once

	fullLoads, applied, compactions atomic.Int64

	mu      sync.RWMutex
	loaded  bool
	dirty   bool  // a write could not be applied: catch up (or rebuild) at the next check
	version int64 // the last feed entry applied, or the store's version
	checked time.Time
	loadErr error
	// built and buildCost are when the last full build ended and how long
	// it took, in wall time (they bound the rebuilds' share of the CPU
	// without a change feed).
	built     time.Time
	buildCost time.Duration
	readCost  time.Duration    // of buildCost, the read of the rows
	wall      func() time.Time // time.Now; tests replace it
	docs      map[string]int32 // ord by id of the live documents (the key is in text)
	all       []indexDoc       // by posting.ord; dead documents stay until a compaction
	text      textChunks
	// Dense columns by ord, read by the scans of postings and the
	// ranking without touching the text: the document's seq, score,
	// UpdatedAt in Unix nanoseconds, category (catIDs), signal count and
	// whether it is dead.
	seqs    []int64
	scores  []int
	updated []int64
	cats    []int32
	counts  []int32
	dead    []bool
	ndead   int
	catIDs  map[string]int32
	full    *wordLists // the full level: Title, Body and Extra
	prev    *wordLists // the preview level: Title and Preview
	scratch wordScratch
}

// wordLists are a level's postings lists, by word.
type wordLists struct {
	ids   map[string]int32 // the key is in the index's text
	lists []postings
	// levelWords' memory, by word id: the last document met and the
	// fields of it the word is in so far.
	last []int32
	bits []int8
}

func newWordLists() *wordLists { return &wordLists{ids: map[string]int32{}} }

// get returns the postings of w (nil when none).
func (l *wordLists) get(w string) postings {
	if i, ok := l.ids[w]; ok {
		return l.lists[i]
	}
	return nil
}

// id returns the id of w, created with an empty postings list when
// missing.
func (l *wordLists) id(w string) int32 {
	i, ok := l.ids[w]
	if !ok {
		i = int32(len(l.lists))
		l.ids[w] = i
		l.lists, l.last, l.bits = append(l.lists, nil), append(l.last, -1), append(l.bits, 0)
	}
	return i
}

// wordScratch is levelWords' reusable list of one document's words.
type wordScratch struct {
	order []int32
}

// levels are the index's two access levels: their lists and the text
// fields each matches (fTitle: relevance 8, then 3, then 1; -1: none).
func (x *searchIndex) levels() [2]level {
	return [2]level{{x.full, [3]int{fTitle, fBody, fExtra}}, {x.prev, [3]int{fTitle, fPreview, -1}}}
}

type level struct {
	lists  *wordLists
	fields [3]int
}

// costlyBuild is the wall time above which a full build is costly enough
// to be rate-limited (see Consistency in the type's documentation).
const costlyBuild = 250 * time.Millisecond

// feedBatch is how many change feed entries are applied at a time.
const feedBatch = 4096

func newSearchIndex(src IndexSource, every time.Duration, now func() time.Time) *searchIndex {
	x := &searchIndex{src: src, every: every, now: now, wall: time.Now, log: slog.New(slog.DiscardHandler),
		loadedCh: make(chan struct{})}
	x.feed, _ = src.(ChangeFeed)
	x.reset()
	return x
}

// reset empties the index's documents (not its state).
func (x *searchIndex) reset() {
	x.docs, x.all, x.text = map[string]int32{}, nil, nil
	x.seqs, x.scores, x.updated, x.cats, x.counts, x.dead, x.ndead = nil, nil, nil, nil, nil, nil, 0
	x.catIDs, x.full, x.prev = map[string]int32{}, newWordLists(), newWordLists()
}

// errIndexLoading: the index is not loaded yet (searches ask the store).
var errIndexLoading = errors.New("niche: search index loading")

// usable reports whether a search can be answered by the index, starting
// its load in the background when it is not, and applies the change feed
// (or checks the version) first when that is due and no StartIndex loop
// does it: one search at a time catches up while the others go on.
func (x *searchIndex) usable(ctx context.Context) (bool, error) {
	x.mu.RLock()
	loaded, dirty, checked := x.loaded, x.dirty, x.checked
	x.mu.RUnlock()
	if !loaded {
		x.startLoad(ctx)
		return false, nil
	}
	if (x.following.Load() && !dirty) || (!dirty && x.every > 0 && x.now().Sub(checked) < x.every) {
		return true, nil
	}
	if !x.build.TryLock() {
		return true, nil
	}
	defer x.build.Unlock()
	return true, x.refresh(ctx)
}

// startLoad loads the index in the background, once at a time.
func (x *searchIndex) startLoad(ctx context.Context) {
	if !x.loading.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer x.loading.Store(false)
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		defer cancel()
		if err := x.ensure(lctx); err != nil {
			x.log.Warn("niche: loading the search index failed; searches ask the store", "err", err)
		}
	}()
}

// ensure loads the index (waiting for it), or refreshes it when it is
// loaded.
func (x *searchIndex) ensure(ctx context.Context) error {
	x.build.Lock()
	defer x.build.Unlock()
	x.mu.RLock()
	loaded := x.loaded
	x.mu.RUnlock()
	if !loaded {
		return x.load(ctx)
	}
	return x.refresh(ctx)
}

// refresh catches up with the change feed, or checks the version of a
// store without one; x.build is held.
func (x *searchIndex) refresh(ctx context.Context) error {
	if x.feed != nil {
		return x.catchUp(ctx)
	}
	x.mu.RLock()
	dirty, version, built, cost := x.dirty, x.version, x.built, x.buildCost
	x.mu.RUnlock()
	checkedAt := x.now()
	v, err := x.src.SearchVersion(ctx)
	if err != nil {
		return err
	}
	cooling := cost > costlyBuild && x.wall().Sub(built) < 4*cost
	if !dirty && (v == version || cooling) {
		x.mu.Lock()
		x.checked = checkedAt
		x.mu.Unlock()
		return nil
	}
	return x.load(ctx)
}

// load reads every row from the store and replaces the index; with a
// change feed it then applies the entries committed meanwhile. x.build
// is held.
func (x *searchIndex) load(ctx context.Context) error {
	err := x.loadAll(ctx)
	if err == nil && x.feed != nil {
		err = x.catchUp(ctx)
	}
	x.mu.Lock()
	x.loadErr = err
	// Loaded once caught up: until then searches ask the store, which
	// has every write already.
	x.loaded = x.loaded || err == nil
	x.mu.Unlock()
	if err == nil {
		x.loadOnce.Do(func() { close(x.loadedCh) })
	}
	return err
}

func (x *searchIndex) loadAll(ctx context.Context) error {
	start := x.wall()
	checkedAt := x.now()
	// Read the version before the rows: rows newer than v are applied
	// again from the feed (or rebuild once more without one).
	v, err := x.src.SearchVersion(ctx)
	if err != nil {
		return err
	}
	var nx *searchIndex
	var read time.Time
	if rs, ok := x.src.(RowStreamer); ok {
		if nx, read, err = x.stream(ctx, rs); err != nil {
			return err
		}
	} else {
		rows, err := x.src.SearchRows(ctx, nil)
		if err != nil {
			return err
		}
		read = x.wall()
		nx = &searchIndex{}
		nx.reset()
		nx.addRows(rows)
	}
	x.mu.Lock()
	x.swap(nx)
	x.dirty, x.version, x.checked = false, v, checkedAt
	x.built = x.wall()
	x.buildCost, x.readCost = x.built.Sub(start), read.Sub(start)
	x.mu.Unlock()
	x.fullLoads.Add(1)
	return nil
}

// swap takes nx's documents; x.mu is held.
func (x *searchIndex) swap(nx *searchIndex) {
	x.docs, x.all, x.text, x.full, x.prev = nx.docs, nx.all, nx.text, nx.full, nx.prev
	x.seqs, x.scores, x.updated, x.cats, x.counts, x.catIDs = nx.seqs, nx.scores, nx.updated, nx.cats, nx.counts, nx.catIDs
	x.dead, x.ndead = nx.dead, nx.ndead
}

// addRows adds rows to an empty index, oldest first (every posting an
// append): the documents first, then each level's postings, the two
// levels at once (a core each).
func (x *searchIndex) addRows(rows []SearchRow) {
	slices.SortFunc(rows, func(a, b SearchRow) int { return cmp.Compare(a.Seq, b.Seq) })
	for i := range rows {
		x.add(&rows[i])
		rows[i] = SearchRow{} // the index holds its own copy of the text
	}
	var wg sync.WaitGroup
	for _, lv := range x.levels() {
		wg.Go(func() {
			var sc wordScratch
			d := x.view()
			for ord := range int32(len(x.all)) {
				x.levelWords(d, ord, lv, &sc, func(id int32, rel int8) {
					lv.lists.lists[id] = append(lv.lists.lists[id], posting{ord, rel})
				})
			}
		})
	}
	wg.Wait()
}

// stream builds an index from rs's rows as they are read: this goroutine
// copies each row into the documents, and one goroutine per level builds
// its postings from the documents published so far (every 1,024), so
// that the read and the two levels' builds run at once. It returns the
// index and when the read ended.
func (x *searchIndex) stream(ctx context.Context, rs RowStreamer) (*searchIndex, time.Time, error) {
	nx := &searchIndex{}
	nx.reset()
	levels := nx.levels()
	var feeds [2]chan docView
	var wg sync.WaitGroup
	for i := range feeds {
		feeds[i] = make(chan docView, 16)
		wg.Go(func() {
			var sc wordScratch
			lv, next := levels[i], int32(0)
			for d := range feeds[i] {
				for ; next < int32(len(d.all)); next++ {
					nx.levelWords(d, next, lv, &sc, func(id int32, rel int8) {
						lv.lists.lists[id] = append(lv.lists.lists[id], posting{next, rel})
					})
				}
			}
		})
	}
	// A view the builders may read while more documents are added: the
	// documents and text chunks written so far never change (appends
	// write past them), and the chunks' headers are copied.
	publish := func() {
		d := docView{all: nx.all, text: slices.Clone(nx.text)}
		for _, f := range feeds {
			f <- d
		}
	}
	last := int64(math.MinInt64)
	err := rs.EachSearchRow(ctx, func(r *SearchRow) error {
		if r.Seq <= last {
			return fmt.Errorf("niche: search rows out of order (%d after %d)", r.Seq, last)
		}
		last = r.Seq
		nx.add(r)
		if len(nx.all)%1024 == 0 {
			publish()
		}
		return nil
	})
	read := x.wall()
	publish()
	for _, f := range feeds {
		close(f)
	}
	wg.Wait()
	return nx, read, err
}

// docView is the documents of an index up to some point, for reading
// while more are added.
type docView struct {
	all  []indexDoc
	text textChunks
}

// field is text field f of document ord.
func (d docView) field(ord int32, f int) string { return d.text.get(d.all[ord].text[f]) }

// view is the index's documents as they are.
func (x *searchIndex) view() docView { return docView{x.all, x.text} }

// catchUp applies the change feed's entries after the last one applied;
// a gap loads the index anew. x.build is held.
func (x *searchIndex) catchUp(ctx context.Context) error {
	for {
		x.mu.RLock()
		after := x.version
		x.mu.RUnlock()
		checkedAt := x.now()
		changes, gap, err := x.feed.SearchChanges(ctx, after, feedBatch)
		if err == nil && !gap && len(changes) > 0 && changes[0].Seq != after+1 {
			gap = true // entries pruned while we read
		}
		if err != nil {
			x.markDirty()
			return err
		}
		if gap {
			x.log.Info("niche: the search index's change feed has a gap: loading it anew", "after", after)
			if err := x.loadAll(ctx); err != nil {
				return err
			}
			continue // then the entries committed since
		}
		if len(changes) == 0 {
			x.mu.Lock()
			x.checked, x.dirty = checkedAt, false
			x.mu.Unlock()
			return nil
		}
		ids := make([]string, 0, len(changes))
		seen := map[string]bool{}
		for _, c := range changes {
			if !seen[c.ID] {
				seen[c.ID] = true
				ids = append(ids, c.ID)
			}
		}
		rows, err := x.src.SearchRows(ctx, ids)
		if err != nil {
			x.markDirty()
			return err
		}
		x.mu.Lock()
		x.apply(ids, rows)
		x.version = changes[len(changes)-1].Seq
		x.mu.Unlock()
		x.applied.Add(int64(len(changes)))
		if len(changes) < feedBatch {
			x.mu.Lock()
			x.checked, x.dirty = checkedAt, false
			x.mu.Unlock()
			return nil
		}
	}
}

func (x *searchIndex) markDirty() {
	x.mu.Lock()
	x.dirty = true
	x.mu.Unlock()
}

// apply replaces the documents of ids by rows (those of ids still
// published); x.mu is held for writing.
func (x *searchIndex) apply(ids []string, rows []SearchRow) {
	byID := make(map[string]*SearchRow, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	for _, id := range ids {
		old, had := x.docs[id]
		r := byID[id]
		switch {
		case r == nil && had:
			x.kill(old)
		case r == nil:
		case had && x.sameText(old, r):
			// Only dense columns changed (a signal count, say).
			x.scores[old], x.updated[old], x.counts[old] = r.Score, r.UpdatedAt.UnixNano(), int32(r.Listing.SignalCount)
		default:
			if had {
				x.kill(old)
			}
			ord := x.add(r)
			seq := x.seqs[ord]
			x.eachWord(ord, func(l *wordLists, id int32, rel int8) {
				pp := &l.lists[id]
				p := *pp
				// The document's seq already has a posting when an
				// earlier state of it had the word: it is replaced.
				i, found := slices.BinarySearchFunc(p, seq, x.bySeq)
				if found {
					p[i] = posting{ord, rel}
					return
				}
				*pp = slices.Insert(p, i, posting{ord, rel})
			})
		}
	}
	if x.ndead > 1024 && x.ndead > len(x.docs)/4 {
		x.compact()
	}
}

// kill marks document ord dead; x.mu is held for writing.
func (x *searchIndex) kill(ord int32) {
	delete(x.docs, x.field(ord, fID))
	x.dead[ord] = true
	x.ndead++
}

// sameText reports whether document ord has r's text, seq and category.
func (x *searchIndex) sameText(ord int32, r *SearchRow) bool {
	l := &r.Listing
	for f, s := range [nFields]string{fID: r.ID, fTitle: r.Title, fBody: r.Body, fExtra: r.Extra, fPreview: r.Preview,
		fListingTitle: l.Title, fProblem: l.Problem, fBuyer: l.Buyer, fCategory: l.Category, fScoreVersion: l.ScoreVersion} {
		if x.field(ord, f) != s {
			return false
		}
	}
	c, ok := x.catIDs[r.CategoryKey]
	return x.seqs[ord] == r.Seq && ok && x.cats[ord] == c
}

// compact rebuilds the index from its live documents, without reading the
// store; x.mu is held for writing.
func (x *searchIndex) compact() {
	rows := make([]SearchRow, 0, len(x.docs))
	for _, ord := range x.docs {
		rows = append(rows, x.row(ord))
	}
	nx := &searchIndex{}
	nx.reset()
	nx.addRows(rows)
	x.swap(nx)
	x.compactions.Add(1)
}

// row is document ord as a SearchRow.
func (x *searchIndex) row(ord int32) SearchRow {
	c := x.candidate(ord, true)
	var key string
	for k, id := range x.catIDs {
		if id == x.cats[ord] {
			key = k
			break
		}
	}
	return SearchRow{Candidate: c, Preview: x.field(ord, fPreview), Seq: x.seqs[ord], CategoryKey: key}
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
	x.counts, x.dead = append(x.counts, int32(l.SignalCount)), append(x.dead, false)
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
// at each level, with that level's postings lists and the word's
// relevance there (Relevance of the one-word query: 8 for the title, 3
// for the body, 1 for the extra text). Words are given by their id in
// the level's lists.
func (x *searchIndex) eachWord(ord int32, add func(l *wordLists, id int32, rel int8)) {
	for _, lv := range x.levels() {
		x.levelWords(x.view(), ord, lv, &x.scratch, func(id int32, rel int8) { add(lv.lists, id, rel) })
	}
}

// levelWords calls add once for every distinct word of document ord's
// text at level lv (by its id in lv.lists), in order of appearance, with
// its relevance there. A word's first meeting with the document is told
// by lv.lists.last, so the words cost one map lookup each and no memory
// of their own. Calls for one level must not overlap.
func (x *searchIndex) levelWords(d docView, ord int32, lv level, sc *wordScratch, add func(id int32, rel int8)) {
	l := lv.lists
	sc.order = sc.order[:0]
	for i, f := range lv.fields {
		if f < 0 {
			continue
		}
		text := d.field(ord, f)
		bit := int8(1) << i
		for start := 0; start < len(text); {
			end := strings.IndexByte(text[start:], ' ')
			if end < 0 {
				end = len(text)
			} else {
				end += start
			}
			if end > start {
				id := l.id(text[start:end])
				if l.last[id] != ord {
					l.last[id], l.bits[id] = ord, 0
					sc.order = append(sc.order, id)
				}
				l.bits[id] |= bit
			}
			start = end + 1
		}
	}
	for _, id := range sc.order {
		b := l.bits[id]
		l.last[id] = -1 // a later state of the document starts afresh
		add(id, 8*(b&1)+3*(b>>1&1)+(b>>2&1))
	}
}

// written applies this engine's write of the evaluations ids, which has
// committed, so that it shows at once: with a change feed by catching up
// with it (other instances' writes committed before come with it),
// without one by reading the rows back. Nothing is done while the index
// is not loaded (the load reads it).
func (x *searchIndex) written(ctx context.Context, ids ...string) {
	x.mu.RLock()
	loaded := x.loaded
	x.mu.RUnlock()
	if !loaded {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if x.feed != nil {
		x.build.Lock()
		defer x.build.Unlock()
		if err := x.catchUp(ctx); err != nil {
			x.log.Warn("niche: applying a write to the search index failed; retried at the next search", "err", err)
		}
		return
	}
	rows, err := x.src.SearchRows(ctx, ids)
	x.mu.Lock()
	defer x.mu.Unlock()
	if err != nil {
		x.dirty = true
		return
	}
	x.apply(ids, rows)
}

// follow loads the index and keeps it applying the change feed until ctx
// is done: on the store's notifications (ChangeNotifier) and every poll.
func (x *searchIndex) follow(ctx context.Context, poll time.Duration) {
	if x.feed != nil {
		x.following.Store(true)
		defer x.following.Store(false)
	}
	wake := make(chan struct{}, 1)
	if n, ok := notifier(x.feed); ok {
		go func() {
			for ctx.Err() == nil {
				err := n.WatchSearchChanges(ctx, func() {
					select {
					case wake <- struct{}{}:
					default:
					}
				})
				if ctx.Err() == nil {
					x.log.Warn("niche: change feed notifications interrupted; polling until they resume", "err", err)
					select {
					case <-ctx.Done():
					case <-time.After(time.Second):
					}
				}
			}
		}()
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	backoff := time.Second
	for {
		err := x.ensure(ctx)
		if err != nil && ctx.Err() == nil {
			x.log.Warn("niche: search index load or catch-up failed", "err", err)
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Minute)
			continue
		}
		backoff = time.Second
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-t.C:
		}
	}
}

// status describes the index.
func (x *searchIndex) status() IndexStatus {
	x.mu.RLock()
	defer x.mu.RUnlock()
	st := IndexStatus{Enabled: true, Ready: x.loaded, Documents: len(x.docs), Seq: x.version,
		FullLoads: x.fullLoads.Load(), Applied: x.applied.Load(), Compactions: x.compactions.Load(),
		LoadTime: x.buildCost, LoadReadTime: x.readCost, LoadBuildTime: x.buildCost - x.readCost}
	if x.loadErr != nil {
		st.LoadError = x.loadErr.Error()
	}
	return st
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
// the best Ranked() of them are the same page. It returns
// errIndexLoading while the index is not loaded (the caller asks the
// store).
func (x *searchIndex) candidates(ctx context.Context, q CandidateQuery) ([]Candidate, []int, bool, error) {
	ok, err := x.usable(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	if !ok {
		return nil, nil, false, errIndexLoading
	}
	if q.Query.Empty() || q.Limit <= 0 {
		return []Candidate{}, []int{}, false, nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	m := x.prev
	if q.Full {
		m = x.full
	}
	lists := make([]postings, len(q.Query.Tokens))
	for i, t := range q.Query.Tokens {
		if lists[i] = m.get(t); len(lists[i]) == 0 {
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
