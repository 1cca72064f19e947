package shapes

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/assaykit/assay/internal/valid"
)

// TestValidatorReadsEveryShape runs validator/v10 (internal/valid) on the
// zero value of every shape and of every struct they contain: a tag it
// does not know panics at first use, so a typo fails here and not in
// production.
func TestValidatorReadsEveryShape(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var visit func(sp *structPlan)
	visit = func(sp *structPlan) {
		if seen[sp.typ] {
			return
		}
		seen[sp.typ] = true
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("validator panics on %v: %v", sp.typ, r)
				}
			}()
			valid.Struct(reflect.New(sp.typ).Interface())
		}()
		for _, f := range sp.fields {
			for n := f.node; n != nil; n = n.elem {
				if n.st != nil {
					visit(n.st)
				}
			}
		}
	}
	for _, name := range Names() {
		v, _ := New(name)
		sp, err := planFor(reflect.TypeOf(v).Elem())
		if err != nil {
			t.Fatal(err)
		}
		visit(sp)
	}
	if len(seen) < len(Names()) {
		t.Fatalf("only %d struct types", len(seen))
	}
}

// TestValidatorAgreesWithDecode checks the two readings of the tags of the
// shapes that are domain types (validated in Go by their engines, in JSON
// by Decode): on boundary fixtures derived from their schemas (min−1,
// min, max, max+1, enum counter-examples, missing required keys), a JSON
// document decoded by Decode and the same document read by encoding/json
// and checked by validator/v10 are accepted and refused alike, and a
// refusal names the same field with the same error type and message.
// Left out are what only JSON can say: wrong types and unknown keys
// (encoding/json refuses or drops them), and the zero value of a field
// with a default (unset in Go, so the default applies).
func TestValidatorAgreesWithDecode(t *testing.T) {
	draft := `{"title":"Invoice chasing for plumbers","problem":"Small plumbing firms lose weeks of cash flow chasing unpaid invoices by phone.","buyer":"Owner of a plumbing firm","category":"trades","solution_hypothesis":"Automated polite reminders with payment links.","pain":0,"frequency":4,"willingness_to_pay":2,"reachable_buyers":3,"feasibility":3,"competition_gap":5,"evaluation_notes":"Three forum threads and two reviews describe the same pain.","signal_ids":["sig_00000000000000000000000000000001"],"rationale":{"pain":"Owners describe it every week.","competition_gap":"Incumbents are generic suites."}}`
	bases := map[string][]string{
		"ClaimVerificationRequest": {`{"claim":"Base mainnet uses chain ID 8453."}`,
			`{"claim":"abc","asOf":"2026-01-02","jurisdiction":"EU","freshnessHours":24,"sourcePolicy":"official_only","minimumSources":1,"maxSources":2,"allowedDomains":["who.int"],"blockedDomains":[],"includeConflicts":false,"language":"de"}`,
			`{"claim":"abc","freshnessHours":null}`},
		"NicheDraft":             {draft},
		"NicheListQuery":         {`{"limit":1}`, `{"q":"abc","category":"Trades","sort":"recent","limit":100}`},
		"NicheSearchQuery":       {`{"q":"dental clinics","limit":5}`, `{"q":"abc","category":"Trades","sort":"score","limit":20}`},
		"NicheModerationRequest": {`{"state":"accepted","note":"checked","actor":"ana"}`},
	}
	agreed, refused := 0, 0
	for name, docs := range bases {
		for _, base := range docs {
			for _, f := range boundaryFixtures(t, name, base) {
				b, _ := json.Marshal(f.doc)
				ok, bad := agree(t, name, b)
				if ok {
					agreed++
				}
				if bad {
					refused++
				}
			}
		}
	}
	if agreed < 100 || refused < 40 {
		t.Fatalf("only %d fixtures agree (%d refused by both)", agreed, refused)
	}
	t.Logf("%d fixtures agree, %d refused by both", agreed, refused)
}

// agree checks one document of the named shape on both paths and reports
// whether it was compared and whether both refused it.
func agree(t *testing.T, name string, b []byte) (compared, refused bool) {
	t.Helper()
	dst, _ := New(name)
	decodeErr := Decode(b, dst)
	goVal, _ := New(name)
	if json.Unmarshal(b, goVal) != nil {
		return false, false // a wrong type: JSON only
	}
	goErrs := valid.Struct(goVal)
	var ve *ValidationError
	switch {
	case decodeErr == nil && goErrs == nil:
		return true, false
	case decodeErr == nil:
		t.Errorf("%s %s: Decode accepts, validator refuses: %v", name, b, goErrs)
		return false, false
	case !asValidationError(decodeErr, &ve):
		t.Fatalf("%s %s: %v", name, b, decodeErr)
	}
	first := ve.Detail[0]
	if goErrs == nil {
		if first.Type == "extra_forbidden" || unsetInGo(goVal, first.Loc) {
			return false, false
		}
		t.Errorf("%s %s: Decode refuses (%s), validator accepts", name, b, ve)
		return false, false
	}
	g := goErrs[0]
	if fmt.Sprint(g.Loc) != fmt.Sprint(first.Loc) || g.Type != first.Type || g.Msg != first.Msg {
		t.Errorf("%s %s:\nDecode    %v %s %q\nvalidator %v %s %q", name, b, first.Loc, first.Type, first.Msg, g.Loc, g.Type, g.Msg)
	}
	return true, true
}

func asValidationError(err error, ve **ValidationError) bool {
	v, ok := err.(*ValidationError)
	*ve = v
	return ok
}

// unsetInGo reports whether the top-level field at loc holds its zero
// value and allows it (omitempty): unset in Go, where the default applies.
func unsetInGo(v any, loc []any) bool {
	if len(loc) == 0 {
		return false
	}
	name, _ := loc[0].(string)
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		sf := rv.Type().Field(i)
		if n, _, _ := strings.Cut(sf.Tag.Get("json"), ","); n == name {
			return rv.Field(i).IsZero() && strings.Contains(sf.Tag.Get("validate"), "omitempty")
		}
	}
	return false
}
