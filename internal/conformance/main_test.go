package conformance_test

import (
	"os"
	"testing"

	"github.com/assaykit/assay/internal/testenv"
)

// TestMain runs four parallel tests at once: they mostly wait for
// PostgreSQL and the disk.
func TestMain(m *testing.M) { os.Exit(testenv.MainParallel(m, 4)) }
