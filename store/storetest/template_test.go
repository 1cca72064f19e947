package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/assaykit/assay/store"
)

func TestTemplatePreparesOnceAndCopies(t *testing.T) {
	prepared := 0
	tp := &Template{Prepare: func(ctx context.Context, db *store.DB) error {
		prepared++
		return db.SetMeta(ctx, "k", "prepared")
	}}
	a, b := tp.Open(t, nil), tp.Open(t, nil)
	if prepared != 1 {
		t.Fatalf("prepared %d times, want once", prepared)
	}
	ctx := context.Background()
	if err := a.SetMeta(ctx, "k", "changed"); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Meta(ctx, "k"); err != nil || v != "prepared" {
		t.Fatalf("the other copy holds %q, %v; want the prepared value", v, err)
	}
	if v, err := tp.Open(t, nil).Meta(ctx, "k"); err != nil || v != "prepared" {
		t.Fatalf("a later copy holds %q, %v; want the prepared value", v, err)
	}
}

func TestTemplateZeroValueIsEmptyAndMigrated(t *testing.T) {
	var tp Template
	db := tp.Open(t, nil)
	if _, err := db.Meta(context.Background(), "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Meta: %v; want store.ErrNotFound from an empty, migrated database", err)
	}
}

func TestTemplatePrepareErrorFailsEveryOpen(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	tp := &Template{Prepare: func(context.Context, *store.DB) error { calls++; return boom }}
	for range 2 {
		if _, err := tp.copy(context.Background(), nil); !errors.Is(err, boom) {
			t.Fatalf("copy: %v, want %v", err, boom)
		}
	}
	if calls != 1 {
		t.Fatalf("Prepare ran %d times, want once", calls)
	}
}
