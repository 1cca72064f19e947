package discovery

import (
	"context"
	"encoding/json"
	"sort"
	"testing"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
	"github.com/google/go-cmp/cmp"
)

// TestCapabilitiesListTheRoutingTable: on a server with claims, niche,
// snapshots, commerce, MCP, A2A and discovery mounted, /v1/capabilities is
// exactly the routing table: the same (id, method, path) triples, sorted
// by path then method.
func TestCapabilitiesListTheRoutingTable(t *testing.T) {
	sdb, err := sqlite.Open(context.Background(), ":memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sdb.Close() })
	records := snapshotstore.New(sdb)
	snaps, err := snapshot.NewService(records, records, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(snaps.Close)
	e := newDiscoveryEnv(t, true, func(c *Config) {
		c.Snapshots = SnapshotsConfig{Service: snaps, Prefixes: []string{DefaultClaimsPrefix}}
	})
	rec := do(t, e.srv, "GET", "/v1/capabilities", "")
	if rec.Code != 200 {
		t.Fatalf("capabilities: %d", rec.Code)
	}
	type op struct{ ID, Method, Path string }
	var got struct{ Capabilities []op }
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var want []op
	for _, r := range e.srv.Routes() {
		want = append(want, op{r.ID, r.Method, r.Path})
	}
	sort.SliceStable(want, func(i, j int) bool {
		if want[i].Path != want[j].Path {
			return want[i].Path < want[j].Path
		}
		return want[i].Method < want[j].Method
	})
	if diff := cmp.Diff(want, got.Capabilities); diff != "" {
		t.Fatalf("capabilities differ from the routing table (-want +got):\n%s", diff)
	}
	// Every service is really mounted (the comparison is not vacuous).
	for _, id := range []string{"health.live", "claims.verify.deep", "claims.verification.get", "niche.list", "discovery.openapi",
		"snapshots.get", "commerce.orders.get", "commerce.quotes.create"} {
		found := false
		for _, o := range got.Capabilities {
			found = found || o.ID == id
		}
		if !found {
			t.Errorf("capabilities lack %s", id)
		}
	}
}
