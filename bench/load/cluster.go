package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	_ "github.com/assaykit/assay/store/anydb" // registers the sqlite and pgx drivers
)

// Backends.
const (
	backendSQLite   = "sqlite"
	backendPostgres = "postgres"
)

// cluster is one or more example-server processes sharing one database:
// an SQLite file in a temporary data directory, or a fresh PostgreSQL
// schema (dropped by close).
type cluster struct {
	backend  string
	dsn      string // SQLite path or PostgreSQL URL with search_path
	dir      string
	adminKey string
	procs    []*serverProc
	dropPG   func() error
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newCluster prepares (but does not start) instances servers on backend.
// The data directory is made under cfg.WorkDir; for PostgreSQL a fresh
// schema is created on cfg.Postgres. extra adds or overrides server
// environment variables.
func newCluster(ctx context.Context, cfg *Config, scenario, backend string, instances int, extra map[string]string) (*cluster, error) {
	dir, err := os.MkdirTemp(cfg.WorkDir, scenario+"-"+backend+"-")
	if err != nil {
		return nil, err
	}
	c := &cluster{backend: backend, dir: dir, adminKey: "adm_" + randomHex(16)}
	env := map[string]string{
		"ASSAY_DATA":             filepath.Join(dir, "data"),
		"ASSAY_LOG_LEVEL":        "warn",
		"ASSAY_LOG_FORMAT":       "json",
		"ASSAY_ADMIN_KEY":        c.adminKey,
		"ASSAY_PROVIDER":         "corpus",
		"ASSAY_TRUSTED_PROXIES":  "127.0.0.1/32",
		"ASSAY_MPP_SECRET":       randomHex(32), // shared: MPP challenges of one instance verify on the other and after a restart
		"ASSAY_SHUTDOWN_WAIT":    "60s",
		"ASSAY_NICHE_UNLOCK_TTL": "15m",
		"GORACE":                 "halt_on_error=0 log_path=" + filepath.Join(dir, "race"),
	}
	if instances > 1 {
		// One public URL for every instance, as behind a real balancer:
		// payments are bound to the public resource URL, so a payment made
		// through one instance is answered at the other. Not loopback, so
		// dev mode is chosen explicitly.
		env["ASSAY_PUBLIC_BASE_URL"] = "http://assay.loadtest"
		env["ASSAY_DEV_MODE"] = "true"
	}
	for k, v := range extra {
		env[k] = v
	}
	switch backend {
	case backendSQLite:
		c.dsn = filepath.Join(dir, "data", "assay.db")
	case backendPostgres:
		if cfg.Postgres == "" {
			return nil, errors.New("postgres: no URL (set ASSAY_TEST_POSTGRES or -postgres)")
		}
		u, drop, err := freshSchema(ctx, cfg.Postgres)
		if err != nil {
			return nil, err
		}
		c.dsn, c.dropPG = u, drop
		env["ASSAY_POSTGRES_URL"] = u
	default:
		return nil, fmt.Errorf("unknown backend %q", backend)
	}
	for i := range instances {
		name := backend
		if instances > 1 {
			name = fmt.Sprintf("%s-%c", backend, 'A'+i)
		}
		c.procs = append(c.procs, &serverProc{
			name: name, bin: cfg.Bin, env: serverEnv(env),
			logPath: filepath.Join(dir, name+".log"),
		})
	}
	return c, nil
}

// start starts every instance at once (several instances race through
// migrations and the demo import, as a real deployment would).
func (c *cluster) start(ctx context.Context, timeout time.Duration) error {
	var g errgroup.Group
	for _, p := range c.procs {
		g.Go(func() error { return p.start(ctx, timeout) })
	}
	return g.Wait()
}

// bases returns the instances' URLs.
func (c *cluster) bases() []string {
	out := make([]string, len(c.procs))
	for i, p := range c.procs {
		out[i] = p.base()
	}
	return out
}

// stop stops every instance gracefully.
func (c *cluster) stop(wait time.Duration) error {
	var errs []error
	for _, p := range c.procs {
		if err := p.stop(wait); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// close kills what still runs, drops the PostgreSQL schema and removes the
// data directory unless keep.
func (c *cluster) close(keep bool) error {
	for _, p := range c.procs {
		_ = p.kill()
	}
	var err error
	if c.dropPG != nil {
		err = c.dropPG()
	}
	if !keep {
		err = errors.Join(err, os.RemoveAll(c.dir))
	}
	return err
}

// freshSchema creates an empty schema on the PostgreSQL server at base and
// returns a URL whose connections use it (search_path), and a function
// that drops it.
func freshSchema(ctx context.Context, base string) (string, func() error, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("postgres URL: %w", err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	schema := "load_" + randomHex(10)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("postgres: create schema: %w", err)
	}
	drop := func() error {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			return fmt.Errorf("postgres: drop schema %s: %w", schema, err)
		}
		return nil
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

// logFindings scans a server log for panics, data races and fatal errors
// (each a failure) and counts error-level lines.
type logFindings struct {
	Panics, Races, Fatal, Errors int
	Examples                     []string
}

// scanLog reads the log at path. The server logs JSON lines; anything else
// is the runtime's own output (a crash trace, a race report) or our start
// markers.
func scanLog(path string) (logFindings, error) {
	var f logFindings
	b, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	add := func(line string) {
		if len(f.Examples) < 5 {
			if len(line) > 300 {
				line = line[:300] + "…"
			}
			f.Examples = append(f.Examples, line)
		}
	}
	for _, line := range strings.Split(string(b), "\n") {
		lower := strings.ToLower(line)
		switch {
		case strings.HasPrefix(line, "--- loadtest:"), strings.HasPrefix(line, "assay listening on"), line == "":
		case strings.Contains(lower, "panic"):
			f.Panics++
			add(line)
		case strings.Contains(line, "DATA RACE"):
			f.Races++
			add(line)
		case strings.HasPrefix(line, "fatal error:"):
			f.Fatal++
			add(line)
		case strings.Contains(line, `"level":"ERROR"`):
			f.Errors++
			add(line)
		}
	}
	return f, nil
}

// checkLogs scans every instance's log (and race reports) and records
// failures in st; it returns a one-line summary.
func (c *cluster) checkLogs(st *stats) string {
	var total logFindings
	for _, p := range c.procs {
		f, err := scanLog(p.logPath)
		if err != nil {
			st.fail("server log", "%s: %v", p.name, err)
			continue
		}
		total.Panics += f.Panics
		total.Races += f.Races
		total.Fatal += f.Fatal
		total.Errors += f.Errors
		for _, ex := range f.Examples {
			st.note("%s log: %s", p.name, ex)
		}
	}
	races, _ := filepath.Glob(filepath.Join(c.dir, "race*"))
	total.Races += len(races)
	if total.Panics > 0 {
		st.fail("panic in server log", "%d lines mention a panic (see notes)", total.Panics)
	}
	if total.Races > 0 {
		st.fail("data race in server", "%d race reports (%s)", total.Races, strings.Join(races, ", "))
	}
	if total.Fatal > 0 {
		st.fail("fatal error in server log", "%d", total.Fatal)
	}
	return fmt.Sprintf("%d panic lines, %d data races, %d fatal errors, %d error-level lines", total.Panics, total.Races, total.Fatal, total.Errors)
}

// countInLog counts the lines of a log that contain s.
func countInLog(path, s string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), s)
}
