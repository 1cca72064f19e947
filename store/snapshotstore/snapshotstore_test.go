package snapshotstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/storetest"
)

// TestSnapshotServiceOnSharedDatabase: two instances (two DB handles on
// one database) share records and content; either can serve and purge
// what the other captured.
func TestSnapshotServiceOnSharedDatabase(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T) string{
		"sqlite-file": func(t *testing.T) string { return storetest.SQLitePath(t) },
		"postgres":    func(t *testing.T) string { return storetest.MigratedPostgresURL(t) },
	}
	page := "<p>Base mainnet chain id is 8453.</p>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close) // after the parallel subtests
	addr := srv.Listener.Addr().String()
	for name, dsn := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := dsn(t)
			a, b := storetest.Open(t, url, nil), storetest.Open(t, url, nil)
			newSvc := func(db *store.DB) *snapshot.Service {
				tw := &snapshottest.Tripwire{}
				st := snapshotstore.New(db)
				svc, err := snapshot.NewService(st, st, &snapshot.Options{
					HostMap:    map[string]string{"docs.example.org:80": addr},
					AllowAddrs: []string{addr}, Resolver: snapshottest.Resolver(nil), DialControl: tw.Control,
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(svc.Close)
				return svc
			}
			sa, sb := newSvc(a), newSvc(b)
			snaps, err := sa.CaptureAll(ctx, []string{"http://docs.example.org/a", "http://docs.example.org/b", "http://127.0.0.1/"})
			if err != nil {
				t.Fatal(err)
			}
			if snaps[0].Status != snapshot.StatusCaptured || snaps[2].Status != snapshot.StatusBlocked {
				t.Fatalf("statuses %s %s", snaps[0].Status, snaps[2].Status)
			}
			re, err := sb.Recheck(ctx, snaps[1].ID)
			if err != nil || !re.Contains("chain id is 8453") {
				t.Fatalf("other instance: %v %+v", err, re)
			}
			var n int
			if err := a.QueryRow(ctx, "SELECT COUNT(*) FROM snapshot_blobs").Scan(&n); err != nil || n != 1 {
				t.Fatalf("%d blobs stored for identical content (%v)", n, err)
			}
			st, err := sb.Purge(ctx, time.Now().Add(time.Hour))
			if err != nil || st.Records != 3 || st.Blobs != 1 {
				t.Fatalf("purge %+v %v", st, err)
			}
			if _, _, err := sa.Open(ctx, snaps[0].ID); !errors.Is(err, snapshot.ErrNotFound) {
				t.Fatalf("purged snapshot: %v", err)
			}
		})
	}
}
