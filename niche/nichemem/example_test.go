package nichemem_test

import (
	"context"
	"fmt"
	"log"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/niche/nichemem"
)

// An in-memory Store runs the catalogue engine without a database: here
// with the demo catalogue, listed at the preview level.
func Example() {
	ctx := context.Background()
	e, err := niche.New(nichemem.New(), nil)
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
