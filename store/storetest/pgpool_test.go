package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/nichestore"
)

// A schema that a test wrote to in every way the store can (rows in
// many tables, the identity sequence, the language recorded in assay_meta,
// the version a trigger keeps) comes back to the next test as it was
// after migration; one whose structure a test changed is dropped.
func TestMigratedPostgresURLPoolsFreshSchemas(t *testing.T) {
	ctx := context.Background()
	var first string
	var fresh pgState
	t.Run("dirty", func(t *testing.T) {
		first = MigratedPostgresURL(t)
		p, _ := pools.get(ctx, postgresBase(t))
		fresh = stateOf(t, p, first)
		db := Open(t, first, &store.Options{SearchLanguage: niche.NoStemming})
		now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		var recs []niche.Record
		for i := 1; i <= 3; i++ {
			recs = append(recs, niche.Record{
				ID: fmt.Sprintf("niche_%032x", i), Title: "Rent reminders for landlords", Problem: "Landlords chase tenants.",
				Buyer: "Landlords", Category: "Property", SolutionHypothesis: "A reminder tool.", EvaluationNotes: "notes",
				SignalIDs: []string{fmt.Sprintf("sig_%032x", 1)}, Score: 50, ScoreVersion: "editorial-v1",
				Status: niche.StatusPublished, Revision: 1, CreatedAt: now, UpdatedAt: now, PublishedAt: now,
			})
		}
		if err := nichestore.New(db).BulkLoadNiche(ctx, nil, recs, 10); err != nil {
			t.Fatal(err)
		}
		if err := db.SetMeta(ctx, "written", "by the first test"); err != nil {
			t.Fatal(err)
		}
		if now := stateOf(t, p, first); now.equal(fresh) {
			t.Fatal("the writes left the schema as it was: the check below would prove nothing")
		}
	})
	t.Run("reused", func(t *testing.T) {
		u := MigratedPostgresURL(t)
		if u != first {
			t.Fatalf("got a new schema (%s), want the first one back (%s)", u, first)
		}
		p, _ := pools.get(ctx, postgresBase(t))
		if now := stateOf(t, p, u); !now.equal(fresh) {
			t.Fatalf("after reset:\n%+v\nwant the state after migration:\n%+v", now, fresh)
		}
		db := Open(t, u, nil)
		if _, err := db.Meta(ctx, "written"); err == nil {
			t.Fatal("the first test's meta row survived")
		}
		// The schema's structure changes: it must not come back.
		raw, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.ExecContext(ctx, "CREATE TABLE extra (x int)"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("dropped", func(t *testing.T) {
		u := MigratedPostgresURL(t)
		if u == first {
			t.Fatal("a schema with an extra table came back to the pool")
		}
		p, _ := pools.get(ctx, postgresBase(t))
		var n int
		if err := p.admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schemaOf(t, first)).Scan(&n); err != nil || n != 0 {
			t.Fatalf("the changed schema is still there (%d, %v)", n, err)
		}
	})
}

// A pooled schema whose binary is gone (nobody holds its lock) is dropped
// by the next pool to start; one whose lock is held is left alone.
func TestSchemaPoolSweepsOrphans(t *testing.T) {
	ctx := context.Background()
	base := postgresBase(t)
	p, err := pools.get(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	orphan := pgPoolPrefix + "orphan_" + fmt.Sprint(time.Now().UnixNano())
	held := pgPoolPrefix + "held_" + fmt.Sprint(time.Now().UnixNano())
	for _, n := range []string{orphan, held} {
		if _, err := p.admin.ExecContext(ctx, "CREATE SCHEMA "+n); err != nil {
			t.Fatal(err)
		}
	}
	other, err := p.admin.Conn(ctx) // another binary, still running
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, `SELECT pg_advisory_lock(hashtextextended($1, $2))`, held, pgLockSeed); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = p.admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+held+" CASCADE") })

	fresh, err := newPGPool(ctx, base) // a binary starting
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.admin.Close()
	defer fresh.keeper.Close()
	for n, want := range map[string]int{orphan: 0, held: 1} {
		var got int
		if err := p.admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", n).Scan(&got); err != nil || got != want {
			t.Errorf("schema %s: %d (%v), want %d", n, got, err, want)
		}
	}
}

func stateOf(t *testing.T, p *pgPool, u string) pgState {
	t.Helper()
	st, err := readState(context.Background(), p.admin, schemaOf(t, u))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func schemaOf(t *testing.T, u string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return parsed.Query().Get("search_path")
}
