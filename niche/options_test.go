package niche_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/shapes"
	"github.com/google/go-cmp/cmp"
)

// TestOptionsAreTheQuery checks that ListOptions and SearchOptions are the
// queries of the HTTP routes: a zero value lists and searches as the query
// without those parameters does (the documented defaults), and the engine
// refuses what the routes refuse, with the same message (one bound: a
// search returns at most 20 results, a list 100).
func TestOptionsAreTheQuery(t *testing.T) {
	ctx := context.Background()
	e := engineOn(t, &niche.Options{Sources: nichedemo.Sources()})
	if _, err := nichedemo.Load(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	var lq niche.ListOptions
	if err := shapes.DecodeQuery(url.Values{}, &lq); err != nil {
		t.Fatal(err)
	}
	a, errA := e.List(ctx, lq)
	b, errB := e.List(ctx, niche.ListOptions{})
	if errA != nil || errB != nil || len(a.Previews) == 0 {
		t.Fatalf("%v, %v", errA, errB)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("list (-query +zero value):\n%s", diff)
	}
	var sq niche.SearchOptions
	if err := shapes.DecodeQuery(url.Values{"q": {"late payment"}}, &sq); err != nil {
		t.Fatal(err)
	}
	c, errC := e.Search(ctx, sq)
	d, errD := e.Search(ctx, niche.SearchOptions{Query: "late payment"})
	if errC != nil || errD != nil || len(c.Previews) == 0 {
		t.Fatalf("%v, %v", errC, errD)
	}
	if diff := cmp.Diff(c, d); diff != "" {
		t.Fatalf("search (-query +zero value):\n%s", diff)
	}

	for _, tc := range []struct {
		what  string
		query url.Values
		run   func() error
	}{
		{"search limit 21", url.Values{"q": {"late payment"}, "limit": {"21"}},
			func() error {
				_, err := e.Search(ctx, niche.SearchOptions{Query: "late payment", Limit: 21})
				return err
			}},
		{"search q too short", url.Values{"q": {"ab"}},
			func() error { _, err := e.Search(ctx, niche.SearchOptions{Query: "ab"}); return err }},
		{"search sort", url.Values{"q": {"late payment"}, "sort": {"best"}},
			func() error {
				_, err := e.Search(ctx, niche.SearchOptions{Query: "late payment", Sort: "best"})
				return err
			}},
		{"list limit 101", url.Values{"limit": {"101"}},
			func() error { _, err := e.List(ctx, niche.ListOptions{Limit: 101}); return err }},
		{"list category", url.Values{"category": {strings.Repeat("c", 81)}},
			func() error {
				_, err := e.List(ctx, niche.ListOptions{Category: new(strings.Repeat("c", 81))})
				return err
			}},
	} {
		var dst any = new(niche.SearchOptions)
		if !tc.query.Has("q") {
			dst = new(niche.ListOptions)
		}
		var ve *shapes.ValidationError
		if err := shapes.DecodeQuery(tc.query, dst); !errors.As(err, &ve) {
			t.Fatalf("%s: the query is accepted (%v)", tc.what, err)
		}
		var ie *niche.InvalidError
		if err := tc.run(); !errors.As(err, &ie) || !errors.Is(err, niche.ErrInvalid) {
			t.Fatalf("%s: the engine says %v", tc.what, err)
		}
		if want := ve.Detail[0]; ie.Field != want.Loc[0] || ie.Reason != want.Msg {
			t.Errorf("%s: engine %q: %q, query %v: %q", tc.what, ie.Field, ie.Reason, want.Loc, want.Msg)
		}
	}
}
