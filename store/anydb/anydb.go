// Package anydb opens an assay database of either dialect from one data
// source name, for programs that learn their database at run time (the
// example server's -db flag, benchmarks, tests). It links both database
// drivers; an application that knows its database imports store/sqlite or
// store/postgres instead and links only that driver.
package anydb

import (
	"context"
	"strings"

	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/postgres"
	"github.com/assaykit/assay/store/sqlite"
)

// Open opens the database named by dsn and applies pending migrations:
//
//   - "postgres://…" or "postgresql://…": PostgreSQL (postgres.Open).
//   - ":memory:": a private in-memory SQLite database (sqlite.Open).
//   - "sqlite:<path>", "file:<path>" or a plain path: an SQLite file; a
//     "?query" after the path is ignored (the store sets its own pragmas).
func Open(ctx context.Context, dsn string, opts *store.Options) (*store.DB, error) {
	if IsPostgres(dsn) {
		return postgres.Open(ctx, dsn, opts)
	}
	path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return sqlite.Open(ctx, path, opts)
}

// IsPostgres reports whether dsn names a PostgreSQL database (a
// "postgres://" or "postgresql://" URL).
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}
