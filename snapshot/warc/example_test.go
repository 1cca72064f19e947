package warc_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/snapshot/warc"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

// A snapshot's WARC export can be checked without assay: read the records
// back and compare the response payload digest with the snapshot's
// rawSha256.
func ExampleNewReader() {
	ctx := context.Background()
	page := "<p>Base Mainnet uses chain ID 8453.</p>"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	defer site.Close()
	addr := strings.TrimPrefix(site.URL, "http://")
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	records := snapshotstore.New(db)
	svc, err := snapshot.NewService(records, records, &snapshot.Options{
		HostMap: map[string]string{"docs.example.org:80": addr}, AllowAddrs: []string{addr},
		// Tests only: no DNS, and no dial off loopback.
		Resolver: snapshottest.Resolver(nil), DialControl: (&snapshottest.Tripwire{}).Control,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	s, err := svc.Capture(ctx, "http://docs.example.org/network")
	if err != nil {
		log.Fatal(err)
	}
	export, closer, err := svc.WARC(ctx, s.ID)
	if err != nil {
		log.Fatal(err)
	}
	defer closer.Close()
	var buf bytes.Buffer
	if _, err := export.WriteTo(&buf); err != nil {
		log.Fatal(err)
	}

	r := warc.NewReader(&buf)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		h := rec.Header
		digest := h.Get("WARC-Payload-Digest")
		fmt.Println(strings.TrimSpace(rec.Version + " " + h.Get("WARC-Type") + " " + h.Get("WARC-Target-URI")))
		if digest != "" {
			_, sum, err := warc.ParseDigest(digest)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println(fmt.Sprintf("%x", sum) == *s.RawSHA256, fmt.Sprintf("%x", sha256.Sum256([]byte(page))) == *s.RawSHA256)
		}
	}
	// Output:
	// WARC/1.1 warcinfo
	// WARC/1.1 request http://docs.example.org/network
	// WARC/1.1 response http://docs.example.org/network
	// true true
}
