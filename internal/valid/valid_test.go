package valid

import (
	"fmt"
	"testing"

	"github.com/assaykit/assay/field"
)

type inner struct {
	Name string `json:"name" validate:"required,min=2"`
}

type outer struct {
	Hours field.Nullable[int] `json:"hours" validate:"omitnil,gte=1,lte=10"`
	Score *int                `json:"score" validate:"required,gte=0,lte=5"`
	Items []inner             `json:"items" validate:"max=2,dive"`
	Tags  []string            `json:"tags" validate:"omitempty,dive,stepid"`
	Kind  string              `json:"kind" validate:"omitempty,oneof=a 'b c'"`
	Ratio float64             `json:"ratio" validate:"lte=0.5"`
	Skip  bool                `json:"-"`
}

func TestStruct(t *testing.T) {
	ok := outer{Hours: field.Null[int](), Score: new(0), Items: []inner{{"ab"}}, Tags: []string{"s1"}, Kind: "b c"}
	if es := Struct(&ok); es != nil {
		t.Fatalf("valid value refused: %v", es)
	}
	for _, tc := range []struct {
		edit func(*outer)
		want string
	}{
		{func(o *outer) { o.Hours = field.Value(0) }, "hours: greater_than_equal: Input should be greater than or equal to 1"},
		{func(o *outer) { o.Hours = field.Value(11) }, "hours: less_than_equal: Input should be less than or equal to 10"},
		{func(o *outer) { o.Score = nil }, "score: missing: Field required"},
		{func(o *outer) { o.Score = new(6) }, "score: less_than_equal: Input should be less than or equal to 5"},
		{func(o *outer) { o.Items = []inner{{"ab"}, {"x"}} }, "items[1].name: string_too_short: String should have at least 2 characters"},
		{func(o *outer) { o.Items = make([]inner, 3) }, "items: too_long: List should have at most 2 items after validation, not 3"},
		{func(o *outer) { o.Tags = []string{"1x"} }, "tags[0]: string_pattern_mismatch: String should match pattern '^[a-zA-Z][a-zA-Z0-9_]{0,39}$'"},
		{func(o *outer) { o.Kind = "c" }, "kind: literal_error: Input should be 'a' or 'b c'"},
		{func(o *outer) { o.Ratio = 0.75 }, "ratio: less_than_equal: Input should be less than or equal to 0.5"},
	} {
		v := ok
		tc.edit(&v)
		es := Struct(&v)
		if len(es) != 1 {
			t.Errorf("%s: got %v", tc.want, es)
			continue
		}
		if got := fmt.Sprintf("%s: %s: %s", es[0].Path(), es[0].Type, es[0].Msg); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
