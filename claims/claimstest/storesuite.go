package claimstest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/snapshot"
	"github.com/google/go-cmp/cmp"
)

// TestStore runs the conformance suite of claims.Store against
// stores made by open (each call returns a fresh, empty store).
func TestStore(t *testing.T, open func(t *testing.T) claims.Store) {
	t.Run("SaveAndRead", func(t *testing.T) { testClaimsSaveAndRead(t, open(t)) })
	t.Run("IdempotencyLifecycle", func(t *testing.T) { testClaimsIdempotency(t, open(t)) })
	t.Run("IdempotencyScopes", func(t *testing.T) { testClaimsScopes(t, open(t)) })
	t.Run("LeaseExpiry", func(t *testing.T) { testClaimsLeaseExpiry(t, open(t)) })
	t.Run("Latest", func(t *testing.T) { testClaimsLatest(t, open(t)) })
	t.Run("Purge", func(t *testing.T) { testClaimsPurge(t, open(t)) })
	t.Run("ConcurrentAcquire", func(t *testing.T) {
		s := open(t)
		testClaimsConcurrentAcquire(t, s, s)
	})
}

// TestStoreShared checks that two stores opened on one database (two
// instances sharing PostgreSQL, or two handles on one SQLite file) agree on
// idempotency leases and see each other's results.
func TestStoreShared(t *testing.T, open func(t *testing.T) (claims.Store, claims.Store)) {
	t.Run("ConcurrentAcquire", func(t *testing.T) {
		a, b := open(t)
		testClaimsConcurrentAcquire(t, a, b)
	})
	t.Run("CompletionVisible", func(t *testing.T) {
		a, b := open(t)
		ctx := context.Background()
		now := time.Now().UTC()
		key := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Deep, Key: "k-shared"}
		st, err := a.AcquireIdempotency(ctx, key, "h1", now, time.Minute)
		if err != nil || st.Lease == nil {
			t.Fatalf("acquire on a: %+v %v", st, err)
		}
		if st, err := b.AcquireIdempotency(ctx, key, "h1", now, time.Minute); err != nil || st.InFlightUntil.IsZero() {
			t.Fatalf("acquire on b while a holds the lease: %+v %v", st, err)
		}
		rec := sampleRecord(now)
		if err := a.SaveVerification(ctx, rec, st.Lease); err != nil {
			t.Fatal(err)
		}
		st2, err := b.AcquireIdempotency(ctx, key, "h1", now, time.Minute)
		if err != nil || st2.VerificationID != rec.Result.VerificationID {
			t.Fatalf("acquire on b after completion: %+v %v", st2, err)
		}
		if _, err := b.Verification(ctx, rec.Result.VerificationID); err != nil {
			t.Fatalf("b cannot read a's result: %v", err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// sampleRecord is a complete result with every optional part present.
func sampleRecord(now time.Time) *claims.Record {
	now = now.UTC().Truncate(time.Microsecond)
	snapID := ids.New(ids.Snapshot)
	id := ids.New(ids.Verification)
	return &claims.Record{
		Tier: claims.Standard, Scope: "payer:0xabc", RequestHash: "h1", Provider: "scripted",
		CreatedAt: now,
		Result: &claims.Result{
			VerificationID: id, Claim: "Base mainnet uses chain id 8453", Status: claims.StatusConfirmed,
			ObservedAt: now, Conclusion: "Confirmed.",
			AtomicFacts: []claims.AtomicFact{{Statement: "Base uses chain id 8453", Status: claims.StatusConfirmed,
				Confidence: 0.85, Explanation: "Two sources.", EvidenceIDs: []string{"e1", "e2"}}},
			ProviderSources: []claims.ProviderSource{{SourceID: "src_0123456789abcdef0123", URL: "https://docs.base.org/",
				Title: ptr("Base docs"), Provider: "scripted_web_search", SearchCallIDs: []string{"ws_1"},
				Actions: []string{"search"}, Queries: []string{"base chain id"}, EvidenceIDs: []string{"e1"}, Cited: true, SnapshotID: &snapID}},
			Evidence: []claims.Evidence{{ID: "e1", URL: "https://docs.base.org/", Title: "Base docs", Publisher: "base.org",
				PublishedAt: ptr("2026-11-01"), RetrievedAt: now, Excerpt: "Chain ID 8453", Relationship: claims.Supports,
				SourceType: claims.SourceVendor, QualityReason: "vendor", ProviderSourceMatched: true, Cited: true,
				SnapshotID: &snapID, Consulted: true, Snapshotted: true}},
			Snapshots: []snapshot.Snapshot{{ID: snapID, RequestedURL: "https://docs.base.org/", FinalURL: ptr("https://docs.base.org/"),
				RetrievedAt: now, Status: snapshot.StatusCaptured, HTTPStatus: ptr(200), ContentType: ptr("text/html"),
				ContentLength: ptr(int64(1234)), RawSHA256: ptr("ab"), NormalizedSHA256: ptr("cd")}},
			Conflicts:   []claims.Conflict{{Summary: "s", EvidenceIDs: []string{"e1", "e2"}}},
			Limitations: []string{"one"},
			Provenance: claims.Provenance{Provider: "scripted", Model: "m", ProviderResponseID: "resp_1", SearchedWeb: true,
				ConsultedSourceCount: 1, CitedSourceCount: 1, ProviderSourceCount: 1, MatchedEvidenceCount: 1,
				SnapshottedSourceCount: 1, WebSearchCallCount: 1, InputTokens: 10, CachedInputTokens: 2, OutputTokens: 3},
		},
	}
}

func testClaimsSaveAndRead(t *testing.T, s claims.Store) {
	ctx := context.Background()
	rec := sampleRecord(time.Now())
	rec.PageIDs = []string{ids.New(ids.Snapshot), ids.New(ids.Snapshot)}
	if err := s.SaveVerification(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.Verification(ctx, rec.Result.VerificationID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rec.PageIDs, got.PageIDs); diff != "" {
		t.Fatalf("page ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rec.Result, got.Result); diff != "" {
		t.Fatalf("stored result differs (-want +got):\n%s", diff)
	}
	if got.Tier != rec.Tier || got.Scope != rec.Scope || got.RequestHash != rec.RequestHash || got.Provider != rec.Provider ||
		!got.CreatedAt.Equal(rec.CreatedAt) {
		t.Fatalf("record fields: got %+v, want %+v", got, rec)
	}
	// A second save of the same id fails and leaves the first intact.
	dup := sampleRecord(time.Now())
	dup.Result.VerificationID = rec.Result.VerificationID
	dup.Result.Claim = "changed"
	if err := s.SaveVerification(ctx, dup, nil); !errors.Is(err, claims.ErrExists) {
		t.Fatalf("duplicate save: %v, want ErrExists", err)
	}
	again, err := s.Verification(ctx, rec.Result.VerificationID)
	if err != nil || again.Result.Claim != rec.Result.Claim {
		t.Fatalf("after duplicate save: %+v %v", again, err)
	}
	if _, err := s.Verification(ctx, ids.New(ids.Verification)); !errors.Is(err, claims.ErrNotFound) {
		t.Fatalf("unknown id: %v, want ErrNotFound", err)
	}
	// A record stored without page ids reads back without them.
	bare := sampleRecord(time.Now())
	if err := s.SaveVerification(ctx, bare, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Verification(ctx, bare.Result.VerificationID); err != nil || got.PageIDs != nil {
		t.Fatalf("record without page ids: %+v %v", got, err)
	}
}

func testClaimsIdempotency(t *testing.T, s claims.Store) {
	ctx := context.Background()
	now := time.Now().UTC()
	key := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Standard, Key: "key-1"}
	st, err := s.AcquireIdempotency(ctx, key, "h1", now, time.Minute)
	if err != nil || st.Lease == nil || st.Lease.Token == "" || st.VerificationID != "" {
		t.Fatalf("first acquire: %+v %v", st, err)
	}
	lease := st.Lease
	st, err = s.AcquireIdempotency(ctx, key, "h1", now.Add(time.Second), time.Minute)
	if err != nil || st.Lease != nil || st.InFlightUntil.IsZero() {
		t.Fatalf("second acquire while leased: %+v %v", st, err)
	}
	if d := st.InFlightUntil.Sub(now); d < 59*time.Second || d > 61*time.Second {
		t.Fatalf("InFlightUntil %v, want about now+1m", st.InFlightUntil)
	}
	if _, err := s.AcquireIdempotency(ctx, key, "h2", now, time.Minute); !errors.Is(err, claims.ErrIdempotencyConflict) {
		t.Fatalf("different hash while pending: %v", err)
	}
	// Releasing with a wrong token changes nothing.
	if err := s.ReleaseIdempotency(ctx, key, "wrong"); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.AcquireIdempotency(ctx, key, "h1", now, time.Minute); st == nil || st.InFlightUntil.IsZero() {
		t.Fatalf("wrong-token release freed the key: %+v", st)
	}
	rec := sampleRecord(now)
	if err := s.SaveVerification(ctx, rec, lease); err != nil {
		t.Fatal(err)
	}
	st, err = s.AcquireIdempotency(ctx, key, "h1", now.Add(time.Hour), time.Minute)
	if err != nil || st.VerificationID != rec.Result.VerificationID || st.Lease != nil {
		t.Fatalf("acquire after completion: %+v %v", st, err)
	}
	if _, err := s.AcquireIdempotency(ctx, key, "h2", now, time.Minute); !errors.Is(err, claims.ErrIdempotencyConflict) {
		t.Fatalf("different hash after completion: %v", err)
	}
	// Releasing a completed key is a no-op.
	if err := s.ReleaseIdempotency(ctx, key, lease.Token); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.AcquireIdempotency(ctx, key, "h1", now, time.Minute); st == nil || st.VerificationID == "" {
		t.Fatalf("release removed a completed key: %+v", st)
	}
	// A failed attempt releases its lease; the next caller acquires.
	k2 := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Standard, Key: "key-2"}
	st, err = s.AcquireIdempotency(ctx, k2, "h1", now, time.Minute)
	if err != nil || st.Lease == nil {
		t.Fatal(st, err)
	}
	if err := s.ReleaseIdempotency(ctx, k2, st.Lease.Token); err != nil {
		t.Fatal(err)
	}
	st, err = s.AcquireIdempotency(ctx, k2, "h2", now, time.Minute)
	if err != nil || st.Lease == nil {
		t.Fatalf("acquire after release (any request): %+v %v", st, err)
	}
}

func testClaimsScopes(t *testing.T, s claims.Store) {
	ctx := context.Background()
	now := time.Now().UTC()
	keys := []claims.IdempotencyKey{
		{Scope: "payer:0xaaa", Tier: claims.Deep, Key: "same"},
		{Scope: "payer:0xbbb", Tier: claims.Deep, Key: "same"},
		{Scope: "payer:0xaaa", Tier: claims.Quick, Key: "same"},
		{Scope: "customer:cus_1", Tier: claims.Deep, Key: "same"},
	}
	for i, k := range keys {
		st, err := s.AcquireIdempotency(ctx, k, fmt.Sprintf("hash-%d", i), now, time.Minute)
		if err != nil || st.Lease == nil {
			t.Fatalf("key %+v: %+v %v (scopes must not share keys)", k, st, err)
		}
	}
}

func testClaimsLeaseExpiry(t *testing.T, s claims.Store) {
	ctx := context.Background()
	now := time.Now().UTC()
	key := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Research, Key: "dies"}
	st, err := s.AcquireIdempotency(ctx, key, "h1", now, time.Second)
	if err != nil || st.Lease == nil {
		t.Fatal(st, err)
	}
	old := st.Lease
	// The holder died: after expiry another caller takes the key over.
	st, err = s.AcquireIdempotency(ctx, key, "h1", now.Add(2*time.Second), time.Minute)
	if err != nil || st.Lease == nil || st.Lease.Token == old.Token {
		t.Fatalf("takeover after expiry: %+v %v", st, err)
	}
	fresh := st.Lease
	// The old holder's late save stores its result but cannot complete the key.
	late := sampleRecord(now)
	if err := s.SaveVerification(ctx, late, old); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.AcquireIdempotency(ctx, key, "h1", now.Add(3*time.Second), time.Minute); st == nil || st.InFlightUntil.IsZero() {
		t.Fatalf("lost lease completed the key: %+v", st)
	}
	rec := sampleRecord(now)
	if err := s.SaveVerification(ctx, rec, fresh); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.AcquireIdempotency(ctx, key, "h1", now.Add(4*time.Second), time.Minute); st == nil || st.VerificationID != rec.Result.VerificationID {
		t.Fatalf("after the new holder's save: %+v", st)
	}
}

func testClaimsLatest(t *testing.T, s claims.Store) {
	ctx := context.Background()
	base := time.Now().UTC().Truncate(time.Second)
	var recs []*claims.Record
	for i := range 3 {
		r := sampleRecord(base.Add(time.Duration(i) * time.Minute))
		r.Result.ObservedAt = base.Add(time.Duration(i) * time.Minute)
		recs = append(recs, r)
		if err := s.SaveVerification(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	other := sampleRecord(base.Add(time.Hour))
	other.RequestHash = "other"
	if err := s.SaveVerification(ctx, other, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.LatestVerification(ctx, claims.Standard, "h1", "scripted", base)
	if err != nil || got.Result.VerificationID != recs[2].Result.VerificationID {
		t.Fatalf("latest: %+v %v", got, err)
	}
	if _, err := s.LatestVerification(ctx, claims.Standard, "h1", "scripted", base.Add(3*time.Minute)); !errors.Is(err, claims.ErrNotFound) {
		t.Fatalf("latest after since: %v", err)
	}
	for _, c := range [][3]string{{claims.Deep, "h1", "scripted"}, {claims.Standard, "h1", "openai"}, {claims.Standard, "nope", "scripted"}} {
		if _, err := s.LatestVerification(ctx, c[0], c[1], c[2], base); !errors.Is(err, claims.ErrNotFound) {
			t.Fatalf("latest %v: %v", c, err)
		}
	}
}

func testClaimsPurge(t *testing.T, s claims.Store) {
	ctx := context.Background()
	now := time.Now().UTC()
	old := sampleRecord(now.Add(-31 * 24 * time.Hour))
	key := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Standard, Key: "old"}
	st, err := s.AcquireIdempotency(ctx, key, "h1", now.Add(-31*24*time.Hour), time.Minute)
	if err != nil || st.Lease == nil {
		t.Fatal(st, err)
	}
	if err := s.SaveVerification(ctx, old, st.Lease); err != nil {
		t.Fatal(err)
	}
	stuck := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Standard, Key: "stuck"}
	if _, err := s.AcquireIdempotency(ctx, stuck, "h1", now.Add(-31*24*time.Hour), time.Minute); err != nil {
		t.Fatal(err)
	}
	recent := sampleRecord(now)
	if err := s.SaveVerification(ctx, recent, nil); err != nil {
		t.Fatal(err)
	}
	n, err := s.PurgeVerifications(ctx, now.Add(-30*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("purge: %d %v, want 1", n, err)
	}
	if _, err := s.Verification(ctx, old.Result.VerificationID); !errors.Is(err, claims.ErrNotFound) {
		t.Fatalf("purged result still readable: %v", err)
	}
	if _, err := s.Verification(ctx, recent.Result.VerificationID); err != nil {
		t.Fatalf("recent result purged: %v", err)
	}
	// The purged key and the stuck key are free again.
	for _, k := range []claims.IdempotencyKey{key, stuck} {
		if st, err := s.AcquireIdempotency(ctx, k, "h9", now, time.Minute); err != nil || st.Lease == nil {
			t.Fatalf("key %q after purge: %+v %v", k.Key, st, err)
		}
	}
	if n, err := s.PurgeVerifications(ctx, now.Add(-30*24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("second purge: %d %v", n, err)
	}
}

// testClaimsConcurrentAcquire: many callers on one or two stores race for
// one key; exactly one gets the lease, the others see it in flight.
func testClaimsConcurrentAcquire(t *testing.T, a, b claims.Store) {
	ctx := context.Background()
	now := time.Now().UTC()
	key := claims.IdempotencyKey{Scope: "payer:0xabc", Tier: claims.Standard, Key: "race"}
	const n = 24
	var mu sync.Mutex
	leases, inflight := 0, 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			<-start
			st, err := s.AcquireIdempotency(ctx, key, "h1", now, time.Minute)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("acquire: %v", err)
			case st.Lease != nil:
				leases++
			case !st.InFlightUntil.IsZero():
				inflight++
			default:
				t.Errorf("unexpected state %+v", st)
			}
		}()
	}
	close(start)
	wg.Wait()
	if leases != 1 || inflight != n-1 {
		t.Fatalf("%d leases and %d in-flight answers, want 1 and %d", leases, inflight, n-1)
	}
}
