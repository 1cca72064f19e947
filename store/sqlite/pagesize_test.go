package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/assaykit/assay/store/sqlite"
)

// TestOpenMakesFilesWithLargePages: a database file Open makes has 16 KB
// pages and is in WAL mode; one made before with other pages keeps them
// and opens as before.
func TestOpenMakesFilesWithLargePages(t *testing.T) {
	ctx := context.Background()
	pageSize := func(path string) (size int, mode string) {
		t.Helper()
		c, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.QueryRow("PRAGMA page_size").Scan(&size); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		return size, mode
	}
	fresh := filepath.Join(t.TempDir(), "new.db")
	db, err := sqlite.Open(ctx, fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if size, mode := pageSize(fresh); size != 16384 || mode != "wal" {
		t.Fatalf("a new database: page size %d, journal mode %s", size, mode)
	}

	old := filepath.Join(t.TempDir(), "old.db")
	c, err := sql.Open("sqlite", "file:"+old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec("PRAGMA page_size = 4096"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec("CREATE TABLE before_assay (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	db, err = sqlite.Open(ctx, old, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if size, mode := pageSize(old); size != 4096 || mode != "wal" {
		t.Fatalf("an existing database: page size %d, journal mode %s", size, mode)
	}
}
