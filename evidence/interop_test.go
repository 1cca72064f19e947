package evidence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/internal/testenv"
	"github.com/assaykit/assay/snapshot/wacz"
)

// interopBundle sells and bundles a standard verification and returns the
// bundle with its opened form.
func interopBundle(t *testing.T) ([]byte, *wacz.Reader) {
	t.Helper()
	w := newWorld(t)
	b, err := evidence.New(w.Snapshots, w.Keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, bundle := sold(t, w, b, claims.Standard, "USDC on Base has 6 decimals.")
	z, err := wacz.Open(bytes.NewReader(bundle), int64(len(bundle)))
	if err != nil {
		t.Fatal(err)
	}
	return bundle, z
}

// nodeJSON runs a script of interop/evidence and decodes its last line.
func nodeJSON(t *testing.T, node, dir string, v any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	line := strings.TrimSpace(string(out))
	line = line[strings.LastIndex(line, "\n")+1:]
	if jerr := json.Unmarshal([]byte(line), v); err != nil || jerr != nil {
		t.Fatalf("node %v: %v %v\n%s", args, err, jerr, out)
	}
	t.Logf("%s", line)
}

// warcio (webrecorder's WARC library, interop/evidence) reads every record
// of a bundle's archive and finds every payload digest right.
func TestWarcioReadsEveryRecord(t *testing.T) {
	dir, _ := filepath.Abs("../interop/evidence")
	node := testenv.Node(t, dir, "warcio")
	_, z := interopBundle(t)
	var want int
	if err := z.Records(1<<26, func(*wacz.Record) error { want++; return nil }); err != nil {
		t.Fatal(err)
	}
	data, err := z.ReadFile(wacz.ArchivePath, 1<<26)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "data.warc.gz")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Records  []struct{ Type, TargetURI string }
		Problems []string
	}
	nodeJSON(t, node, dir, &got, "warcio.mjs", file)
	if len(got.Records) != want || len(got.Problems) != 0 || want%3 != 0 {
		t.Fatalf("warcio read %d of %d records, problems %v", len(got.Records), want, got.Problems)
	}
	for i, r := range got.Records {
		if wantType := []string{"warcinfo", "request", "response"}[i%3]; r.Type != wantType {
			t.Fatalf("record %d is %s, want %s", i, r.Type, wantType)
		}
	}
}

// ReplayWeb.page (the npm package, interop/evidence) opens a bundle in
// Debian's Chromium and replays a captured page: the text of the page
// shows in its replay frame.
func TestReplayWebPageReplaysABundle(t *testing.T) {
	dir, _ := filepath.Abs("../interop/evidence")
	node := testenv.Node(t, dir, "replaywebpage", "playwright-core")
	chromium := testenv.Command(t, "chromium", "apt-get install chromium (Debian's package; .ci/run installs it)")
	bundle, z := interopBundle(t)
	pages, err := z.ReadFile(wacz.PagesPath, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var page wacz.Page
	lines := strings.Split(strings.TrimSpace(string(pages)), "\n")
	if len(lines) < 2 || json.Unmarshal([]byte(lines[1]), &page) != nil {
		t.Fatalf("pages: %s", pages)
	}
	// The text the replay must show: the quote the verdict counted, which
	// the archived page holds.
	const text = "USDC on Base has 6 decimals"
	archived := false
	if err := z.Records(1<<26, func(r *wacz.Record) error {
		archived = archived || r.Header.Get("WARC-Type") == "response" && r.Header.Get("WARC-Target-URI") == page.URL &&
			bytes.Contains(r.Block, []byte(text))
		return nil
	}); err != nil || !archived {
		t.Fatalf("the archived %s does not hold %q: %v", page.URL, text, err)
	}
	app := filepath.Join(dir, "node_modules", "replaywebpage")
	files := http.FileServer(http.Dir(app))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bundle.wacz" {
			w.Header().Set("Content-Type", "application/wacz")
			http.ServeContent(w, r, "bundle.wacz", time.Time{}, bytes.NewReader(bundle))
			return
		}
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	var got struct {
		Found  bool
		Frame  string
		Frames []string
	}
	nodeJSON(t, node, dir, &got, "replay.mjs", srv.URL, srv.URL+"/bundle.wacz", page.URL, page.TS.UTC().Format("20060102150405"), text, chromium)
	if !got.Found {
		t.Fatalf("the page was not replayed; frames %v", got.Frames)
	}
}
