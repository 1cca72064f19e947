package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bulk writes: a transaction on one connection of the writer pool
// (InBulkTx), so that a driver-level COPY on that connection is part of
// it, and InsertRows, which writes many rows with COPY where the driver
// has it (Driver.CopyFrom, PostgreSQL) and multi-row INSERTs otherwise.

// sqliteMaxVars is SQLite's limit of variables in one statement.
const sqliteMaxVars = 32766

// InsertRows writes rows (each one value per column of cols) into table:
// COPY where the driver has it and t is an InBulkTx transaction, else
// multi-row INSERTs of as many rows as SQLite's variable limit allows.
// One statement per thousand rows, rather than one per row, matters for
// full-text indexes: FTS5 writes its pending terms to disk at every
// statement's savepoint, so row by row it wrote one tiny segment per
// evaluation and spent its time merging them.
func (t *Tx) InsertRows(ctx context.Context, table string, cols []string, rows [][]any) error {
	return t.insertRows(ctx, "INSERT INTO ", table, cols, rows)
}

// InsertRowsOrRollback is InsertRows with SQLite's INSERT OR ROLLBACK
// (other dialects: InsertRows): a constraint failure ends the whole
// transaction, and so a statement that writes no virtual table and fires
// no trigger needs no statement journal (which copies every page that the
// statement changes and an earlier one of the transaction wrote). For
// bulk transactions whose failure is the whole batch's.
func (t *Tx) InsertRowsOrRollback(ctx context.Context, table string, cols []string, rows [][]any) error {
	verb := "INSERT INTO "
	if t.db.drv.Dialect == SQLite {
		verb = "INSERT OR ROLLBACK INTO "
	}
	return t.insertRows(ctx, verb, table, cols, rows)
}

func (t *Tx) insertRows(ctx context.Context, verb, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if t.conn != nil && t.db.drv.CopyFrom != nil {
		return t.db.drv.CopyFrom(ctx, t.conn, table, cols, rows)
	}
	per := max(sqliteMaxVars/len(cols), 1)
	row := "(" + Placeholders(len(cols)) + ")"
	query := func(n int) string {
		return verb + table + ` (` + strings.Join(cols, ", ") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	}
	// The statement of a full chunk is prepared once and run for each
	// (parsing a statement of a thousand rows' placeholders cost SQLite
	// about a tenth of a bulk write when it was prepared for every chunk).
	var full *sql.Stmt
	if t.conn != nil && len(rows) >= 2*per {
		var err error
		if full, err = t.conn.PrepareContext(ctx, t.db.rebind(query(per))); err != nil {
			return err
		}
		defer full.Close()
	}
	args := make([]any, 0, min(per, len(rows))*len(cols))
	for start := 0; start < len(rows); start += per {
		part := rows[start:min(start+per, len(rows))]
		args = args[:0]
		for _, r := range part {
			args = append(args, r...)
		}
		var err error
		if full != nil && len(part) == per {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = t.Exec(ctx, query(len(part)), args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// InBulkTx runs fn in a write transaction on one connection of the
// writer pool, begun and ended with statements (so that a driver-level
// COPY on the connection, InsertRows, is part of it), and commits it if
// fn returns nil. Unlike InTx it is not retried.
//
// On SQLite the connection gets a larger page cache (bulkCache): a batch
// writes tens of megabytes, and a cache that holds them keeps SQLite from
// spilling pages to the WAL in mid-transaction (and writing them again at
// the commit). Its commit does not checkpoint: the WAL
// frames it wrote are copied into the database file by a checkpoint on a
// reader connection, in the background (DB.checkpointSoon), while the
// writer goes on with the next batch. Checkpointing at the commit, on the
// writer, was a third of a 100,000-draft import's time on a 2-core
// machine (copying every page of the batch into the file with a write
// system call each). Durability is unchanged: a transaction is durable
// once its WAL frames are synced at its commit (synchronous=FULL), which
// is before InBulkTx returns; a checkpoint only moves committed pages
// from the WAL into the file, and one interrupted (or never run before a
// crash) is completed by the next one, or by recovery when the database
// is opened. The WAL still restarts from its beginning whenever a commit
// finds it wholly checkpointed: a bulk transaction that finds it longer
// than walBulkFrames waits for the background checkpoint to end before it
// begins, which bounds it about as the automatic checkpoint did.
func (db *DB) InBulkTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: connection: %w", err)
	}
	defer conn.Close()
	begin := "BEGIN"
	background := false
	if db.drv.Dialect == SQLite {
		begin = "BEGIN IMMEDIATE"
		db.bulkCache.enlarge(ctx, conn)
		defer db.bulkCache.releaseLater(db)
		// Statement journals in memory: each multi-row INSERT of a
		// batch journals the pages it changes that earlier statements of
		// the transaction wrote, and SQLite writes a journal larger than
		// 64 KB to a temporary file (a write system call per page).
		var temp int64
		if err := conn.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&temp); err == nil && temp != 2 {
			if _, err := conn.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err == nil {
				defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA temp_store = %d", temp)) //nolint:errcheck // best effort
			}
		}
		var auto int64
		// An in-memory database (one connection, no WAL) keeps its
		// checkpoints as they are.
		if db.r != db.w {
			if err := conn.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err == nil {
				if _, err := conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err == nil {
					background = true
					defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", auto)) //nolint:errcheck // best effort
				}
			}
		}
	}
	if background {
		db.ckpt.waitIfLong()
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	if err = fn(&Tx{db: db, tx: conn, conn: conn}); err != nil {
		return err
	}
	if _, err = conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	if background {
		db.checkpointSoon()
	}
	return nil
}

// HasRawRows reports whether the driver can stream rows without
// database/sql's conversions (EachRawRow).
func (db *DB) HasRawRows() bool { return db.drv.RawRows != nil }

// EachRawRow runs query (placeholders rebound) on a connection of the
// reader pool and calls fn with each row's values in text format (valid
// only during fn; NULL is nil). It is for reads of many rows, where
// database/sql's conversion of each value into a new string or []byte
// cost more than the read (a search index load: 1.5 million values at
// 100,000 evaluations). It fails when the driver cannot (HasRawRows).
//
// The query runs in a read-only transaction in which the planner sorts
// only when no index gives the order (enable_sort off): such a read wants
// its rows in an index's order, streamed from the first one. Without the
// table's statistics (after a bulk import, before autovacuum analyses it)
// PostgreSQL estimated a few hundred rows and sorted 100,000 on disk
// instead, which doubled the search index load.
func (db *DB) EachRawRow(ctx context.Context, query string, args []any, fn func(row [][]byte) error) error {
	if db.drv.RawRows == nil {
		return fmt.Errorf("store: the %s driver streams no raw rows", db.drv.Dialect)
	}
	conn, err := db.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: connection: %w", err)
	}
	defer conn.Close()
	// The read ends with a rollback (a connection it fails on is not
	// reused); without arguments pgx sends the begin as one simple query.
	defer db.discardIfInTx(ctx, conn)
	if _, err := conn.ExecContext(ctx, "BEGIN READ ONLY; SET LOCAL enable_sort = off"); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	return db.drv.RawRows(ctx, conn, db.rebind(query), args, fn)
}

// bulkCacheSize is the page cache of the SQLite writer connection during
// bulk transactions (PRAGMA cache_size: negative is in KiB, so 256 MB).
const bulkCacheSize = -262144

// bulkCacheIdle is how long the writer connection keeps the bulk page
// cache after the last bulk transaction.
const bulkCacheIdle = time.Second

// bulkCache is the larger page cache of the SQLite writer connection
// during bulk transactions. It is kept from one bulk transaction to the
// next, and given back bulkCacheIdle after the last one: an import's
// batches follow one another, and shrinking the cache after each freed
// its pages, whose memory the driver's allocator hands back to the
// operating system, so that the next batch faulted every page in again
// (about a tenth of the writer's time in a 100,000-draft import).
type bulkCache struct {
	mu       sync.Mutex
	gen      uint64 // counts bulk transactions
	enlarged bool
	orig     int64 // the cache_size to give back
	timer    *time.Timer
	closed   bool
}

// enlarge gives conn, the writer connection, the bulk page cache if it
// has not got it.
func (c *bulkCache) enlarge(ctx context.Context, conn *sql.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.enlarged {
		return
	}
	var size int64
	if err := conn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&size); err != nil || size == bulkCacheSize {
		return
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = %d", bulkCacheSize)); err == nil {
		c.enlarged, c.orig = true, size
	}
}

// releaseLater gives the writer connection its page cache back after
// bulkCacheIdle, unless another bulk transaction began meanwhile.
func (c *bulkCache) releaseLater(db *DB) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.enlarged || c.closed {
		return
	}
	gen := c.gen
	c.timer = time.AfterFunc(bulkCacheIdle, func() {
		c.mu.Lock()
		if c.gen != gen || !c.enlarged || c.closed {
			c.mu.Unlock()
			return
		}
		c.enlarged = false
		size := c.orig
		c.mu.Unlock()
		// The writer pool's one connection, once it is free.
		if _, err := db.w.ExecContext(context.Background(), fmt.Sprintf("PRAGMA cache_size = %d", size)); err != nil {
			db.log.Warn("store: page cache after a bulk transaction", "err", err)
		}
	})
}

// stop cancels a pending release (the DB is closing).
func (c *bulkCache) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
	}
}

// walBulkFrames bounds the WAL of bulk transactions (in frames, 400 MB
// of 4 KB pages): a bulk transaction that begins with more waits for the
// background checkpoint, so that it begins with every frame checkpointed
// and SQLite writes the WAL again from its beginning.
const walBulkFrames = 100000

// checkpointer runs SQLite checkpoints in the background, one at a time:
// a request while one runs makes it run once more when it ends.
type checkpointer struct {
	commits atomic.Int64 // the writer's commits (DB.committed)
	mu      sync.Mutex
	running bool
	again   bool
	closed  bool
	idle    chan struct{} // closed when the run ends
	frames  int64         // the WAL's frames at the last checkpoint
	copied  int64         // and those of them in the database file then
	done    sync.WaitGroup
}

// checkpointSoon starts a passive checkpoint of the WAL on a reader
// connection (query_only connections may checkpoint: it changes no
// content), unless one is running, which then runs once more. A passive
// checkpoint waits for no one: it copies the frames that no reader still
// needs, and the writer goes on writing meanwhile. Failures are logged;
// the next checkpoint (this one's next run, a later commit's automatic
// one, or the last connection's close) does the work.
func (db *DB) checkpointSoon() {
	c := &db.ckpt
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if c.running {
		c.again = true
		return
	}
	c.running = true
	idle := make(chan struct{})
	c.idle = idle
	c.done.Add(1)
	go func() {
		defer c.done.Done()
		defer close(idle)
		for {
			var busy, frames, copied int64
			if err := db.r.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
				db.log.Warn("store: background checkpoint", "err", err)
			}
			c.mu.Lock()
			c.frames, c.copied = frames, copied
			if !c.again || c.closed {
				c.running = false
				c.mu.Unlock()
				return
			}
			c.again = false
			c.mu.Unlock()
		}
	}()
}

// waitIfLong waits for the running checkpoint when the WAL had more than
// walBulkFrames frames at the last one.
func (c *checkpointer) waitIfLong() {
	c.mu.Lock()
	idle, wait := c.idle, c.running && c.frames > walBulkFrames
	c.mu.Unlock()
	if wait {
		<-idle
	}
}

// wait stops background checkpoints and waits for the one running.
func (c *checkpointer) wait() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.done.Wait()
}
