package claimstest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/snapshot"
)

func TestFixturesLoad(t *testing.T) {
	names := FixtureNames()
	if len(names) == 0 {
		t.Fatal("no fixtures")
	}
	for _, n := range names {
		f, err := LoadFixture(n)
		if err != nil {
			t.Fatal(err)
		}
		if f.Description == "" {
			t.Errorf("%s has no description", n)
		}
		if _, err := f.Request(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if _, ok := claims.TierByName(f.Tier); !ok {
			t.Errorf("%s: unknown tier %q", n, f.Tier)
		}
	}
	if _, err := LoadFixture("absent"); err == nil {
		t.Fatal("absent fixture loaded")
	}
}

func TestProviderScript(t *testing.T) {
	resp := &claims.ProviderResponse{Model: "m", Analysis: claims.Analysis{Limitations: []string{"x"}}}
	boom := errors.New("boom")
	p := NewProvider(Step{Err: boom}, Step{Response: resp})
	ctx := context.Background()
	if _, err := p.Search(ctx, &claims.ProviderQuery{Claim: "a"}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	for range 2 { // the last step repeats
		got, err := p.Search(ctx, &claims.ProviderQuery{Claim: "b"})
		if err != nil || got.Model != "m" || got == resp {
			t.Fatalf("%v %v (responses must be copies)", got, err)
		}
		got.Analysis.Limitations[0] = "changed"
	}
	if resp.Analysis.Limitations[0] != "x" {
		t.Fatal("a caller modified the script")
	}
	if p.Calls() != 3 || p.Queries()[2].Claim != "b" || p.Name() != "scripted" {
		t.Fatal(p.Calls(), p.Queries())
	}
	slow := Respond(resp, time.Second)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := slow.Search(cctx, &claims.ProviderQuery{}); !errors.Is(err, claims.ErrProviderTimeout) {
		t.Fatalf("delay not cut by the context: %v", err)
	}
}

func TestSnapshotters(t *testing.T) {
	s := &Snapshotter{Pages: map[string]Page{"https://Example.com/a?utm_source=x": {Text: "Hello World"}, "https://b.com/": {Status: snapshot.StatusTooLarge}}}
	recs, err := s.CaptureAll(context.Background(), []string{"https://example.com/a", "https://b.com", "https://c.com/missing"})
	if err != nil || len(recs) != 3 {
		t.Fatal(recs, err)
	}
	if recs[0].Status != snapshot.StatusCaptured || !recs[0].Contains("hello world") || recs[1].Status != snapshot.StatusTooLarge ||
		recs[2].Status != snapshot.StatusFailed || *recs[2].FailureReason != "HTTP 404" {
		t.Fatalf("%+v %+v %+v", recs[0], recs[1], recs[2])
	}
	// A content type other than the default is normalised as the capturer
	// does: a PDF keeps its raw hash and has no text; HTML is reduced to
	// its text.
	typed := &Snapshotter{Pages: map[string]Page{
		"https://d.com/f.pdf": {Text: "%PDF-1.7 Hello World", ContentType: "application/pdf"},
		"https://d.com/p":     {Text: "<p>Hello <b>World</b></p>", ContentType: "text/html; charset=utf-8"},
	}}
	recs, err = typed.CaptureAll(context.Background(), []string{"https://d.com/f.pdf", "https://d.com/p"})
	if err != nil {
		t.Fatal(err)
	}
	if pdf := recs[0]; pdf.Status != snapshot.StatusCaptured || pdf.RawSHA256 == nil || pdf.NormalizedSHA256 != nil || pdf.Text != "" || pdf.Contains("Hello World") {
		t.Fatalf("PDF record %+v", pdf)
	}
	if html := recs[1]; html.NormalizedSHA256 == nil || !html.Contains("hello world") || strings.Contains(html.Text, "<b>") {
		t.Fatalf("HTML record %+v", html)
	}
	site := NewSlowSite(50 * time.Millisecond)
	defer site.Close()
	var urls []string
	for range 10 {
		urls = append(urls, site.URL+"/p")
	}
	urls = append(urls, "http://127.0.0.1:1/refused")
	start := time.Now()
	recs, err = (&HTTPSnapshotter{}).CaptureAll(context.Background(), urls)
	if err != nil || len(recs) != 11 {
		t.Fatal(err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("fetches are not concurrent: %v", time.Since(start))
	}
	for _, r := range recs[:10] {
		if r.Status != snapshot.StatusCaptured || !strings.Contains(r.Text, "$18.00") {
			t.Fatalf("%+v", r)
		}
	}
	if recs[10].Status != snapshot.StatusFailed {
		t.Fatalf("refused connection: %+v", recs[10])
	}
}

// A streaming step reports its search calls before it answers: the gate
// that holds the answer is opened by the report itself.
func TestProviderStreams(t *testing.T) {
	resp := ResponseForURLs([]string{"https://a.example/1", "https://b.example/2", "https://c.example/3"})
	gate := make(chan struct{})
	p := NewProvider(Step{Response: resp, Stream: true, Gate: gate})
	var got []claims.SearchCall
	q := &claims.ProviderQuery{OnSearchCall: func(c claims.SearchCall) {
		got = append(got, c)
		close(gate)
	}}
	r, err := p.Search(context.Background(), q)
	if err != nil || len(got) != 1 || got[0].ID != "ws_1" || len(got[0].Sources) != 3 || r.ResponseID != "resp_bench" {
		t.Fatal(err, got, r)
	}
	// Without a listener the step still answers; a gate never opened ends
	// with the context as a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = NewProvider(Step{Response: resp, Stream: true, Gate: make(chan struct{})}).Search(ctx, &claims.ProviderQuery{})
	if !errors.Is(err, claims.ErrProviderTimeout) {
		t.Fatal(err)
	}
}
