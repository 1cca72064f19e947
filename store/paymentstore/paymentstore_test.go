package paymentstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/storetest"
)

// TestReadsDoNotWaitBehindWrites: with every writer connection taken by
// open write transactions (a burst of paid writes), reads still answer —
// they have their own pool.
func TestReadsDoNotWaitBehindWrites(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite-file": func(t *testing.T) string { return storetest.SQLitePath(t) },
		"postgres":    func(t *testing.T) string { return storetest.MigratedPostgresURL(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			sqlDB := storetest.Open(t, dsn(t), &store.Options{MaxOpenConns: 2, MaxWriteConns: 2})
			db := paymentstore.New(sqlDB)
			o := paymenttest.NewTestOrder("claims.verify.quick")
			if err := db.OpenOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
			w, _ := sqlDB.SQL()
			for range w.Stats().MaxOpenConnections {
				tx, err := w.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback()
			}
			// A write now waits for a writer connection...
			wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			if err := db.OpenOrder(wctx, paymenttest.NewTestOrder("claims.verify.quick")); err == nil {
				t.Fatal("a write found a writer connection: the pool was not exhausted")
			}
			// ...and a read does not.
			rctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if got, err := db.Order(rctx, o.ID); err != nil || got.ID != o.ID {
				t.Fatalf("a read behind the writes: %v", err)
			}
		})
	}
}
