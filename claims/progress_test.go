package claims_test

import (
	"context"
	"sync"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/google/go-cmp/cmp"
)

// Verify reports its stages to the ProgressFunc of its context, in order;
// an idempotent replay reports none.
func TestProgressStages(t *testing.T) {
	tests := []struct {
		fixture, tier string
		want          []claims.Stage
	}{
		{"confirmed", claims.Standard, []claims.Stage{claims.StageSearching, claims.StageReconciling, claims.StageSnapshotting}},
		{"confirmed", claims.Quick, []claims.Stage{claims.StageSearching, claims.StageReconciling}},
	}
	for _, tt := range tests {
		t.Run(tt.tier, func(t *testing.T) {
			e, _, req, _ := fixtureEngine(t, tt.fixture, 0, nil)
			var mu sync.Mutex
			var got []claims.Stage
			ctx := claims.WithProgress(context.Background(), func(s claims.Stage) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, s)
			})
			call := &claims.Call{IdempotencyKey: "k1", Scope: "payer:0xabc"}
			if _, err := e.Verify(ctx, tt.tier, req, call); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("stages (-want +got):\n%s", diff)
			}
			got = nil
			if _, err := e.Verify(ctx, tt.tier, req, call); err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Fatalf("replay reported stages %v", got)
			}
		})
	}
	// Without a ProgressFunc nothing happens.
	e, _, req, _ := fixtureEngine(t, "confirmed", 0, nil)
	if _, err := e.Verify(context.Background(), claims.Standard, req, nil); err != nil {
		t.Fatal(err)
	}
}
