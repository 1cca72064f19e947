package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every configuration problem, whatever its source (flag, variable,
// default), is reported together, each naming its flag and its variable,
// before anything starts: no log line, no listener (the busy -addr is not
// what fails), no data directory.
func TestConfigurationProblemsReportedTogetherBeforeAnythingStarts(t *testing.T) {
	t.Parallel()
	busy := holdPort(t)
	data := filepath.Join(t.TempDir(), "data")
	env := map[string]string{
		"ASSAY_ADDR": busy, "ASSAY_DATA": data,
		"ASSAY_PAYEE_ADDRESS": "0xabc", "ASSAY_LOG_FORMAT": "xml", "ASSAY_MPP_SECRET": "short",
		"ASSAY_STRIPE_PRICE_ID": "price_1",
	}
	args := []string{"-network", "foo", "-log-level", "loud", "-max-body", "lots", "-write-timeout", "60s"}
	var logs syncBuffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, &logs, nil)
	var ce *ConfigError
	if !errors.As(err, &ce) || exitCode(err) != 2 {
		t.Fatalf("error %v (exit status %d), want a configuration error", err, exitCode(err))
	}
	for _, want := range []string{
		`-network (ASSAY_NETWORK): "foo" is not eip155:8453 (Base) or eip155:84532 (Base Sepolia)`,
		`-payee (ASSAY_PAYEE_ADDRESS): "0xabc" is not an address`,
		`-log-level (ASSAY_LOG_LEVEL): "loud"`,
		`-log-format (ASSAY_LOG_FORMAT): "xml"`,
		`-max-body (ASSAY_MAX_BODY_BYTES): invalid number "lots"`,
		`-write-timeout (ASSAY_WRITE_TIMEOUT): 1m0s must be at least -claims-timeout (2m0s)`, // against a default
		`ASSAY_MPP_SECRET: must be at least 32 bytes`,
		`missing: ASSAY_STRIPE_SECRET_KEY, ASSAY_STRIPE_WEBHOOK_SECRET`,
		`-facilitator-url (ASSAY_FACILITATOR_URL): not set, but a payee`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := len(ce.Problems); n != 9 {
		t.Errorf("%d problems, want 9:\n%v", n, err)
	}
	if strings.Contains(err.Error(), "address already in use") {
		t.Errorf("the listener was opened before the configuration was checked:\n%v", err)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("data directory created (%v): the store was opened before the configuration was checked", err)
	}
	if logs.String() != "" {
		t.Errorf("logged before the configuration was checked:\n%s", logs.String())
	}
}

// A busy port fails at once, naming the address and its flag and
// variable, before the data directory is touched.
func TestBusyPortFailsFirst(t *testing.T) {
	t.Parallel()
	busy := holdPort(t)
	data := filepath.Join(t.TempDir(), "data")
	env := map[string]string{"ASSAY_ADDR": busy, "ASSAY_DATA": data}
	var logs syncBuffer
	err := run(context.Background(), nil, func(k string) string { return env[k] }, &logs, nil)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("error %v (exit status %d)", err, exitCode(err))
	}
	if want := "cannot listen on " + busy + " (-addr, ASSAY_ADDR): address already in use"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("data directory created before listening (%v)", err)
	}
	if logs.String() != "" {
		t.Errorf("logged before failing:\n%s", logs.String())
	}
}

// holdPort listens on a loopback port for the test and returns its address.
func holdPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// A first start on a fresh data directory, at the default level, is
// quiet: at most 10 lines, the listening address first and the ready line
// last, warnings short, all in the chosen format on the one stream (run
// has no other); an MCP call adds nothing at info level (the SDK's
// session lines are debug lines, without empty attributes).
func TestFirstStartIsQuietAndOrdered(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			base, logs, all := startServerLogs(t, map[string]string{"ASSAY_LOG_LEVEL": "info", "ASSAY_LOG_FORMAT": format, "ASSAY_NICHE_DEMO": "true"}, nil)
			lines := strings.Split(strings.TrimSpace(logs), "\n")
			if len(lines) > 10 {
				t.Errorf("%d lines at start, want at most 10:\n%s", len(lines), logs)
			}
			type line struct{ Level, Msg string }
			parse := func(s string) line {
				var l line
				if format == "json" {
					if err := json.Unmarshal([]byte(s), &l); err != nil {
						t.Errorf("not a JSON log line: %q", s)
					}
					return l
				}
				if !strings.HasPrefix(s, "time=") || !strings.Contains(s, " level=") || !strings.Contains(s, " msg=") {
					t.Errorf("not a text log line: %q", s)
				}
				l.Level, _, _ = strings.Cut(strings.SplitN(s, "level=", 2)[1], " ")
				l.Msg = s
				return l
			}
			if first := parse(lines[0]); !strings.Contains(first.Msg, "assay listening on "+base) {
				t.Errorf("first line %q does not name %s", lines[0], base)
			}
			if last := parse(lines[len(lines)-1]); !strings.Contains(last.Msg, "assay ready") {
				t.Errorf("last line %q is not the ready line", lines[len(lines)-1])
			}
			for _, s := range lines {
				// The warning itself, without its timestamp.
				if _, w, _ := strings.Cut(s, " "); parse(s).Level == "WARN" && format == "text" && len(w) > 120 {
					t.Errorf("warning of %d characters (details belong at debug level): %s", len(w), w)
				}
			}
			migrations, _ := fs.Glob(os.DirFS("../../store/migrations/sqlite"), "*.sql")
			for _, want := range []string{fmt.Sprintf("store: %d migrations applied", len(migrations)), "demo catalogue: 42 evaluations loaded"} {
				if !strings.Contains(logs, want) {
					t.Errorf("no %q line:\n%s", want, logs)
				}
			}
			for _, noise := range []string{"applied migration", "revision written"} {
				if strings.Contains(logs, noise) {
					t.Errorf("%q at info level:\n%s", noise, logs)
				}
			}
			before := len(all.String())
			mcpInitialize(t, base)
			// One request line for the call, nothing from the SDK.
			after := all.String()[before:]
			if strings.Contains(after, "session") || strings.Contains(after, `session_id=""`) || strings.Contains(after, `"session_id":""`) {
				t.Errorf("MCP SDK lines at info level:\n%s", after)
			}
		})
	}
}

// At debug level the details are there: each migration, each demo
// evaluation, the SDK's session lines (without empty attributes).
func TestDebugLevelHasTheDetails(t *testing.T) {
	t.Parallel()
	base, _, all := startServerLogs(t, map[string]string{"ASSAY_LOG_LEVEL": "debug", "ASSAY_NICHE_DEMO": "true"}, nil)
	mcpInitialize(t, base)
	logs := all.String()
	for _, want := range []string{`msg="store: applied migration"`, `msg="niche: revision written"`, `msg="claims: offline corpus"`,
		`component=mcp`} {
		if !strings.Contains(logs, want) {
			t.Errorf("debug log lacks %s", want)
		}
	}
	if strings.Contains(logs, `=""`) {
		t.Errorf("empty attributes in the debug log:\n%s", logs)
	}
}

// mcpInitialize makes one MCP call, initialize over streamable HTTP
// (answered as server-sent events), and returns the answer.
func mcpInitialize(t *testing.T, base string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/claim-verification/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("mcp initialize: %d %s", res.StatusCode, b)
	}
	return string(b)
}
