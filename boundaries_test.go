package assay_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/assaykit/assay/internal/testenv"
)

// The layering the design promises, checked on the packages' real import
// graphs (go list -deps, from the module cache: no network): each row is
// a package and the packages it must never link, directly or not: paths
// of this module (a path ending in "/..." forbids its subpackages too), or
// standard-library paths after "std:".
func TestImportBoundaries(t *testing.T) {
	// go test puts its own toolchain first on PATH.
	goCmd := testenv.Command(t, "go", "the Go toolchain that runs this test")
	const mod = "github.com/assaykit/assay/"
	for _, tc := range []struct {
		pkg       string
		forbidden []string
		why       string
	}{
		{"payment", []string{"std:net/http", "payment/httpgate", "payment/protocols", "payment/x402/...", "payment/mpp/...", "payment/evm", "payment/paying", "payment/stripecard"},
			"the seller core is transport-neutral; the HTTP gate and the protocol mechanisms import it, never the other way round"},
		{"server/agents", []string{"server"}, "the MCP and A2A adapters are built over the application layer and the routing table, not over the HTTP server"},
		{"discovery", []string{"server"}, "the documents are generated from the routing table and the catalogue, not from the HTTP server"},
		{"pages", []string{"server", "server/agents", "discovery/..."}, "the pages are built over the application layer and the routing table, like the other mounts, not over the HTTP server"},
		{"sell", []string{"server/...", "discovery/...", "pages"}, "the application layer knows no transport"},
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
			deps := strings.Fields(string(out))
			if len(deps) < 10 {
				t.Fatalf("go list -deps ./%s listed %d packages: %q", tc.pkg, len(deps), out)
			}
			for _, d := range deps {
				for _, f := range tc.forbidden {
					path := mod
					if std, ok := strings.CutPrefix(f, "std:"); ok {
						f, path = std, ""
					}
					base, tree := strings.CutSuffix(f, "/...")
					if d == path+base || (tree && strings.HasPrefix(d, path+base+"/")) {
						t.Errorf("%s links %s: %s", tc.pkg, d, tc.why)
					}
				}
			}
		})
	}
}
