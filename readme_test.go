//go:build heavy

package assay_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/testenv"
)

// The README's shell commands, run as a reader would, so that the README
// cannot drift from the code: the examples are built, every example's -help
// must exit 0, and every command of the README's sh code blocks runs
// against a server started as the quick start says — with two rewrites: "go
// run ./examples/X" runs the built binary, and 127.0.0.1:8080 becomes the
// started server's address (it listens on a free port, ASSAY_ADDR
// 127.0.0.1:0; ASSAY_BASE_URL tells examples/client where it is). The
// commands that cannot run here are listed in readmeSkipped with the
// reason; a skip that names no README command fails the test, so the list
// cannot go stale either.
//
// It builds four binaries and starts a server, so it is heavy: go test
// -tags heavy -run TestREADMECommands . (the heavy step of .ci/run).

// readmeSkipped are the README commands not run here, by a prefix of the
// command, with the reason.
var readmeSkipped = map[string]string{
	"go test ": "runs test suites (the README's test command, the skips listing, the heavy tests): .ci/run runs them in their own steps, and this test is one of them",
	"go get github.com/assaykit/assay@latest":                  "reaches the module proxy and changes a go.mod: not offline",
	"ASSAY_POSTGRES_URL='postgres://assay:…@db.internal:5432/": "a production PostgreSQL, facilitator and payee: placeholders, not offline",
	`curl -H "X-Agentic-Order-Token: ort_…"`:                   "the order token and verification id of a paid call are placeholders: examples/server's TestPaidVerificationYieldsABundle runs this flow",
	"go run ./examples/bundlecheck -jwks":                      "checks the bundle the command before downloads: examples/bundlecheck's and examples/server's tests check bundles",
}

// readmeExpect is what a command's output must contain, by the command's
// start (commands without an entry must only succeed).
var readmeExpect = map[string]string{
	"curl http://127.0.0.1:8080/v1/capabilities":                 `"capabilities":[`,
	"curl http://127.0.0.1:8080/ ":                               `"services":[`,
	"curl -i -H 'Content-Type: application/json' -d '{\"claim\"": "HTTP/1.1 402",
	"go run ./examples/server -help":                             "ASSAY_ADDR",
	"go run ./examples/client ":                                  "Claim verification, standard tier",
}

// readmeServer is the quick start's command that starts the server; the
// test runs it once, in the background, before the others.
const readmeServer = "go run ./examples/server"

func TestREADMECommands(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "the go command is not on PATH")
	}
	cmds := readmeCommands(t, "README.md")
	if !slices.Contains(cmds, readmeServer) {
		t.Fatalf("the README no longer starts the server with %q: update this test", readmeServer)
	}
	for _, m := range []map[string]string{readmeSkipped, readmeExpect} {
		for prefix := range m {
			if !slices.ContainsFunc(cmds, func(c string) bool { return strings.HasPrefix(c+" ", prefix) }) {
				t.Errorf("this test names %q, which starts no README command any more", prefix)
			}
		}
	}

	// Build every example, as go run would.
	bin := t.TempDir()
	build := exec.Command(goBin, "build", "-o", bin+string(filepath.Separator), "./examples/...")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/...: %v\n%s", err, out)
	}
	examples, err := filepath.Glob(filepath.Join("examples", "*", "main.go"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	work := t.TempDir() // the reader's current directory: ./assay-data lands here
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "TMPDIR=" + os.TempDir()}
	rewrite := func(c, addr string) string {
		c = regexp.MustCompile(`go run \./examples/(\w+)`).ReplaceAllString(c, filepath.Join(bin, "$1"))
		if addr != "" {
			c = strings.ReplaceAll(c, "127.0.0.1:8080", addr)
		}
		return c
	}

	// Every example answers -help with its flags and exit status 0.
	for _, m := range examples {
		name := filepath.Base(filepath.Dir(m))
		out, err := runShell(work, env, filepath.Join(bin, name)+" -help")
		if err != nil || !strings.Contains(out, "  -") {
			t.Errorf("%s -help: %v\n%s", name, err, out)
		}
	}

	// The quick start's server, on a free port; its log is checked below.
	srv := exec.Command("bash", "-c", "exec "+rewrite(readmeServer, ""))
	srv.Dir, srv.Env = work, append(env, "ASSAY_ADDR=127.0.0.1:0")
	logs, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	var log lockedLines
	// ready receives the number of lines up to "assay ready".
	listening, ready := make(chan string, 1), make(chan int, 1)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			n := log.add(sc.Text())
			if m := regexp.MustCompile(`assay listening on http://([^\s"]+)`).FindStringSubmatch(sc.Text()); m != nil && n == 1 {
				listening <- m[1]
			}
			if strings.Contains(sc.Text(), "assay ready") {
				ready <- n
			}
		}
		exited <- srv.Wait()
	}()
	t.Cleanup(func() {
		_ = srv.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = srv.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	var addr string
	select {
	case addr = <-listening:
	case err := <-exited:
		t.Fatalf("the server exited: %v\n%s", err, log.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the server did not log its address first:\n%s", log.String())
	}
	var n int
	select {
	case n = <-ready:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the server did not get ready:\n%s", log.String())
	}
	// The quick start promises a few lines: at most 10 up to "assay ready".
	if n > 10 {
		t.Errorf("the first start logged %d lines, want at most 10:\n%s", n, log.String())
	}
	// A second server on the same address stops at once, naming it.
	out, err := runShell(work, append(env, "ASSAY_ADDR="+addr, "ASSAY_DATA="+t.TempDir()), rewrite(readmeServer, ""))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out, "cannot listen on "+addr+" (-addr, ASSAY_ADDR)") {
		t.Errorf("a second server on %s: %v\n%s", addr, err, out)
	}

	// The sqlite3 backup commands of Operating write into backup/.
	if err := os.Mkdir(filepath.Join(work, "backup"), 0o755); err != nil {
		t.Fatal(err)
	}
	env = append(env, "ASSAY_BASE_URL=http://"+addr)
	for _, c := range cmds {
		if c == readmeServer {
			continue // running
		}
		if reason, ok := skipped(c); ok {
			t.Logf("not run: %s (%s)", c, reason)
			continue
		}
		if strings.HasPrefix(c, "sqlite3 ") {
			testenv.Command(t, "sqlite3", "apt-get install sqlite3")
		}
		out, err := runShell(work, env, rewrite(c, addr))
		if err != nil {
			t.Errorf("README command failed: %s\n%v\n%s", c, err, out)
			continue
		}
		for prefix, want := range readmeExpect {
			if strings.HasPrefix(c+" ", prefix) && !strings.Contains(out, want) {
				t.Errorf("README command %s: output lacks %q:\n%.2000s", c, want, out)
			}
		}
		t.Logf("ran: %s", c)
	}
}

// readmeCommands returns the commands of the sh/bash code blocks of the
// file: lines continued with a backslash are joined; blank and comment
// lines are dropped (a trailing comment stays: the shell ignores it).
func readmeCommands(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	var in bool
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if lang, ok := strings.CutPrefix(trimmed, "```"); ok {
			in = !in && (lang == "sh" || lang == "bash")
			continue
		}
		if !in || (cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#"))) {
			continue
		}
		if rest, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(rest)
			continue
		}
		cur.WriteString(trimmed)
		cmds = append(cmds, cur.String())
		cur.Reset()
	}
	if len(cmds) == 0 {
		t.Fatalf("no shell commands in %s", path)
	}
	return cmds
}

func skipped(c string) (string, bool) {
	for prefix, reason := range readmeSkipped {
		if strings.HasPrefix(c, prefix) {
			return reason, true
		}
	}
	return "", false
}

// runShell runs command with bash in dir, with a time limit, and returns
// its combined output.
func runShell(dir string, env []string, command string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// lockedLines collects log lines while the test reads them.
type lockedLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLines) add(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
	return len(l.lines)
}

func (l *lockedLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
