package niche

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// countingStore answers the public reads from a fixed catalogue, counts
// the calls, and can hold searches until released. Methods the cache
// tests do not use are left to the nil embedded Store.
type countingStore struct {
	Store
	searches, lists, writes atomic.Int32
	hold                    chan struct{} // when set, searches wait for it to close
	fail                    atomic.Bool
}

func (s *countingStore) SearchCandidates(ctx context.Context, q CandidateQuery) ([]Candidate, bool, error) {
	s.searches.Add(1)
	if s.hold != nil {
		select {
		case <-s.hold:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	if s.fail.Load() {
		return nil, false, errors.New("store down")
	}
	var out []Candidate
	for i := range 3 {
		id := fmt.Sprintf("niche_%032d", i)
		out = append(out, Candidate{ID: id, Score: 10 * i, Title: "plumbing " + q.Query.Phrase(), Body: "body", Extra: "extra",
			Listing: Listing{ID: id, Title: fmt.Sprintf("Title %d", i), Problem: "A problem", Score: 10 * i}})
	}
	return out, false, nil
}

func (s *countingStore) SignalCounts(ctx context.Context, ids []string) (map[string]int, error) {
	out := map[string]int{}
	for _, id := range ids {
		out[id] = 3
	}
	return out, nil
}

func (s *countingStore) ListPublished(ctx context.Context, q ListQuery) ([]Listing, error) {
	s.lists.Add(1)
	return []Listing{{ID: "niche_1", Title: "Listed", Problem: "A problem"}}, nil
}

func (s *countingStore) Published(ctx context.Context, ids []string) (map[string]*Record, error) {
	out := map[string]*Record{}
	for _, id := range ids {
		out[id] = &Record{ID: id, Title: "Full " + id, Status: StatusPublished}
	}
	return out, nil
}

func (s *countingStore) Operation(ctx context.Context, opID string) (string, *Record, error) {
	return "", nil, nil
}

func (s *countingStore) Signals(ctx context.Context, ids []string) (map[string]Signal, error) {
	out := map[string]Signal{}
	for i, id := range ids {
		out[id] = Signal{ID: id, Kind: KindComplaint, State: StateAccepted, SourceDomain: fmt.Sprintf("d%d.example", i)}
	}
	return out, nil
}

func (s *countingStore) ApplyWrite(ctx context.Context, w Write) (*Record, bool, error) {
	s.writes.Add(1)
	r := w.Record
	return &r, false, nil
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func cachedEngine(t *testing.T, st Store, clock *fakeClock) *Engine {
	t.Helper()
	e, err := New(st, &Options{SearchCacheTTL: 5 * time.Second, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestReadCacheServesRepeatedReads(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{}
	clock := &fakeClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	e := cachedEngine(t, st, clock)

	first, err := e.Search(ctx, SearchOptions{Query: "Plumbing  invoices"})
	if err != nil {
		t.Fatal(err)
	}
	// The same normalised query is one store call; the result names the
	// caller's own query.
	second, err := e.Search(ctx, SearchOptions{Query: "plumbing, INVOICES!"})
	if err != nil {
		t.Fatal(err)
	}
	if n := st.searches.Load(); n != 1 {
		t.Fatalf("%d store searches, want 1", n)
	}
	if second.Query.Raw != "plumbing, INVOICES!" || first.Query.Raw != "Plumbing  invoices" {
		t.Errorf("queries %q and %q", first.Query.Raw, second.Query.Raw)
	}
	if diff := cmp.Diff(first.Previews, second.Previews); diff != "" || len(first.Previews) != 3 {
		t.Errorf("cached previews differ (-first +second):\n%s", diff)
	}
	// Callers may modify their copy.
	second.Previews[0].Unlock = &Unlock{}
	second.Previews[1].Title = "changed"
	third, _ := e.Search(ctx, SearchOptions{Query: "plumbing invoices"})
	if third.Previews[0].Unlock != nil || third.Previews[1].Title != "Title 1" {
		t.Errorf("a caller's change leaked into the cache: %+v", third.Previews[:2])
	}

	// Other options are other keys.
	for _, o := range []SearchOptions{
		{Query: "plumbing invoices", Sort: SortRecent},
		{Query: "plumbing invoices", Category: new("Trades")},
		{Query: "plumbing invoices", Limit: 5},
		{Query: "plumbing invoices", Full: true},
	} {
		if _, err := e.Search(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if n := st.searches.Load(); n != 5 {
		t.Fatalf("%d store searches after 4 other keys, want 5", n)
	}

	// Lists are cached the same way.
	for range 3 {
		res, err := e.List(ctx, ListOptions{Sort: SortScore})
		if err != nil || len(res.Previews) != 1 {
			t.Fatal(res, err)
		}
		res.Previews[0].Title = "changed"
	}
	if n := st.lists.Load(); n != 1 {
		t.Fatalf("%d store lists, want 1", n)
	}

	// The TTL expires.
	clock.add(6 * time.Second)
	if _, err := e.Search(ctx, SearchOptions{Query: "plumbing invoices"}); err != nil {
		t.Fatal(err)
	}
	if n := st.searches.Load(); n != 6 {
		t.Fatalf("%d store searches after the TTL, want 6", n)
	}
}

func TestReadCacheClearedByWrites(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{}
	clock := &fakeClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	e := cachedEngine(t, st, clock)
	search := func() {
		t.Helper()
		if _, err := e.Search(ctx, SearchOptions{Query: "plumbing"}); err != nil {
			t.Fatal(err)
		}
	}
	search()
	search()
	d := Draft{Title: "A title long enough", Problem: "A problem statement that is long enough.", Buyer: "Buyers",
		Category: "Trades", SolutionHypothesis: "A hypothesis long enough", EvaluationNotes: "Notes that are long enough here.",
		SignalIDs: []string{"sig_" + fmt.Sprintf("%032d", 1)},
		Pain:      new(0), Frequency: new(0), WillingnessToPay: new(0), ReachableBuyers: new(0), Feasibility: new(0), CompetitionGap: new(0)}
	if _, err := e.Create(ctx, Op{}, d); err != nil {
		t.Fatal(err)
	}
	search()
	if n := st.searches.Load(); n != 2 {
		t.Fatalf("%d store searches, want 2 (one before, one after the write)", n)
	}
}

func TestReadCacheSharesConcurrentLoads(t *testing.T) {
	st := &countingStore{hold: make(chan struct{})}
	clock := &fakeClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	e := cachedEngine(t, st, clock)

	// The first caller gives up while the load runs: the others still get
	// the result.
	firstCtx, cancelFirst := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() {
		_, err := e.Search(firstCtx, SearchOptions{Query: "plumbing"})
		firstErr <- err
	}()
	for st.searches.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Search(context.Background(), SearchOptions{Query: "plumbing"})
			if err == nil && len(res.Previews) != 3 {
				err = fmt.Errorf("%d previews", len(res.Previews))
			}
			errs <- err
		}()
	}
	cancelFirst()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Errorf("first caller: %v, want context.Canceled", err)
	}
	time.Sleep(20 * time.Millisecond) // let the others join the flight
	close(st.hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := st.searches.Load(); n != 1 {
		t.Errorf("%d store searches for 11 concurrent callers, want 1", n)
	}
}

func TestReadCacheDoesNotKeepErrors(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{}
	st.fail.Store(true)
	clock := &fakeClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	e := cachedEngine(t, st, clock)
	if _, err := e.Search(ctx, SearchOptions{Query: "plumbing"}); err == nil {
		t.Fatal("no error from a failing store")
	}
	st.fail.Store(false)
	res, err := e.Search(ctx, SearchOptions{Query: "plumbing"})
	if err != nil || len(res.Previews) != 3 {
		t.Fatalf("after recovery: %+v %v", res, err)
	}
}

func TestReadCacheBounded(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	c := newReadCache(time.Minute, 8, clock.Now)
	for i := range 100 {
		k := fmt.Sprint(i)
		if _, err := c.get(context.Background(), k, func(context.Context) (any, error) { return i, nil }); err != nil {
			t.Fatal(err)
		}
		if n := len(c.items); n > 8 {
			t.Fatalf("%d items, bound 8", n)
		}
	}
	if _, err := New(&countingStore{}, &Options{SearchCacheTTL: -time.Second}); err == nil {
		t.Error("negative TTL accepted")
	}
}
