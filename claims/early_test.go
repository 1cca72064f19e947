package claims_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/google/go-cmp/cmp"
)

// streamed is a response with cited pages on the cited hosts and further
// uncited sources on the others, all reported by one search call.
func streamed(cited []string, others ...string) *claims.ProviderResponse {
	r := answerOf("scripted", says18, cited...)
	for _, h := range others {
		r.SearchCalls[0].Sources = append(r.SearchCalls[0].Sources, claims.SourceRef{URL: "https://" + h + "/wage"})
	}
	return r
}

// verifyStreaming verifies wageRequest on tier with a provider that
// streams resp's search call and answers only once gate is closed.
func verifyStreaming(t *testing.T, tier string, resp *claims.ProviderResponse, snaps *claimstest.Snapshotter, gate <-chan struct{}) *claims.Result {
	t.Helper()
	p := claimstest.NewProvider(claimstest.Step{Response: resp, Stream: true, Gate: gate})
	e, _ := newEngine(t, p, snaps, &claims.Options{Timeout: 30 * time.Second})
	res, err := e.Verify(context.Background(), tier, wageRequest(), &claims.Call{Scope: "payer:test"})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, res)
	return res
}

// closeAfter returns a gate closed once n captures have started, and the
// Started hook that counts them.
func closeAfter(n int) (chan struct{}, func([]string)) {
	gate := make(chan struct{})
	var mu sync.Mutex
	var once sync.Once
	started := 0
	return gate, func(urls []string) {
		mu.Lock()
		defer mu.Unlock()
		started += len(urls)
		if started >= n {
			once.Do(func() { close(gate) })
		}
	}
}

// On research (all_sources) the pages of streamed sources are captured
// before the provider answers: the provider answers only once every
// capture has started. The result is the one a provider that does not
// stream gets.
func TestEarlyCapturesStartBeforeTheAnswer(t *testing.T) {
	hosts := []string{"a1.example", "a2.example", "a3.example"}
	resp := streamed(hosts[:2], hosts[2])
	gate, started := closeAfter(3)
	snaps := pagesFor(hosts, nil)
	snaps.Started = started
	res := verifyStreaming(t, claims.Research, resp, snaps, gate)
	for _, r := range snaps.Requests() {
		if len(r) != 1 {
			t.Fatalf("a page was captured after the answer: requests %v", snaps.Requests())
		}
	}

	plain := pagesFor(hosts, nil)
	e, _ := newEngine(t, claimstest.Respond(resp, 0), plain, nil)
	want, err := e.Verify(context.Background(), claims.Research, wageRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Requests()) != 1 || len(plain.Requests()[0]) != 3 {
		t.Fatalf("without streaming the pages are captured in one batch: %v", plain.Requests())
	}
	if diff := cmp.Diff(essence(want), essence(res)); diff != "" {
		t.Fatalf("streaming changed the result (-without +with):\n%s", diff)
	}
}

// essence is a result without its ids and instants.
func essence(r *claims.Result) any {
	type ev struct {
		ID, URL       string
		Quote         claims.QuoteCheck
		Counted, Snap bool
	}
	var evs []ev
	for _, e := range r.Evidence {
		evs = append(evs, ev{e.ID, e.URL, e.Quote, e.Counted, e.Snapshotted})
	}
	var snaps []string
	for _, s := range r.Snapshots {
		snaps = append(snaps, s.RequestedURL+" "+string(s.Status))
	}
	slices.Sort(snaps)
	p := r.Provenance
	return struct {
		Status   claims.Status
		Facts    []claims.Status
		Evidence []ev
		Snaps    []string
		Counts   [4]int
		Limits   []string
	}{r.Status, factStatuses(r), evs, snaps, [4]int{p.SnapshottedSourceCount, p.ProviderSourceCount, p.CitedSourceCount, p.ConsultedSourceCount}, r.Limitations}
}

// On a cited tier (deep) streamed sources are captured speculatively, at
// most maxSnapshots of them; the captures the answer does not cite are
// cancelled and left out of the result.
func TestEarlyCapturesSpeculativeAndCancelled(t *testing.T) {
	cited := []string{"c1.example", "c2.example"}
	var others []string
	for i := range 10 {
		others = append(others, "o"+string(rune('a'+i))+".example")
	}
	tier, _ := claims.TierByName(claims.Deep)
	gate, started := closeAfter(tier.MaxSnapshots)
	snaps := pagesFor(append(slices.Clone(cited), others...), nil)
	snaps.Started = started
	never := make(chan struct{})
	snaps.Hold = func(urls []string) <-chan struct{} {
		for _, h := range cited {
			if strings.Contains(urls[0], h) {
				return nil
			}
		}
		return never // uncited pages: only their cancellation ends them
	}
	res := verifyStreaming(t, claims.Deep, streamed(cited, others...), snaps, gate)

	if got := len(snaps.Requests()); got != tier.MaxSnapshots {
		t.Fatalf("%d captures started, want the tier's maxSnapshots %d: %v", got, tier.MaxSnapshots, snaps.Requests())
	}
	var got []string
	for _, s := range res.Snapshots {
		got = append(got, s.RequestedURL)
	}
	if !slices.Equal(got, []string{"https://c1.example/wage", "https://c2.example/wage"}) || res.Status != claims.StatusConfirmed {
		t.Fatalf("snapshots %v status %s", got, res.Status)
	}
}

// A provider that does not stream, or a tier without snapshots, captures
// as before: nothing starts before the answer.
func TestEarlyCapturesNeedStreamingAndSnapshots(t *testing.T) {
	snaps := pagesFor([]string{"a1.example"}, nil)
	res := verifyStreaming(t, claims.Quick, streamed([]string{"a1.example"}), snaps, nil)
	if len(snaps.Requests()) != 0 || len(snaps.Fetches()) != 1 || res.Status != claims.StatusConfirmed {
		t.Fatalf("quick: requests %v fetches %v status %s", snaps.Requests(), snaps.Fetches(), res.Status)
	}
}

// Streamed sources on blocked domains are never captured, early or late.
func TestEarlyCapturesSkipBlockedDomains(t *testing.T) {
	snaps := pagesFor([]string{"a1.example", "blocked.example"}, nil)
	p := claimstest.NewProvider(claimstest.Step{Response: streamed([]string{"a1.example"}, "blocked.example"), Stream: true})
	e, _ := newEngine(t, p, snaps, nil)
	req := wageRequest()
	req.BlockedDomains = []string{"blocked.example"}
	res, err := e.Verify(context.Background(), claims.Research, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := snaps.Requests(); len(got) != 1 || !slices.Equal(got[0], []string{"https://a1.example/wage"}) || res.Provenance.SnapshottedSourceCount != 1 {
		t.Fatalf("requests %v", got)
	}
}
