package claims_test

import (
	"context"
	"errors"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/snapshot"
)

// downSnapshotter is a snapshotter whose content store is unavailable.
type downSnapshotter struct{}

func (downSnapshotter) CaptureAll(context.Context, []string) ([]*snapshot.Snapshot, error) {
	return nil, snapshot.ErrUnavailable
}

// When the snapshots cannot be stored the verification fails with
// snapshot.ErrUnavailable (a 503 with Retry-After, never charged) instead
// of answering with evidence it could not keep; nothing is stored, and a
// retry once storage is back runs afresh.
func TestSnapshotStorageUnavailableFailsTheVerification(t *testing.T) {
	f := fixture(t, "confirmed")
	req, _ := f.Request()
	e, db := newEngine(t, f.Provider(), downSnapshotter{}, nil)
	call := &claims.Call{IdempotencyKey: "storage-down", Scope: "payer:0xaaa"}
	res, err := e.Verify(t.Context(), claims.Standard, req, call)
	if !errors.Is(err, snapshot.ErrUnavailable) || res != nil {
		t.Fatalf("Verify with storage down: %v, %v; want snapshot.ErrUnavailable", res, err)
	}
	if n := countRows(t, db, "claim_verifications"); n != 0 {
		t.Fatalf("%d verifications stored although the snapshots were not", n)
	}
	if n := countRows(t, db, "claim_idempotency"); n != 0 {
		t.Fatalf("%d idempotency rows after the failure", n)
	}
}
