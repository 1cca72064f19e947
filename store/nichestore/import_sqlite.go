package nichestore

import (
	"context"
	"fmt"
	"strings"

	"github.com/assaykit/assay/store"
)

// This file is SQLite's half of CreateEvaluations' evaluation rows: the
// work of niche_evaluations' insert triggers (niche_fts_insert,
// niche_search_insert, niche_feed_ins: migrations 0009 and 0021) done once
// per batch, by statements over the batch's rows, instead of once per row.
//
// Why. Through the triggers a batch's rows went in as multi-row INSERTs
// of about a thousand rows (SQLite's limit of variables), each of which
// writes the full-text index (a virtual table) and so runs with a
// statement journal: every page of the database an earlier statement of
// the transaction had written was copied into the journal again, and FTS5
// wrote its pending terms to disk at each statement's savepoint (a new
// segment to merge every thousand rows). Per batch, the writer of a
// 100,000-draft import spent 7.3 s of CPU instead of 10.2 s.
//
// How. In the bulk transaction, which holds SQLite's write lock: the three
// triggers are dropped, the rows inserted (INSERT OR ROLLBACK: without a
// trigger, no statement of the batch needs a statement journal, a
// constraint failure ends the whole transaction), the triggers' rows
// written by one statement each over the batch's new rows (seq
// above the largest before it, in seq order), and the triggers created
// again from their own text, read from sqlite_schema, before the commit.
// Other connections never see the schema without them (a reader sees
// only committed states; the write lock keeps other writers out); a
// failure rolls the drops back with the rest; the commit changes the
// schema's version, so other connections prepare their statements again
// once.
//
// The statements do what the triggers do only as long as the triggers are
// the ones they were written for: bulkTriggers holds the triggers' text
// as migrated, and a database whose triggers differ (a later migration
// that changed one without changing this file) gets the rows through its
// triggers, as before. A test fails then (TestSQLiteBulkTriggers), so that
// this file is brought in step.

// bulkTriggers are niche_evaluations' insert triggers whose work
// insertEvaluationsSQLite does per batch, and their text as created by
// the migrations (compared with whitespace runs collapsed).
var bulkTriggers = []struct{ name, sql string }{
	{"niche_fts_insert", `CREATE TRIGGER niche_fts_insert AFTER INSERT ON niche_evaluations WHEN new.status = 'published' BEGIN
    INSERT INTO niche_fts (rowid, st, sp, sb, sc) VALUES (new.seq, new.st, new.sp, new.sb, new.sc);
END`},
	{"niche_search_insert", `CREATE TRIGGER niche_search_insert AFTER INSERT ON niche_evaluations WHEN new.status = 'published' BEGIN
    INSERT INTO niche_search (seq, id, score, updated_at, category_key, st, sp, sb, sc, title, problem, buyer, category,
            score_version)
        VALUES (new.seq, new.id, new.score, new.updated_at, new.category_key, new.st, new.sp, new.sb, new.sc, new.title,
            new.problem, new.buyer, new.category, new.score_version);
END`},
	{"niche_feed_ins", `CREATE TRIGGER niche_feed_ins AFTER INSERT ON niche_evaluations WHEN new.status = 'published' BEGIN
    UPDATE niche_version SET v = v + 1 WHERE id = 1;
    INSERT INTO niche_feed (seq, niche_id) SELECT v, new.id FROM niche_version WHERE id = 1;
END`},
}

// The statements that write, for the rows of niche_evaluations whose seq
// is above ?1, what bulkTriggers write for each: the full-text index and
// niche_search of the published ones, and for each of those, in seq
// order, a change feed entry numbered after ?2 (niche_version.v before
// the batch), which is then raised by their number.
const (
	batchFTS = `INSERT INTO niche_fts (rowid, st, sp, sb, sc)
		SELECT seq, st, sp, sb, sc FROM niche_evaluations WHERE seq > ?1 AND status = 'published' ORDER BY seq`
	batchSearch = `INSERT INTO niche_search (seq, id, score, updated_at, category_key, st, sp, sb, sc, title, problem, buyer,
			category, score_version)
		SELECT seq, id, score, updated_at, category_key, st, sp, sb, sc, title, problem, buyer, category, score_version
		FROM niche_evaluations WHERE seq > ?1 AND status = 'published' ORDER BY seq`
	batchFeed = `INSERT INTO niche_feed (seq, niche_id)
		SELECT ?2 + row_number() OVER (ORDER BY seq), id FROM niche_evaluations
		WHERE seq > ?1 AND status = 'published' ORDER BY seq`
	batchVersion = `UPDATE niche_version SET v = ?2 + (SELECT count(*) FROM niche_evaluations
		WHERE seq > ?1 AND status = 'published') WHERE id = 1`
)

// collapseSpace returns s with every run of white space made one space.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// bulkTriggerSQL returns the text of bulkTriggers as tx's schema has them,
// and whether each is the one the batch statements were written for.
func bulkTriggerSQL(ctx context.Context, tx *store.Tx) (sqls []string, same bool, err error) {
	same = true
	for _, tr := range bulkTriggers {
		var q string
		if err := tx.QueryRow(ctx, `SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = ?`, tr.name).Scan(&q); err != nil {
			return nil, false, fmt.Errorf("trigger %s: %w", tr.name, err)
		}
		sqls = append(sqls, q)
		same = same && collapseSpace(q) == collapseSpace(tr.sql)
	}
	return sqls, same, nil
}

// insertEvaluationsSQLite inserts rows (evalBulkCols) into
// niche_evaluations in tx, an SQLite bulk transaction, with the work of
// its insert triggers done per batch (see the top of this file), or
// through the triggers when they are not the ones this file knows.
func insertEvaluationsSQLite(ctx context.Context, tx *store.Tx, rows [][]any) error {
	sqls, same, err := bulkTriggerSQL(ctx, tx)
	if err != nil {
		return err
	}
	if !same {
		return tx.InsertRows(ctx, "niche_evaluations", evalBulkCols, rows)
	}
	for _, tr := range bulkTriggers {
		if _, err := tx.Exec(ctx, `DROP TRIGGER `+tr.name); err != nil {
			return err
		}
	}
	var seq, v int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0), (SELECT v FROM niche_version WHERE id = 1) FROM niche_evaluations`).
		Scan(&seq, &v); err != nil {
		return err
	}
	if err := tx.InsertRowsOrRollback(ctx, "niche_evaluations", evalBulkCols, rows); err != nil {
		return err
	}
	for _, q := range []string{batchFTS, batchSearch, batchFeed, batchVersion} {
		args := []any{seq}
		if strings.Contains(q, "?2") {
			args = append(args, v)
		}
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	for _, q := range sqls {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
