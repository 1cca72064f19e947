package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/claimstest"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/snapshot/warc"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/paymentstore"
)

const xssPage = `<html><body><script>alert(document.cookie)</script><svg onload="alert(1)"></svg><p>Chain id 8453</p></body></html>`

// snapshotServer captures a few pages from a loopback corpus and returns a
// server handler (no paywall) plus the records.
func snapshotServer(t *testing.T) (http.Handler, map[string]*snapshot.Snapshot) {
	t.Helper()
	svc, out := snapshotService(t)
	s, err := New(Config{Snapshots: SnapshotsConfig{Service: svc, Prefixes: []string{"/claim-verification"}}})
	if err != nil {
		t.Fatal(err)
	}
	return s, out
}

// snapshotService captures a few pages from a loopback corpus and returns
// the service holding them plus the records, by page name.
func snapshotService(t *testing.T) (*snapshot.Service, map[string]*snapshot.Snapshot) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/xss", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=windows-1252")
		io.WriteString(w, xssPage)
	})
	mux.HandleFunc("/doc.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		io.WriteString(w, "%PDF-1.7 not really")
	})
	mux.HandleFunc("/svg", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xhtml+xml")
		io.WriteString(w, `<html xmlns="http://www.w3.org/1999/xhtml"><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/></html>`)
	})
	mux.HandleFunc("/gone", http.NotFound)
	corpus := httptest.NewServer(mux)
	t.Cleanup(corpus.Close)
	addr := corpus.Listener.Addr().String()
	tw := &snapshottest.Tripwire{}
	svc, err := snapshot.NewService(snapshotmem.New(), snapshotmem.NewBlobs(nil), &snapshot.Options{
		HostMap:    map[string]string{"docs.example.org:80": addr},
		AllowAddrs: []string{addr}, Resolver: snapshottest.Resolver(nil), DialControl: tw.Control,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	names := []string{"xss", "doc.pdf", "svg", "gone"}
	var urls []string
	for _, n := range names {
		urls = append(urls, "http://docs.example.org/"+n)
	}
	snaps, err := svc.CaptureAll(context.Background(), urls)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*snapshot.Snapshot{}
	for i, n := range names {
		out[n] = snaps[i]
	}
	return svc, out
}

// TestSnapshotRetrievalPublicWhenPaid: with payments on (the 402 gate in
// front of the paid routes), a snapshot's metadata, content and WARC
// export still answer without any credential, under the root and the
// service prefix, and nothing is charged for them.
func TestSnapshotRetrievalPublicWhenPaid(t *testing.T) {
	ctx := context.Background()
	svc, snaps := snapshotService(t)
	db := emptyDB.Open(t, nil)
	keys, err := payment.LoadKeyring(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	proc := &gatetest.Processor{}
	gate, err := httpgate.New(proc, paymentstore.New(db), &httpgate.Options{PublicBaseURL: "https://api.example.test", ReadCredential: gatetest.ReadCredential,
		CashierOptions: payment.CashierOptions{Keys: keys}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := claimstest.LoadFixture("confirmed")
	if err != nil {
		t.Fatal(err)
	}
	engine, err := claims.New(f.Provider(), claimsstore.New(db), f.Snapshotter(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{
		Paywall:   gate,
		Claims:    ClaimsConfig{Engine: engine},
		Snapshots: SnapshotsConfig{Service: svc, Prefixes: []string{"/claim-verification"}},
		Commerce:  CommerceConfig{Cashier: gate.Cashier()},
	})
	if err != nil {
		t.Fatal(err)
	}

	// Payments are on: a paid route without a credential is challenged.
	if rec := do(t, h, "POST", "/claim-verification/v1/claims/verify/quick", goodBody); rec.Code != http.StatusPaymentRequired {
		t.Fatalf("paid route without a credential: %d %s", rec.Code, rec.Body)
	}
	challenges := len(proc.Challenges())

	x := snaps["xss"]
	for _, prefix := range []string{"", "/claim-verification"} {
		base := prefix + "/v1/url-snapshots/" + x.ID
		rec := do(t, h, "GET", base, "")
		var md map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &md)
		if rec.Code != 200 || md["snapshotId"] != x.ID || md["rawSha256"] != *x.RawSHA256 {
			t.Fatalf("%s: %d %s", base, rec.Code, rec.Body)
		}
		rec = do(t, h, "GET", base+"/content", "")
		if sum := sha256.Sum256(rec.Body.Bytes()); rec.Code != 200 || hex.EncodeToString(sum[:]) != *x.RawSHA256 {
			t.Fatalf("%s/content: %d", base, rec.Code)
		}
		rec = do(t, h, "GET", base+"/warc", "")
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/warc" {
			t.Fatalf("%s/warc: %d %s", base, rec.Code, rec.Body)
		}
	}
	if n := len(proc.Challenges()); n != challenges || proc.TotalSettled() != 0 {
		t.Fatalf("snapshot retrieval was charged: %d more challenges, %d settlements", n-challenges, proc.TotalSettled())
	}
}

func TestSnapshotMetadata(t *testing.T) {
	h, snaps := snapshotServer(t)
	x := snaps["xss"]
	for _, prefix := range []string{"", "/claim-verification"} {
		// No credentials of any kind: retrieval is public by design.
		rec := do(t, h, "GET", prefix+"/v1/url-snapshots/"+x.ID, "")
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", prefix, rec.Code, rec.Body)
		}
		var got map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"snapshotId": x.ID, "requestedUrl": "http://docs.example.org/xss", "finalUrl": "http://docs.example.org/xss",
			"retrievedAt": x.RetrievedAt.Format(time.RFC3339Nano), "status": "captured", "httpStatus": 200.0,
			"contentType": "text/html; charset=windows-1252", "contentLength": float64(len(xssPage)),
			"rawSha256": *x.RawSHA256, "normalizedSha256": *x.NormalizedSHA256, "failureReason": nil,
			"normalization": snapshot.NormalizationVersion, "charset": "windows-1252",
			"contentUrl": prefix + "/v1/url-snapshots/" + x.ID + "/content",
			"warcUrl":    prefix + "/v1/url-snapshots/" + x.ID + "/warc",
			"expiresAt":  x.RetrievedAt.Add(snapshot.DefaultRetention).Format(time.RFC3339Nano),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("metadata (-want +got):\n%s", diff)
		}
	}
	gone := do(t, h, "GET", "/v1/url-snapshots/"+snaps["gone"].ID, "")
	var g map[string]any
	_ = json.Unmarshal(gone.Body.Bytes(), &g)
	if gone.Code != 200 || g["status"] != "failed" || g["failureReason"] != "HTTP 404 Not Found" || g["contentUrl"] != nil || g["rawSha256"] != nil {
		t.Fatalf("failed capture metadata: %d %s", gone.Code, gone.Body)
	}
}

func TestSnapshotNotFound(t *testing.T) {
	h, snaps := snapshotServer(t)
	tests := []struct{ path, detail string }{
		{"/v1/url-snapshots/" + ids.New(ids.Snapshot), "Snapshot not found"},
		{"/v1/url-snapshots/" + ids.New(ids.Snapshot) + "/content", "Snapshot not found"},
		{"/v1/url-snapshots/" + ids.New(ids.Snapshot) + "/warc", "Snapshot not found"},
		{"/v1/url-snapshots/not-an-id", "Snapshot not found"},
		{"/v1/url-snapshots/snap_ZZZ/content", "Snapshot not found"},
		{"/v1/url-snapshots/%2e%2e%2fetc", "Snapshot not found"},
		{"/claim-verification/v1/url-snapshots/cv_00000000000000000000000000000000", "Snapshot not found"},
		{"/v1/url-snapshots/" + snaps["gone"].ID + "/content", "Snapshot content not found"},
		{"/v1/url-snapshots/" + snaps["gone"].ID + "/warc", "Snapshot content not found"},
	}
	for _, tc := range tests {
		rec := do(t, h, "GET", tc.path, "")
		if rec.Code != 404 || strings.TrimSpace(rec.Body.String()) != `{"detail":"`+tc.detail+`"}` {
			t.Errorf("%s: %d %s", tc.path, rec.Code, rec.Body)
		}
	}
	if rec := do(t, h, "POST", "/v1/url-snapshots/"+snaps["xss"].ID, ""); rec.Code != 405 {
		t.Errorf("POST: %d", rec.Code)
	}
}

func TestSnapshotContentIsInert(t *testing.T) {
	h, snaps := snapshotServer(t)
	cases := []struct {
		name, ctype, ext string
	}{
		{"xss", "text/plain; charset=windows-1252", ".html"},
		{"svg", "text/plain; charset=utf-8", ".html"},
		{"doc.pdf", "application/octet-stream", ".pdf"},
	}
	for _, tc := range cases {
		s := snaps[tc.name]
		if s.Status != snapshot.StatusCaptured {
			t.Fatalf("%s not captured: %s", tc.name, snapshot.Status(s.Status))
		}
		for _, prefix := range []string{"", "/claim-verification"} {
			rec := do(t, h, "GET", prefix+"/v1/url-snapshots/"+s.ID+"/content", "")
			if rec.Code != 200 {
				t.Fatalf("%s: %d %s", tc.name, rec.Code, rec.Body)
			}
			want := map[string]string{
				"Content-Type":            tc.ctype,
				"Content-Disposition":     `attachment; filename="` + s.ID + tc.ext + `"`,
				"X-Content-Type-Options":  "nosniff",
				"Content-Security-Policy": "sandbox; default-src 'none'",
				"X-Content-Sha256":        *s.RawSHA256,
				"Etag":                    `"` + *s.RawSHA256 + `"`,
				"Cache-Control":           "public, max-age=31536000, immutable",
				"Accept-Ranges":           "bytes",
			}
			got := map[string]string{}
			for k := range want {
				got[k] = rec.Header().Get(k)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s headers (-want +got):\n%s", tc.name, diff)
			}
			sum := sha256.Sum256(rec.Body.Bytes())
			if hex.EncodeToString(sum[:]) != *s.RawSHA256 {
				t.Fatalf("%s: served bytes do not hash to rawSha256", tc.name)
			}
		}
	}
	x := snaps["xss"]
	path := "/v1/url-snapshots/" + x.ID + "/content"
	if rec := do(t, h, "GET", path, "", "If-None-Match", `"`+*x.RawSHA256+`"`); rec.Code != 304 || rec.Body.Len() != 0 {
		t.Fatalf("conditional: %d", rec.Code)
	}
	rec := do(t, h, "GET", path, "", "Range", "bytes=6-11")
	if rec.Code != 206 || rec.Body.String() != xssPage[6:12] || rec.Header().Get("Content-Range") != "bytes 6-11/"+itoa(len(xssPage)) {
		t.Fatalf("range: %d %q %s", rec.Code, rec.Body, rec.Header().Get("Content-Range"))
	}
	if rec := do(t, h, "HEAD", path, ""); rec.Code != 200 || rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Body.Len() != 0 {
		t.Fatalf("HEAD: %d", rec.Code)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestSnapshotWARCEndpoint(t *testing.T) {
	h, snaps := snapshotServer(t)
	x := snaps["xss"]
	rec := do(t, h, "GET", "/claim-verification/v1/url-snapshots/"+x.ID+"/warc", "")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/warc" ||
		rec.Header().Get("Content-Disposition") != `attachment; filename="`+x.ID+`.warc"` ||
		rec.Header().Get("X-Content-Type-Options") != "nosniff" ||
		rec.Header().Get("Content-Length") != itoa(rec.Body.Len()) {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	r := warc.NewReader(bytes.NewReader(rec.Body.Bytes()))
	var types []string
	for {
		record, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, record.Header.Get("WARC-Type"))
		block, _ := io.ReadAll(record.Block)
		if record.Header.Get("WARC-Type") != "response" {
			continue
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(block)), nil)
		if err != nil {
			t.Fatal(err)
		}
		payload, _ := io.ReadAll(resp.Body)
		_, digest, err := warc.ParseDigest(record.Header.Get("WARC-Payload-Digest"))
		if err != nil || hex.EncodeToString(digest) != *x.RawSHA256 || string(payload) != xssPage {
			t.Fatalf("payload digest %x, rawSha256 %s", digest, *x.RawSHA256)
		}
	}
	if diff := cmp.Diff([]string{"warcinfo", "request", "response"}, types); diff != "" {
		t.Fatal(diff)
	}
	if head := do(t, h, "HEAD", "/v1/url-snapshots/"+x.ID+"/warc", ""); head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") != itoa(rec.Body.Len()) {
		t.Fatalf("HEAD: %d %s", head.Code, head.Header().Get("Content-Length"))
	}
}

func TestSnapshotRoutesAbsentWithoutService(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	rec := do(t, s, "GET", "/v1/url-snapshots/"+ids.New(ids.Snapshot), "")
	if rec.Code != 404 || strings.TrimSpace(rec.Body.String()) != `{"detail":"Not Found"}` {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
