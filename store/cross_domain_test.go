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
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/paymentstore"
	"github.com/assaykit/assay/store/storetest"
)

// The one statement of a domain store that reaches another domain's
// tables: the ledger's token rotation moves the claim verification grant.

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
			ledger, verifications := paymentstore.New(db), claimsstore.New(db)
			now := time.Now().UTC()
			o := paymenttest.NewTestOrder("claims.verify.quick")
			if err := ledger.OpenOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
			vid := ids.New(ids.Verification)
			rec := &claims.Record{Tier: claims.Quick, Scope: "payer:0xpayer", RequestHash: "h", Provider: "scripted", CreatedAt: now,
				OrderID: o.ID, OrderTokenHash: o.TokenHash,
				Result: &claims.Result{VerificationID: vid, Claim: "c", Status: claims.StatusConfirmed, ObservedAt: now}}
			if err := verifications.SaveVerification(ctx, rec, nil); err != nil {
				t.Fatal(err)
			}
			other := ids.Hash(ids.Token(ids.OrderToken))
			if err := verifications.GrantVerification(ctx, vid, ids.New(ids.Order), other, now); err != nil {
				t.Fatal(err)
			}
			if err := ledger.MarkSettling(ctx, o.ID, payment.Delivered{ResultKind: "verification", ResultID: vid, Response: payment.StoredResponse{Status: 200, Body: []byte("{}")}}); err != nil {
				t.Fatal(err)
			}
			fresh := ids.Hash(ids.Token(ids.OrderToken))
			if err := ledger.RotateOrderToken(ctx, o.ID, fresh); err != nil {
				t.Fatal(err)
			}
			got, err := verifications.Verification(ctx, vid)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(got.Access, fresh) || slices.Contains(got.Access, o.TokenHash) || !slices.Contains(got.Access, other) || len(got.Access) != 2 {
				t.Fatalf("access after rotation %v; want the fresh hash and the other order's, not the old one", got.Access)
			}
		})
	}
}
