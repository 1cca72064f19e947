// Package store is the SQL database every assay store shares, whichever
// of the two databases it supports: SQLite (package store/sqlite:
// modernc.org/sqlite, pure Go, the embedded default) and PostgreSQL
// (package store/postgres: pgx, for deployments of several instances
// sharing one database). It holds DB (the writer and reader pools, the
// dialect, transactions, the statement helpers), the migrations of every
// domain in one sequence (migrations/<dialect>/, with their Go steps), the
// instance-wide settings (Meta, SetMeta, SetMetaOnce: the MetaStore of
// payment, niche and evidence; store/metamem keeps them in memory) and the niche search text that opening a
// database may recompute (niche_text.go). Store itself imports no database
// driver and no domain store: an application that opens its database with
// store/sqlite links no pgx, one that opens it with store/postgres links
// no SQLite; store/anydb opens either from a DSN, for programs configured
// at run time. Because opening a database computes niche search text, it
// imports package niche (the engine's types, not its store): a program on
// store/sqlite links niche, and no payment package.
//
// Each domain's SQL is a package of its own over a *DB, with New(db)
// returning the implementation of that domain's interfaces:
// store/claimsstore (claims.Store), store/nichestore (niche.Store and
// niche.SubscriptionStore), store/snapshotstore (snapshot.Store and
// snapshot.BlobStore, and the index of store/s3blobs) and
// store/paymentstore (payment.Ledger). An application links only the
// domains it imports: one that embeds the engines without selling links
// no payment package. The conformance suites they pass live beside the
// interfaces (claimstest.TestStore, nichetest.TestStore,
// nichetest.TestSubscriptionStore, snapshottest.TestStore,
// snapshottest.TestBlobStore, paymenttest.TestLedger); internal/conformance
// runs them on SQLite (a file and :memory:), PostgreSQL and the in-memory
// implementations (claims/claimsmem, niche/nichemem,
// snapshot/snapshotmem, payment/paymentmem).
//
// Choices made here, the same for both databases:
//   - Times are stored as BIGINT microseconds since the Unix epoch, UTC
//     (identical semantics and ordering on both engines, no time-zone traps).
//   - JSON documents are stored as TEXT; identifiers and hashes as TEXT.
//   - Queries are written with '?' placeholders and rebound to $n for
//     PostgreSQL. SQL that differs between dialects (full-text search, row
//     locks) goes through small dialect helpers.
//   - What differs per driver — opening connections, reading the driver's
//     errors — is the Driver a dialect package passes to New.
//   - SQLite runs in WAL mode with a busy timeout, foreign keys on,
//     synchronous=FULL (a committed payment survives power loss), one writer
//     connection whose transactions begin IMMEDIATE, and a separate pool of
//     query_only reader connections (see store/sqlite).
//   - The SQLite writer does not checkpoint at its commits: every few
//     hundred commits a passive checkpoint runs on a reader connection in
//     the background (checkpoint.go); the writer's automatic checkpoint
//     is only a backstop (WalBackstopFrames).
//   - SQLite bulk transactions (InBulkTx: the niche catalogue import)
//     change three settings of the writer connection, none of which
//     weakens durability: the commit still syncs the WAL
//     (synchronous=FULL) before InBulkTx returns. They do not checkpoint
//     at their commit (wal_autocheckpoint 0 for the transaction): a
//     passive checkpoint on a reader connection copies their pages into
//     the database file in the background, and one interrupted or never
//     run is completed by the next checkpoint or by recovery at open, as
//     for any WAL (the WAL stays bounded: see InBulkTx). Their statement
//     journals are kept in memory (temp_store=MEMORY), which only holds
//     what a failing statement would roll back, and is discarded with it.
//     Their page cache is larger (256 MB), and kept for a second after the
//     last of them.
//   - PostgreSQL has two pools too: writes and write transactions on one
//     (Options.MaxWriteConns), reads outside transactions on the other
//     (Options.MaxOpenConns), so that reads never queue behind paid writes.
//   - PostgreSQL migrations run under an advisory lock of the schema so
//     that several instances can start at once; instances of other
//     schemas in the same database do not wait for it.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/assaykit/assay/niche"
)

// Dialect names returned by DB.Dialect.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// ErrClosed is returned by operations on a closed DB.
var ErrClosed = errors.New("store: database is closed")

// Options configure the Open functions of store/sqlite, store/postgres and
// store/anydb, and New. A nil *Options means defaults; each field says
// which database reads it.
type Options struct {
	// Logger receives migration and maintenance messages. Nil discards them.
	Logger *slog.Logger
	// MaxOpenConns bounds the reader pool: the connections of reads
	// outside transactions (free routes, order and result lookups), on
	// SQLite and on PostgreSQL. Zero means 16.
	MaxOpenConns int
	// MaxWriteConns bounds the PostgreSQL writer pool: the connections of
	// write transactions (orders, reservations, stored results). Reads
	// never wait for it: a burst of paid writes cannot queue the free
	// routes. Zero means 16. SQLite has one writer connection whatever
	// this says (its transactions take the database's write lock).
	MaxWriteConns int
	// BusyTimeout is how long an SQLite connection waits for a lock.
	// Zero means 10 seconds.
	BusyTimeout time.Duration
	// Now is the clock used for stored timestamps. Nil means time.Now.
	Now func() time.Time
	// SearchLanguage is the word rules of the niche search index
	// (niche.Language); empty means English. The engine over this store
	// must parse queries in the same (niche.Options.Language). When a
	// database indexed in another language (or before stemming) is
	// opened, its index is rebuilt at once (see reindexNiche).
	SearchLanguage niche.Language

	// stopAfter, in tests, stops migrating after the named file (to
	// build a database as an older version left it).
	stopAfter string
}

// Driver is what a dialect package (store/sqlite, store/postgres) tells
// New about its database driver.
type Driver struct {
	// Dialect is SQLite or Postgres: it selects the migrations and the SQL
	// that differs between the two.
	Dialect string
	// IsUniqueViolation reports whether err is a unique or primary-key
	// constraint failure. Nil means never.
	IsUniqueViolation func(err error) bool
	// IsRetryable reports whether a transaction failed for a reason that
	// running it again can fix (PostgreSQL serialization failures and
	// deadlocks, SQLite busy errors that outlasted the busy timeout). Nil
	// means never.
	IsRetryable func(err error) bool
	// Listen, when set, holds a connection of db listening on channel (an
	// identifier, quoted) and calls notify once listening, then for each
	// notification, until ctx is done or the connection fails (PostgreSQL LISTEN/NOTIFY: the
	// niche change feed's notifications). Nil means the database cannot.
	Listen func(ctx context.Context, db *sql.DB, channel string, notify func()) error
	// CopyFrom, when set, writes rows into table's columns cols on conn,
	// which is in a transaction (PostgreSQL COPY: the bulk import). Nil
	// means prepared INSERTs.
	CopyFrom func(ctx context.Context, conn *sql.Conn, table string, cols []string, rows [][]any) error
	// RawRows, when set, runs query on conn and calls fn with each row's
	// values in text format, as the driver received them (valid only
	// during fn; NULL is nil), without converting them to database/sql
	// values (PostgreSQL: the search index load). Nil means the caller
	// scans with database/sql.
	RawRows func(ctx context.Context, conn *sql.Conn, query string, args []any, fn func(row [][]byte) error) error
	// ExecBatch, when set, runs stmts (placeholders rebound) on conn as
	// one transaction that commits without waiting for the disk
	// (PostgreSQL: a pipeline of BEGIN, SET LOCAL synchronous_commit =
	// off, the statements and COMMIT, sent at once; SQLite: the
	// statements on the driver's connection), and returns the rows each
	// changed; the first that fails is a *BatchError, and nothing is
	// committed. After a failure it ends the transaction itself: conn goes
	// back to the pool in no transaction, or is discarded (Raw returning
	// driver.ErrBadConn). Nil means one statement at a time, in
	// InTxNoSync.
	ExecBatch func(ctx context.Context, conn *sql.Conn, stmts []Stmt) ([]int64, error)
	// ExecOne, when set, runs the statement q on conn, a connection of
	// the writer pool, as a transaction of its own, committed durably
	// (SQLite: through a statement the driver's connection prepared
	// once). Nil means database/sql's (DB.CachedExec).
	ExecOne func(ctx context.Context, conn *sql.Conn, q string, args []any) (sql.Result, error)
}

// DB is an open assay database.
type DB struct {
	drv    Driver
	w      *sql.DB // writes and write transactions
	r      *sql.DB // reads outside transactions (its own pool; w itself for an in-memory SQLite database)
	log    *slog.Logger
	now    func() time.Time
	stmts  stmtCache // prepared SQLite reader statements (stmt.go)
	wstmts stmtCache // prepared SQLite writer statements (stmt.go)
	lang   niche.Language
	an     *niche.Analyzer // lang, with a memo of its stems
	// stopAfter is Options.stopAfter.
	stopAfter string
	// ckpt runs the SQLite checkpoints of bulk transactions and of
	// every walCheckpointCommits commits (checkpoint.go), and bulkCache
	// keeps the page cache of bulk transactions (bulk.go).
	ckpt      checkpointer
	bulkCache bulkCache
}

// New returns a DB over writer (writes and write transactions) and reader
// (reads outside transactions; it may be writer itself), after applying
// the pending migrations of d.Dialect. The dialect packages' Open
// functions call it with handles configured for their database; call it
// yourself only with handles you configured the same way (see
// store/sqlite and store/postgres). New takes ownership of the handles:
// DB.Close closes them, and so does New when it fails.
func New(ctx context.Context, d Driver, writer, reader *sql.DB, opts *Options) (*DB, error) {
	o := opts.WithDefaults()
	if reader == nil {
		reader = writer
	}
	db := &DB{drv: d, w: writer, r: reader, log: o.Logger, now: o.Now, stopAfter: o.stopAfter, lang: o.SearchLanguage.Or()}
	an, err := niche.NewAnalyzer(db.lang)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	db.an = an
	if writer == nil || (d.Dialect != SQLite && d.Dialect != Postgres) {
		if writer != nil {
			_ = db.Close()
		}
		return nil, fmt.Errorf("store: New needs a writer handle and the dialect %q or %q (got %q)", SQLite, Postgres, d.Dialect)
	}
	if d.Dialect == Postgres {
		if err := db.Ping(ctx); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	if err := db.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.reindexNiche(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// WithDefaults returns the options of o (nil: none) with every unset field
// set to its default. The dialect packages read their settings through it.
func (o *Options) WithDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Logger == nil {
		v.Logger = slog.New(slog.DiscardHandler)
	}
	if v.MaxOpenConns <= 0 {
		v.MaxOpenConns = 16
	}
	if v.MaxWriteConns <= 0 {
		v.MaxWriteConns = 16
	}
	if v.BusyTimeout <= 0 {
		v.BusyTimeout = 10 * time.Second
	}
	if v.Now == nil {
		v.Now = time.Now
	}
	return v
}

// Dialect returns SQLite or Postgres.
func (db *DB) Dialect() string { return db.drv.Dialect }

// IsUniqueViolation reports whether err is a unique or primary-key
// constraint failure (Driver.IsUniqueViolation).
func (db *DB) IsUniqueViolation(err error) bool {
	return err != nil && db.drv.IsUniqueViolation != nil && db.drv.IsUniqueViolation(err)
}

// isRetryable reports whether a failed transaction may be retried
// (Driver.IsRetryable).
func (db *DB) isRetryable(err error) bool {
	return err != nil && db.drv.IsRetryable != nil && db.drv.IsRetryable(err)
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.w.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// Close closes every connection.
func (db *DB) Close() error {
	db.bulkCache.stop()
	db.ckpt.wait()
	err := db.w.Close()
	if db.r != db.w {
		err = errors.Join(err, db.r.Close())
	}
	return err
}

// CheckIntegrity runs the engine's own consistency check: PRAGMA
// integrity_check on SQLite; on PostgreSQL, a ping (the server guarantees
// its own page integrity).
func (db *DB) CheckIntegrity(ctx context.Context) error {
	if db.drv.Dialect != SQLite {
		return db.Ping(ctx)
	}
	rows, err := db.w.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("store: integrity check failed: %s", strings.Join(problems, "; "))
	}
	return nil
}

// SQL returns the underlying handles: the writer and the reader pool. For
// tests and maintenance tools only.
func (db *DB) SQL() (writer, reader *sql.DB) { return db.w, db.r }

// Now returns the current time of the DB's clock (Options.Now).
func (db *DB) Now() time.Time { return db.now() }

// NowMicros is the current time in stored form.
func (db *DB) NowMicros() int64 { return ToMicros(db.now()) }

// ToMicros converts a time to stored form (0 for the zero time).
func ToMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// FromMicros converts a stored time back (the zero time for 0).
func FromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// rebind turns '?' placeholders into $1, $2, ... for PostgreSQL. Question
// marks inside single-quoted literals, double-quoted identifiers and
// comments are left alone.
func (db *DB) rebind(q string) string {
	if db.drv.Dialect != Postgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j - 1
			continue
		case c == '?':
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Exec runs a statement on the writer.
func (db *DB) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := db.w.ExecContext(ctx, db.rebind(q), args...)
	if err == nil {
		db.committed()
	}
	return res, err
}

// Query runs a query on the reader pool.
func (db *DB) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return db.r.QueryContext(ctx, db.rebind(q), args...)
}

// QueryRow runs a single-row query on the reader pool.
func (db *DB) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return db.r.QueryRowContext(ctx, db.rebind(q), args...)
}

// ForUpdate is the row-lock clause for SELECTs inside write transactions:
// " FOR UPDATE" on PostgreSQL, nothing on SQLite (whose IMMEDIATE
// transactions already hold the database's single write lock).
func (db *DB) ForUpdate() string {
	if db.drv.Dialect == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// Tx is a write transaction. Its methods rebind placeholders like DB's.
type Tx struct {
	db   *DB
	tx   sqlRunner // a *sql.Tx, or a *sql.Conn in a transaction (InBulkTx)
	conn *sql.Conn // the connection of an InBulkTx transaction, else nil
	// unwatched: the statements' contexts are not watched while they run
	// (an SQLite InTxNoSync transaction: see there); stmtCtx.
	unwatched bool
}

// stmtCtx is the context a statement of t runs with: ctx, or, in an
// unwatched transaction, ctx without its cancellation once it is checked
// not done (a done ctx is passed on, and database/sql reports it).
func (t *Tx) stmtCtx(ctx context.Context) context.Context {
	if !t.unwatched || ctx.Err() != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// sqlRunner runs statements: *sql.Tx and *sql.Conn.
type sqlRunner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// DB returns the database of the transaction.
func (t *Tx) DB() *DB { return t.db }

// Exec runs a statement in the transaction.
func (t *Tx) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(t.stmtCtx(ctx), t.db.rebind(q), args...)
}

// Query runs a query in the transaction.
func (t *Tx) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(t.stmtCtx(ctx), t.db.rebind(q), args...)
}

// QueryRow runs a single-row query in the transaction.
func (t *Tx) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(t.stmtCtx(ctx), t.db.rebind(q), args...)
}

// InTx runs fn in a write transaction and commits it if fn returns nil.
// PostgreSQL serialization failures and deadlocks are retried a few times;
// SQLite waits for its lock through the busy timeout instead.
func (db *DB) InTx(ctx context.Context, fn func(*Tx) error) error {
	return db.retried(ctx, db.tryTx, fn)
}

// retried runs try(ctx, fn) until it succeeds, fails for good or ctx
// ends: at most five attempts, a few milliseconds apart, while the
// failure is a lock conflict or a serialization failure (isRetryable).
func (db *DB) retried(ctx context.Context, try func(context.Context, func(*Tx) error) error, fn func(*Tx) error) error {
	const attempts = 5
	var err error
	for i := range attempts {
		err = try(ctx, fn)
		if err == nil || !db.isRetryable(err) || ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Duration(i+1) * 5 * time.Millisecond)
	}
	return err
}

// InTxNoSync is InTx for a transaction whose loss in a power failure
// (or an operating-system crash) the caller can repair: its commit returns
// without waiting for the disk, and the transaction reaches it with the
// next durable commit (whose flush of the log covers every earlier
// commit), the next checkpoint, or at most a fraction of a second later.
// A crash of the process loses nothing: the commit is in the log
// (SQLite's WAL with synchronous=NORMAL for this transaction, PostgreSQL
// with synchronous_commit=off). Other sessions see it at once, as with
// InTx.
//
// On SQLite, ctx bounds the wait for the writer's connection and is
// checked before each statement, but not watched while one runs, as in
// the relaxed batches (store/sqlite): the driver would watch a cancellable
// context with a goroutine per statement (the ledger's relaxed
// transactions that are not batches: an order opened with a quote, a
// failed order). An SQLite statement waits for nothing but the database's
// locks, which the busy timeout bounds, and the ledger's are single rows.
func (db *DB) InTxNoSync(ctx context.Context, fn func(*Tx) error) error {
	return db.retried(ctx, db.tryTxNoSync, fn)
}

func (db *DB) tryTxNoSync(ctx context.Context, fn func(*Tx) error) (err error) {
	if db.drv.Dialect != SQLite {
		return db.tryTxNoSyncPG(ctx, fn)
	}
	// SQLite reads the setting at the commit, per connection: the
	// writer's connection is lent to this transaction, relaxed, and put
	// back as it was (or discarded when it cannot be).
	db.prepareWanted(ctx)
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: connection: %w", err)
	}
	defer conn.Close()
	// Unwatched from here (see InTxNoSync): ctx is checked before each
	// statement, not watched while it runs.
	if err := ctx.Err(); err != nil {
		return err
	}
	sctx := context.WithoutCancel(ctx)
	if _, err := conn.ExecContext(sctx, "PRAGMA synchronous = NORMAL"); err != nil {
		return fmt.Errorf("store: relax sync: %w", err)
	}
	defer func() {
		if _, rerr := conn.ExecContext(sctx, "PRAGMA synchronous = FULL"); rerr != nil {
			// Never hand a relaxed connection to a durable transaction.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return db.runTx(sctx, conn.BeginTx, fn, true)
}

// tryTxNoSyncPG is a transaction on one connection of the writer pool,
// begun and relaxed (synchronous_commit off) in one round trip: a
// transaction begun through database/sql would take two.
func (db *DB) tryTxNoSyncPG(ctx context.Context, fn func(*Tx) error) (err error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: connection: %w", err)
	}
	defer conn.Close()
	// Without arguments pgx sends this as one simple query.
	if _, err := conn.ExecContext(ctx, "BEGIN; SET LOCAL synchronous_commit = off"); err != nil {
		db.discardIfInTx(ctx, conn)
		return fmt.Errorf("store: begin: %w", err)
	}
	defer func() {
		if err != nil {
			db.discardIfInTx(ctx, conn)
		}
	}()
	if err = fn(&Tx{db: db, tx: conn, conn: conn}); err != nil {
		return err
	}
	if _, err = conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// discardIfInTx rolls back whatever transaction conn may be in, and
// discards the connection when it cannot: a connection never goes back to
// the pool inside a transaction.
func (db *DB) discardIfInTx(ctx context.Context, conn *sql.Conn) {
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

func (db *DB) tryTx(ctx context.Context, fn func(*Tx) error) error {
	db.prepareWanted(ctx)
	return db.runTx(ctx, db.w.BeginTx, fn, false)
}

// runTx begins a transaction with begin, runs fn in it, and commits it,
// or rolls it back when fn or the commit fails. unwatched is Tx.unwatched.
func (db *DB) runTx(ctx context.Context, begin func(context.Context, *sql.TxOptions) (*sql.Tx, error), fn func(*Tx) error, unwatched bool) (err error) {
	sqlTx, err := begin(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = sqlTx.Rollback()
		}
	}()
	if err = fn(&Tx{db: db, tx: sqlTx, unwatched: unwatched}); err != nil {
		return err
	}
	if err = sqlTx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	db.committed()
	return nil
}
