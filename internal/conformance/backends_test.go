package conformance_test

import (
	"testing"

	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/storetest"
)

// backends returns, by backend name, a function opening a fresh store of
// one domain: "memory" (mem) and every database of storetest.Stores (sql
// over it).
func backends[S any](mem func() S, sql func(*store.DB) S) map[string]func(t *testing.T) S {
	out := map[string]func(t *testing.T) S{"memory": func(*testing.T) S { return mem() }}
	for name, open := range storetest.Stores() {
		out[name] = func(t *testing.T) S { return sql(open(t)) }
	}
	return out
}

// sharedBackends returns, by backend name, a function opening two
// handles of one store, as two instances have: "memory" (one store for
// both: it is one process's) and every database of
// storetest.SharedStores (sql over each handle).
func sharedBackends[S any](mem func() S, sql func(*store.DB) S) map[string]func(t *testing.T) (S, S) {
	out := map[string]func(t *testing.T) (S, S){"memory": func(*testing.T) (S, S) { s := mem(); return s, s }}
	for name, open := range storetest.SharedStores() {
		out[name] = func(t *testing.T) (S, S) { a, b := open(t); return sql(a), sql(b) }
	}
	return out
}
