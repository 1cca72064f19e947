package nichetest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/niche/nichemem"
	"github.com/assaykit/assay/niche/nichetest"
)

// Subscribers stands in for the subscription service wherever a
// niche.Subscribers is needed (server.NicheConfig.Subscribers).
func ExampleSubscribers() {
	var subs nichetest.Subscribers
	subs.Add("nd_test_token", niche.Subscriber{ID: "cus_1", Status: "active"})

	s, err := subs.Active(context.Background(), "nd_test_token")
	fmt.Println(s.ID, s.Status, err)
	subs.Revoke("nd_test_token")
	_, err = subs.Active(context.Background(), "nd_test_token")
	fmt.Println(errors.Is(err, niche.ErrNotSubscribed), subs.Calls())
	// Output:
	// cus_1 active <nil>
	// true 2
}

// Capturer stands in for the snapshot service that captures evidence
// pages: here one page of the demo cannot be captured, which the full
// evaluation reports (and the floor does not count).
func ExampleCapturer() {
	ctx := context.Background()
	capt := &nichetest.Capturer{Pages: map[string]string{
		"https://forum.example.com/t/1":   "<p>I lose a day a month to this.</p>",
		"https://reviews.example.org/r/2": "<p>The app forgets my parts.</p>",
		"https://jobs.example.net/j/3":    "<p>Wanted: someone to type up invoices.</p>",
	}}
	e, err := niche.New(nichemem.New(), &niche.Options{Capturer: capt})
	if err != nil {
		log.Fatal(err)
	}
	var ids []string
	for i, u := range []string{"https://forum.example.com/t/1", "https://reviews.example.org/r/2",
		"https://jobs.example.net/j/3", "https://gone.example.io/4"} {
		res, err := e.IngestSignals(ctx, []niche.SignalInput{{Kind: niche.KindComplaint, SourceURL: u, Origin: "manual",
			Title: fmt.Sprintf("Signal %d", i), ObservedAt: time.Now().Add(-time.Hour), License: "CC BY 4.0", State: niche.StateAccepted}})
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, res[0].ID)
	}
	ev, err := e.Create(ctx, niche.Op{}, niche.Draft{
		Title: "Invoices typed up at night", Problem: "Owner-operators type their invoices at night from memory.",
		Buyer: "Owner-operators", Category: "Trades", SolutionHypothesis: "Invoices made on site from photos of parts.",
		Pain: new(4), Frequency: new(4), WillingnessToPay: new(3), ReachableBuyers: new(3), Feasibility: new(4), CompetitionGap: new(2),
		EvaluationNotes: "Three pages describe the chore; one page is gone.", SignalIDs: ids, Publish: true,
		Rationale: &niche.DraftRationale{Pain: "A day a month lost to paperwork."},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, x := range ev.Evidence {
		if x.CaptureReason != nil {
			fmt.Println(x.SourceURL, x.CaptureStatus, *x.CaptureReason)
		}
	}
	fmt.Println(ev.EvidenceSummary.CapturedDemandPageCount, "of", ev.EvidenceSummary.DemandPageCount, "pages captured;", ev.Rationale.Pain)
	fmt.Println(len(capt.Held()), "captures held")
	// Output:
	// https://gone.example.io/4 failed HTTP 404 Not Found
	// 3 of 4 pages captured; A day a month lost to paperwork.
	// 4 captures held
}
