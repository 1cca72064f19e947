package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"testing"

	"github.com/assaykit/assay/store/sqlite"
)

// A prepared in-memory database is copied, not prepared again: each copy
// starts with the prepared contents and changes on its own.
func ExampleOpenMemory() {
	ctx := context.Background()
	prepared, err := sqlite.OpenMemory(ctx, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer prepared.Close()
	if err := prepared.SetMeta(ctx, "catalogue", "loaded"); err != nil {
		log.Fatal(err)
	}
	image, err := prepared.Image(ctx)
	if err != nil {
		log.Fatal(err)
	}

	a, err := sqlite.OpenMemory(ctx, image, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := sqlite.OpenMemory(ctx, image, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	if err := a.SetMeta(ctx, "catalogue", "changed"); err != nil {
		log.Fatal(err)
	}
	va, _ := a.Meta(ctx, "catalogue")
	vb, _ := b.Meta(ctx, "catalogue")
	vp, _ := prepared.Meta(ctx, "catalogue")
	fmt.Println(va, vb, vp)
	// Output: changed loaded loaded
}

// A copy is a whole, sound database.
func TestOpenMemoryCopyIsSound(t *testing.T) {
	ctx := context.Background()
	src, err := sqlite.OpenMemory(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	image, err := src.Image(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := sqlite.OpenMemory(ctx, image, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if err := cp.CheckIntegrity(ctx); err != nil {
		t.Fatalf("integrity of the copy: %v", err)
	}
}

// Bytes that are not a database are an error at open, not at first use.
func TestOpenMemoryRejectsMalformedImage(t *testing.T) {
	ctx := context.Background()
	for name, image := range map[string][]byte{
		"empty":   {},
		"garbage": []byte("this is not an SQLite database, only some bytes that pretend to be one"),
	} {
		t.Run(name, func(t *testing.T) {
			db, err := sqlite.OpenMemory(ctx, image, nil)
			if err == nil {
				db.Close()
				t.Fatal("opened a malformed image")
			}
			t.Log(err)
		})
	}
}

// BenchmarkOpenMemory compares starting an in-memory database from an
// image with migrating an empty one (the baseline).
func BenchmarkOpenMemory(b *testing.B) {
	ctx := context.Background()
	src, err := sqlite.OpenMemory(ctx, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	image, err := src.Image(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		image []byte
	}{{"migrate", nil}, {"image", image}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				db, err := sqlite.OpenMemory(ctx, bc.image, nil)
				if err != nil {
					b.Fatal(err)
				}
				db.Close()
			}
		})
	}
}
