package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records the Fatalf or Skipf that stopped
// a function run by do, instead of stopping the test.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skip = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// do runs f on its own goroutine, as testing runs a test, so that Fatalf
// and Skipf stop f only.
func (r *recorder) do(f func()) *recorder {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
	return r
}

// isolate leaves only an empty directory on PATH, and empty GOPATH and
// home directories.
func isolate(t *testing.T) (bin string) {
	bin = t.TempDir()
	t.Setenv("PATH", bin)
	t.Setenv("GOPATH", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	return bin
}

func TestMissingSkipsOrFails(t *testing.T) {
	t.Setenv(StrictEnv, "")
	r := &recorder{TB: t}
	r.do(func() { Missing(r, "widget %d", 7) })
	if r.skip != "SKIP: widget 7" || r.fatal != "" {
		t.Fatalf("not strict: skip %q fatal %q", r.skip, r.fatal)
	}
	t.Setenv(StrictEnv, "1")
	r = &recorder{TB: t}
	r.do(func() { Missing(r, "widget %d", 7) })
	if !strings.Contains(r.fatal, "widget 7") || !strings.Contains(r.fatal, StrictEnv+"=1") || r.skip != "" {
		t.Fatalf("strict: skip %q fatal %q", r.skip, r.fatal)
	}
}

func TestCommandAndNode(t *testing.T) {
	t.Setenv(StrictEnv, "1")
	bin := isolate(t)
	r := &recorder{TB: t}
	var p string
	if r.do(func() { p = Command(r, "assay-no-such-tool", "install it") }); p != "" || !strings.Contains(r.fatal, "assay-no-such-tool is not installed (install it)") {
		t.Fatalf("missing command: %q, fatal %q", p, r.fatal)
	}
	// A command in $GOPATH/bin is found without being on PATH.
	tool := filepath.Join(os.Getenv("GOPATH"), "bin", "assay-tool")
	if err := os.MkdirAll(filepath.Dir(tool), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = &recorder{TB: t}
	if r.do(func() { p = Command(r, "assay-tool", "install it") }); p != tool || r.fatal != "" {
		t.Fatalf("GOPATH/bin: %q, fatal %q", p, r.fatal)
	}
	// node on PATH, one module installed and one not.
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", "@scope", "present"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = &recorder{TB: t}
	if r.do(func() { p = Node(r, dir, "@scope/present") }); p != filepath.Join(bin, "node") || r.fatal != "" {
		t.Fatalf("node with its module: %q, fatal %q", p, r.fatal)
	}
	r = &recorder{TB: t}
	r.do(func() { Node(r, dir, "@scope/present", "absent") })
	if !strings.Contains(r.fatal, "absent is not installed in "+dir) || !strings.Contains(r.fatal, "npm ci --prefix "+dir) {
		t.Fatalf("missing module: fatal %q", r.fatal)
	}
	// A relative directory is named absolutely, so that the advice works
	// from any shell directory.
	t.Chdir(filepath.Dir(dir))
	r = &recorder{TB: t}
	r.do(func() { Node(r, filepath.Base(dir), "absent") })
	if !strings.Contains(r.fatal, "npm ci --prefix "+dir+")") {
		t.Fatalf("relative directory: fatal %q", r.fatal)
	}
}
