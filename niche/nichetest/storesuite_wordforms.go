package nichetest

import (
	"context"
	"slices"
	"testing"

	"github.com/assaykit/assay/niche"
)

// testNicheSearchWordForms checks that inflected and related forms of a
// word find the same evaluations at both access levels (the stores index
// the English stems of niche.Language): landlord and landlords, tenant and
// tenants, invoice, invoices and invoicing, plumber, plumbers and
// plumbing.
func testNicheSearchWordForms(t *testing.T, open StoreOpener) {
	ctx := context.Background()
	st, _ := open(t)
	e := nicheEngine(t, st, nil)
	floor := ingestFloor(t, e)
	drafts := []struct{ title, problem string }{
		{"Rent reminders for landlords", "Landlords chase tenants for late rent and the invoices go unpaid for weeks."},
		{"Tenant screening for a small landlord", "A landlord screens each tenant by hand with phone calls and paper forms."},
		{"Invoicing for plumbers", "Plumbing firms write every invoice by hand after the job is done."},
		{"Dispatch for a plumber", "A plumber on call loses jobs while driving between emergencies."},
		{"Ordering for florists", "Florists order stems by phone from three wholesalers every morning."},
	}
	ids := make([]string, len(drafts))
	for i, d := range drafts {
		dr := nicheDraft(d.title, floor)
		dr.Problem, dr.Buyer, dr.Category, dr.SolutionHypothesis = d.problem, "Owners", "Property", "A focused tool for the trade."
		dr.Publish = true
		ev, err := e.Create(ctx, niche.Op{}, dr)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = ev.ID
	}
	forms := []struct {
		words []string
		want  []int // indexes into drafts
	}{
		{[]string{"landlord", "landlords", "Landlord's"}, []int{0, 1}},
		{[]string{"tenant", "tenants"}, []int{0, 1}},
		{[]string{"invoice", "invoices", "invoicing", "invoiced"}, []int{0, 2}},
		{[]string{"plumber", "plumbers", "plumbing"}, []int{2, 3}},
		{[]string{"florist", "florists"}, []int{4}},
	}
	for _, full := range []bool{false, true} {
		for _, f := range forms {
			want := []string{}
			for _, i := range f.want {
				want = append(want, ids[i])
			}
			slices.Sort(want)
			for _, w := range f.words {
				res, err := e.Search(ctx, niche.SearchOptions{Query: w, Full: full})
				if err != nil {
					t.Fatal(err)
				}
				got := []string{}
				for _, p := range res.Previews {
					got = append(got, p.ID)
				}
				for _, ev := range res.Evaluations {
					got = append(got, ev.ID)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("full=%v: search %q found %v, want %v", full, w, got, want)
				}
			}
		}
	}
}
