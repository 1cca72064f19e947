package wacz_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/snapshot/wacz"
	"github.com/assaykit/assay/snapshot/wacz/wacztest"
	"github.com/assaykit/assay/snapshot/warc"
)

var created = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func response(uri, body string) (warc.Header, []byte) {
	block := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body)
	payload := sha256.Sum256([]byte(body))
	whole := sha256.Sum256(block)
	return warc.Header{
		{Name: "WARC-Type", Value: "response"},
		{Name: "WARC-Record-ID", Value: "<urn:uuid:" + hex.EncodeToString(payload[:4]) + "-0000-8000-8000-000000000000>"},
		{Name: "WARC-Date", Value: created.Format(time.RFC3339)},
		{Name: "WARC-Target-URI", Value: uri},
		{Name: "WARC-Payload-Digest", Value: warc.Digest(payload[:])},
		{Name: "WARC-Block-Digest", Value: warc.Digest(whole[:])},
		{Name: "Content-Type", Value: "application/http;msgtype=response"},
	}, block
}

func itoa(n int) string { return strconv.Itoa(n) }

// build writes a WACZ of two pages and one extra file.
func build(t *testing.T, sign *wacz.Signer) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := wacz.NewWriter(&buf, created)
	for _, p := range []struct{ uri, body string }{
		{"https://www.example.org/a?b=2&a=1", "<p>first page</p>"},
		{"http://docs.example.org:8080/", "<p>second page</p>"},
	} {
		h, block := response(p.uri, p.body)
		sum := sha256.Sum256([]byte(p.body))
		if err := w.WriteRecord(h, int64(len(block)), bytes.NewReader(block), &wacz.IndexEntry{URL: p.uri, Time: created,
			Mime: "text/html", Status: 200, PayloadSHA256: hex.EncodeToString(sum[:])}); err != nil {
			t.Fatal(err)
		}
		w.AddPage(wacz.Page{URL: p.uri, TS: created, Title: p.body})
	}
	if err := w.AddFile("assay/note.json", []byte(`{"hello":"world"}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.AddFile("archive/extra.warc", nil); err == nil {
		t.Fatal("a file in archive/ was accepted")
	}
	if _, err := w.Close(context.Background(), wacz.Meta{Title: "t", Software: "test",
		Home: &wacz.Home{URL: "http://docs.example.org:8080/", TS: created}}, sign); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func open(t *testing.T, b []byte) *wacz.Reader {
	t.Helper()
	r, err := wacz.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWriteReadVerify(t *testing.T) {
	key, _ := wacz.GenerateKey()
	signer, err := wacz.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	b := build(t, signer)
	r := open(t, b)
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	signed, err := wacz.VerifySignature(r.Digest.SignedData, r.Digest.Hash, nil)
	if err != nil || !signed.PublicKey.Equal(&key.PublicKey) || !signed.Created.Equal(created) || signed.Timestamp != nil {
		t.Fatalf("%v %+v", err, signed)
	}
	var n int
	if err := r.Records(1<<20, func(rec *wacz.Record) error {
		n++
		return nil
	}); err != nil || n != 2 {
		t.Fatalf("records: %d %v", n, err)
	}
	idx, _ := r.ReadFile(wacz.IndexPath, 1<<20)
	lines := strings.Split(strings.TrimSpace(string(idx)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "org,example)/a?a=1&b=2 20261120100000 ") ||
		!strings.HasPrefix(lines[1], "org,example,docs:8080)/ 20261120100000 ") {
		t.Fatalf("index:\n%s", idx)
	}
	if r.Package.Profile != wacz.Profile || r.Package.Home == nil || len(r.Package.Resources) != 4 {
		t.Fatalf("datapackage: %+v", r.Package)
	}
}

// rezip copies the ZIP b, changing the entry name with edit.
func rezip(t *testing.T, b []byte, name string, edit func([]byte) []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		if f.Name == name {
			data = edit(data)
		}
		fw, _ := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: f.Method, Modified: f.Modified})
		fw.Write(data)
	}
	zw.Close()
	return out.Bytes()
}

func flip(i int) func([]byte) []byte {
	return func(b []byte) []byte {
		b = append([]byte(nil), b...)
		b[i%len(b)] ^= 1
		return b
	}
}

func TestTamperingDetected(t *testing.T) {
	key, _ := wacz.GenerateKey()
	signer, _ := wacz.NewSigner(key)
	b := build(t, signer)

	if _, err := wacz.Open(bytes.NewReader(b[:len(b)-10]), int64(len(b)-10)); !errors.Is(err, wacz.ErrLayout) {
		t.Errorf("truncated: %v", err)
	}
	r := open(t, rezip(t, b, wacz.ArchivePath, flip(100)))
	if err := r.Verify(); !errors.Is(err, wacz.ErrDigest) {
		t.Errorf("archive byte: %v", err)
	}
	r = open(t, rezip(t, b, "assay/note.json", flip(3)))
	if err := r.Verify(); !errors.Is(err, wacz.ErrDigest) {
		t.Errorf("extra file byte: %v", err)
	}
	r = open(t, rezip(t, b, wacz.DataPackagePath, func(d []byte) []byte {
		return bytes.Replace(d, []byte(`"title": "t"`), []byte(`"title": "u"`), 1)
	}))
	if err := r.Verify(); !errors.Is(err, wacz.ErrDigest) {
		t.Errorf("datapackage: %v", err)
	}
	// The digest updated to the changed datapackage.json: the signature
	// no longer covers it.
	r = open(t, b)
	r.Digest.SignedData.Hash = "sha256:" + strings.Repeat("0", 64)
	if _, err := wacz.VerifySignature(r.Digest.SignedData, r.Digest.SignedData.Hash, nil); !errors.Is(err, wacz.ErrSignature) {
		t.Errorf("signature over another hash: %v", err)
	}
	r = open(t, b)
	other, _ := wacz.GenerateKey()
	r.Digest.SignedData.PublicKey, _ = wacz.PublicKeyBase64(&other.PublicKey)
	if _, err := wacz.VerifySignature(r.Digest.SignedData, r.Digest.Hash, nil); !errors.Is(err, wacz.ErrSignature) {
		t.Errorf("another key: %v", err)
	}
}

func TestTimestampedSignature(t *testing.T) {
	tsa, err := wacztest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer tsa.Close()
	tsa.Now = func() time.Time { return created.Add(2 * time.Second) }
	key, _ := wacz.GenerateKey()
	signer, _ := wacz.NewSigner(key)
	signer.TSA = &wacz.TSAClient{URL: tsa.URL}
	b := build(t, signer)
	r := open(t, b)
	signed, err := wacz.VerifySignature(r.Digest.SignedData, r.Digest.Hash, tsa.Roots)
	if err != nil || signed.Timestamp == nil || !signed.Timestamp.Trusted || !signed.Timestamp.Time.Equal(created.Add(2*time.Second)) {
		t.Fatalf("%v %+v", err, signed)
	}
	// Another TSA's roots: the token verifies but is not trusted.
	other, _ := wacztest.Start()
	defer other.Close()
	if _, err := wacz.VerifySignature(r.Digest.SignedData, r.Digest.Hash, other.Roots); !errors.Is(err, wacz.ErrTimestamp) {
		t.Errorf("untrusted TSA: %v", err)
	}
	// A token over another signature.
	sd := *r.Digest.SignedData
	r2 := open(t, build(t, signer))
	sd.TimeSignature = r2.Digest.SignedData.TimeSignature
	if _, err := wacz.VerifySignature(&sd, r.Digest.Hash, nil); !errors.Is(err, wacz.ErrTimestamp) {
		t.Errorf("token of another signature: %v", err)
	}
	// A TSA time far from created.
	tsa.Now = func() time.Time { return created.Add(time.Hour) }
	r3 := open(t, build(t, signer))
	if _, err := wacz.VerifySignature(r3.Digest.SignedData, r3.Digest.Hash, nil); !errors.Is(err, wacz.ErrTimestamp) {
		t.Errorf("skewed time: %v", err)
	}
	// A failing TSA fails the signature: no bundle without the promised
	// timestamp.
	tsa.Fail.Store(true)
	var buf bytes.Buffer
	w := wacz.NewWriter(&buf, created)
	if _, err := w.Close(context.Background(), wacz.Meta{}, signer); err == nil {
		t.Error("a failing TSA was ignored")
	}
}

func TestSURT(t *testing.T) {
	for in, want := range map[string]string{
		"https://www.Example.org/Path":    "org,example)/path",
		"http://www2.example.org":         "org,example)/",
		"http://wwwx.example.org/":        "org,example,wwwx)/",
		"http://example.org:8080/a?z&y=1": "org,example:8080)/a?y=1&z",
	} {
		if got, err := wacz.SURT(in); err != nil || got != want {
			t.Errorf("SURT(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := wacz.SURT("ftp://example.org/"); err == nil {
		t.Error("ftp accepted")
	}
}
