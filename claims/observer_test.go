package claims_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
)

// recordingObserver records every event the engine reports.
type recordingObserver struct {
	mu       sync.Mutex
	verified []string // tier/status/cacheHit
	usage    []claims.ProviderUsage
	failed   []error
}

func (o *recordingObserver) Verified(tier string, r *claims.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	hit := "fresh"
	if r.Provenance.CacheHit {
		hit = "replay"
	}
	o.verified = append(o.verified, tier+"/"+string(r.Status)+"/"+hit)
}

func (o *recordingObserver) ProviderUsed(u claims.ProviderUsage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.usage = append(o.usage, u)
}

func (o *recordingObserver) Failed(tier string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed = append(o.failed, err)
}

func TestObserverSeesResultsUsageAndFailures(t *testing.T) {
	f := fixture(t, "confirmed")
	req, err := f.Request()
	if err != nil {
		t.Fatal(err)
	}
	obs := &recordingObserver{}
	s := f.Snapshotter()
	s.Now = clock
	e, _ := newEngine(t, f.Provider(), s, &claims.Options{Observer: obs})
	call := func() *claims.Call { return &claims.Call{Scope: "payer:obs", IdempotencyKey: "k1"} }
	if _, err := e.Verify(context.Background(), f.Tier, req, call()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Verify(context.Background(), f.Tier, req, call()); err != nil { // idempotent replay
		t.Fatal(err)
	}
	want := []string{f.Tier + "/confirmed/fresh", f.Tier + "/confirmed/replay"}
	if len(obs.verified) != 2 || obs.verified[0] != want[0] || obs.verified[1] != want[1] {
		t.Fatalf("verified events %v, want %v", obs.verified, want)
	}
	if len(obs.usage) != 1 || obs.usage[0].InputTokens == 0 {
		t.Fatalf("provider usage reported %d times (%+v), want once with tokens", len(obs.usage), obs.usage)
	}

	failing, _ := newEngine(t, claimstest.NewProvider(claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderRateLimited}}),
		nil, &claims.Options{Observer: obs})
	if _, err := failing.Verify(context.Background(), claims.Quick, defaultRequest("Some claim to check."), nil); err == nil {
		t.Fatal("expected a failure")
	}
	if len(obs.failed) != 1 || !errors.Is(obs.failed[0], claims.ErrProviderRateLimited) {
		t.Fatalf("failures %v", obs.failed)
	}
}
