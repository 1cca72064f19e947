package snapshot_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

// Normalize is the documented, versioned algorithm behind
// normalizedSha256: anyone can recompute the hash from the stored bytes.
func ExampleNormalize() {
	body := []byte("<p>Hello,&nbsp;<b>wor</b>ld!</p><script>x()</script><p>Caf&eacute;</p>")
	n := snapshot.Normalize(body, "text/html; charset=utf-8")
	fmt.Printf("%q\n", n.Text)
	fmt.Println(n.SHA256)
	fmt.Println(n.Version, n.Charset)

	fmt.Println(snapshot.Normalize([]byte("%PDF-1.7"), "application/pdf") == nil)
	// Output:
	// "Hello, world! Café"
	// 4aafa666911d0d2c1673e9865785cc3a83cfcba20f33dc4c56fbff7fe35710a0
	// assay-norm/1 utf-8
	// true
}

// Excerpts are matched tolerantly where typesetting varies and strictly
// where meaning lives: numbers and words are whole tokens.
func ExampleMatcher() {
	m := snapshot.NewMatcher("Base Mainnet uses chain ID 8453. Its “native” gas token is ETH — not USDC.")
	for _, excerpt := range []string{
		"base mainnet uses chain id 8453",          // case and punctuation
		`its "native" gas token is ETH - not USDC`, // quotes and dashes
		"Base Mainnet … chain ID 8453",             // an ellipsis is a gap
		"chain ID 845",                             // not a whole number
		"its native gas token is USDC",             // "not" cannot vanish
	} {
		fmt.Println(m.Contains(excerpt), excerpt)
	}
	// Output:
	// true base mainnet uses chain id 8453
	// true its "native" gas token is ETH - not USDC
	// true Base Mainnet … chain ID 8453
	// false chain ID 845
	// false its native gas token is USDC
}

// A Service captures a URL safely, stores the record and the bytes, and can
// re-check them later. Captures may only reach the public web; here a
// loopback test server stands in for docs.example.org through HostMap, and
// AllowAddrs lets that one address past the loopback refusal. A cloud
// metadata address is refused as any private address would be.
func ExampleNewService() {
	ctx := context.Background()
	page := "<html><title>Network</title><body><p>Base Mainnet uses chain ID 8453.</p></body></html>"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	defer site.Close()
	addr := strings.TrimPrefix(site.URL, "http://")

	db, err := sqlite.Open(ctx, ":memory:", nil) // records, and (db is a BlobStore too) content
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	records := snapshotstore.New(db)
	svc, err := snapshot.NewService(records, records, &snapshot.Options{
		HostMap:    map[string]string{"docs.example.org:80": addr},
		AllowAddrs: []string{addr},
		// Tests only: no DNS, and no dial off loopback. Leave unset in
		// production.
		Resolver:    snapshottest.Resolver(nil),
		DialControl: (&snapshottest.Tripwire{}).Control,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()

	snaps, err := svc.CaptureAll(ctx, []string{"http://docs.example.org/network", "http://169.254.169.254/latest/meta-data/"})
	if err != nil {
		log.Fatal(err)
	}
	s := snaps[0]
	fmt.Println(s.Status, *s.HTTPStatus, *s.ContentType, *s.ContentLength)
	fmt.Println(*s.RawSHA256 == snapshot.RawSHA256([]byte(page)))
	fmt.Println(*s.NormalizedSHA256 == snapshot.Normalize([]byte(page), *s.ContentType).SHA256)
	fmt.Println(s.Contains("Base mainnet uses chain ID 8453"))
	fmt.Println(snaps[1].Status, *snaps[1].FailureReason)

	// Stored records carry no text; Recheck re-hashes the stored bytes and
	// restores it.
	stored, err := svc.Get(ctx, s.ID)
	if err != nil {
		log.Fatal(err)
	}
	rechecked, err := svc.Recheck(ctx, s.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(stored.Contains("chain ID 8453"), rechecked.Contains("chain ID 8453"))
	// Output:
	// captured 200 text/html; charset=utf-8 87
	// true
	// true
	// true
	// blocked address 169.254.169.254 is link-local / cloud metadata (169.254.0.0/16)
	// false true
}
