package nichestore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichedemo"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/sqlite"
)

// The niche store of a database serves the catalogue engine and keeps the
// change feed its search index follows; on SQLite the engine polls it (no
// notifications), and the host prunes it now and then.
func Example() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	st := nichestore.New(db)
	e, err := niche.New(st, nil)
	if err != nil {
		log.Fatal(err)
	}
	rep, err := nichedemo.Load(ctx, e, nil)
	if err != nil {
		log.Fatal(err)
	}
	head, err := st.SearchVersion(ctx)
	if err != nil {
		log.Fatal(err)
	}
	pruned, err := st.PruneNicheFeed(ctx, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.PublishedNiches, "published;", "notifies:", st.NotifiesSearchChanges(), "pruned all but the last:", pruned == head-1)
	// Output: 42 published; notifies: false pruned all but the last: true
}
