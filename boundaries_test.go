package assay_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/assaykit/assay/internal/testenv"
)

// The layering the design promises, checked on the packages' real import
// graphs (go list -deps, from the module cache: no network): each row is
// a package and the packages it must never link, directly or not; a
// forbidden path ending in "/..." forbids its subpackages too.
func TestImportBoundaries(t *testing.T) {
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		goCmd = testenv.Command(t, "go", "the Go toolchain that runs this test")
	}
	const mod = "github.com/assaykit/assay/"
	for _, tc := range []struct {
		pkg       string
		forbidden []string
		why       string
	}{
		{"server/agents", []string{"server"}, "the MCP and A2A adapters are built over the application layer and the routing table, not over the HTTP server"},
		{"discovery", []string{"server"}, "the documents are generated from the routing table and the catalogue, not from the HTTP server"},
		{"sell", []string{"server/...", "discovery/..."}, "the application layer knows no transport"},
		{"claims", []string{"payment/...", "sell/...", "server/..."}, "a domain knows nothing of how it is sold"},
		{"niche", []string{"payment/...", "sell/...", "server/..."}, "a domain knows nothing of how it is sold"},
		{"snapshot", []string{"payment/...", "sell/...", "server/..."}, "a domain knows nothing of how it is sold"},
		// An engine-only program (claims, niche and snapshot on SQLite,
		// with their stores) links the union of these rows' packages: no
		// payment package.
		{"store", []string{"payment/...", "store/claimsstore", "store/nichestore", "store/snapshotstore", "store/paymentstore"}, "the shared database links no domain store"},
		{"store/sqlite", []string{"payment/...", "store/claimsstore", "store/nichestore", "store/snapshotstore", "store/paymentstore"}, "opening a database links its driver, not the domain stores"},
		{"store/postgres", []string{"payment/...", "store/claimsstore", "store/nichestore", "store/snapshotstore", "store/paymentstore"}, "opening a database links its driver, not the domain stores"},
		{"store/anydb", []string{"payment/...", "store/claimsstore", "store/nichestore", "store/snapshotstore", "store/paymentstore"}, "opening a database links its drivers, not the domain stores"},
		{"store/claimsstore", []string{"payment/...", "store/nichestore", "store/snapshotstore", "store/paymentstore"}, "a domain store links its own domain only"},
		{"store/nichestore", []string{"payment/...", "store/claimsstore", "store/snapshotstore", "store/paymentstore"}, "a domain store links its own domain only"},
		{"store/snapshotstore", []string{"payment/...", "store/claimsstore", "store/nichestore", "store/paymentstore"}, "a domain store links its own domain only"},
		{"store/paymentstore", []string{"store/claimsstore", "store/nichestore", "store/snapshotstore"}, "a domain store links its own domain only"},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			out, err := exec.Command(goCmd, "list", "-deps", "./"+tc.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps ./%s: %v\n%s", tc.pkg, err, out)
			}
			for _, d := range strings.Fields(string(out)) {
				rel, ok := strings.CutPrefix(d, mod)
				if !ok {
					continue
				}
				for _, f := range tc.forbidden {
					base, tree := strings.CutSuffix(f, "/...")
					if rel == base || (tree && strings.HasPrefix(rel, base+"/")) {
						t.Errorf("%s links %s: %s", tc.pkg, d, tc.why)
					}
				}
			}
		})
	}
}
