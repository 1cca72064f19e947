package anydb_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/storetest"
)

// TestOpenPicksTheDialect: every spelling of an SQLite file opens that
// file, and both PostgreSQL schemes open PostgreSQL.
func TestOpenPicksTheDialect(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct{ prefix, file, query string }{
		{"", "plain.db", ""}, {"sqlite:", "prefixed.db", ""}, {"file:", "uri.db", "?mode=rwc"},
	} {
		dsn := tc.prefix + filepath.Join(dir, tc.file) + tc.query
		db, err := anydb.Open(ctx, dsn, nil)
		if err != nil {
			t.Fatalf("%q: %v", dsn, err)
		}
		db.Close()
		if _, err := os.Stat(filepath.Join(dir, tc.file)); err != nil || db.Dialect() != store.SQLite {
			t.Errorf("%q: dialect %s, file %s: %v", dsn, db.Dialect(), tc.file, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 { // no file named after a prefix or a query
		t.Errorf("%d files in the directory, want the 3 databases: %v", len(entries), entries)
	}
	u := storetest.MigratedPostgresURL(t)
	for _, scheme := range []string{"postgres://", "postgresql://"} {
		dsn := scheme + strings.TrimPrefix(u, "postgres://")
		if !anydb.IsPostgres(dsn) {
			t.Fatalf("IsPostgres(%q) = false", dsn)
		}
		db := storetest.Open(t, dsn, nil)
		if db.Dialect() != store.Postgres {
			t.Errorf("%q: dialect %s", scheme, db.Dialect())
		}
	}
}
