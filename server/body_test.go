package server

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/server/route"
	"github.com/assaykit/assay/shapes"
)

// testService is a paid route with a validated body, exercising decodeBody,
// decodeQuery, writeError and the paywall seam together.
type testService struct{ s *Server }

func (ts testService) Precheck(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	var req claims.Request
	return r, ts.s.decodeBody(w, r, &req)
}

func (ts testService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var q niche.ListOptions
	if !ts.s.decodeQuery(w, r, &q) {
		return
	}
	c, _ := payment.CallFrom(r.Context())
	fmt.Fprintf(w, "%s %d", c.Protocol, q.Limit)
}

func TestPaidRouteSeam(t *testing.T) {
	for _, tc := range []struct {
		name    string
		paywall httpgate.Paywall
		target  string
		body    string
		status  int
		want    string
	}{
		{"free", httpgate.Free{}, "/v1/p?limit=7", `{"claim":"abc"}`, 200, `free 7`},
		{"missing body", httpgate.Free{}, "/v1/p", ``, 422, `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"bad query", httpgate.Free{}, "/v1/p?limit=x", `{"claim":"abc"}`, 422, `"loc":["query","limit"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{cfg: Config{Paywall: tc.paywall, MaxBodyBytes: 1024}}
			h := testHandler(t, &Route{ID: "p", Method: "POST", Path: "/v1/p",
				Handler: s.Paid(payment.Offer{ID: "test"}, testService{s})})
			rec := do(t, h, "POST", tc.target, tc.body)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("got %d %s, want %d %s", rec.Code, rec.Body, tc.status, tc.want)
			}
		})
	}
}

// paidMount mounts one paid route.
type paidMount struct{}

func (paidMount) Routes(s route.Host) ([]*Route, error) {
	return []*Route{{ID: "p", Method: "POST", Path: "/v1/p", Handler: s.Paid(payment.Offer{ID: "test.offer"}, http.NotFoundHandler())}}, nil
}

// A server that sells something without a Paywall is refused by New,
// naming the offer, rather than answering 503 at request time.
func TestNoPaywallRefused(t *testing.T) {
	_, err := New(Config{Mounts: []Mount{paidMount{}}})
	if !errors.Is(err, ErrNoPaywall) || !strings.Contains(err.Error(), "test.offer") {
		t.Fatalf("New without a Paywall: %v", err)
	}
	if _, err := New(Config{Paywall: httpgate.Free{}, Mounts: []Mount{paidMount{}}}); err != nil {
		t.Fatalf("New under httpgate.Free: %v", err)
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

// bodyRoute answers 200 "ok <claim>" when the body decodes.
func bodyRoute(t *testing.T, maxBody int64) http.Handler {
	t.Helper()
	s := &Server{cfg: Config{MaxBodyBytes: 1 << 20}}
	return testHandler(t, &Route{ID: "b", Method: "POST", Path: "/v1/b", MaxBodyBytes: maxBody,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req claims.Request
			if s.decodeBody(w, r, &req) {
				fmt.Fprintf(w, "ok %s", req.Claim)
			}
		})})
}

func TestDecodeBodyFastAPI(t *testing.T) {
	h := bodyRoute(t, 1<<20)
	for _, tc := range []struct {
		name, body, ctype string
		status            int
		want              string
	}{
		{"valid", `{"claim":"abc"}`, "", 200, `ok abc`},
		{"empty", ``, "", 422, `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"empty with json type", ``, "application/json", 422, `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"null", `null`, "", 422, `{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`},
		{"whitespace", "  ", "", 422, `{"detail":[{"type":"json_invalid","loc":["body",2],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}`},
		{"truncated", `{"claim":`, "", 422, `{"detail":[{"type":"json_invalid","loc":["body",9],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}`},
		{"missing comma", `{"claim":"abc" "x":1}`, "", 422, `{"detail":[{"type":"json_invalid","loc":["body",15],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting ',' delimiter"}}]}`},
		{"offset counts characters", `{"claim":"ééé",}`, "", 422, `{"detail":[{"type":"json_invalid","loc":["body",15],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}]}`},
		{"control character", "{\"claim\":\"a\x01\"}", "", 422, `{"detail":[{"type":"json_invalid","loc":["body",11],"msg":"JSON decode error","input":{},"ctx":{"error":"Invalid control character at"}}]}`},
		{"NaN literal", `{"claim":"abc","maxSources":NaN}`, "", 422, `"loc":["body",28]`},
		{"array", `[1,2]`, "", 422, `{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[1,2]}]}`},
		{"string", `"x"`, "", 422, `"type":"model_attributes_type","loc":["body"]`},
		{"nested loc", `{"claim":"abc","allowedDomains":["a",1]}`, "", 422, `{"detail":[{"type":"string_type","loc":["body","allowedDomains",1],"msg":"Input should be a valid string","input":1}]}`},
		{"extra", `{"claim":"abc","x":"<&>"}`, "", 422, `{"detail":[{"type":"extra_forbidden","loc":["body","x"],"msg":"Extra inputs are not permitted","input":"<&>"}]}`},
		{"json with charset", `{"claim":"abc"}`, "application/json; charset=utf-8", 200, `ok abc`},
		{"upper case json", `{"claim":"abc"}`, "APPLICATION/JSON", 200, `ok abc`},
		{"+json", `{"claim":"abc"}`, "application/vnd.api+json", 200, `ok abc`},
		{"text/plain", `{"claim":"abc"}`, "text/plain", 422, `{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"{\"claim\":\"abc\"}"}]}`},
		{"x-json", `{"claim":"abc"}`, "application/x-json", 422, `"type":"model_attributes_type"`},
		{"malformed type", `{"claim":"abc"}`, "json", 422, `"type":"model_attributes_type"`},
		{"form", `claim=abc`, "application/x-www-form-urlencoded", 422, `"input":"claim=abc"`},
		{"utf-8 BOM", "\ufeff{\"claim\":\"abc\"}", "", 200, `ok abc`},
		{"invalid utf-8", "{\"claim\":\"ab\xff\"}", "", 400, `{"detail":"There was an error parsing the body"}`},
		{"too deep", strings.Repeat("[", shapes.MaxDepth+1), "", 400, `{"detail":"There was an error parsing the body"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.ctype != "" {
				hdr = []string{"Content-Type", tc.ctype}
			}
			rec := do(t, h, "POST", "/v1/b", tc.body, hdr...)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("got %d %s, want %d %s", rec.Code, rec.Body, tc.status, tc.want)
			}
		})
	}
}

func TestDecodeBodyTooLarge(t *testing.T) {
	h := bodyRoute(t, 16)
	rec := do(t, h, "POST", "/v1/b", `{"claim":"a long enough claim"}`)
	if rec.Code != 413 || rec.Body.String() != `{"detail":"Request body too large"}` {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
	// A body without Content-Length hits the MaxBytesReader while reading.
	req := httptest.NewRequest("POST", "/v1/b", io.MultiReader(strings.NewReader(`{"claim":"`), strings.NewReader(strings.Repeat("a", 64)+`"}`)))
	req.ContentLength = -1
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	if rr.Code != 413 {
		t.Fatalf("streamed: got %d %s", rr.Code, rr.Body)
	}
}

// A 1 MB body of 95,000 unknown keys (within the body limit) is answered
// with the first shapes.MaxErrors errors, in fewer bytes than the body.
func TestDecodeBodyHostileKeys(t *testing.T) {
	h := bodyRoute(t, 1<<20)
	var b strings.Builder
	b.WriteString(`{"claim":"The Base mainnet chain ID is 8453."`)
	for i := range 95000 {
		b.WriteString(`,"k` + strconv.Itoa(i) + `":0`)
	}
	b.WriteString("}")
	rec := do(t, h, "POST", "/v1/b", b.String())
	var body struct{ Detail []map[string]any }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); rec.Code != 422 || err != nil {
		t.Fatalf("got %d %.300s", rec.Code, rec.Body)
	}
	if len(body.Detail) != shapes.MaxErrors || rec.Body.Len() >= b.Len() {
		t.Fatalf("%d errors in %d bytes for a %d-byte body", len(body.Detail), rec.Body.Len(), b.Len())
	}
}

// TestDecodeBodyGolden sends every ClaimVerificationRequest case the
// Pydantic generator produced through the HTTP handler and compares the
// whole 422 body with FastAPI's.
func TestDecodeBodyGolden(t *testing.T) {
	f, err := os.Open("../shapes/testdata/golden_body.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	h := bodyRoute(t, 1<<20)
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var c struct {
			Shape  string            `json:"shape"`
			Input  string            `json:"input"`
			Errors []json.RawMessage `json:"errors"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Shape != "ClaimVerificationRequest" || c.Input == "" {
			continue
		}
		n++
		rec := do(t, h, "POST", "/v1/b", c.Input)
		if c.Errors == nil {
			if rec.Code != 200 {
				t.Errorf("%q: got %d %s, want 200", c.Input, rec.Code, rec.Body)
			}
			continue
		}
		parts := make([]string, len(c.Errors))
		for i, e := range c.Errors {
			s := string(e)
			if strings.Contains(s, `,"loc":[],`) {
				s = strings.Replace(s, `,"loc":[],`, `,"loc":["body"],`, 1)
			} else {
				s = strings.Replace(s, `,"loc":[`, `,"loc":["body",`, 1)
			}
			parts[i] = s
		}
		want := `{"detail":[` + strings.Join(parts, ",") + `]}`
		if rec.Code != 422 || rec.Body.String() != want {
			t.Errorf("%q:\n got %d %s\nwant 422 %s", c.Input, rec.Code, rec.Body, want)
		}
	}
	if n < 1000 {
		t.Fatalf("only %d cases", n)
	}
}

func TestDecodeQueryFastAPI(t *testing.T) {
	s := &Server{cfg: Config{MaxBodyBytes: 1 << 20}}
	h := testHandler(t, &Route{ID: "q", Method: "GET", Path: "/v1/q",
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var q niche.SearchOptions
			if s.decodeQuery(w, r, &q) {
				fmt.Fprintf(w, "%s %s %d", q.Query, q.Sort, q.Limit)
			}
		})})
	for _, tc := range []struct {
		target string
		status int
		want   string
	}{
		{"/v1/q?q=abc", 200, "abc score 20"},
		{"/v1/q?q=abc&limit=%207%20&sort=recent", 200, "abc recent 7"},
		{"/v1/q?q=ab&q=abcd", 200, "abcd score 20"},
		{"/v1/q", 422, `{"detail":[{"type":"missing","loc":["query","q"],"msg":"Field required","input":null}]}`},
		{"/v1/q?q=ab", 422, `{"detail":[{"type":"string_too_short","loc":["query","q"],"msg":"String should have at least 3 characters","input":"ab","ctx":{"min_length":3}}]}`},
		{"/v1/q?q=abc&limit=abc", 422, `{"detail":[{"type":"int_parsing","loc":["query","limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}]}`},
		{"/v1/q?q=abc&limit=21", 422, `{"detail":[{"type":"less_than_equal","loc":["query","limit"],"msg":"Input should be less than or equal to 20","input":"21","ctx":{"le":20}}]}`},
		{"/v1/q?sort=top&limit=0", 422, `{"detail":[{"type":"missing","loc":["query","q"],"msg":"Field required","input":null},{"type":"literal_error","loc":["query","sort"],"msg":"Input should be 'recent' or 'score'","input":"top","ctx":{"expected":"'recent' or 'score'"}},{"type":"greater_than_equal","loc":["query","limit"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`},
	} {
		rec := do(t, h, "GET", tc.target, "")
		if rec.Code != tc.status || rec.Body.String() != tc.want {
			t.Errorf("%s: got %d %s, want %d %s", tc.target, rec.Code, rec.Body, tc.status, tc.want)
		}
	}
}
