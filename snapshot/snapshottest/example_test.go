package snapshottest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
	"github.com/assaykit/assay/snapshot/snapshottest"
)

// A test builds the snapshot service on in-memory stores, answers DNS from
// a table, and installs the tripwire so that nothing can leave the machine
// even if the capturer's own checks were broken.
func ExampleTripwire() {
	ctx := context.Background()
	var wire snapshottest.Tripwire
	svc, err := snapshot.NewService(snapshotmem.New(), snapshotmem.NewBlobs(nil), &snapshot.Options{
		Resolver: snapshottest.Resolver(map[string][]string{
			"www.example.com":  {"93.184.215.14"}, // public: passes the capturer, stopped by the tripwire before connect
			"intranet.example": {"10.1.2.3"},      // private: refused by the capturer itself
		}),
		DialControl: wire.Control,
		Retries:     -1,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	snaps, err := svc.CaptureAll(ctx, []string{"http://www.example.com/", "http://intranet.example/", "http://unknown.example/"})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range snaps {
		fmt.Println(s.Status, *s.FailureReason)
	}
	fmt.Println(wire.Denied())
	// Output:
	// failed connection failed: snapshottest: tripwire refused a non-loopback dial: 93.184.215.14:80
	// blocked address 10.1.2.3 is private (10.0.0.0/8)
	// failed DNS lookup failed for unknown.example: no such host
	// [93.184.215.14:80]
}
