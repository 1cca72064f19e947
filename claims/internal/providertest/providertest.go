// Package providertest is the test scaffolding the SDK providers' tests
// (claims/openai, claims/anthropic) share: a fake API that serves scripted
// replies from each provider's recorded payloads and records the requests,
// the replay of a recorded object as each API's documented event stream
// (ResponsesAPI, MessagesAPI: the anthropic tests also serve openai's
// recorded answer, to corroborate), the query the engine would send, a
// claims engine over providers, and the table runners of the failure and
// retry tests both suites make. The recorded payloads stay in each
// provider's testdata, and the assertions on what a provider sends and
// parses stay in its tests. It is imported by tests alone.
package providertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/sqlite"
)

// Now is the clock of every test: 2026-11-22 10:00 UTC.
func Now() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }

// BaseClaim is the claim of the recorded success payloads.
const BaseClaim = "Base mainnet uses chain ID 8453 and USDC on Base has 6 decimals."

// BasePages are the snapshotted pages of the sources the recorded success
// payloads cite.
func BasePages() map[string]string {
	return map[string]string{
		"https://docs.base.org/network-information":                         "Network information. Base Mainnet. Chain ID: 8453. Currency symbol: ETH.",
		"https://chainlist.org/chain/8453":                                  "Base. ChainID 8453. Currency ETH.",
		"https://developers.circle.com/stablecoins/usdc-contract-addresses": "USDC contract addresses. USDC uses 6 decimal places on all supported chains.",
	}
}

// Reply is one scripted answer of the fake API.
type Reply struct {
	Status int               // default 200
	Header map[string]string // set on the answer
	// File is testdata/responses/<File>: with status 200 a recorded
	// object, replayed through API.Stream; otherwise an error body sent
	// as is.
	File   string
	Body   string        // a literal body sent as is, when File is empty
	Delay  time.Duration // before answering
	Hangup bool          // close the connection without an answer
}

// API describes the one endpoint a fake serves.
type API struct {
	Path      string // the endpoint, e.g. "/v1/responses"
	NotFound  string // the JSON body of the 404 for any other request
	RequestID string // the header that numbers each answer req_test_<n>
	// Stream replays a recorded object as the API's event stream.
	Stream func(t testing.TB, recorded []byte) []byte
}

// Recorded is one request the fake received.
type Recorded struct {
	Header http.Header
	Body   []byte
}

// Fake is a running fake API: it serves the replies in order on POST
// API.Path, the last one repeating, and records every request.
type Fake struct {
	URL string // of the httptest server, closed at the test's end

	t       testing.TB
	api     API
	replies []Reply

	mu       sync.Mutex
	requests []Recorded
}

// Serve starts a fake of a with the replies.
func (a API) Serve(t testing.TB, replies []Reply) *Fake {
	t.Helper()
	f := &Fake{t: t, api: a, replies: replies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// ServeHTTP answers one request with the next reply.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != f.api.Path {
		http.Error(w, f.api.NotFound, http.StatusNotFound)
		return
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(r.Body)
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, Recorded{Header: r.Header.Clone(), Body: buf.Bytes()})
	f.mu.Unlock()
	rep := f.replies[min(n, len(f.replies)-1)]
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if rep.Hangup {
		hj, ok := w.(http.Hijacker)
		if !ok {
			f.t.Error("cannot hijack")
			return
		}
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	body := []byte(rep.Body)
	if rep.File != "" {
		var err error
		body, err = os.ReadFile(filepath.Join("testdata", "responses", rep.File))
		if err != nil {
			f.t.Errorf("reply file: %v", err)
		}
		if status == http.StatusOK {
			body = f.api.Stream(f.t, body)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusOK {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	w.Header().Set(f.api.RequestID, fmt.Sprintf("req_test_%d", n+1))
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Count returns how many requests the fake received.
func (f *Fake) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// Request returns the i-th request received.
func (f *Fake) Request(i int) Recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

// Query returns the query the engine would send for a tier.
func Query(tier string) *claims.ProviderQuery {
	t, _ := claims.TierByName(tier)
	return &claims.ProviderQuery{
		Tier:             tier,
		Claim:            BaseClaim,
		Now:              Now(),
		FreshnessHours:   168,
		SourcePolicy:     "authoritative",
		MinimumSources:   2,
		MaxSources:       min(8, t.MaxCitedSources),
		AllowedDomains:   []string{},
		BlockedDomains:   []string{},
		IncludeConflicts: true,
		Language:         "auto",
		MaxToolActions:   t.MaxToolActions,
		MaxOutputTokens:  t.MaxOutputTokens,
	}
}

// RecordCalls makes q record the search calls reported through
// OnSearchCall; the returned function lists them so far.
func RecordCalls(q *claims.ProviderQuery) func() []claims.SearchCall {
	var mu sync.Mutex
	var calls []claims.SearchCall
	q.OnSearchCall = func(c claims.SearchCall) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, c)
	}
	return func() []claims.SearchCall {
		mu.Lock()
		defer mu.Unlock()
		return append([]claims.SearchCall(nil), calls...)
	}
}

// UsageLog is a claims.Observer that records the provider usage reports.
type UsageLog struct {
	mu    sync.Mutex
	usage []claims.ProviderUsage
}

// Verified does nothing.
func (l *UsageLog) Verified(string, *claims.Result) {}

// Failed does nothing.
func (l *UsageLog) Failed(string, error) {}

// ProviderUsed records u.
func (l *UsageLog) ProviderUsed(u claims.ProviderUsage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.usage = append(l.usage, u)
}

// Usage returns the reports so far.
func (l *UsageLog) Usage() []claims.ProviderUsage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]claims.ProviderUsage(nil), l.usage...)
}

// Engine builds a claims engine over the providers (the first is the
// primary, the others corroborate) with an in-memory store, a fake
// snapshotter serving pages and the fixed clock.
func Engine(t testing.TB, pages map[string]string, providers ...claims.SearchProvider) (*claims.Engine, *UsageLog) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), ":memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	snaps := &claimstest.Snapshotter{Pages: map[string]claimstest.Page{}, Now: Now}
	for u, text := range pages {
		snaps.Pages[u] = claimstest.Page{Text: text}
	}
	log := &UsageLog{}
	e, err := claims.New(providers[0], claimsstore.New(db), snaps, &claims.Options{Now: Now, Observer: log, Providers: providers[1:]})
	if err != nil {
		t.Fatal(err)
	}
	return e, log
}

// Request returns a request with the defaults and claim, changed by mod.
func Request(claim string, mod func(*claims.Request)) *claims.Request {
	var r claims.Request
	r.SetDefaults()
	r.Claim = claim
	if mod != nil {
		mod(&r)
	}
	return &r
}

// New returns newProvider(o) after mod(o) (nil: none), failing the test
// on an error.
func New[O, P any](t testing.TB, newProvider func(*O) (P, error), o *O, mod func(*O)) P {
	t.Helper()
	if mod != nil {
		mod(o)
	}
	p, err := newProvider(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// EngineOver builds a provider with start over a fake API with the
// replies (default options) and an Engine over it serving pages.
func EngineOver[O any](t *testing.T, start Start[O], replies []Reply, pages map[string]string) (*claims.Engine, *Fake, *UsageLog) {
	t.Helper()
	p, api := start(t, replies, nil)
	e, log := Engine(t, pages, p)
	return e, api, log
}

// Start builds a provider over a fake API with the replies, its options
// changed by mod (nil: none).
type Start[O any] func(t *testing.T, replies []Reply, mod func(*O)) (claims.SearchProvider, *Fake)

// Failure is a case of RunFailures: a standard-tier Search over the
// replies fails with WantKind after WantCalls requests.
type Failure[O any] struct {
	Name       string
	Replies    []Reply
	Mod        func(*O)
	CtxTimeout time.Duration // a deadline on the caller's context
	WantKind   error
	WantCalls  int
	Check      func(t *testing.T, pr *claims.ProviderResponse, err error) // more checks
}

// RunFailures runs the cases as parallel subtests (many wait out the
// API's retry delays), each over a fake API of its own.
func RunFailures[O any](t *testing.T, start Start[O], cases []Failure[O]) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			p, api := start(t, tc.Replies, tc.Mod)
			ctx := context.Background()
			if tc.CtxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.CtxTimeout)
				defer cancel()
			}
			pr, err := p.Search(ctx, Query(claims.Standard))
			if !errors.Is(err, tc.WantKind) {
				t.Fatalf("error = %v, want kind %v", err, tc.WantKind)
			}
			if got := api.Count(); got != tc.WantCalls {
				t.Errorf("requests = %d, want %d", got, tc.WantCalls)
			}
			if tc.Check != nil {
				tc.Check(t, pr, err)
			}
		})
	}
}

// Retry is a case of RunRetryThenSuccess: First fails, the retry succeeds,
// not before MinWait.
type Retry struct {
	Name    string
	First   Reply
	MinWait time.Duration
}

// RunRetryThenSuccess runs the cases as parallel subtests, each over a
// fake API of its own: each answers First, then
// testdata/responses/success.json, whose response id is wantID; the Search
// must succeed after exactly one retry that sent the same body.
func RunRetryThenSuccess[O any](t *testing.T, start Start[O], wantID string, cases []Retry) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			p, api := start(t, []Reply{tc.First, {File: "success.json"}}, nil)
			begin := time.Now()
			pr, err := p.Search(context.Background(), Query(claims.Standard))
			if err != nil {
				t.Fatal(err)
			}
			if elapsed := time.Since(begin); elapsed < tc.MinWait {
				t.Errorf("retried after %v, before the server's %v", elapsed, tc.MinWait)
			}
			if api.Count() != 2 {
				t.Fatalf("requests = %d, want 2", api.Count())
			}
			if !bytes.Equal(api.Request(0).Body, api.Request(1).Body) {
				t.Error("the retry sent a different body")
			}
			if pr.ResponseID != wantID {
				t.Errorf("response id = %q", pr.ResponseID)
			}
		})
	}
}
