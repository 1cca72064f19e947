package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

// One *store.DB holds every store of the SDK, each domain's through its
// package's New (store/claimsstore, store/nichestore, ...). Open creates
// the SQLite file if needed and applies the embedded migrations; opening
// it again (another process, or after a restart) finds the same data.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "assay-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "assay.db")

	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	var (
		_ niche.Store             = nichestore.New(db)
		_ niche.SubscriptionStore = nichestore.New(db)
		_ claims.Store            = claimsstore.New(db)
		_ snapshot.Store          = snapshotstore.New(db)
		_ snapshot.BlobStore      = snapshotstore.New(db)
		_ payment.Ledger          = paymentstore.New(db)
	)
	fmt.Println(db.Dialect(), db.Ping(ctx), db.CheckIntegrity(ctx))
	first, err := db.SetMetaOnce(ctx, "example.setting", "blue")
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}

	db, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	second, err := db.SetMetaOnce(ctx, "example.setting", "green") // the first writer won
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first, second)
	// Output:
	// sqlite <nil> <nil>
	// blue blue
}

// ":memory:" is a private in-memory database: for tests and one-shot tools.
func ExampleOpen_memory() {
	db, err := sqlite.Open(context.Background(), ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fmt.Println(db.Dialect())
	// Output: sqlite
}
