package nichedemo_test

import (
	"context"
	"fmt"
	"log"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/sqlite"
)

// Load fills an engine with the demonstration catalogue through the bulk
// import; loading again stores nothing new, so a server may load it at
// every start.
func ExampleLoad() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	eng, err := niche.New(nichestore.New(db), &niche.Options{Sources: nichedemo.Sources()})
	if err != nil {
		log.Fatal(err)
	}
	first, err := nichedemo.Load(ctx, eng, nil)
	if err != nil {
		log.Fatal(err)
	}
	again, err := nichedemo.Load(ctx, eng, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.SignalsCreated, first.DraftsCreated, first.PublishedNiches)
	fmt.Println(again.SignalsCreated, again.SignalsDuplicate, again.DraftsReplayed)

	page, err := eng.List(ctx, niche.ListOptions{Category: new("Food & Beverage"), Limit: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(page.Previews) > 0, page.Previews[0].ScoreType)
	// Output:
	// 187 42 42
	// 0 187 42
	// true editorial_hypothesis
}
