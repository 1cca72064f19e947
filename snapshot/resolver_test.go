package snapshot_test

import (
	"context"
	"testing"
	"time"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
)

// A DNS query the network drops is asked again after the attempt timeout:
// with the first query of every name dropped, a lookup under a 1.5 s budget
// succeeds with 0.3 s attempts and fails with 3 s attempts (Go's resolver
// alone waits resolv.conf's 5 s).
func TestResolverRetriesADroppedQuery(t *testing.T) {
	dns, err := snapshottest.StartDNS(map[string]string{"a.example.test": "192.0.2.7", "b.example.test": "192.0.2.8"},
		func(_ string, n int) bool { return n == 0 })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dns.Close)
	lookup := func(attempt time.Duration, host string) ([]string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		r := snapshot.NewResolver(&snapshot.ResolverOptions{AttemptTimeout: attempt, Server: dns.Addr})
		return r.LookupHost(ctx, host)
	}
	addrs, err := lookup(300*time.Millisecond, "a.example.test")
	if err != nil || len(addrs) != 1 || addrs[0] != "192.0.2.7" {
		t.Fatalf("0.3 s attempts: %v, %v", addrs, err)
	}
	if addrs, err := lookup(3*time.Second, "b.example.test"); err == nil {
		t.Fatalf("3 s attempts answered within 1.5 s although the first query was dropped: %v", addrs)
	}
	if dns.Dropped() < 2 {
		t.Errorf("the server dropped %d queries; want the first of each name", dns.Dropped())
	}
}
