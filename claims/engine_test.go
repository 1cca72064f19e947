package claims_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/field"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
)

func countRows(t *testing.T, db *store.DB, table string) int {
	t.Helper()
	w, _ := db.SQL()
	var n int
	if err := w.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func fixtureEngine(t *testing.T, name string, delay time.Duration, opts *claims.Options) (*claims.Engine, *claimstest.Provider, *claims.Request, *store.DB) {
	t.Helper()
	f := fixture(t, name)
	req, err := f.Request()
	if err != nil {
		t.Fatal(err)
	}
	p := claimstest.Respond(f.Response, delay)
	e, db := newEngine(t, p, f.Snapshotter(), opts)
	return e, p, req, db
}

func TestIdempotentReplay(t *testing.T) {
	e, p, req, db := fixtureEngine(t, "confirmed", 0, nil)
	ctx := context.Background()
	call := &claims.Call{IdempotencyKey: "key-1", Scope: "payer:0xaaa"}
	first, err := e.Verify(ctx, claims.Standard, req, call)
	if err != nil {
		t.Fatal(err)
	}
	if !call.ProviderCalled || call.Usage.InputTokens != 21000 || call.Usage.SearchCalls != 1 || first.Provenance.CacheHit {
		t.Fatalf("first call: %+v %+v", call, first.Provenance)
	}
	replayCall := &claims.Call{IdempotencyKey: "key-1", Scope: "payer:0xaaa"}
	again, err := e.Verify(ctx, claims.Standard, req, replayCall)
	if err != nil {
		t.Fatal(err)
	}
	if again.VerificationID != first.VerificationID || !again.Provenance.CacheHit || replayCall.ProviderCalled || p.Calls() != 1 {
		t.Fatalf("replay: id %s vs %s, cacheHit %v, provider calls %d", again.VerificationID, first.VerificationID, again.Provenance.CacheHit, p.Calls())
	}
	validate(t, again)
	// Another instance on the same database replays from the store.
	e2, err := claims.New(p, claimsstore.New(db), nil, &claims.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	third, err := e2.Verify(ctx, claims.Standard, req, &claims.Call{IdempotencyKey: "key-1", Scope: "payer:0xaaa"})
	if err != nil || third.VerificationID != first.VerificationID || !third.Provenance.CacheHit || p.Calls() != 1 {
		t.Fatalf("replay on a second instance: %v %+v", err, third)
	}
	validate(t, third)
	// Same key, different request: conflict, nothing new stored.
	other := *req
	other.Claim = "A different claim entirely."
	if _, err := e.Verify(ctx, claims.Standard, &other, &claims.Call{IdempotencyKey: "key-1", Scope: "payer:0xaaa"}); !errors.Is(err, claims.ErrIdempotencyConflict) {
		t.Fatalf("different request: %v", err)
	}
	// Same key from another payer, or on another tier: independent.
	if _, err := e.Verify(ctx, claims.Standard, req, &claims.Call{IdempotencyKey: "key-1", Scope: "payer:0xbbb"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Verify(ctx, claims.Deep, req, &claims.Call{IdempotencyKey: "key-1", Scope: "payer:0xaaa"}); err != nil {
		t.Fatal(err)
	}
	if p.Calls() != 3 || countRows(t, db, "claim_verifications") != 3 {
		t.Fatalf("provider calls %d, stored %d", p.Calls(), countRows(t, db, "claim_verifications"))
	}
	if _, err := e.Verify(ctx, claims.Standard, req, &claims.Call{IdempotencyKey: strings.Repeat("k", 256)}); !errors.Is(err, claims.ErrInvalidRequest) {
		t.Fatalf("long key: %v", err)
	}
}

// A duplicate that arrives while the first is in flight waits for it and
// replays its result; the provider is called once.
func TestIdempotentInFlight(t *testing.T) {
	e, p, req, _ := fixtureEngine(t, "confirmed", 300*time.Millisecond, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([]*claims.Result, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = e.Verify(ctx, claims.Standard, req, &claims.Call{IdempotencyKey: "same", Scope: "payer:0xaaa"})
		}()
	}
	wg.Wait()
	hits := 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if r.VerificationID != results[0].VerificationID {
			t.Fatalf("callers got different verifications")
		}
		if r.Provenance.CacheHit {
			hits++
		}
	}
	if p.Calls() != 1 || hits != 3 {
		t.Fatalf("provider calls %d, cache hits %d; want 1 and 3", p.Calls(), hits)
	}

	// Without waiting, the duplicate gets an in-flight error with a retry hint.
	e2, p2, req2, _ := fixtureEngine(t, "confirmed", 400*time.Millisecond, &claims.Options{Now: time.Now, IdempotencyWait: -1})
	done := make(chan error, 1)
	go func() {
		_, err := e2.Verify(ctx, claims.Standard, req2, &claims.Call{IdempotencyKey: "k", Scope: "s"})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	_, err := e2.Verify(ctx, claims.Standard, req2, &claims.Call{IdempotencyKey: "k", Scope: "s"})
	var ife *claims.InFlightError
	if !errors.As(err, &ife) || !errors.Is(err, claims.ErrInFlight) || ife.RetryAfter < time.Second {
		t.Fatalf("duplicate in flight: %v", err)
	}
	if err := <-done; err != nil || p2.Calls() != 1 {
		t.Fatalf("first: %v, calls %d", err, p2.Calls())
	}
}

// A failed attempt releases its key: the retry runs (and may differ).
func TestIdempotencyReleasedOnFailure(t *testing.T) {
	f := fixture(t, "confirmed")
	req, _ := f.Request()
	p := claimstest.NewProvider(
		claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderRateLimited, RetryAfter: time.Second}},
		claimstest.Step{Response: f.Response},
	)
	e, db := newEngine(t, p, f.Snapshotter(), nil)
	call := &claims.Call{IdempotencyKey: "retry-me", Scope: "payer:0xaaa"}
	if _, err := e.Verify(t.Context(), claims.Standard, req, call); !errors.Is(err, claims.ErrProviderRateLimited) {
		t.Fatalf("first: %v", err)
	}
	if n := countRows(t, db, "claim_idempotency"); n != 0 {
		t.Fatalf("%d idempotency rows after a failure", n)
	}
	if _, err := e.Verify(t.Context(), claims.Standard, req, call); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if p.Calls() != 2 {
		t.Fatalf("calls %d", p.Calls())
	}
}

// 1,000 concurrent identical requests make exactly one provider call, and
// each caller gets its own stored verification.
func TestConcurrentIdenticalRequestsCollapse(t *testing.T) {
	t.Parallel() // waits (on a deadline, a child process or a provider) rather than computes
	e, p, req, db := fixtureEngine(t, "confirmed", time.Second, nil)
	const n = 1000
	var wg sync.WaitGroup
	start := make(chan struct{})
	idsSeen := make([]string, n)
	leaders := make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			call := &claims.Call{Scope: "payer:0xaaa"}
			res, err := e.Verify(context.Background(), claims.Standard, req, call)
			if err != nil {
				t.Error(err)
				return
			}
			idsSeen[i], leaders[i] = res.VerificationID, call.ProviderCalled
		}()
	}
	close(start)
	wg.Wait()
	if p.Calls() != 1 {
		t.Fatalf("%d provider calls for %d identical requests, want 1", p.Calls(), n)
	}
	unique := map[string]bool{}
	nLeaders := 0
	for i, id := range idsSeen {
		unique[id] = true
		if leaders[i] {
			nLeaders++
		}
	}
	if len(unique) != n || nLeaders != 1 || countRows(t, db, "claim_verifications") != n {
		t.Fatalf("%d distinct ids, %d leaders, %d stored", len(unique), nLeaders, countRows(t, db, "claim_verifications"))
	}
}

// The first caller's cancellation does not fail the others.
func TestCollapseSurvivesLeaderCancellation(t *testing.T) {
	e, p, req, _ := fixtureEngine(t, "confirmed", 300*time.Millisecond, nil)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := e.Verify(ctx, claims.Standard, req, nil)
		first <- err
	}()
	time.Sleep(50 * time.Millisecond)
	second := make(chan error, 1)
	go func() {
		_, err := e.Verify(context.Background(), claims.Standard, req, nil)
		second <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("second caller failed with the first: %v", err)
	}
	if p.Calls() != 1 {
		t.Fatalf("calls %d", p.Calls())
	}
}

// One deadline covers provider and snapshots; a timeout stores nothing.
func TestDeadline(t *testing.T) {
	f := fixture(t, "confirmed")
	req, _ := f.Request()
	t.Run("provider", func(t *testing.T) {
		e, db := newEngine(t, claimstest.Respond(f.Response, 2*time.Second), f.Snapshotter(), &claims.Options{Timeout: 100 * time.Millisecond})
		start := time.Now()
		_, err := e.Verify(t.Context(), claims.Standard, req, &claims.Call{IdempotencyKey: "k", Scope: "s"})
		// The caller gives up at its deadline plus the slack it waits for a
		// provider answer to be noticed (1 s), not at the provider's 2 s.
		if !errors.Is(err, claims.ErrTimeout) || time.Since(start) >= 2*time.Second {
			t.Fatalf("err %v after %v", err, time.Since(start))
		}
		if countRows(t, db, "claim_verifications") != 0 || countRows(t, db, "claim_idempotency") != 0 {
			t.Fatal("a timed-out call left rows behind")
		}
	})
	t.Run("snapshots without grace", func(t *testing.T) {
		s := f.Snapshotter()
		s.Delay = 2 * time.Second
		e, db := newEngine(t, claimstest.Respond(f.Response, 50*time.Millisecond), s, &claims.Options{Timeout: 200 * time.Millisecond, CheckGrace: -1})
		_, err := e.Verify(t.Context(), claims.Standard, req, nil)
		if !errors.Is(err, claims.ErrTimeout) || countRows(t, db, "claim_verifications") != 0 {
			t.Fatalf("err %v", err)
		}
	})
	// An answer that arrived before the deadline is never thrown away for
	// lack of time to check it: its checks run into the grace.
	t.Run("snapshots finish in the grace", func(t *testing.T) {
		s := f.Snapshotter()
		s.Delay = 300 * time.Millisecond
		e, db := newEngine(t, claimstest.Respond(f.Response, 50*time.Millisecond), s, &claims.Options{Timeout: 200 * time.Millisecond, CheckGrace: 2 * time.Second})
		res, err := e.Verify(t.Context(), claims.Standard, req, nil)
		if err != nil || len(res.Snapshots) == 0 || countRows(t, db, "claim_verifications") != 1 {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})
	t.Run("snapshots outlast the grace", func(t *testing.T) {
		s := f.Snapshotter()
		s.Delay = 5 * time.Second
		e, db := newEngine(t, claimstest.Respond(f.Response, 50*time.Millisecond), s, &claims.Options{Timeout: 200 * time.Millisecond, CheckGrace: 300 * time.Millisecond})
		res, err := e.Verify(t.Context(), claims.Standard, req, nil)
		if err != nil || countRows(t, db, "claim_verifications") != 1 || !strings.Contains(strings.Join(res.Limitations, " "), "within the time left after the answer") {
			t.Fatalf("err %v, result %+v", err, res)
		}
		for _, ev := range res.Evidence {
			if ev.Quote == claims.QuoteVerified {
				t.Errorf("evidence %s verified without its page", ev.ID)
			}
		}
	})
}

func TestProviderErrors(t *testing.T) {
	req := defaultRequest("Some claim to check.")
	tests := []struct {
		err  error
		want error
	}{
		{&claims.ProviderError{Kind: claims.ProviderQuotaExhausted}, claims.ErrProviderQuotaExhausted},
		{&claims.ProviderError{Kind: claims.ProviderBadOutput}, claims.ErrProviderBadOutput},
		{errors.New("connection reset"), claims.ErrProviderFailed},
	}
	for _, tc := range tests {
		e, db := newEngine(t, claimstest.NewProvider(claimstest.Step{Err: tc.err}), nil, nil)
		if _, err := e.Verify(t.Context(), claims.Standard, req, nil); !errors.Is(err, tc.want) {
			t.Errorf("provider error %v: got %v, want %v", tc.err, err, tc.want)
		}
		if countRows(t, db, "claim_verifications") != 0 {
			t.Error("failed verification stored")
		}
	}
	e, _ := newEngine(t, claimstest.NewProvider(claimstest.Step{}), nil, nil)
	if _, err := e.Verify(t.Context(), claims.Standard, req, nil); !errors.Is(err, claims.ErrProviderBadOutput) {
		t.Errorf("nil response: %v", err)
	}
	e, _ = newEngine(t, nil, nil, nil)
	if _, err := e.Verify(t.Context(), claims.Standard, req, nil); !errors.Is(err, claims.ErrProviderNotConfigured) || e.Configured() {
		t.Errorf("no provider: %v", err)
	}
	if _, err := e.Check(claims.Standard, req); err != nil {
		t.Errorf("Check without provider: %v", err)
	}
	if _, err := claims.New(nil, nil, nil, nil); err == nil {
		t.Error("New without a store")
	}
}

func TestResultCache(t *testing.T) {
	e, p, req, _ := fixtureEngine(t, "confirmed", 0, &claims.Options{ResultCache: true})
	first, err := e.Verify(t.Context(), claims.Standard, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.Verify(t.Context(), claims.Standard, req, &claims.Call{Scope: "payer:other"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Calls() != 1 || !second.Provenance.CacheHit || second.VerificationID == first.VerificationID ||
		!hasLimitation(second, "Served from a stored result") {
		t.Fatalf("cache: calls %d, %+v", p.Calls(), second.Provenance)
	}
	validate(t, second)
	// freshnessHours null never uses the cache.
	req.FreshnessHours = field.Null[int]()
	if _, err := e.Verify(t.Context(), claims.Standard, req, nil); err != nil || p.Calls() != 2 {
		t.Fatalf("null freshness: %v calls %d", err, p.Calls())
	}
	// Off by default.
	e2, p2, req2, _ := fixtureEngine(t, "confirmed", 0, nil)
	for range 2 {
		if _, err := e2.Verify(t.Context(), claims.Standard, req2, nil); err != nil {
			t.Fatal(err)
		}
	}
	if p2.Calls() != 2 {
		t.Fatalf("cache used while off: %d calls", p2.Calls())
	}
}

func TestVerificationAndPurge(t *testing.T) {
	now := testNow
	e, _, req, _ := fixtureEngine(t, "confirmed", 0, &claims.Options{Now: func() time.Time { return now }})
	res, err := e.Verify(t.Context(), claims.Standard, req, &claims.Call{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := e.Verification(t.Context(), res.VerificationID)
	if err != nil || rec.Result.Status != res.Status || rec.Result.Provenance.CacheHit {
		t.Fatalf("%+v %v", rec, err)
	}
	for _, bad := range []string{"", "cv_x", ids.New(ids.Verification), "../etc"} {
		if _, err := e.Verification(t.Context(), bad); !errors.Is(err, claims.ErrNotFound) {
			t.Errorf("Verification(%q): %v", bad, err)
		}
	}
	now = testNow.Add(31 * 24 * time.Hour)
	if n, err := e.PurgeExpired(t.Context()); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	if _, err := e.Verification(t.Context(), res.VerificationID); !errors.Is(err, claims.ErrNotFound) {
		t.Fatalf("after purge: %v", err)
	}
}

func TestProviderQuery(t *testing.T) {
	f := fixture(t, "confirmed")
	p := claimstest.Respond(f.Response, 0)
	p.Caps = claims.ProviderCapabilities{DomainFilter: true, MaxDomains: 2, SourceName: "acme_web_search"}
	e, _ := newEngine(t, p, nil, nil)
	req := defaultRequest("Exampleton minimum wage is $18.00 per hour.")
	req.AllowedDomains = []string{"exampleton.gov", "reuters.com", "apnews.com"}
	j := "US-EX"
	req.Jurisdiction = &j
	req.AsOf = dateOf(2026, 11, 20)
	res, err := e.Verify(t.Context(), claims.Deep, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := p.Queries()[0]
	if len(q.AllowedDomains) != 2 || q.Jurisdiction != "US-EX" || q.AsOf == nil || !q.AsOf.Equal(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) ||
		q.MaxToolActions != 7 || q.MaxOutputTokens != 6000 || q.MaxSources != 8 {
		t.Fatalf("query %+v", q)
	}
	if !hasLimitation(res, "the first 2 of 3 were sent") || res.ProviderSources[0].Provider != "acme_web_search" {
		t.Fatalf("limitations %q sources %+v", res.Limitations, res.ProviderSources)
	}
}
