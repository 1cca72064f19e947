package claimsmem_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimsmem"
)

// A Store keeps verification records in memory with the SQL store's rules:
// a record is read back as stored, and an id is stored once.
func Example() {
	ctx := context.Background()
	st := claimsmem.New(nil)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	rec := &claims.Record{Tier: claims.Quick, Scope: "payer:0xabc", RequestHash: "h1", Provider: "scripted",
		Result: &claims.Result{VerificationID: "cv_0123456789abcdef0123456789abcdef", Claim: "Base mainnet uses chain ID 8453.",
			Status: claims.StatusConfirmed, ObservedAt: now}}
	if err := st.SaveVerification(ctx, rec, nil); err != nil {
		log.Fatal(err)
	}
	got, err := st.Verification(ctx, rec.Result.VerificationID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Tier, got.Result.Status, got.Result.Claim)
	fmt.Println(errors.Is(st.SaveVerification(ctx, rec, nil), claims.ErrExists))
	// Output:
	// quick confirmed Base mainnet uses chain ID 8453.
	// true
}
