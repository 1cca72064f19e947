// Package testenv decides what a test does when an outside dependency it
// needs (PostgreSQL, Node.js and the pinned npm packages, stripe-mock) is
// missing, and which tests are heavy.
//
// The README's test command, go test ./..., is hermetic: it installs
// nothing and reaches no network. A test whose dependency is missing is
// skipped with a message naming the dependency and the command that
// provides it (go test -v ./... | grep SKIP shows them). .ci/run installs
// every dependency and sets StrictEnv, which turns each of those skips into
// a failure, so CI can never pass by skipping.
//
// Heavy tests (load, soak and crash scenarios, 100k-row benchmarks) are not
// skipped at run time: they live in files with the build constraint
// "heavy" and are compiled only by go test -tags heavy, which .ci/run runs
// in its own step.
package testenv

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// StrictEnv names the environment variable that .ci/run sets to 1: a test
// that would skip for a missing dependency fails instead.
const StrictEnv = "ASSAY_TEST_STRICT"

// Strict reports whether missing dependencies fail tests (StrictEnv is 1).
func Strict() bool { return os.Getenv(StrictEnv) == "1" }

// Missing stops tb because a dependency is missing: it skips with the
// message, or fails with it when Strict.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if Strict() {
		tb.Fatalf("missing test dependency ("+StrictEnv+"=1 turns this skip into a failure): "+format, args...)
	}
	tb.Skipf("SKIP: "+format, args...)
}

// Command returns the path of the executable name, looked up in PATH and
// then in $GOPATH/bin and ~/go/bin (where go install puts it). When it is
// missing, tb stops through Missing with install as the advice.
func Command(tb testing.TB, name, install string) string {
	tb.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	var dirs []string
	if gp := os.Getenv("GOPATH"); gp != "" {
		dirs = append(dirs, filepath.Join(gp, "bin"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	Missing(tb, "%s is not installed (%s)", name, install)
	return ""
}

// Node returns the path of node, and checks that each of modules is
// installed under dir/node_modules (dir holds a package-lock.json; npm ci
// there installs them, and .ci/run does it for every such directory).
func Node(tb testing.TB, dir string, modules ...string) string {
	tb.Helper()
	node := Command(tb, "node", "install Node.js 20 or later")
	for _, m := range modules {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", m)); err != nil {
			// The message names the directory absolutely: a relative one
			// would be relative to the test's package, not to the shell.
			if abs, err := filepath.Abs(dir); err == nil {
				dir = abs
			}
			Missing(tb, "%s is not installed in %s (run: npm ci --prefix %s)", m, dir, dir)
		}
	}
	return node
}

// MainParallel runs m (from a TestMain) with up to n parallel tests at
// once unless -test.parallel was given, and returns its exit code. For
// packages whose tests mostly wait for PostgreSQL and the disk: more of
// them than cores (go test's default) overlap their waits.
func MainParallel(m *testing.M, n int) int {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
	return m.Run()
}
