package snapshotmem_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
)

// A Store keeps records in memory with the SQL store's rules: a held
// record outlives the retention purge until it is released.
func Example() {
	ctx := context.Background()
	st := snapshotmem.New()
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, id := range []string{"snap_00000000000000000000000000000001", "snap_00000000000000000000000000000002"} {
		s := &snapshot.Snapshot{ID: id, RequestedURL: "https://docs.example.org/", RetrievedAt: at, Status: snapshot.StatusFailed}
		if err := st.InsertSnapshot(ctx, s); err != nil {
			log.Fatal(err)
		}
	}
	if err := st.HoldSnapshots(ctx, []string{"snap_00000000000000000000000000000001"}); err != nil {
		log.Fatal(err)
	}
	n, err := st.DeleteSnapshotsBefore(ctx, at.Add(time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, st.Len())
	// Output: 1 1
}
