package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/sqlite"
)

// Template is a database prepared once per test binary and copied for
// each test that opens it (sqlite.OpenMemory): tests that each need the
// same prepared contents, such as the demo catalogue, pay for preparing
// them once. Declare one as a package variable of the tests. The zero
// value is an empty database with every migration applied.
type Template struct {
	// Prepare fills the template; nil leaves it empty. It runs once, on
	// the first Open, and its error fails every Open.
	Prepare func(ctx context.Context, db *store.DB) error

	once  sync.Once
	image []byte
	err   error
}

// Open returns a private in-memory SQLite database holding a copy of the
// template, opened with opts and closed when the test ends.
func (tp *Template) Open(t testing.TB, opts *store.Options) *store.DB {
	t.Helper()
	m, err := tp.copy(context.Background(), opts)
	if err != nil {
		t.Fatalf("storetest: template: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m.DB
}

// copy prepares the template if it is not yet and opens a copy.
func (tp *Template) copy(ctx context.Context, opts *store.Options) (*sqlite.Memory, error) {
	tp.once.Do(func() { tp.image, tp.err = tp.prepare(ctx) })
	if tp.err != nil {
		return nil, tp.err
	}
	return sqlite.OpenMemory(ctx, tp.image, opts)
}

func (tp *Template) prepare(ctx context.Context) ([]byte, error) {
	m, err := sqlite.OpenMemory(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	if tp.Prepare != nil {
		if err := tp.Prepare(ctx, m.DB); err != nil {
			return nil, err
		}
	}
	return m.Image(ctx)
}
