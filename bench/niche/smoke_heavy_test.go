//go:build heavy

package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/store/storetest"
)

// TestSmoke runs the whole benchmark on a small catalogue for a moment,
// on SQLite and PostgreSQL (ASSAY_TEST_POSTGRES), and checks that every
// measurement answered without errors. It builds and queries catalogues
// for half a minute, so it is heavy (go test -tags heavy).
func TestSmoke(t *testing.T) {
	var out bytes.Buffer
	cfg := config{N: 1500, Seed: 3, Clients: 4, Warm: 100 * time.Millisecond, Duration: time.Second, Out: &out,
		RemoteWrites: 5, ImportSample: 50, TwoInstances: 2 * time.Second}
	pg := os.Getenv(storetest.PostgresEnv)
	if err := run(context.Background(), cfg, pg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ratios against") || strings.Contains(out.String(), "n=0 ") {
		t.Fatalf("output:\n%s", out.String())
	}
	// The scale figures end the output with the line the issue names.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "scale: remote-write-cpu-ms=") || !strings.Contains(last, " index-load-s=") ||
		!strings.Contains(last, " import-sqlite-s=") || (pg != "" && strings.Contains(last, "import-postgres-s=n/a")) {
		t.Fatalf("last line %q", last)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "err=") && !strings.Contains(line, "err=0 ") {
			t.Errorf("errors: %s", line)
		}
	}
	t.Log("\n" + out.String())
	if pg == "" {
		// SQLite was measured; PostgreSQL was not.
		testenv.Missing(t, "PostgreSQL part of the smoke run: set %s", storetest.PostgresEnv)
	}
}
