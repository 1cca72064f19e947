package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/anydb"
	"github.com/assaykit/assay/store/nichestore"
	"github.com/assaykit/assay/store/storetest"
)

// TestNicheReindexOnLanguageChange opens a database indexed without
// stemming with the English rules: the index is rebuilt at Open, so a
// singular finds the plural, and the words counts follow.
func TestNicheReindexOnLanguageChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, dsn := range storetest.Backends() {
		if name == "sqlite-mem" {
			continue // closing it loses it
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := dsn(t)
			search := func(db *nichestore.Store, lang niche.Language, raw string) int {
				t.Helper()
				cands, _, err := db.SearchCandidates(ctx, niche.CandidateQuery{Query: lang.ParseQuery(raw), Limit: 10, Full: true})
				if err != nil {
					t.Fatal(err)
				}
				return len(cands)
			}
			plainDB := storetest.Open(t, url, &store.Options{SearchLanguage: niche.NoStemming})
			plain := nichestore.New(plainDB)
			recs := []niche.Record{
				benchRecord(1, "Rent reminders for landlords", "Landlords chase tenants every month.", "A reminder tool."),
				benchRecord(2, "Tenant screening", "A landlord screens each tenant by hand.", "A screening tool."),
			}
			if err := plain.BulkLoadNiche(ctx, nil, recs, 10); err != nil {
				t.Fatal(err)
			}
			if n := search(plain, niche.NoStemming, "landlord"); n != 1 {
				t.Fatalf("without stemming landlord found %d, want 1", n)
			}
			if _, err := niche.New(plain, nil); !errors.Is(err, niche.ErrLanguage) {
				t.Fatalf("an English engine over a store without stemming: %v, want ErrLanguage", err)
			}
			plainDB.Close()
			raw := storetest.Open(t, url, nil)
			db := nichestore.New(raw)
			if got := db.SearchLanguage(); got != niche.English {
				t.Fatalf("SearchLanguage %q", got)
			}
			for _, q := range []string{"landlord", "landlords", "tenant", "tenants"} {
				if n := search(db, niche.English, q); n != 2 {
					t.Errorf("after reindexing %q found %d, want 2", q, n)
				}
			}
			docs := storedTerms(t, raw)
			if docs[""] != 2 || docs["landlord"] != 2 || docs["landlords"] != 0 {
				t.Errorf("term counts %v, want landlord in 2 of 2", docs)
			}
		})
	}
}

// TestNicheReindexConcurrentOpen: instances starting together on a
// PostgreSQL database indexed in another language all open (they reindex
// one at a time under the migrations' advisory lock; a later one finds the
// language recorded).
func TestNicheReindexConcurrentOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	plainDB := storetest.Open(t, url, &store.Options{SearchLanguage: niche.NoStemming})
	plain := nichestore.New(plainDB)
	var recs []niche.Record
	for i := 1; i <= 50; i++ {
		recs = append(recs, benchRecord(i, fmt.Sprintf("Rent reminders for landlords %d", i), "Landlords chase tenants every month.", "A reminder tool."))
	}
	if err := plain.BulkLoadNiche(ctx, nil, recs, 10); err != nil {
		t.Fatal(err)
	}
	plainDB.Close()
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			db, err := anydb.Open(ctx, url, nil)
			if err == nil {
				err = db.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("open while another instance reindexes: %v", err)
		}
	}
}
