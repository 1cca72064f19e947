package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/assaykit/assay/store/storetest"
)

// TestEachRawRowStreamsInIndexOrder: EachRawRow's query runs where the
// planner sorts only when no index gives the order (a search index load
// then streams rows in seq order from the first, with or without the
// table's statistics), in a transaction that leaves the connection as it
// was; an error of fn is returned as it is.
func TestEachRawRowStreamsInIndexOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mustOpen(t, storetest.MigratedPostgresURL(t))
	var got []string
	for range 2 { // the second read finds the pooled connection as it was
		if err := db.EachRawRow(ctx, `SELECT current_setting('enable_sort'), current_setting('transaction_read_only')`, nil,
			func(row [][]byte) error {
				got = append(got, string(row[0])+" "+string(row[1]))
				return nil
			}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 || got[0] != "off on" || got[1] != "off on" {
		t.Fatalf("enable_sort and transaction_read_only in EachRawRow: %q", got)
	}
	var setting string
	if err := db.QueryRow(ctx, `SELECT current_setting('enable_sort')`).Scan(&setting); err != nil || setting != "on" {
		t.Fatalf("enable_sort outside: %q %v", setting, err)
	}
	stop := errors.New("stop")
	if err := db.EachRawRow(ctx, `SELECT 1`, nil, func([][]byte) error { return stop }); err != stop {
		t.Fatalf("fn's error: %v", err)
	}
}
