package claimsstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/storetest"
)

// TestReleaseIdempotencyLeases: pending keys are freed at once (a retry
// acquires without waiting for the dead holder's lease); completed keys
// still replay their result.
func TestReleaseIdempotencyLeases(t *testing.T) {
	t.Parallel()
	for name, open := range storetest.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := claimsstore.New(open(t))
			now := time.Now().UTC()
			pending := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Deep, Key: "killed-" + name}
			done := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Deep, Key: "done-" + name}
			if st, err := db.AcquireIdempotency(ctx, pending, "h1", now, time.Hour); err != nil || st.Lease == nil {
				t.Fatal(st, err)
			}
			st, err := db.AcquireIdempotency(ctx, done, "h1", now, time.Hour)
			if err != nil || st.Lease == nil {
				t.Fatal(st, err)
			}
			rec := &claims.Record{Tier: claims.Deep, Scope: done.Scope, RequestHash: "h1", Provider: "scripted", CreatedAt: now,
				Result: &claims.Result{VerificationID: ids.New(ids.Verification), Claim: "c", Status: claims.StatusConfirmed, ObservedAt: now}}
			if err := db.SaveVerification(ctx, rec, st.Lease); err != nil {
				t.Fatal(err)
			}
			if st, _ := db.AcquireIdempotency(ctx, pending, "h1", now.Add(time.Second), time.Hour); st == nil || st.InFlightUntil.IsZero() {
				t.Fatalf("before release: %+v, want in flight", st)
			}
			n, err := db.ReleaseIdempotencyLeases(ctx)
			if err != nil || n != 1 {
				t.Fatalf("ReleaseIdempotencyLeases = %d, %v; want 1", n, err)
			}
			if st, err := db.AcquireIdempotency(ctx, pending, "h1", now.Add(time.Second), time.Hour); err != nil || st.Lease == nil {
				t.Fatalf("retry after release: %+v %v, want a new lease", st, err)
			}
			if st, err := db.AcquireIdempotency(ctx, done, "h1", now.Add(time.Second), time.Hour); err != nil || st.VerificationID != rec.Result.VerificationID {
				t.Fatalf("completed key after release: %+v %v, want its result", st, err)
			}
		})
	}
}
