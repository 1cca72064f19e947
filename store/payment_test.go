package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/ids"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/paymenttest"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/storetest"
)

// TestRotateOrderTokenMovesTheVerificationGrant: after a rotation the new
// token reads the order's verification and the old one no longer does;
// grants of other orders on the same verification stay.
func TestRotateOrderTokenMovesTheVerificationGrant(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := open(t)
			now := time.Now().UTC()
			o := paymenttest.NewTestOrder("claims.verify.quick")
			if err := db.OpenOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
			vid := ids.New(ids.Verification)
			rec := &claims.Record{Tier: claims.Quick, Scope: "payer:0xpayer", RequestHash: "h", Provider: "scripted", CreatedAt: now,
				OrderID: o.ID, OrderTokenHash: o.TokenHash,
				Result: &claims.Result{VerificationID: vid, Claim: "c", Status: claims.StatusConfirmed, ObservedAt: now}}
			if err := db.SaveVerification(ctx, rec, nil); err != nil {
				t.Fatal(err)
			}
			other := ids.Hash(ids.Token(ids.OrderToken))
			if err := db.GrantVerification(ctx, vid, ids.New(ids.Order), other, now); err != nil {
				t.Fatal(err)
			}
			if err := db.MarkSettling(ctx, o.ID, payment.Delivered{ResultKind: "verification", ResultID: vid, Response: payment.StoredResponse{Status: 200, Body: []byte("{}")}}); err != nil {
				t.Fatal(err)
			}
			fresh := ids.Hash(ids.Token(ids.OrderToken))
			if err := db.RotateOrderToken(ctx, o.ID, fresh); err != nil {
				t.Fatal(err)
			}
			got, err := db.Verification(ctx, vid)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(got.Access, fresh) || slices.Contains(got.Access, o.TokenHash) || !slices.Contains(got.Access, other) || len(got.Access) != 2 {
				t.Fatalf("access after rotation %v; want the fresh hash and the other order's, not the old one", got.Access)
			}
		})
	}
}

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
			db := storetest.Open(t, dsn(t), &store.Options{MaxOpenConns: 2, MaxWriteConns: 2})
			o := paymenttest.NewTestOrder("claims.verify.quick")
			if err := db.OpenOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
			w, _ := db.SQL()
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
