package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/shapes"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// volatile matches what differs between two runs of one verification:
// random ids and the clock.
var (
	verificationID = regexp.MustCompile(`cv_[0-9a-f]{32}`)
	snapshotID     = regexp.MustCompile(`snap_[0-9a-f]{32}`)
	responseID     = regexp.MustCompile(`corpus_[0-9a-f]{24}`)
	timestamp      = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
)

// stable replaces ids and times with placeholders. Snapshot ids are
// numbered by first appearance, so the golden file still shows which
// evidence and source points at which snapshot.
func stable(out []byte) []byte {
	seen := map[string]string{}
	out = snapshotID.ReplaceAllFunc(out, func(id []byte) []byte {
		if _, ok := seen[string(id)]; !ok {
			seen[string(id)] = fmt.Sprintf("snap_<%d>", len(seen)+1)
		}
		return []byte(seen[string(id)])
	})
	out = verificationID.ReplaceAll(out, []byte("cv_<id>"))
	out = responseID.ReplaceAll(out, []byte("corpus_<id>"))
	return timestamp.ReplaceAll(out, []byte("<time>"))
}

// testSnapshotOptions keeps every capture on this machine: names are
// answered from an empty table (no DNS) and the tripwire refuses, and
// reports, any dial off loopback.
func testSnapshotOptions(t *testing.T) *snapshot.Options {
	t.Helper()
	tw := &snapshottest.Tripwire{}
	t.Cleanup(func() {
		if d := tw.Denied(); len(d) > 0 {
			t.Errorf("a capture tried to dial off loopback: %v", d)
		}
	})
	return &snapshot.Options{Resolver: snapshottest.Resolver(nil), DialControl: tw.Control}
}

func runVerify(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut, testSnapshotOptions(t))
	if err == nil && errOut.Len() > 0 {
		t.Errorf("stderr on success: %s", errOut.String())
	}
	return out.Bytes(), err
}

func TestVerifyGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"quick_contradicted", []string{"-tier", "quick", "-claim", "Base mainnet uses chain ID 8543."}},
		{"deep_compound", []string{"-tier", "deep", "-claim", "Base mainnet uses chain ID 8453 and USDC on Base has 18 decimals."}},
		{"request_official_only", []string{"-tier", "standard", "-request",
			`{"claim":"USDC on Base has 6 decimals.","sourcePolicy":"official_only","allowedDomains":["docs.circle-usdc.example"],"minimumSources":1}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runVerify(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			var res claims.Result
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("output is not a result: %v\n%s", err, out)
			}
			got := stable(out)
			golden := filepath.Join("testdata", tt.name+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")); diff != "" {
				t.Errorf("result differs from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// The snapshots in the output are real HTTP captures of the corpus pages:
// each captured one hashes to the page the collection serves at its URL,
// and every evidence item points at the snapshot of its own page.
func TestVerifySnapshotsAreCapturesOfTheCorpus(t *testing.T) {
	out, err := runVerify(t, "-tier", "research")
	if err != nil {
		t.Fatal(err)
	}
	var res claims.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	demo, err := corpus.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != claims.StatusConfirmed || len(res.Snapshots) < 3 {
		t.Fatalf("research tier: status %s, %d snapshots", res.Status, len(res.Snapshots))
	}
	byID := map[string]string{}
	for _, s := range res.Snapshots {
		u, err := url.Parse(s.RequestedURL)
		if err != nil {
			t.Fatal(err)
		}
		doc := demo.Lookup(u.Host, u.RequestURI())
		if doc == nil {
			t.Fatalf("snapshot of %s, which is not a corpus page", s.RequestedURL)
		}
		if s.Status != "captured" || s.RawSHA256 == nil {
			t.Fatalf("snapshot %s: %s", s.RequestedURL, s.Status)
		}
		sum := sha256.Sum256(doc.Page())
		if *s.RawSHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("snapshot of %s: rawSha256 %s is not the hash of the page", s.RequestedURL, *s.RawSHA256)
		}
		byID[s.ID] = s.RequestedURL
	}
	for _, e := range res.Evidence {
		if e.SnapshotID == nil {
			continue
		}
		if got := byID[*e.SnapshotID]; got != e.URL {
			t.Errorf("evidence %s (%s) points at the snapshot of %q", e.ID, e.URL, got)
		}
	}
}

func TestVerifyRefusesBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the error message
	}{
		{"claim too short", []string{"-claim", "x"}, "claim"},
		{"unknown tier", []string{"-tier", "platinum"}, `Unknown verification tier "platinum"`},
		{"tier cap", []string{"-tier", "quick", "-request", `{"claim":"Base mainnet uses chain ID 8453.","minimumSources":4}`},
			"The quick tier supports at most 3 cited sources; minimumSources (4) cannot be met"},
		{"not a domain", []string{"-request", `{"claim":"Base mainnet uses chain ID 8453.","allowedDomains":["https://a.example/x"]}`},
			"String should match pattern"},
		{"not JSON", []string{"-request", `{"claim":`}, "request"},
		{"stray argument", []string{"Base", "mainnet"}, "unexpected arguments"},
		{"missing corpus", []string{"-corpus-dir", filepath.Join(t.TempDir(), "none")}, "corpus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runVerify(t, tt.args...)
			if err == nil {
				t.Fatalf("accepted; printed %s", out)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
			if len(out) > 0 {
				t.Errorf("printed a result for bad input: %s", out)
			}
		})
	}
	// Input errors are the engine's or the decoder's typed errors, so a
	// caller can tell them from failures of the verification itself.
	_, err := runVerify(t, "-tier", "quick", "-request", `{"claim":"Base mainnet uses chain ID 8453.","minimumSources":4}`)
	var re *claims.RequestError
	var ve *shapes.ValidationError
	if !errors.As(err, &re) && !errors.As(err, &ve) {
		t.Errorf("tier-cap error is %T, want *claims.RequestError or *shapes.ValidationError", err)
	}
}

func TestVerifyOwnCorpus(t *testing.T) {
	dir := t.TempDir()
	doc := `---
url: http://stats.exampleton.example/minimum-wage
title: Minimum wage
publisher: Exampleton Statistics Office
publishedAt: 2026-01-02
kind: official
---
The minimum wage in Exampleton is 18 dollars per hour.
`
	if err := os.WriteFile(filepath.Join(dir, "wage.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runVerify(t, "-corpus-dir", dir, "-request",
		`{"claim":"The minimum wage in Exampleton is 18 dollars per hour.","minimumSources":1}`)
	if err != nil {
		t.Fatal(err)
	}
	var res claims.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != claims.StatusConfirmed || len(res.Evidence) != 1 || res.Evidence[0].SourceType != "official" {
		t.Fatalf("own corpus: %s", out)
	}
	if len(res.Snapshots) != 1 || res.Snapshots[0].Status != "captured" {
		t.Fatalf("own corpus page not captured: %+v", res.Snapshots)
	}
}

func TestHelp(t *testing.T) {
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"-help"}, io.Discard, &errOut, testSnapshotOptions(t))
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(errOut.String(), "-tier") || exitCode(err, io.Discard) != 0 {
		t.Fatalf("-help: %v (exit status %d)\n%s", err, exitCode(err, io.Discard), errOut.String())
	}
}

// Exit statuses, as every example: 0 for -help, 2 for a wrong command
// line, 1 for a refused or failed verification.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-help"}, 0},
		{[]string{"-no-such-flag"}, 2},
		{[]string{"Base", "mainnet"}, 2},
		{[]string{"-claim", "x"}, 1},
	} {
		_, err := runVerify(t, tc.args...)
		if got := exitCode(err, io.Discard); got != tc.code {
			t.Errorf("%q: exit status %d (%v), want %d", tc.args, got, err, tc.code)
		}
	}
}
