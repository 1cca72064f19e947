package claims_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
)

// keepingSnapshotter records the Use calls of the engine.
type keepingSnapshotter struct {
	*claimstest.Snapshotter
	mu   sync.Mutex
	used map[string]time.Time
}

func (k *keepingSnapshotter) Use(ctx context.Context, ids []string, at time.Time) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, id := range ids {
		k.used[id] = at
	}
	return nil
}

// Every tier records the pages it checked quotes on: standard and up the
// snapshots of its result, quick the pages it fetched though its result
// lists none; and the engine marks them in use when it stores the record,
// so that the evidence bundle outlives neither.
func TestRecordKeepsItsPages(t *testing.T) {
	for _, tier := range []string{claims.Quick, claims.Standard} {
		t.Run(tier, func(t *testing.T) {
			f := fixture(t, "confirmed")
			req, _ := f.Request()
			req.MaxSources = 3
			k := &keepingSnapshotter{Snapshotter: f.Snapshotter(), used: map[string]time.Time{}}
			e, _ := newEngine(t, f.Provider(), k, nil)
			res, err := e.Verify(t.Context(), tier, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := e.Verification(t.Context(), res.VerificationID)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.PageIDs) == 0 {
				t.Fatal("no page ids recorded")
			}
			if tier == claims.Quick {
				if len(res.Snapshots) != 0 || len(k.Fetches()) != 1 || len(rec.PageIDs) != len(k.Fetches()[0]) {
					t.Fatalf("quick: %d snapshots listed, fetches %v, pages %v", len(res.Snapshots), k.Fetches(), rec.PageIDs)
				}
			} else {
				var listed []string
				for _, s := range res.Snapshots {
					listed = append(listed, s.ID)
				}
				if !slices.Equal(listed, rec.PageIDs) {
					t.Fatalf("pages %v, listed snapshots %v", rec.PageIDs, listed)
				}
			}
			for _, id := range rec.PageIDs {
				if at, ok := k.used[id]; !ok || !at.Equal(rec.CreatedAt) {
					t.Fatalf("page %s used at %v (ok %v), record created %v", id, at, ok, rec.CreatedAt)
				}
			}
		})
	}
}
