package claims

import (
	"context"
	"time"

	"github.com/assaykit/assay/snapshot"
)

// Store keeps verification results, who may read them, and idempotency
// leases. store/claimsstore implements it on SQLite and PostgreSQL, and
// claimsmem.Store in memory; the conformance suite claimstest.TestStore
// states the contract.
//
// Every method is safe for concurrent use, including from several
// processes sharing one database: leases are the cross-instance lock that
// keeps two instances from calling the provider for one idempotent request.
type Store interface {
	// AcquireIdempotency looks up key. When there is no row, or a pending
	// row whose lease expired, it records a pending row leased to a new
	// token until now+ttl and returns Acquired. A done row with the same
	// request hash returns its VerificationID; a pending row with a live
	// lease returns InFlight with the lease expiry. A row with a different
	// request hash returns ErrIdempotencyConflict (whatever its state).
	AcquireIdempotency(ctx context.Context, key IdempotencyKey, requestHash string, now time.Time, ttl time.Duration) (*IdempotencyState, error)
	// ReleaseIdempotency deletes the pending row of key if it is still
	// leased to token (the work failed: a retry may start again). Releasing
	// a lease that was lost or completed is not an error.
	ReleaseIdempotency(ctx context.Context, key IdempotencyKey, token string) error
	// SaveVerification stores rec in one transaction: the result, the
	// access grant of rec's order (when OrderTokenHash is set) and, when
	// lease is non-nil, the completion of the idempotency row held by
	// lease.Token (a lost lease is left alone). A second save of one id
	// fails and changes nothing.
	SaveVerification(ctx context.Context, rec *Record, lease *Lease) error
	// GrantVerification lets another order read a stored verification (an
	// idempotent replay paid by a new order). Granting twice is a no-op;
	// an unknown id is ErrNotFound.
	GrantVerification(ctx context.Context, id, orderID, orderTokenHash string, now time.Time) error
	// Verification returns the stored record of id with the order-token
	// hashes allowed to read it, or ErrNotFound.
	Verification(ctx context.Context, id string) (*Record, error)
	// LatestVerification returns the newest record with this tier, request
	// hash and provider observed at or after since, or ErrNotFound (the
	// optional result cache).
	LatestVerification(ctx context.Context, tier, requestHash, provider string, since time.Time) (*Record, error)
	// PurgeVerifications deletes verifications created before before,
	// their grants and their idempotency rows, and idempotency rows
	// created before before that never completed. It returns the number
	// of verifications deleted.
	PurgeVerifications(ctx context.Context, before time.Time) (int64, error)
}

// IdempotencyKey is the scope of one Idempotency-Key: the caller's key is
// only ever compared with keys of the same payer (or customer) and tier.
type IdempotencyKey struct {
	Scope string // payer or customer, e.g. "payer:0xabc…", "customer:cus_…"
	Tier  string
	Key   string // the Idempotency-Key header, at most 255 characters
}

// IdempotencyState is the outcome of AcquireIdempotency; exactly one of
// Lease, VerificationID and InFlightUntil is set.
type IdempotencyState struct {
	// Lease is set when the caller acquired the key and must do the work.
	Lease *Lease
	// VerificationID is set when the key completed: replay that result.
	VerificationID string
	// InFlightUntil is set when another caller holds a live lease.
	InFlightUntil time.Time
}

// Lease is the right to complete an idempotency row.
type Lease struct {
	Key     IdempotencyKey
	Token   string
	Expires time.Time
}

// Record is a stored verification.
type Record struct {
	Result      *Result
	Tier        string
	Scope       string
	RequestHash string
	Provider    string
	// OrderID and OrderTokenHash are the order that produced the result
	// (empty when it was not sold through an order).
	OrderID        string
	OrderTokenHash string
	// Access lists the order-token hashes (SHA-256 hex) allowed to read the
	// result: the producing order's and those of idempotent replays.
	// Filled by Store.Verification; ignored by SaveVerification.
	Access []string
	// Grants pairs each hash of Access with the order it belongs to (same
	// order). Filled by Store.Verification; ignored by SaveVerification.
	Grants []Grant
	// PageIDs are the snapshot ids of every page fetched for the
	// verification's quote checks, in order: on standard, deep and
	// research the records of Result.Snapshots; on quick (snapshot mode
	// none) pages kept for the verification's evidence bundle though the
	// result lists none. A cache hit names the pages of the result it
	// reuses. Nil for records stored before it existed (see Pages).
	PageIDs   []string
	CreatedAt time.Time
}

// Grant is one order allowed to read a stored verification.
type Grant struct {
	OrderID        string
	OrderTokenHash string
}

// Pages returns PageIDs, or for a record stored without them the ids of
// its result's snapshots.
func (r *Record) Pages() []string {
	if r.PageIDs != nil {
		return append([]string(nil), r.PageIDs...)
	}
	var ids []string
	if r.Result != nil {
		for _, s := range r.Result.Snapshots {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// Snapshotter captures URLs for evidence. The snapshot package's service
// implements it; claimstest has a fake and a minimal loopback fetcher.
//
// CaptureAll returns one record per URL, in order, including failure
// records (status failed, blocked, too_large, unsupported). It returns an
// error only when it could not run at all or ctx ended; the records it
// returns are immutable and may outlive a failed verification. Captures
// should run concurrently: the engine calls CaptureAll once per
// verification, under the verification's deadline.
type Snapshotter interface {
	CaptureAll(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error)
}

// PageKeeper is implemented by a Snapshotter that keeps the pages a
// stored verification uses for as long as the verification lives
// (snapshot.Service.Use): the engine calls Use with Record.PageIDs and the
// record's creation time before storing it (a cache hit renews the pages
// it reuses), so the pages of an evidence bundle are not purged before
// the verification, given equal retention periods.
type PageKeeper interface {
	Use(ctx context.Context, ids []string, at time.Time) error
}

// PageFetcher is implemented by a Snapshotter that fetches the pages of
// the quick tier (snapshot.Service.FetchAll, which keeps them for the
// verification's evidence bundle). On a tier that takes no snapshots
// (quick) the engine fetches the pages of cited evidence with it and
// checks their excerpts; the records do not appear in the result, and
// their ids are kept in Record.PageIDs. Without it quick-tier quotes stay
// unchecked and do not count.
type PageFetcher interface {
	FetchAll(ctx context.Context, urls []string) ([]*snapshot.Snapshot, error)
}
