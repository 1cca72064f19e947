package claims_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
)

// recordingObserver records every event the engine reports.
type recordingObserver struct {
	mu       sync.Mutex
	verified []string // tier/status/cacheHit
	usage    []claims.ProviderUsage
	failed   []error
	used     chan claims.ProviderUsage // when set, each usage is also sent here
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
	if o.used != nil {
		o.used <- u
	}
}

func (o *recordingObserver) usages() []claims.ProviderUsage {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]claims.ProviderUsage(nil), o.usage...)
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

// gatedProvider answers like claimstest.Provider, but only once released;
// it signals each call's start.
type gatedProvider struct {
	*claimstest.Provider
	started chan struct{}
	release chan struct{}
}

func newGatedProvider(resp *claims.ProviderResponse) *gatedProvider {
	return &gatedProvider{Provider: claimstest.Respond(resp, 0), started: make(chan struct{}, 8), release: make(chan struct{})}
}

func (g *gatedProvider) Search(ctx context.Context, q *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	g.started <- struct{}{}
	<-g.release
	return g.Provider.Search(ctx, q)
}

// waitUsage waits for the observer to report one provider usage.
func waitUsage(t *testing.T, o *recordingObserver) claims.ProviderUsage {
	t.Helper()
	select {
	case u := <-o.used:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("the provider usage was never reported")
		return claims.ProviderUsage{}
	}
}

// A collapsed provider call reports its usage to the Observer exactly once
// even when the caller that started it stops waiting; a caller still
// waiting carries it in its Call.
func TestUsageWhenTheStarterLeaves(t *testing.T) {
	f := fixture(t, "confirmed")
	req, err := f.Request()
	if err != nil {
		t.Fatal(err)
	}
	want := claims.ProviderUsage{Provider: "openai", Model: "gpt-5.2-mini", InputTokens: 21000, CachedInputTokens: 1200, OutputTokens: 1800, SearchCalls: 1}

	t.Run("nobody else waits", func(t *testing.T) {
		g := newGatedProvider(f.Response)
		obs := &recordingObserver{used: make(chan claims.ProviderUsage, 4)}
		e, _ := newEngine(t, g, f.Snapshotter(), &claims.Options{Observer: obs})
		ctx, cancel := context.WithCancel(context.Background())
		call := &claims.Call{Scope: "payer:a"}
		done := make(chan error, 1)
		go func() {
			_, err := e.Verify(ctx, claims.Standard, req, call)
			done <- err
		}()
		<-g.started
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) || call.ProviderCalled {
			t.Fatalf("starter: %v, carried %v", err, call.ProviderCalled)
		}
		close(g.release)
		if u := waitUsage(t, obs); u != want {
			t.Fatalf("usage %+v, want %+v", u, want)
		}
	})

	t.Run("a joined caller carries it", func(t *testing.T) {
		g := newGatedProvider(f.Response)
		obs := &recordingObserver{used: make(chan claims.ProviderUsage, 4)}
		e, db := newEngine(t, g, f.Snapshotter(), &claims.Options{Observer: obs})
		ctx, cancel := context.WithCancel(context.Background())
		starter := &claims.Call{Scope: "payer:a"}
		done := make(chan error, 1)
		go func() {
			_, err := e.Verify(ctx, claims.Standard, req, starter)
			done <- err
		}()
		<-g.started
		// The second caller holds an idempotency lease (a row) just before
		// it joins the call in flight.
		joined := &claims.Call{Scope: "payer:b", IdempotencyKey: "k"}
		second := make(chan error, 1)
		go func() {
			_, err := e.Verify(context.Background(), claims.Standard, req, joined)
			second <- err
		}()
		for deadline := time.Now().Add(10 * time.Second); countRows(t, db, "claim_idempotency") == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the second caller never took its lease")
			}
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) || starter.ProviderCalled {
			t.Fatalf("starter: %v, carried %v", err, starter.ProviderCalled)
		}
		close(g.release)
		if err := <-second; err != nil {
			t.Fatal(err)
		}
		if !joined.ProviderCalled || joined.Usage != want {
			t.Fatalf("joined caller: carried %v, usage %+v", joined.ProviderCalled, joined.Usage)
		}
		if u := obs.usages(); len(u) != 1 || u[0] != want || g.Calls() != 1 {
			t.Fatalf("observer usage %+v, provider calls %d; want one", u, g.Calls())
		}
	})
}

// A provider call that fails still reports what it cost: the partial
// response's usage reaches the Observer once and the caller's Call (for
// the order's cost accounting), together with the error.
func TestFailedProviderCallUsage(t *testing.T) {
	f := fixture(t, "confirmed")
	req, err := f.Request()
	if err != nil {
		t.Fatal(err)
	}
	partial := &claims.ProviderResponse{Provider: "openai", Model: "gpt-5.2-mini", ResponseID: "resp_trunc",
		SearchCalls: []claims.SearchCall{{ID: "ws_1", Action: claims.ActionSearch}, {ID: "ws_2", Action: claims.ActionOpenPage, URL: "https://a.example/"}},
		Usage:       claims.Usage{InputTokens: 9000, CachedInputTokens: 100, OutputTokens: 3000}}
	truncated := &claims.ProviderError{Kind: claims.ProviderBadOutput, Err: errors.New("response incomplete (max_output_tokens)")}
	obs := &recordingObserver{}
	e, db := newEngine(t, claimstest.NewProvider(
		claimstest.Step{Response: partial, Err: truncated},
		claimstest.Step{Err: &claims.ProviderError{Kind: claims.ProviderRateLimited}},
	), f.Snapshotter(), &claims.Options{Observer: obs})

	call := &claims.Call{Scope: "payer:a", IdempotencyKey: "k"}
	if _, err := e.Verify(t.Context(), claims.Standard, req, call); !errors.Is(err, claims.ErrProviderBadOutput) {
		t.Fatalf("error %v", err)
	}
	want := claims.ProviderUsage{Provider: "openai", Model: "gpt-5.2-mini", InputTokens: 9000, CachedInputTokens: 100, OutputTokens: 3000, SearchCalls: 1}
	if !call.ProviderCalled || call.Usage != want {
		t.Fatalf("call: carried %v usage %+v, want %+v", call.ProviderCalled, call.Usage, want)
	}
	if countRows(t, db, "claim_verifications") != 0 {
		t.Fatal("a failed verification was stored")
	}
	// A failure without a response is a provider call too, at zero usage.
	call2 := &claims.Call{Scope: "payer:a"}
	if _, err := e.Verify(t.Context(), claims.Standard, req, call2); !errors.Is(err, claims.ErrProviderRateLimited) {
		t.Fatalf("error %v", err)
	}
	if !call2.ProviderCalled || call2.Usage != (claims.ProviderUsage{Provider: "scripted"}) {
		t.Fatalf("call2: %+v", call2)
	}
	if u := obs.usages(); len(u) != 2 || u[0] != want || u[1] != (claims.ProviderUsage{Provider: "scripted"}) || len(obs.failed) != 2 {
		t.Fatalf("observer usage %+v failures %v", u, obs.failed)
	}
}
