package niche_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store/nichestore"
)

// slowLoad is a store whose full read of the search rows waits until
// released: an index load that takes as long as the test wants.
type slowLoad struct {
	*nichestore.Store
	started, release chan struct{}
}

func (s *slowLoad) SearchRows(ctx context.Context, ids []string) ([]niche.SearchRow, error) {
	if ids == nil {
		s.started <- struct{}{}
		<-s.release
	}
	return s.Store.SearchRows(ctx, ids)
}

func (s *slowLoad) EachSearchRow(ctx context.Context, fn func(*niche.SearchRow) error) error {
	s.started <- struct{}{}
	<-s.release
	return s.Store.EachSearchRow(ctx, fn)
}

// TestSearchBeforeIndexLoaded: the index loads in the background; until
// it is loaded, searches answer from the store's own search (the same
// results), and IndexStatus says it is not ready; once loaded, the index
// answers the same.
func TestSearchBeforeIndexLoaded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // stops StartIndex's loop
	writer := engineOn(t, nil)
	for i := range 3 {
		d := testDraft(sigs(1, 2, 3))
		d.Title = fmt.Sprintf("Bookkeeping for farmers %d", i)
		if _, err := writer.Create(ctx, niche.Op{ID: fmt.Sprintf("load-%d", i)}, d); err != nil {
			t.Fatal(err)
		}
	}
	src := &slowLoad{Store: writer.Store().(*nichestore.Store), started: make(chan struct{}, 1), release: make(chan struct{})}
	e, err := niche.New(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := niche.New(src.Store, &niche.Options{DisableSearchIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	o := niche.SearchOptions{Query: "bookkeeping farmers"}
	want, err := plain.Search(ctx, o)
	if err != nil || len(want.Previews) != 3 {
		t.Fatalf("store search: %+v %v", want, err)
	}
	e.StartIndex(ctx)
	<-src.started // the load is under way, and waits
	if st := e.IndexStatus(); st.Ready || !st.Enabled {
		t.Fatalf("status while loading: %+v", st)
	}
	got, err := e.Search(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("search while the index loads (-store +got):\n%s", diff)
	}
	close(src.release)
	if err := e.LoadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if st := e.IndexStatus(); !st.Ready || st.Documents != 3 || st.FullLoads != 1 {
		t.Fatalf("status once loaded: %+v", st)
	}
	if got, err = e.Search(ctx, o); err != nil || !cmp.Equal(want, got) {
		t.Fatalf("search from the index: %v\n%s", err, cmp.Diff(want, got))
	}
}
