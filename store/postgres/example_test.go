package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/assaykit/assay/store/postgres"
)

// The same store runs on PostgreSQL, and several instances may share the
// database: migrations run under an advisory lock, payment reservations
// and idempotency leases are atomic across instances.
func ExampleOpen() {
	ctx := context.Background()
	db, err := postgres.Open(ctx, os.Getenv("ASSAY_POSTGRES_URL"), nil) // postgres://user:pass@host:5432/assay?sslmode=require
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fmt.Println(db.Dialect())
}
