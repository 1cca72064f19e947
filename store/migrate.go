package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Migrations are plain SQL files, one directory per dialect, applied in name
// order, each in its own transaction, and recorded in schema_migrations.
// Domains own their files: 0001 core, 0002 niche, 0003 snapshot, 0004
// claims, 0005 payment; later changes take the next free number and a
// descriptive name (never edit an applied file). A file may have a Go step
// (migrationHook) that runs after its SQL in the same transaction, for
// data only Go code can compute.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// migrationLockKey is the PostgreSQL advisory lock key that serialises
// the migrations of instances starting together on one schema: a key of
// the schema's own (its name hashed with a constant seed), so that
// instances of unrelated schemas in one database (tenants, test runs)
// never wait for each other. A hash collision between two schemas only
// serialises their migrations.
const migrationLockKey = "hashtextextended(coalesce(current_schema(), ''), 7304512981)"

// Migrations returns the names of the migration files for a dialect, in the
// order they are applied.
func Migrations(dialect string) ([]string, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations/"+dialect)
	if err != nil {
		return nil, fmt.Errorf("store: unknown dialect %q", dialect)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func (db *DB) migrate(ctx context.Context) error {
	names, err := Migrations(db.drv.Dialect)
	if err != nil {
		return err
	}
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Close()
	if db.drv.Dialect == Postgres {
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock("+migrationLockKey+")"); err != nil {
			return fmt.Errorf("store: migrate: lock: %w", err)
		}
		defer func() {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock("+migrationLockKey+")")
		}()
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY,
		applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	applied := map[string]bool{}
	rows, err := conn.QueryContext(ctx, "SELECT name FROM schema_migrations")
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		applied[n] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	n := 0 // migrations applied now
	for _, name := range names {
		if db.stopAfter != "" && name > db.stopAfter {
			break
		}
		if applied[name] {
			continue
		}
		body, err := migrationFiles.ReadFile("migrations/" + db.drv.Dialect + "/" + name)
		if err != nil {
			return err
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("store: migrate %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("store: migrate %s: %w", name, err)
		}
		if hook := migrationHook(name); hook != nil {
			if err := hook(ctx, db, tx); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("store: migrate %s: %w", name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, db.rebind("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)"), name, db.NowMicros()); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("store: migrate %s: %w", name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("store: migrate %s: %w", name, err)
		}
		db.log.Debug("store: applied migration", "dialect", db.drv.Dialect, "name", name)
		n++
	}
	if n > 0 {
		db.log.Info(fmt.Sprintf("store: %d migrations applied", n), "dialect", db.drv.Dialect)
	}
	return nil
}

// migrationHook returns the Go step of migration file name, or nil.
func migrationHook(name string) func(context.Context, *DB, *sql.Tx) error {
	switch name {
	case "0008_niche_access.sql":
		return fillNichePreviewText
	}
	return nil
}

// fillNichePreviewText fills niche_evaluations.sp (migration 0008) with
// the store language's PreviewSearchText of every row, in batches of rows in seq order.
func fillNichePreviewText(ctx context.Context, db *DB, tx *sql.Tx) error {
	upd, err := tx.PrepareContext(ctx, db.rebind(`UPDATE niche_evaluations SET sp = ? WHERE seq = ?`))
	if err != nil {
		return err
	}
	defer upd.Close()
	type row struct {
		seq int64
		sp  string
	}
	var after int64 = -1
	for {
		rows, err := tx.QueryContext(ctx, db.rebind(`SELECT seq, problem, buyer, category FROM niche_evaluations
			WHERE seq > ? ORDER BY seq LIMIT 1000`), after)
		if err != nil {
			return err
		}
		var batch []row
		for rows.Next() {
			var r row
			var problem, buyer, category string
			if err := rows.Scan(&r.seq, &problem, &buyer, &category); err != nil {
				rows.Close()
				return err
			}
			r.sp = db.lang.PreviewSearchText(problem, buyer, category)
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range batch {
			if _, err := upd.ExecContext(ctx, r.sp, r.seq); err != nil {
				return err
			}
		}
		if len(batch) < 1000 {
			return nil
		}
		after = batch[len(batch)-1].seq
	}
}
