package shapes

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/google/go-cmp/cmp"
)

func render(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return "ok"
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("not a ValidationError: %v", err)
	}
	b, merr := httpjson.Marshal(ve)
	if merr != nil {
		t.Fatal(merr)
	}
	return string(b)
}

// TestDecodeChoices pins the behaviour Pydantic cannot arbitrate (see the
// package documentation).
func TestDecodeChoices(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"NaN literal", `{"claim":"abc","maxSources":NaN}`,
			`{"detail":[{"type":"json_invalid","loc":[28],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}`},
		{"-Infinity literal", `{"claim":"abc","maxSources":-Infinity}`,
			`{"detail":[{"type":"json_invalid","loc":[28],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}`},
		{"big int with a bound", `{"claim":"abc","maxSources":123456789012345678901234567890}`,
			`{"detail":[{"type":"less_than_equal","loc":["maxSources"],"msg":"Input should be less than or equal to 20","input":123456789012345678901234567890,"ctx":{"le":20}}]}`},
		{"duplicate keys: last wins", `{"claim":5,"claim":"abc","maxSources":0,"maxSources":3}`, "ok"},
		{"duplicate keys: errors of the last", `{"claim":"abc","claim":5}`,
			`{"detail":[{"type":"string_type","loc":["claim"],"msg":"Input should be a valid string","input":5}]}`},
		{"duplicate extra key", `{"claim":"abc","z":1,"y":2,"z":[3]}`,
			`{"detail":[{"type":"extra_forbidden","loc":["z"],"msg":"Extra inputs are not permitted","input":[3]},{"type":"extra_forbidden","loc":["y"],"msg":"Extra inputs are not permitted","input":2}]}`},
		{"escaped key", `{"cl\u0061im":"abc"}`, "ok"},
		{"lone surrogate in a constrained string", `{"claim":"ab\ud800"}`,
			`{"detail":[{"type":"string_unicode","loc":["claim"],"msg":"Input should be a valid string, unable to parse raw data as a unicode string","input":"ab\ud800"}]}`},
		{"lone surrogate in an unknown key", `{"claim":5,"z\udc00":1,"y":2}`,
			`{"detail":[{"type":"string_unicode","loc":[],"msg":"Input should be a valid string, unable to parse raw data as a unicode string","input":"z\udc00"}]}`},
		{"surrogate pair is one character", `{"claim":"a\ud83d\ude00"}`,
			`{"detail":[{"type":"string_too_short","loc":["claim"],"msg":"String should have at least 3 characters","input":"a😀","ctx":{"min_length":3}}]}`},
		{"float input echoed as Python writes it", `{"claim":"abc","maxSources":1E2}`,
			`{"detail":[{"type":"less_than_equal","loc":["maxSources"],"msg":"Input should be less than or equal to 20","input":100.0,"ctx":{"le":20}}]}`},
		{"missing echoes the object", `{"x" : [1 , 2.50]}`,
			`{"detail":[{"type":"missing","loc":["claim"],"msg":"Field required","input":{"x":[1,2.5]}},{"type":"extra_forbidden","loc":["x"],"msg":"Extra inputs are not permitted","input":[1,2.5]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r claims.Request
			if got := render(t, Decode([]byte(tc.in), &r)); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestDecodeUnreadable(t *testing.T) {
	for _, in := range []string{"{\"claim\":\"\xff\"}", strings.Repeat("[", MaxDepth+1), `{"claim":"abc","allowedDomains":` + strings.Repeat("[", MaxDepth) + `]}`} {
		var r claims.Request
		err := Decode([]byte(in), &r)
		if !errors.Is(err, ErrUnreadable) {
			t.Errorf("%.40q: %v does not wrap ErrUnreadable", in, err)
		}
	}
	var r claims.Request
	if err := Decode([]byte(`{"claim":"abc"}`), &r); errors.Is(err, ErrUnreadable) || err != nil {
		t.Fatal(err)
	}
}

func TestDecodeDefaults(t *testing.T) {
	var r ExploreRequest
	r.Query = "stale"
	if err := Decode([]byte(`{"lat":"1.5","lon":2,"photoStyles":null}`), &r); err != nil {
		t.Fatal(err)
	}
	want := ExploreRequest{}
	want.SetDefaults()
	want.Lat, want.Lon = 1.5, 2
	if diff := cmp.Diff(want, r); diff != "" {
		t.Fatal(diff)
	}
	var c claims.Request
	if err := Decode([]byte(`{"claim":"abc","freshnessHours":null,"asOf":"2026-03-04T00:00:00Z"}`), &c); err != nil {
		t.Fatal(err)
	}
	if !c.FreshnessHours.IsNull() || c.AsOf == nil || c.AsOf.String() != "2026-03-04" || c.MaxSources != 8 {
		t.Fatalf("%+v", c)
	}
}

func TestAvatarImageBound(t *testing.T) {
	img := strings.Repeat("a", 28000000)
	var a AvatarUpload
	if err := Decode([]byte(`{"name":"me","image":"`+img+`"}`), &a); err != nil || len(a.Image) != 28000000 {
		t.Fatalf("at the bound: %v", err)
	}
	err := Decode([]byte(`{"name":"me","image":"`+img+`a"}`), &a)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Detail) != 1 {
		t.Fatalf("past the bound: %v", err)
	}
	// Pydantic 2.13 (shapes/testdata/gen/models.py AvatarUpload) answers
	// this with the 28,000,001-character string as input; Decode leaves
	// the input out (longer than MaxEchoBytes).
	got, err := httpjson.Marshal(ve.Detail[0])
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"type":"string_too_long","loc":["image"],"msg":"String should have at most 28000000 characters","ctx":{"max_length":28000000}}`
	if string(got) != want {
		t.Fatalf("past the bound:\n got %s\nwant %s", got, want)
	}
}

// A shape another engineer adds in its own file: any tagged struct works.
type testOrderQuery struct {
	Status string   `json:"status" validate:"required,oneof=open 'on hold' closed"`
	Limit  int      `json:"limit" validate:"min=1,max=50"`
	Tags   []string `json:"tags" validate:"omitnil,max=2,dive,min=2"`
	Score  *float64 `json:"score" validate:"omitnil,gt=0,lt=1"`
}

func (q *testOrderQuery) SetDefaults() { *q = testOrderQuery{Limit: 10} }

func TestDecodeAnyTaggedStruct(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"status":"on hold"}`, "ok"},
		{`{"status":"x","limit":51,"tags":["a"],"score":1}`, `{"detail":[` +
			`{"type":"literal_error","loc":["status"],"msg":"Input should be 'open', 'on hold' or 'closed'","input":"x","ctx":{"expected":"'open', 'on hold' or 'closed'"}},` +
			`{"type":"less_than_equal","loc":["limit"],"msg":"Input should be less than or equal to 50","input":51,"ctx":{"le":50}},` +
			`{"type":"string_too_short","loc":["tags",0],"msg":"String should have at least 2 characters","input":"a","ctx":{"min_length":2}},` +
			`{"type":"less_than","loc":["score"],"msg":"Input should be less than 1","input":1,"ctx":{"lt":1.0}}]}`},
	} {
		var q testOrderQuery
		if got := render(t, Decode([]byte(tc.in), &q)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	var q testOrderQuery
	if err := DecodeQuery(map[string][]string{"status": {"open"}, "tags": {"ab", "cd"}, "limit": {"7"}}, &q); err != nil || q.Limit != 7 || len(q.Tags) != 2 {
		t.Fatalf("%v %+v", err, q)
	}
}

func TestBadPlans(t *testing.T) {
	type badTag struct {
		A string `json:"a" validate:"required,nosuchtag"`
	}
	type badDive struct {
		A string `json:"a" validate:"dive,min=1"`
	}
	type badType struct {
		A chan int `json:"a"`
	}
	for _, dst := range []any{&badTag{}, &badDive{}, &badType{}, badTag{}, nil, new(int)} {
		err := Decode([]byte(`{}`), dst)
		var ve *ValidationError
		if err == nil || errors.As(err, &ve) {
			t.Errorf("%T: want a programming error, got %v", dst, err)
		}
	}
}

func TestNewAndNames(t *testing.T) {
	names := Names()
	// 40 shapes of the documents, 2 niche query shapes, 11 of our own routes.
	if len(names) != 53 {
		t.Errorf("%d names", len(names))
	}
	for _, n := range names {
		v, ok := New(n)
		if !ok || v == nil {
			t.Fatalf("New(%q)", n)
		}
		if _, err := planFor(reflect.TypeOf(v).Elem()); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, ok := New("Nope"); ok {
		t.Error("New accepted an unknown name")
	}
	v, _ := New("HTTPValidationError")
	if _, ok := v.(*ValidationError); !ok {
		t.Errorf("HTTPValidationError is %T", v)
	}
	if err := Decode([]byte(`{"detail":[{"type":"missing","loc":["body",0],"msg":"Field required","input":null}]}`), v); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(v)
	if want := `{"detail":[{"type":"missing","loc":["body",0],"msg":"Field required","input":null}]}`; string(got) != want {
		t.Errorf("round trip %s", got)
	}
}
