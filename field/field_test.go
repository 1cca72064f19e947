package field_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/assaykit/assay/field"
)

func TestNullable(t *testing.T) {
	type req struct {
		Hours field.Nullable[int] `json:"hours,omitzero"`
	}
	for _, tc := range []struct {
		in, out       string
		valid, isNull bool
		v             int
	}{
		{`{}`, `{}`, false, false, 0},
		{`{"hours":null}`, `{"hours":null}`, false, true, 0},
		{`{"hours":0}`, `{"hours":0}`, true, false, 0},
		{`{"hours":24}`, `{"hours":24}`, true, false, 24},
	} {
		var r req
		if err := json.Unmarshal([]byte(tc.in), &r); err != nil {
			t.Fatal(err)
		}
		v, ok := r.Hours.Get()
		if ok != tc.valid || r.Hours.IsNull() != tc.isNull || v != tc.v || r.Hours.IsZero() != (tc.in == `{}`) {
			t.Errorf("%s: %+v", tc.in, r.Hours)
		}
		b, err := json.Marshal(r)
		if err != nil || string(b) != tc.out {
			t.Errorf("%s: marshals to %s (%v)", tc.in, b, err)
		}
	}
	if err := json.Unmarshal([]byte(`{"hours":"x"}`), new(req)); err == nil {
		t.Error("a string accepted for an int")
	}
	if n := field.Null[int](); !n.IsNull() || n.Valid {
		t.Errorf("Null: %+v", n)
	}
	if v, ok := field.Value(7).Get(); !ok || v != 7 {
		t.Errorf("Value(7): %v %v", v, ok)
	}
}

func TestDate(t *testing.T) {
	d := field.DateOf(time.Date(2026, 3, 4, 23, 0, 0, 0, time.UTC))
	if d.String() != "2026-03-04" || !d.Time().Equal(time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)) {
		t.Fatal(d)
	}
	b, _ := json.Marshal(d)
	var back field.Date
	if err := json.Unmarshal(b, &back); err != nil || back != d {
		t.Fatalf("%s: %v %v", b, back, err)
	}
	for _, bad := range []string{`20260304`, `"2026-13-01"`, `"x"`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
