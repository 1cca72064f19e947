package shapes

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/assaykit/assay/internal/httpjson"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// goldenCase is one line of the files shapes/testdata/gen/gen.py writes
// with Pydantic 2 and Python's json module.
type goldenCase struct {
	Shape     string            `json:"shape"`
	Input     string            `json:"input"`
	Query     [][2]string       `json:"query"`
	RawQuery  *string           `json:"rawQuery"` // bytes as Latin-1 characters
	Errors    []json.RawMessage `json:"errors"`
	Value     json.RawMessage   `json:"value"`
	Deviation string            `json:"deviation"`
}

// golden holds the cases of each golden file, read once: three tests read
// the 1 MB body file (no test changes the cases it is given).
var golden struct {
	sync.Mutex
	cases map[string][]goldenCase
}

// readGolden returns the cases of the named file under testdata.
func readGolden(t *testing.T, name string) []goldenCase {
	t.Helper()
	golden.Lock()
	defer golden.Unlock()
	if cs, ok := golden.cases[name]; ok {
		return cs
	}
	cs := parseGolden(t, name)
	if golden.cases == nil {
		golden.cases = map[string][]goldenCase{}
	}
	golden.cases[name] = cs
	return cs
}

func parseGolden(t *testing.T, name string) []goldenCase {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenCase
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var c goldenCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// errorLines renders every error as FastAPI would (compact JSON).
func errorLines(t *testing.T, ve *ValidationError) []string {
	t.Helper()
	out := make([]string, len(ve.Detail))
	for i, d := range ve.Detail {
		b, err := httpjson.Marshal(d)
		if err != nil {
			t.Fatalf("marshal %+v: %v", d, err)
		}
		out[i] = string(b)
	}
	return out
}

func rawLines(rs []json.RawMessage) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

// generic decodes JSON into maps and float64s, dropping null members, so
// that a Go value and a Python dump compare regardless of number spelling
// and omitempty.
func generic(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return dropNulls(v)
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for i := range x {
			x[i] = dropNulls(x[i])
		}
	}
	return v
}

func checkOutcome(t *testing.T, c goldenCase, dst any, err error) bool {
	t.Helper()
	if c.Deviation == "int64" {
		// Pydantic accepts the integer beyond int64; shapes answers
		// int_parsing_size for it (see the package documentation).
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s %q: want int_parsing_size (documented deviation), got %v", c.Shape, c.Input, err)
			return false
		}
		for _, d := range ve.Detail {
			if d.Type != "int_parsing_size" {
				t.Errorf("%s %q: want only int_parsing_size (documented deviation), got %s", c.Shape, c.Input, errorLines(t, ve))
				return false
			}
		}
		return true
	}
	if c.Errors == nil {
		if err != nil {
			t.Errorf("%s %q %v: want success, got %v", c.Shape, c.Input, c.Query, err)
			return false
		}
		got, _ := json.Marshal(dst)
		want, have := generic(t, c.Value), generic(t, got)
		if reflect.DeepEqual(want, have) {
			return true // the common case, without cmp's cost (most of the suite's time)
		}
		if diff := cmp.Diff(want, have, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("%s %q %v: value (-pydantic +go):\n%s", c.Shape, c.Input, c.Query, diff)
			return false
		}
		return true
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("%s %q %v: want errors %s, got %v", c.Shape, c.Input, c.Query, rawLines(c.Errors), err)
		return false
	}
	want, have := rawLines(c.Errors), errorLines(t, ve)
	if slices.Equal(want, have) {
		return true
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("%s %q %v: errors (-pydantic +go):\n%s", c.Shape, c.Input, c.Query, diff)
		return false
	}
	return true
}

// TestGoldenBody compares Decode with Pydantic 2 on every generated case:
// same accept/reject, same error list (type, loc, msg, input, ctx, order),
// same decoded values.
func TestGoldenBody(t *testing.T) {
	cases := readGolden(t, "golden_body.jsonl.gz")
	if len(cases) < 5000 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	failed, shapes := 0, map[string]int{}
	for _, c := range cases {
		dst, ok := New(c.Shape)
		if !ok {
			t.Fatalf("unknown shape %q", c.Shape)
		}
		shapes[c.Shape]++
		if !checkOutcome(t, c, dst, Decode([]byte(c.Input), dst)) {
			if failed++; failed > 40 {
				t.Fatalf("too many failures (of %d cases)", len(cases))
			}
		}
	}
	for _, n := range Names() {
		if shapes[n] == 0 && !isQueryShape(n) {
			t.Errorf("no golden case for %s", n)
		}
	}
	t.Logf("%d cases over %d shapes", len(cases), len(shapes))
}

// TestGoldenQuery compares DecodeQuery with FastAPI's query validation.
func TestGoldenQuery(t *testing.T) {
	cases := readGolden(t, "golden_query.jsonl.gz")
	failed := 0
	for _, c := range cases {
		dst, ok := New(c.Shape)
		if !ok {
			t.Fatalf("unknown shape %q", c.Shape)
		}
		vals := url.Values{}
		for _, kv := range c.Query {
			vals.Add(kv[0], kv[1])
		}
		if c.RawQuery != nil {
			raw := make([]byte, 0, len(*c.RawQuery))
			for _, r := range *c.RawQuery {
				raw = append(raw, byte(r)) // Latin-1
			}
			vals = ParseQuery(string(raw))
		}
		if !checkOutcome(t, c, dst, DecodeQuery(vals, dst)) {
			if failed++; failed > 40 {
				t.Fatalf("too many failures (of %d cases)", len(cases))
			}
		}
	}
	t.Logf("%d cases", len(cases))
}

// isQueryShape reports whether the named shape holds query parameters
// (its fields carry query tags): the query golden file covers those.
func isQueryShape(name string) bool {
	v, ok := New(name)
	if !ok {
		return false
	}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		if _, ok := t.Field(i).Tag.Lookup("query"); ok {
			return true
		}
	}
	return false
}
