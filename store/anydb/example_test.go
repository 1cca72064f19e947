package anydb_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/assaykit/assay/store/anydb"
)

// A program configured at run time opens whatever its data source name
// says: a PostgreSQL URL, ":memory:", or an SQLite path (plain or with a
// "sqlite:" or "file:" prefix).
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "assay-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, dsn := range []string{":memory:", "sqlite:" + filepath.Join(dir, "assay.db")} {
		db, err := anydb.Open(ctx, dsn, nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(db.Dialect(), anydb.IsPostgres(dsn))
		db.Close()
	}
	fmt.Println(anydb.IsPostgres("postgres://user:pass@host:5432/assay?sslmode=require"))
	// Output:
	// sqlite false
	// sqlite false
	// true
}
