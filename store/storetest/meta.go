package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// MetaStore keeps instance-wide settings: the interface of the MetaStore
// of payment, niche and evidence, which *store.DB and metamem.Store
// implement.
type MetaStore interface {
	SetMetaOnce(ctx context.Context, key, value string) (string, error)
}

// TestMetaStore is the conformance suite of MetaStore. open returns two
// handles on one fresh store, as two instances sharing it have (the same
// one twice for a store of one process): the first value stored under a
// key is the one every later call, on either handle, gets back; keys are
// independent; and many concurrent writers on both handles agree on one
// value.
func TestMetaStore(t *testing.T, open func(t *testing.T) (a, b MetaStore)) {
	t.Run("FirstValueStays", func(t *testing.T) {
		ctx := context.Background()
		a, b := open(t)
		if v, err := a.SetMetaOnce(ctx, "k", "first"); err != nil || v != "first" {
			t.Fatalf("first SetMetaOnce = %q, %v; want first", v, err)
		}
		for _, h := range []MetaStore{a, b} {
			if v, err := h.SetMetaOnce(ctx, "k", "second"); err != nil || v != "first" {
				t.Fatalf("later SetMetaOnce = %q, %v; want the first value", v, err)
			}
		}
		if v, err := b.SetMetaOnce(ctx, "other", "x"); err != nil || v != "x" {
			t.Fatalf("SetMetaOnce of another key = %q, %v; want x", v, err)
		}
	})
	// Many writers, on two handles, agree on a single value.
	t.Run("Race", func(t *testing.T) {
		a, b := open(t)
		var wg sync.WaitGroup
		got := make([]string, 40)
		for i := range got {
			wg.Go(func() {
				h := a
				if i%2 == 1 {
					h = b
				}
				v, err := h.SetMetaOnce(context.Background(), "signing-key", fmt.Sprint(i))
				if err != nil {
					t.Error(err)
				}
				got[i] = v
			})
		}
		wg.Wait()
		for _, v := range got {
			if v != got[0] {
				t.Fatalf("writers disagree: %q vs %q", v, got[0])
			}
		}
	})
}
