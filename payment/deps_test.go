package payment_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/assaykit/assay/internal/testenv"
)

// TestCoreLinksNoHTTP keeps the seller core transport-neutral: the
// packages payment links include no net/http (HTTP is payment/httpgate's)
// and no protocol mechanism or codec (they import the core, never the
// other way round).
func TestCoreLinksNoHTTP(t *testing.T) {
	goTool := testenv.Command(t, "go", "the Go toolchain")
	out, err := exec.Command(goTool, "list", "-deps", "github.com/assaykit/assay/payment").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	for _, d := range deps {
		switch {
		case d == "net/http", strings.HasPrefix(d, "net/http/"):
			t.Errorf("payment links %s", d)
		case strings.HasPrefix(d, "github.com/assaykit/assay/payment/") && d != "github.com/assaykit/assay/payment/internal/wire":
			t.Errorf("payment links %s", d)
		}
	}
}
