// Package storetest gives tests a database: a fresh SQLite file
// (SQLitePath), an isolated PostgreSQL schema, empty (PostgresURL) or
// freshly migrated (MigratedPostgresURL), the list of every backend a
// store test runs on (Backends), an opener that closes the database when
// the test ends (Open), both together (Stores), two handles on one
// database (SharedStores) and a database prepared once and copied for
// each test (Template).
//
// The conformance suites of the domain stores live beside their
// interfaces: claimstest.TestStore, nichetest.TestStore and
// nichetest.TestSubscriptionStore, snapshottest.TestStore and
// snapshottest.TestBlobStore, paymenttest.TestLedger. Package
// internal/conformance runs them on every backend listed here, through
// the domain stores (store/claimsstore, ...), and on the in-memory
// implementations (claims/claimsmem, ...). TestMetaStore, the suite of the
// instance-wide settings (*store.DB, metamem.Store), is here.
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// PostgresEnv names the environment variable holding the URL of the
// PostgreSQL server used by tests. .ci/run always sets it.
const PostgresEnv = "ASSAY_TEST_POSTGRES"

// PostgresURL returns a connection URL for a new, empty schema on the
// server named by ASSAY_TEST_POSTGRES; the schema is dropped when the test
// ends. Every connection made with the URL uses that schema, so several
// store.DB values opened with it share one database, as several server
// instances would. Its sessions commit without waiting for the WAL flush
// (synchronous_commit=off): what the tests check does not depend on
// surviving a crash of the PostgreSQL server, and each commit is then
// about 0.1 ms rather than 0.3 ms here. Without the variable the test
// stops through testenv.Missing: it is skipped with a message that says
// so, or fails under ASSAY_TEST_STRICT=1 (as in .ci/run).
//
// Tests about migrations need such a schema; the others take a migrated
// one, much cheaper, from MigratedPostgresURL.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := postgresBase(t)
	schema := "t_" + ids.New("")[:24]
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatalf("postgres: create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("postgres: drop schema %s: %v", schema, err)
		}
		admin.Close()
	})
	return schemaURL(base, schema)
}

// postgresBase returns the URL ASSAY_TEST_POSTGRES holds, or stops the
// test through testenv.Missing.
func postgresBase(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		testenv.Missing(t, "PostgreSQL: set %s (for example postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", PostgresEnv)
	}
	if _, err := url.Parse(base); err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	return base
}

// SQLitePath returns the path of a fresh SQLite database file in a
// temporary directory removed when the test ends.
func SQLitePath(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("%s/assay.db", t.TempDir())
}

// Backends returns, by name, a function giving a fresh data source name of
// every backend a store test runs on: "sqlite-file" (SQLitePath),
// "sqlite-mem" (":memory:") and "postgres" (MigratedPostgresURL, which
// stops the test through testenv.Missing without ASSAY_TEST_POSTGRES).
func Backends() map[string]func(t testing.TB) string {
	return map[string]func(t testing.TB) string{
		"sqlite-file": SQLitePath,
		"sqlite-mem":  func(testing.TB) string { return ":memory:" },
		"postgres":    MigratedPostgresURL,
	}
}

// Stores returns, by backend name (as Backends), a function opening a
// fresh database of that backend, closed when the test ends.
func Stores() map[string]func(t testing.TB) *store.DB {
	out := map[string]func(t testing.TB) *store.DB{}
	for name, dsn := range Backends() {
		out[name] = func(t testing.TB) *store.DB { return Open(t, dsn(t), nil) }
	}
	return out
}

// SharedStores returns, by backend name, a function opening two handles
// on one fresh database, as two server instances have: "sqlite-file" (two
// SQLite handles on one file) and "postgres" (two pools on one schema).
func SharedStores() map[string]func(t testing.TB) (*store.DB, *store.DB) {
	return map[string]func(t testing.TB) (*store.DB, *store.DB){
		"sqlite-file": func(t testing.TB) (*store.DB, *store.DB) {
			p := SQLitePath(t)
			return Open(t, p, nil), Open(t, p, nil)
		},
		"postgres": func(t testing.TB) (*store.DB, *store.DB) {
			u := MigratedPostgresURL(t)
			return Open(t, u, nil), Open(t, u, nil)
		},
	}
}

// Open opens the database dsn names (anydb.Open) with opts and closes it
// when the test ends.
func Open(t testing.TB, dsn string, opts *store.Options) *store.DB {
	t.Helper()
	db, err := anydb.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatalf("open %q: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
