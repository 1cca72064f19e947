package nichestore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// TestEachSearchRowReadsWhatTheScanReads: on every backend, the rows
// EachSearchRow streams (on PostgreSQL pgx's raw values, parsed by the
// store) are those the database/sql scan reads, in the same order:
// published evaluations only, every field; and an error of the caller's
// function stops the read and is returned as it is.
func TestEachSearchRowReadsWhatTheScanReads(t *testing.T) {
	for name, open := range storetest.Stores() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := nichestore.New(open(t))
			e := feedEngine(t, st)
			publishSome(t, e, "rows", 70)
			// Some withdrawn, which the load leaves out.
			page, err := st.Evaluations(ctx, "", 200)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range page {
				if i%7 == 3 {
					if _, err := e.Withdraw(ctx, r.ID, r.Revision, niche.Op{ID: fmt.Sprintf("w-%d", i)}); err != nil {
						t.Fatal(err)
					}
				}
			}
			collect := func(each func(context.Context, func(*niche.SearchRow) error) error) []string {
				var out []string
				if err := each(ctx, func(r *niche.SearchRow) error {
					out = append(out, fmt.Sprintf("%+v", *r)) // a copy: the strings are valid only during the call
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return out
			}
			got, want := collect(st.EachSearchRow), collect(st.EachScannedSearchRowT)
			if len(want) != 60 {
				t.Fatalf("the scan read %d rows, want 60", len(want))
			}
			if len(got) != len(want) {
				t.Fatalf("EachSearchRow read %d rows, the scan %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("row %d:\n got %s\nwant %s", i, got[i], want[i])
				}
			}
			stop := fmt.Errorf("stop")
			n := 0
			err = st.EachSearchRow(ctx, func(*niche.SearchRow) error {
				if n++; n == 25 {
					return stop
				}
				return nil
			})
			if err != stop || n != 25 {
				t.Fatalf("after an error at the 25th row: %v after %d rows", err, n)
			}
		})
	}
}
