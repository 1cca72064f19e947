package claimsstore_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/sqlite"
)

// The claims store of a database serves the engine (claims.New) and, for
// a process that holds the database alone, frees at start-up the
// idempotency leases of calls a previous run left pending.
func Example() {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	st := claimsstore.New(db)
	key := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Deep, Key: "retry-1"}
	now := time.Now()
	if _, err := st.AcquireIdempotency(ctx, key, "h1", now, time.Hour); err != nil { // a call that never ended
		log.Fatal(err)
	}
	n, err := st.ReleaseIdempotencyLeases(ctx) // the next start
	if err != nil {
		log.Fatal(err)
	}
	again, err := st.AcquireIdempotency(ctx, key, "h1", now, time.Hour)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, again.Lease != nil)
	// Output: 1 true
}
