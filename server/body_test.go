package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/shapes"
)

// testService is a paid route with a validated body, exercising decodeBody,
// decodeQuery, writeError and the paywall seam together.
type testService struct{ s *Server }

func (ts testService) Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	var req shapes.ClaimVerificationRequest
	return r, ts.s.decodeBody(w, r, &req)
}

func (ts testService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var q shapes.NicheListQuery
	if !ts.s.decodeQuery(w, r, &q) {
		return
	}
	c, _ := payment.CallFrom(r.Context())
	fmt.Fprintf(w, "%s %d", c.Protocol, q.Limit)
}

func TestPaidRouteSeam(t *testing.T) {
	for _, tc := range []struct {
		name    string
		paywall payment.Paywall
		target  string
		body    string
		status  int
		want    string
	}{
		{"no paywall", nil, "/v1/p", `{"claim":"abc"}`, 503, `{"detail":"Payments are not configured"}`},
		{"free", payment.Free{}, "/v1/p?limit=7", `{"claim":"abc"}`, 200, `free 7`},
		{"missing body", payment.Free{}, "/v1/p", ``, 422, `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"bad query", payment.Free{}, "/v1/p?limit=x", `{"claim":"abc"}`, 422, `"loc":["query","limit"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{cfg: Config{Paywall: tc.paywall, MaxBodyBytes: 1024}}
			h := testHandler(t, &Route{ID: "p", Method: "POST", Path: "/v1/p",
				Handler: s.paid(payment.Offer{ID: "test"}, testService{s})})
			rec := do(t, h, "POST", tc.target, tc.body)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("got %d %s, want %d %s", rec.Code, rec.Body, tc.status, tc.want)
			}
		})
	}
}

func TestWriteError(t *testing.T) {
	s, _ := New(Config{})
	for _, tc := range []struct {
		err    error
		status int
	}{
		{shapes.NewValueError("x", nil).WithPrefix("body"), 422},
		{fmt.Errorf("wrapped: %w", errors.New("boom")), 500},
	} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.writeError(w, r, tc.err) })
		if rec := do(t, h, "GET", "/", ""); rec.Code != tc.status {
			t.Errorf("%v: %d, want %d", tc.err, rec.Code, tc.status)
		}
	}
}
