package store_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/assaykit/assay/internal/testenv"
)

// The split of the stores per domain is for what a program links: these
// tests ask the go command which packages a set of imports brings in
// (go list -deps, the union of their dependencies: what a program
// importing them all links), offline.

const module = "github.com/assaykit/assay/"

// deps returns the packages of this module that the packages pkgs
// (relative to the module) depend on, themselves included.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "the go command is not on PATH")
	}
	args := []string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}
	for _, p := range pkgs {
		args = append(args, module+p)
	}
	cmd := exec.Command(goBin, args...)
	// Offline and read-only: the module cache the build already needs is
	// enough, and nothing is downloaded or rewritten.
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, stderr)
	}
	var own []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, module) {
			own = append(own, strings.TrimPrefix(p, module))
		}
	}
	return own
}

// under returns the packages of list that are dir or under it.
func under(list []string, dir string) []string {
	var out []string
	for _, p := range list {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// TestEngineOnlyLinksNoPayment: a program that embeds the claims, niche
// and snapshot engines on SQLite, with their SQL stores, links no payment
// package; nor does opening a database of either dialect.
func TestEngineOnlyLinksNoPayment(t *testing.T) {
	t.Parallel()
	for _, set := range [][]string{
		{"claims", "niche", "snapshot", "store/sqlite", "store/claimsstore", "store/nichestore", "store/snapshotstore"},
		{"store/sqlite"}, {"store/postgres"}, {"store/anydb"},
	} {
		if p := under(deps(t, set...), "payment"); len(p) > 0 {
			t.Errorf("importing %v links %v", set, p)
		}
	}
}

// TestDomainStoresAreApart: no domain store imports another (each links
// only its own domain), and the shared package imports none.
func TestDomainStoresAreApart(t *testing.T) {
	t.Parallel()
	domains := []string{"store/claimsstore", "store/nichestore", "store/snapshotstore", "store/paymentstore"}
	for _, d := range append(domains, "store", "store/sqlite", "store/postgres", "store/anydb") {
		got := deps(t, d)
		for _, other := range domains {
			if other != d && slices.Contains(got, other) {
				t.Errorf("%s links %s", d, other)
			}
		}
	}
}
