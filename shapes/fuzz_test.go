package shapes

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/assaykit/assay/internal/httpjson"
)

// wellFormed fails the test unless err is a *ValidationError whose every
// detail has a type, a loc, a message and renders as valid JSON.
func wellFormed(t *testing.T, err error) *ValidationError {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %T %v is not a *ValidationError", err, err)
	}
	if len(ve.Detail) == 0 {
		t.Fatal("empty ValidationError")
	}
	for _, d := range ve.Detail {
		if d.Type == "" || d.Msg == "" || d.Loc == nil {
			t.Fatalf("incomplete detail %+v", d)
		}
	}
	b, merr := httpjson.Marshal(ve)
	if merr != nil || !json.Valid(b) {
		t.Fatalf("detail does not render: %v %s", merr, b)
	}
	return ve
}

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{`{}`, `{"claim":"abc"}`, `[1,2]`, `{"a":`, `"\ud800"`, `{"lat":1e400}`,
		`{"asOf":"2026-01-01T00:00:00+01:00"}`, `{"steps":[{"id":"a","tool":"union"}],"output":"x"}`,
		`{"loc":["a",1,true,null]}`, `{"result":{"a":[1,{"b":null}]}}`, "\ufeff{}", `{"x":1,"x":[]}`} {
		f.Add(s, uint8(0))
	}
	for _, c := range readGoldenF(f) {
		f.Add(c.Input, uint8(len(c.Input)))
	}
}

// readGoldenF takes a sample of the golden inputs as seeds.
func readGoldenF(f *testing.F) []goldenCase {
	t := &testing.T{}
	defer func() { _ = recover() }()
	all := readGolden(t, "golden_body.jsonl.gz")
	var out []goldenCase
	for i := 0; i < len(all); i += 97 {
		out = append(out, all[i])
	}
	return out
}

// FuzzDecode decodes arbitrary input into every shape: it must never
// panic, must return nil or a well-formed *ValidationError, and a
// successful result must survive a round trip through encoding/json.
func FuzzDecode(f *testing.F) {
	fuzzSeeds(f)
	names := Names()
	f.Fuzz(func(t *testing.T, input string, pick uint8) {
		name := names[int(pick)%len(names)]
		dst, _ := New(name)
		var err error
		if isQueryShape(name) {
			err = DecodeQuery(map[string][]string{"q": {input}, "limit": {input}, "sort": {input}}, dst)
		} else {
			err = Decode([]byte(input), dst)
		}
		if err != nil {
			wellFormed(t, err)
			return
		}
		if isQueryShape(name) {
			return
		}
		b, merr := json.Marshal(dst)
		if merr != nil {
			return // an accepted "inf" or "nan" string has no JSON form
		}
		again, _ := New(name)
		if err := Decode(b, again); err != nil {
			t.Fatalf("%s: %s decoded, but its re-encoding %s fails: %v", name, input, b, err)
		}
	})
}

// FuzzJSONErrors checks the Python-compatible syntax layer against
// encoding/json: a document is rejected as json_invalid exactly when it is
// not valid JSON, the error position is a character offset inside the
// input, and the message is one of Python's.
func FuzzJSONErrors(f *testing.F) {
	fuzzSeeds(f)
	known := map[string]bool{msgExpectingValue: true, msgExtraData: true, msgPropertyName: true, msgColon: true,
		msgComma: true, msgUnterminated: true, msgControl: true, msgEscape: true, msgUEscape: true}
	f.Fuzz(func(t *testing.T, input string, _ uint8) {
		data := []byte(input)
		var dst struct {
			A any `json:"a"`
		}
		err := Decode(data, &dst)
		if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) || len(data) == 0 {
			return
		}
		var invalid *ErrorDetail
		if err != nil {
			ve := wellFormed(t, err)
			if ve.Detail[0].Type == "json_invalid" {
				invalid = &ve.Detail[0]
			}
		}
		if !utf8.Valid(data) {
			// encoding/json lets invalid UTF-8 through inside strings.
			if !errors.Is(err, ErrUnreadable) {
				t.Fatalf("invalid UTF-8 %q: %v", input, err)
			}
			return
		}
		deep := bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) > MaxDepth
		if valid := json.Valid(data); valid == (invalid != nil) && !deep {
			t.Fatalf("encoding/json says valid=%v, Decode says %v", valid, err)
		}
		if invalid == nil {
			return
		}
		pos, ok := invalid.Loc[0].(int)
		if !ok || pos < 0 || pos > utf8.RuneCount(data) {
			t.Fatalf("bad position %v for %q", invalid.Loc, input)
		}
		var ctx struct{ Error string }
		if err := json.Unmarshal(invalid.Ctx.(json.RawMessage), &ctx); err != nil ||
			!(known[ctx.Error] || errors.Is(err, ErrUnreadable) || ctx.Error == "Invalid UTF-8" || ctx.Error == "Maximum nesting depth exceeded") {
			t.Fatalf("unexpected message %q (%v)", ctx.Error, err)
		}
	})
}
