package anydb_test

import (
	"context"
	"fmt"
	"log"

	"github.com/assaykit/assay/store/anydb"
)

// A program configured at run time opens whatever its data source name
// says: a PostgreSQL URL, or SQLite (":memory:", or a path, plain or after
// a "sqlite:" or "file:" prefix).
func ExampleOpen() {
	ctx := context.Background()
	for _, dsn := range []string{":memory:", "sqlite::memory:"} {
		db, err := anydb.Open(ctx, dsn, nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(dsn, db.Dialect(), anydb.IsPostgres(dsn))
		db.Close()
	}
	fmt.Println(anydb.IsPostgres("postgres://user:pass@host:5432/assay?sslmode=require"))
	// Output:
	// :memory: sqlite false
	// sqlite::memory: sqlite false
	// true
}
