package nichetest_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/niche/nichetest"
)

// Subscribers stands in for the subscription service wherever a
// niche.Subscribers is needed (server.NicheConfig.Subscribers).
func ExampleSubscribers() {
	var subs nichetest.Subscribers
	subs.Add("nd_test_token", niche.Subscriber{ID: "cus_1", Status: "active"})

	s, err := subs.Active(context.Background(), "nd_test_token")
	fmt.Println(s.ID, s.Status, err)
	subs.Revoke("nd_test_token")
	_, err = subs.Active(context.Background(), "nd_test_token")
	fmt.Println(errors.Is(err, niche.ErrNotSubscribed), subs.Calls())
	// Output:
	// cus_1 active <nil>
	// true 2
}

// MemStore runs the catalogue engine without a database: here with the
// demo catalogue, searched at the preview level.
func ExampleMemStore() {
	ctx := context.Background()
	e, err := niche.New(nichetest.NewMemStore(), nil)
	if err != nil {
		log.Fatal(err)
	}
	rep, err := nichedemo.Load(ctx, e, nil)
	if err != nil {
		log.Fatal(err)
	}
	list, err := e.List(ctx, niche.ListOptions{Limit: 100})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.PublishedNiches, "published,", len(list.Previews), "listed")
	// Output: 42 published, 42 listed
}
