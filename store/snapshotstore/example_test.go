package snapshotstore_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"strings"
	"time"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

// The snapshot store of a database is also a blob store: content is kept
// once under its SHA-256, whoever puts it, and deleted only when no record
// uses it.
func Example() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	st := snapshotstore.New(db)
	page := []byte("<p>Base mainnet chain id is 8453.</p>")
	sum := snapshot.RawSHA256(page)
	for range 2 {
		if err := st.PutBlob(ctx, sum, int64(len(page)), strings.NewReader(string(page))); err != nil {
			log.Fatal(err)
		}
	}
	b, err := st.OpenBlob(ctx, sum)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	got, err := io.ReadAll(b)
	if err != nil {
		log.Fatal(err)
	}
	sums, err := st.BlobsBefore(ctx, time.Now().Add(time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(got), len(sums))
	// Output: <p>Base mainnet chain id is 8453.</p> 1
}
