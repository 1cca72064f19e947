package nichetest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/assaykit/assay/niche"
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
