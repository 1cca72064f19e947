// Command noskip reads the output of go test -json on standard input,
// prints it as go test prints it without -v (package results, and the
// output of every failed or skipped test), and exits with status 1 when a
// test failed or any test or subtest was skipped. .ci/run pipes every go
// test through it, so that CI can never pass by skipping:
//
//	go test -json ./... | go run ./internal/testenv/noskip
//
// ASSAY_TEST_STRICT=1 (see package testenv) already turns a skip for a
// missing dependency into a failure; noskip also catches any other skip (a
// t.Skip that does not go through testenv, a skip in a dependency's test
// helper). The summary at the end lists every skipped test with its
// message.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	r, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noskip:", err)
		os.Exit(2)
	}
	r.print(os.Stdout)
	if !r.ok() {
		os.Exit(1)
	}
}

// event is one line of go test -json (cmd/test2json), with the build
// events of go test -json since Go 1.24.
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// result counts what a go test run did.
type result struct {
	Passed, Failed, Skipped int      // tests and subtests
	FailedPackages          []string // packages that failed, also without a failing test (build errors, panics in TestMain)
	Skips                   []string // "package TestName: message" of each skipped test
	Events                  int      // JSON events read
}

func (r *result) ok() bool {
	return r.Events > 0 && r.Failed == 0 && len(r.FailedPackages) == 0 && r.Skipped == 0
}

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "\n%d tests passed, %d failed, %d skipped", r.Passed, r.Failed, r.Skipped)
	if len(r.FailedPackages) > 0 {
		fmt.Fprintf(w, "; failed packages: %s", strings.Join(r.FailedPackages, ", "))
	}
	fmt.Fprintln(w)
	if r.Events == 0 {
		fmt.Fprintln(w, "noskip: no go test -json events were read")
	}
	if r.Skipped > 0 {
		fmt.Fprintln(w, "A skipped test fails this run (CI never passes by skipping); skipped:")
		for _, s := range r.Skips {
			fmt.Fprintln(w, "  "+s)
		}
	}
}

// summarize copies the readable part of the go test -json stream in to out
// and counts the results. Lines that are not JSON are copied as they are.
func summarize(in io.Reader, out io.Writer) (*result, error) {
	r := &result{}
	pending := map[string][]string{} // output of running tests, by package and test
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		r.Events++
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Test == "" && e.Action == "output":
			if e.Output != "PASS\n" {
				fmt.Fprint(out, e.Output)
			}
		case e.Test == "" && e.Action == "fail":
			r.FailedPackages = append(r.FailedPackages, e.Package)
		case e.Test == "":
		case e.Action == "output":
			if !strings.HasPrefix(e.Output, "=== ") { // RUN, PAUSE, CONT: what -v adds
				pending[key] = append(pending[key], e.Output)
			}
		case e.Action == "pass":
			r.Passed++
			delete(pending, key)
		case e.Action == "fail":
			r.Failed++
			fmt.Fprint(out, strings.Join(pending[key], ""))
			delete(pending, key)
		case e.Action == "skip":
			r.Skipped++
			fmt.Fprint(out, strings.Join(pending[key], ""))
			r.Skips = append(r.Skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, skipMessage(pending[key])))
			delete(pending, key)
		}
	}
	if err := sc.Err(); err != nil {
		return r, err
	}
	// Tests that never ended (a package that panicked or timed out): their
	// output explains the failure of their package.
	keys := make([]string, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprint(out, strings.Join(pending[k], ""))
	}
	return r, nil
}

// skipMessage is the last line a skipped test logged (its t.Skip message),
// or "(no message)".
func skipMessage(output []string) string {
	for i := len(output) - 1; i >= 0; i-- {
		l := strings.TrimSpace(output[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		return l
	}
	return "(no message)"
}
