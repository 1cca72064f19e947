package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func summarizeFile(t *testing.T, name string) (*result, string) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	r, err := summarize(f, &out)
	if err != nil {
		t.Fatal(err)
	}
	return r, out.String()
}

// A clean run passes and prints only the package lines.
func TestCleanRunPasses(t *testing.T) {
	r, out := summarizeFile(t, "testdata/clean.json")
	if !r.ok() || r.Passed != 4 || r.Skipped != 0 || r.Failed != 0 {
		t.Fatalf("%+v", r)
	}
	if strings.Contains(out, "quiet") || strings.Contains(out, "=== RUN") || !strings.Contains(out, "ok  \tnsk\t") {
		t.Fatalf("output:\n%s", out)
	}
}

// A skipped subtest, a failed test and a package that does not build each
// fail the run; the skip is listed with its message, the failure's output
// and the build error are printed.
func TestSkipFailAndBuildErrorFail(t *testing.T) {
	r, out := summarizeFile(t, "testdata/skip_and_fail.json")
	if r.ok() {
		t.Fatal("a run with a skip and a failure passed")
	}
	want := &result{Passed: 3, Failed: 1, Skipped: 1, FailedPackages: []string{"nsk/broken", "nsk"},
		Skips: []string{"nsk TestSub/b: a_test.go:6: SKIP: no widget here"}, Events: r.Events}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for _, s := range []string{"undefined: undefined", "a_test.go:8: boom", "--- FAIL: TestBad", "--- SKIP: TestSub/b"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	// A skip alone fails too.
	skipOnly := &result{Passed: 1, Skipped: 1, Events: 5}
	if skipOnly.ok() {
		t.Error("a run with only a skip passed")
	}
}

// No events at all (go test did not run) is not a pass.
func TestEmptyInputFails(t *testing.T) {
	r, err := summarize(strings.NewReader(""), &bytes.Buffer{})
	if err != nil || r.ok() {
		t.Fatalf("%+v %v", r, err)
	}
}
