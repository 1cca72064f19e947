package conformance_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs up to four parallel tests at once unless -test.parallel
// says otherwise: the suites mostly wait for PostgreSQL and the disk,
// so more of them than cores (the default) overlap their waits.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "4")
	}
	os.Exit(m.Run())
}
