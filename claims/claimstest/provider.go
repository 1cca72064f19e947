package claimstest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/assaykit/assay/claims"
)

// Step is one scripted provider answer.
type Step struct {
	// Response is returned (a deep copy).
	Response *claims.ProviderResponse
	// Err is returned; with Response set too, the response is returned
	// along with it, as a provider returns the partial response of a call
	// that failed but still cost tokens (e.g. a truncated answer).
	Err error
	// Delay is waited before answering (counted from the start of the
	// call, streaming included); a context that ends first makes Search
	// return a ProviderTimeout error.
	Delay time.Duration
	// Stream makes the provider report every search call of Response
	// early, through ProviderQuery.ReportSearchCall, as a streaming
	// provider does when each tool action ends, StreamAfter into the call
	// (before Delay ends, however long Delay is).
	Stream      bool
	StreamAfter time.Duration
	// Gate, when set, is waited on after streaming and before answering:
	// a test closes it once it has seen what the early reports caused
	// (e.g. a capture started), which proves the order without timing.
	Gate <-chan struct{}
}

// Provider is a scripted claims.SearchProvider. Each Search call takes the
// next step; the last step repeats once the script is exhausted. It records
// every query. Safe for concurrent use.
type Provider struct {
	// ProviderName is returned by Name; "" means "scripted".
	ProviderName string
	// Caps is returned by Capabilities.
	Caps claims.ProviderCapabilities

	mu      sync.Mutex
	steps   []Step
	next    int
	queries []claims.ProviderQuery
}

// NewProvider returns a provider that plays steps in order.
func NewProvider(steps ...Step) *Provider {
	return &Provider{steps: steps}
}

// Respond returns a provider that always answers resp after delay.
func Respond(resp *claims.ProviderResponse, delay time.Duration) *Provider {
	return NewProvider(Step{Response: resp, Delay: delay})
}

// Name implements claims.SearchProvider.
func (p *Provider) Name() string {
	if p.ProviderName == "" {
		return "scripted"
	}
	return p.ProviderName
}

// Capabilities implements claims.SearchProvider.
func (p *Provider) Capabilities() claims.ProviderCapabilities { return p.Caps }

// Search implements claims.SearchProvider.
func (p *Provider) Search(ctx context.Context, q *claims.ProviderQuery) (*claims.ProviderResponse, error) {
	p.mu.Lock()
	p.queries = append(p.queries, *q)
	var st Step
	if len(p.steps) > 0 {
		st = p.steps[min(p.next, len(p.steps)-1)]
		p.next++
	}
	p.mu.Unlock()
	start := time.Now()
	if st.Stream && st.Response != nil {
		if err := wait(ctx, st.StreamAfter, nil); err != nil {
			return nil, err
		}
		for _, c := range cloneResponse(st.Response).SearchCalls {
			q.ReportSearchCall(c)
		}
	}
	if err := wait(ctx, st.Delay-time.Since(start), st.Gate); err != nil {
		return nil, err
	}
	if st.Err != nil {
		if st.Response != nil {
			return cloneResponse(st.Response), st.Err
		}
		return nil, st.Err
	}
	if st.Response == nil {
		return nil, &claims.ProviderError{Kind: claims.ProviderBadOutput, Err: errors.New("claimstest: no scripted response")}
	}
	return cloneResponse(st.Response), nil
}

// Calls returns how many times Search was called.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queries)
}

// Queries returns the queries received, in order.
func (p *Provider) Queries() []claims.ProviderQuery {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]claims.ProviderQuery(nil), p.queries...)
}

func cloneResponse(r *claims.ProviderResponse) *claims.ProviderResponse {
	b, err := json.Marshal(r)
	if err != nil {
		c := *r
		return &c
	}
	var out claims.ProviderResponse
	if err := json.Unmarshal(b, &out); err != nil {
		c := *r
		return &c
	}
	return &out
}

// wait waits d, then gate (when not nil), or returns a ProviderTimeout
// error when ctx ends first.
func wait(ctx context.Context, d time.Duration, gate <-chan struct{}) error {
	timeout := func() error { return &claims.ProviderError{Kind: claims.ProviderTimeout, Err: ctx.Err()} }
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return timeout()
		case <-t.C:
		}
	}
	if gate != nil {
		select {
		case <-ctx.Done():
			return timeout()
		case <-gate:
		}
	}
	return nil
}
