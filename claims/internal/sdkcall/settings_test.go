package sdkcall

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
)

func TestResolveDefaults(t *testing.T) {
	s, err := Settings{APIKey: " k \n"}.Resolve("p", "https://api.example/v1", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if s.APIKey != "k" || s.BaseURL != "https://api.example/v1" || s.Model != "m1" || s.Now == nil || s.Logger == nil {
		t.Errorf("resolved %+v", s)
	}
	if s.Timeout != claims.DefaultTimeout || s.AttemptTimeout != DefaultAttemptTimeout || s.MaxRetries != DefaultMaxRetries ||
		s.MaxRetryAfter != DefaultMaxRetryAfter || s.MinAttemptTime != DefaultMinAttemptTime {
		t.Errorf("durations %v %v %d %v %v", s.Timeout, s.AttemptTimeout, s.MaxRetries, s.MaxRetryAfter, s.MinAttemptTime)
	}
	if s.HTTPClient == nil || s.HTTPClient.Transport == http.DefaultTransport || s.HTTPClient.Transport == nil {
		t.Errorf("client %+v is not over a clone of the default transport", s.HTTPClient)
	}
	if got := s.RootURL(); got != "https://api.example/v1/" {
		t.Errorf("RootURL = %q", got)
	}
}

func TestResolveKeepsSettings(t *testing.T) {
	hc := &http.Client{Timeout: time.Hour}
	in := Settings{BaseURL: "http://127.0.0.1:1/", Model: "m2", HTTPClient: hc, Timeout: time.Second, AttemptTimeout: 2 * time.Second,
		MaxRetries: -1, MaxRetryAfter: 3 * time.Second, MinAttemptTime: 4 * time.Millisecond}
	s, err := in.Resolve("p", "https://unused", "unused")
	if err != nil {
		t.Fatal(err)
	}
	if s.BaseURL != in.BaseURL || s.Model != "m2" || s.Timeout != time.Second || s.AttemptTimeout != 2*time.Second ||
		s.MaxRetries != 0 || s.MaxRetryAfter != 3*time.Second || s.MinAttemptTime != 4*time.Millisecond {
		t.Errorf("resolved %+v", s)
	}
	if s.HTTPClient == hc || s.HTTPClient.Timeout != 0 || hc.Timeout != time.Hour {
		t.Errorf("client: copy %v, caller's timeout %v", s.HTTPClient == hc, hc.Timeout)
	}
	if s.RootURL() != "http://127.0.0.1:1/" {
		t.Errorf("RootURL = %q", s.RootURL())
	}
	for _, bad := range []string{"ftp://x", "https://", "::"} {
		if _, err := (Settings{BaseURL: bad}).Resolve("p", "", ""); err == nil {
			t.Errorf("base URL %q accepted", bad)
		}
	}
}

func TestBound(t *testing.T) {
	s := Settings{Timeout: time.Hour}
	ctx, cancel := s.Bound(context.Background())
	defer cancel()
	dl, ok := ctx.Deadline()
	if carried, _ := ctx.Value(deadlineKey{}).(time.Time); !ok || !carried.Equal(dl) {
		t.Errorf("deadline %v %v, carried %v", dl, ok, carried)
	}
	// A caller's deadline is kept, not replaced by Timeout.
	mine := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	parent, stop := context.WithDeadline(context.Background(), mine)
	defer stop()
	ctx, cancel = s.Bound(parent)
	defer cancel()
	if dl, _ := ctx.Deadline(); !dl.Equal(mine) {
		t.Errorf("deadline %v, want the caller's %v", dl, mine)
	}
	if carried, _ := ctx.Value(deadlineKey{}).(time.Time); !carried.Equal(mine) {
		t.Errorf("carried %v", carried)
	}
}

func TestStart(t *testing.T) {
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := Settings{APIKey: "k", Now: func() time.Time { return clock }}
	if now, err := s.Start("p", &claims.ProviderQuery{Claim: "c"}); err != nil || !now.Equal(clock) {
		t.Errorf("Start = %v, %v; want the settings' clock", now, err)
	}
	given := clock.Add(-time.Hour)
	if now, err := s.Start("p", &claims.ProviderQuery{Claim: "c", Now: given}); err != nil || !now.Equal(given) {
		t.Errorf("Start = %v, %v; want the query's clock", now, err)
	}
	if _, err := s.Start("p", &claims.ProviderQuery{Claim: " "}); !errors.Is(err, claims.ErrProviderFailed) || err.Error() == "" {
		t.Errorf("empty claim: %v", err)
	}
	if _, err := (&Settings{}).Start("p", &claims.ProviderQuery{Claim: "c"}); !errors.Is(err, claims.ErrProviderNotConfigured) {
		t.Errorf("no key: %v", err)
	}
}

func TestFailure(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	var syntax error = &json.SyntaxError{}
	bad := errors.New("bad output")
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want error
	}{
		{"deadline", expired, io.ErrUnexpectedEOF, claims.ErrProviderTimeout},
		{"cancelled", cancelled, io.ErrUnexpectedEOF, claims.ErrProviderFailed},
		{"attempt timeout", context.Background(), context.DeadlineExceeded, claims.ErrProviderTimeout},
		{"not JSON", context.Background(), syntax, bad},
		{"transport", context.Background(), io.ErrUnexpectedEOF, claims.ErrProviderFailed},
	}
	for _, tc := range tests {
		got := Failure(tc.ctx, "p", tc.err, func(string) error { return bad })
		if !errors.Is(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := Failure(expired, "p", io.ErrUnexpectedEOF, nil); !errors.Is(got, context.DeadlineExceeded) {
		t.Errorf("deadline error %v does not wrap the context's", got)
	}
}
