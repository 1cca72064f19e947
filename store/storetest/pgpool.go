package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/store/anydb"
)

// MigratedPostgresURL returns a connection URL for a schema holding a
// freshly migrated, empty database on the server named by
// ASSAY_TEST_POSTGRES, for the test's use until it ends; like
// PostgresURL, its sessions commit with synchronous_commit=off.
//
// Creating and migrating a schema costs PostgreSQL about 150 ms of CPU,
// and the store suites want about 70 of them a run, so the schemas come
// from a pool of the test binary. When the test that took one ends,
// every table of the schema is emptied and the rows and sequences the
// migrations left are put back; the schema goes back to the pool only if
// it then matches its state right after migration (the same relations,
// functions and triggers, the same rows, the same sequences), and is
// dropped otherwise. A test cannot tell the schema from a new one, except
// that the migrations are already applied: a test about migrations uses
// PostgresURL.
//
// Each test binary holds a PostgreSQL advisory lock on every schema of
// its pool for as long as it runs; a binary starting its pool drops the
// pooled schemas whose lock nobody holds (left by a binary that did not
// finish).
func MigratedPostgresURL(t testing.TB) string {
	t.Helper()
	base := postgresBase(t)
	ctx := context.Background()
	p, err := pools.get(ctx, base)
	if err != nil {
		t.Fatalf("postgres: schema pool: %v", err)
	}
	s, err := p.take(ctx)
	if err != nil {
		t.Fatalf("postgres: schema pool: %v", err)
	}
	t.Cleanup(func() {
		if err := p.give(context.Background(), s); err != nil {
			t.Errorf("postgres: schema pool: %v", err)
		}
	})
	return s.url
}

// pools holds the test binary's schema pool of each server (in practice
// one: ASSAY_TEST_POSTGRES does not change while tests run).
var pools pgPools

type pgPools struct {
	mu sync.Mutex
	m  map[string]*pgPool
}

func (ps *pgPools) get(ctx context.Context, base string) (*pgPool, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p := ps.m[base]; p != nil {
		return p, nil
	}
	p, err := newPGPool(ctx, base)
	if err != nil {
		return nil, err
	}
	if ps.m == nil {
		ps.m = map[string]*pgPool{}
	}
	ps.m[base] = p
	return p, nil
}

// pgPoolPrefix begins the name of every pooled schema; pgLockSeed seeds
// the hash of a schema's name into its advisory lock key (another seed
// than the migrations' lock).
const (
	pgPoolPrefix = "tp_"
	pgLockSeed   = 5129837461
)

// pgPool is the schema pool of one server.
type pgPool struct {
	base  string
	admin *sql.DB
	// keeper is the session holding the advisory lock of every schema the
	// pool made and has not dropped.
	keeper *sql.Conn

	mu   sync.Mutex
	free []*pgSchema
}

// pgSchema is a pooled schema and its state right after migration.
type pgSchema struct {
	name  string
	url   string
	fresh pgState
}

func newPGPool(ctx context.Context, base string) (*pgPool, error) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, err
	}
	keeper, err := admin.Conn(ctx)
	if err != nil {
		admin.Close()
		return nil, err
	}
	p := &pgPool{base: base, admin: admin, keeper: keeper}
	if err := p.sweep(ctx); err != nil {
		keeper.Close()
		admin.Close()
		return nil, err
	}
	return p, nil
}

// sweep drops the pooled schemas of binaries that are gone: those whose
// advisory lock nobody holds.
func (p *pgPool) sweep(ctx context.Context) error {
	rows, err := p.admin.QueryContext(ctx, `SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)`, pgPoolPrefix)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range names {
		var orphan bool
		if err := p.keeper.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, $2))`, n, pgLockSeed).Scan(&orphan); err != nil {
			return err
		}
		if orphan {
			if err := p.drop(ctx, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// take returns a free schema, or makes one.
func (p *pgPool) take(ctx context.Context) (*pgSchema, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return s, nil
	}
	p.mu.Unlock()
	name := pgPoolPrefix + ids.New("")[:24]
	// The lock comes first, so that no sweep finds the schema unlocked.
	if _, err := p.keeper.ExecContext(ctx, `SELECT pg_advisory_lock(hashtextextended($1, $2))`, name, pgLockSeed); err != nil {
		return nil, err
	}
	if _, err := p.admin.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
		return nil, errors.Join(fmt.Errorf("create schema: %w", err), p.drop(ctx, name))
	}
	s := &pgSchema{name: name, url: schemaURL(p.base, name)}
	db, err := anydb.Open(ctx, s.url, nil)
	if err == nil {
		err = db.Close()
	}
	if err == nil {
		s.fresh, err = readState(ctx, p.admin, name)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("migrate schema %s: %w", name, err), p.drop(ctx, name))
	}
	return s, nil
}

// give resets s and returns it to the pool, or drops it when the reset
// does not bring it back to its state after migration.
func (p *pgPool) give(ctx context.Context, s *pgSchema) error {
	if err := p.reset(ctx, s); err != nil {
		return p.drop(ctx, s.name)
	}
	p.mu.Lock()
	p.free = append(p.free, s)
	p.mu.Unlock()
	return nil
}

// reset empties every table of s, puts back the rows and sequences its
// migrations left and checks that s is then as it was: in one
// transaction, rolled back when the check fails.
func (p *pgPool) reset(ctx context.Context, s *pgSchema) error {
	tx, err := p.admin.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	// The migrations' functions name their tables without a schema.
	if _, err := tx.ExecContext(ctx, "SET LOCAL search_path = "+s.name+"; SET LOCAL lock_timeout = '10s'"); err != nil {
		return err
	}
	// One statement deletes from every table, so the foreign keys are
	// checked when all are empty; a second deletes what triggers wrote.
	var del []string
	for i, tb := range s.fresh.tables {
		del = append(del, fmt.Sprintf("d%d AS (DELETE FROM %s.%s)", i, s.name, tb))
	}
	if len(del) > 0 {
		q := "WITH " + strings.Join(del, ", ") + " SELECT 1"
		for range 2 {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
	}
	for _, tb := range s.fresh.tables {
		if rows := s.fresh.rows[tb]; rows != "" {
			q := fmt.Sprintf("INSERT INTO %[1]s.%[2]s OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_recordset(NULL::%[1]s.%[2]s, $1)", s.name, tb)
			if _, err := tx.ExecContext(ctx, q, rows); err != nil {
				return err
			}
		}
	}
	for _, sq := range s.fresh.sequences {
		if _, err := tx.ExecContext(ctx, "SELECT setval($1::regclass, $2, $3)", s.name+"."+sq.name, sq.value, sq.called); err != nil {
			return err
		}
	}
	now, err := readState(ctx, tx, s.name)
	if err != nil {
		return err
	}
	if !now.equal(s.fresh) {
		return errors.New("schema differs from its state after migration")
	}
	return tx.Commit()
}

// drop drops schema name and releases its lock.
func (p *pgPool) drop(ctx context.Context, name string) error {
	if _, err := p.admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
		return fmt.Errorf("drop schema %s: %w", name, err)
	}
	_, err := p.keeper.ExecContext(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, $2))`, name, pgLockSeed)
	return err
}

// pgState is what a reset restores and checks.
type pgState struct {
	// catalog names the schema's relations, functions and triggers.
	catalog string
	// tables are the schema's tables, by name.
	tables []string
	// counts are the tables' row counts; rows the non-empty tables' rows
	// as a JSON array in a fixed order.
	counts map[string]int64
	rows   map[string]string
	// sequences are the schema's sequences and their positions.
	sequences []pgSequence
}

type pgSequence struct {
	name   string
	value  int64
	called bool
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readState reads the state of schema name.
func readState(ctx context.Context, q querier, name string) (pgState, error) {
	st := pgState{counts: map[string]int64{}, rows: map[string]string{}}
	err := q.QueryRowContext(ctx, `SELECT coalesce(string_agg(x, ',' ORDER BY x), '') FROM (
		SELECT 'r:' || relname || ':' || relkind::text FROM pg_class WHERE relnamespace = $1::regnamespace
		UNION ALL SELECT 'f:' || proname FROM pg_proc WHERE pronamespace = $1::regnamespace
		UNION ALL SELECT 't:' || tgname FROM pg_trigger JOIN pg_class ON pg_class.oid = tgrelid
			WHERE relnamespace = $1::regnamespace AND NOT tgisinternal) AS objects (x)`, name).Scan(&st.catalog)
	if err != nil {
		return st, err
	}
	if st.tables, err = textColumn(ctx, q, `SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r' ORDER BY relname`, name); err != nil {
		return st, err
	}
	if len(st.tables) > 0 {
		var parts []string
		for _, tb := range st.tables {
			parts = append(parts, fmt.Sprintf("SELECT '%[2]s', count(*) FROM %[1]s.%[2]s", name, tb))
		}
		rows, err := q.QueryContext(ctx, strings.Join(parts, " UNION ALL "))
		if err != nil {
			return st, err
		}
		for rows.Next() {
			var tb string
			var n int64
			if err := rows.Scan(&tb, &n); err != nil {
				rows.Close()
				return st, err
			}
			st.counts[tb] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return st, err
		}
	}
	for _, tb := range st.tables {
		if st.counts[tb] == 0 {
			continue
		}
		var js string
		if err := q.QueryRowContext(ctx, fmt.Sprintf("SELECT json_agg(x ORDER BY x::text)::text FROM %s.%s AS x", name, tb)).Scan(&js); err != nil {
			return st, err
		}
		st.rows[tb] = js
	}
	rows, err := q.QueryContext(ctx, `SELECT c.relname, coalesce(pg_sequence_last_value(c.oid), p.seqstart), pg_sequence_last_value(c.oid) IS NOT NULL
		FROM pg_class c JOIN pg_sequence p ON p.seqrelid = c.oid
		WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'S' ORDER BY c.relname`, name)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		var sq pgSequence
		if err := rows.Scan(&sq.name, &sq.value, &sq.called); err != nil {
			return st, err
		}
		st.sequences = append(st.sequences, sq)
	}
	return st, rows.Err()
}

// textColumn returns the one text column of a query's rows.
func textColumn(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func (a pgState) equal(b pgState) bool {
	return a.catalog == b.catalog && slices.Equal(a.tables, b.tables) && maps.Equal(a.counts, b.counts) &&
		maps.Equal(a.rows, b.rows) && slices.Equal(a.sequences, b.sequences)
}

// schemaURL is base with every session's search path set to schema and
// commits that do not wait for the WAL flush.
func schemaURL(base, schema string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base // postgresBase parsed it already
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}
