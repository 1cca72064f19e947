package shapes

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/internal/httpjson"
)

func validationError(t *testing.T, err error) *ValidationError {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want a ValidationError, got %v", err)
	}
	return ve
}

// A hostile body makes a bounded answer: at most MaxErrors errors, the
// first ones in Pydantic's order, and no more echoed bytes than the body
// has (above MinEchoBytes).
func TestBoundedAnswers(t *testing.T) {
	t.Run("95,000 unknown keys", func(t *testing.T) {
		body := unknownKeys(95000)
		var r claims.Request
		ve := validationError(t, Decode(body, &r))
		if len(ve.Detail) != MaxErrors {
			t.Fatalf("%d errors, want %d", len(ve.Detail), MaxErrors)
		}
		for i, d := range ve.Detail {
			if d.Type != "extra_forbidden" || d.Loc[0] != "k"+strconv.Itoa(i) {
				t.Fatalf("error %d is %v %v, want extra_forbidden at k%d", i, d.Type, d.Loc, i)
			}
		}
		b, err := httpjson.Marshal(ve.WithPrefix("body"))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > len(body) {
			t.Fatalf("answer %d bytes for a %d-byte body", len(b), len(body))
		}
	})
	t.Run("the first errors in Pydantic's order", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`{`)
		for i := range 150 {
			b.WriteString(`"z` + strconv.Itoa(i) + `":0,`)
		}
		b.WriteString(`"z3":[1],"maxSources":"many","claim":1}`)
		var r claims.Request
		ve := validationError(t, Decode([]byte(b.String()), &r))
		if len(ve.Detail) != MaxErrors {
			t.Fatalf("%d errors", len(ve.Detail))
		}
		want := []string{"claim string_type", "maxSources int_parsing", "z0 extra_forbidden", "z1 extra_forbidden", "z2 extra_forbidden", "z3 extra_forbidden"}
		for i, w := range want {
			if got := ve.Detail[i].Loc[0].(string) + " " + ve.Detail[i].Type; got != w {
				t.Errorf("error %d: %s, want %s", i, got, w)
			}
		}
		if in, _ := ve.Detail[5].Input.(json.RawMessage); string(in) != "[1]" {
			t.Errorf("a repeated key's error echoes %s, want its last value [1]", in)
		}
		if last := ve.Detail[MaxErrors-1].Loc[0]; last != "z97" {
			t.Errorf("last error at %v, want z97", last)
		}
	})
	t.Run("echoes no more than the body", func(t *testing.T) {
		// The missing claim echoes the whole object and the unknown key
		// its value: FastAPI would send the value twice.
		for _, n := range []int{MinEchoBytes, 100 << 10, 200 << 10, 900 << 10} {
			body := []byte(`{"k":"` + strings.Repeat("a", n) + `"}`)
			var r claims.Request
			ve := validationError(t, Decode(body, &r))
			b, err := httpjson.Marshal(ve)
			if err != nil {
				t.Fatal(err)
			}
			if len(ve.Detail) != 2 || len(b) > len(body)+300 {
				t.Errorf("%d-byte body: %d errors, %d-byte answer", len(body), len(ve.Detail), len(b))
			}
		}
	})
	t.Run("numbers that render longer", func(t *testing.T) {
		// 1E15 renders as 1000000000000000.0: the echo is cut, not grown.
		body := []byte(`{"claim":[` + strings.TrimSuffix(strings.Repeat("1E15,", 200000), ",") + `]}`)
		var r claims.Request
		ve := validationError(t, Decode(body, &r))
		if _, omitted := ve.Detail[0].Input.(OmittedInput); !omitted {
			t.Fatalf("input %T, want OmittedInput", ve.Detail[0].Input)
		}
		b, _ := httpjson.Marshal(ve)
		if strings.Contains(string(b), `"input"`) || len(b) > 200 {
			t.Fatalf("answer %.200s", b)
		}
	})
}
