package snapshot_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshotmem"
)

// TestWARCParsesWithWarcio exports a capture of a gzip-encoded page and has
// warcio (webrecorder's WARC library, testdata/warc) parse it and check its
// payload digest. It needs Node.js and warcio installed in testdata/warc
// (npm ci --prefix snapshot/testdata/warc; .ci/run does it); the test
// installs nothing itself, and without them it stops through testenv.Node.
func TestWARCParsesWithWarcio(t *testing.T) {
	dir, _ := filepath.Abs("testdata/warc")
	node := testenv.Node(t, dir, "warcio")

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, corpusPage)
	zw.Close()
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz.Bytes())
	}))
	svc := newService(t, srv, nil, snapshotmem.NewBlobs(nil), snapshotmem.New())
	ctx := context.Background()
	s, err := svc.Capture(ctx, "http://docs.example.org/chains")
	if err != nil || s.Status != snapshot.StatusCaptured {
		t.Fatalf("%v %+v", err, s)
	}
	if *s.RawSHA256 != snapshot.RawSHA256([]byte(corpusPage)) {
		t.Fatal("rawSha256 is not over the decoded entity")
	}
	w, closer, err := svc.WARC(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	closer.Close()
	if !bytes.Contains(buf.Bytes(), []byte("X-Assay-Original-Content-Encoding: gzip\r\n")) {
		t.Fatal("original Content-Encoding not kept")
	}
	checkWARC(t, buf.Bytes()) // our own reader first
	file := filepath.Join(t.TempDir(), s.ID+".warc")
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "check.mjs", file, *s.RawSHA256)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("warcio check failed: %v\n%s", err, out)
	}
	var summary struct {
		Records []struct {
			Type, PayloadSha256 string
			Status              int
		}
		Problems []string
	}
	line := strings.TrimSpace(string(out))
	if err := json.Unmarshal([]byte(line[strings.LastIndex(line, "\n")+1:]), &summary); err != nil {
		t.Fatalf("warcio output %s: %v", out, err)
	}
	if len(summary.Records) != 3 || summary.Records[2].PayloadSha256 != *s.RawSHA256 || summary.Records[2].Status != 200 || len(summary.Problems) != 0 {
		t.Fatalf("warcio summary: %s", out)
	}
	t.Logf("warcio: %s", line)
}
